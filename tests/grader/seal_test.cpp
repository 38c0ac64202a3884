// Unit tests of seal.hpp: the seal of the instructor files, its text, and the check of a
// temporary tree against it.
#include "gpulab/grader/seal.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gpulab/grader/sha256.hpp"
#include "grader_support.hpp"
#include "temp_dir.hpp"
#include "text_match.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

using gpulab::testing::contains;
using gpulab::testing::joined;
using gpulab::testing::runtime_error_of;
using gpulab::testing::TempDir;
using gpulab::testing::write_file;

// ---------------------------------------------------------------------------------------------
// The seal of the instructor files
// ---------------------------------------------------------------------------------------------

const std::string kHashA = sha256_hex("a");
const std::string kHashB = sha256_hex("b");

TEST(Seal, FormatIsOneSha256sumLinePerFile) {
  const std::vector<SealedFile> seal = {{"CMakeLists.txt", kHashA},
                                        {"/abs/hidden/lab01/h.cpp", kHashB}};
  EXPECT_EQ(format_seal(seal),
            kHashA + "  CMakeLists.txt\n" + kHashB + "  /abs/hidden/lab01/h.cpp\n");
  EXPECT_EQ(format_seal({}), "");
}

TEST(Seal, ParseReadsWhatFormatWrites) {
  const std::vector<SealedFile> seal = {{"CMakeLists.txt", kHashA},
                                        {"labs/lab01 x/with  two spaces.cpp", kHashB},
                                        {"/abs/hidden/lab01/h.cpp", kHashA}};
  const std::vector<SealedFile> back = parse_seal(format_seal(seal), "seal.sha256");
  ASSERT_EQ(back.size(), seal.size());
  for (std::size_t i = 0; i < seal.size(); ++i) {
    EXPECT_EQ(back[i].path, seal[i].path);
    EXPECT_EQ(back[i].sha256, seal[i].sha256) << seal[i].path;
  }
}

TEST(Seal, ParseSkipsEmptyLinesAndReadsALastLineWithoutNewline) {
  const std::vector<SealedFile> back =
      parse_seal("\n" + kHashA + "  a.txt\n\n" + kHashB + "  b.txt", "seal.sha256");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].path, "b.txt");
  EXPECT_EQ(back[1].sha256, kHashB);
}

TEST(Seal, AMalformedLineIsARuntimeErrorNamingTheSourceAndTheLine) {
  std::string upper = kHashA;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  const std::string bad_lines[] = {
      kHashA.substr(0, 63) + "  short.txt",  // 63 digits
      upper + "  upper.txt",                 // sha256sum writes lower case
      kHashA + " one-space.txt",             // one space
      kHashA + "  ",                         // no path
      kHashA,                                // no separator
      "g" + kHashA.substr(1) + "  not-hex.txt",
      "a.txt  " + kHashA,  // the other way round
  };
  for (const std::string& bad : bad_lines) {
    const std::string message = runtime_error_of(
        [&] { (void)parse_seal(kHashB + "  fine.txt\n" + bad + "\n", "grading/seal.sha256"); });
    EXPECT_TRUE(contains(message, "grading/seal.sha256")) << bad << ": " << message;
    EXPECT_TRUE(contains(message, "line 2")) << bad << ": " << message;
  }
}

// A source tree with a file in every place instructor_files looks at and some it does not, and a
// hidden suites' folder outside it.
class SealTree : public ::testing::Test {
 protected:
  SealTree() {
    for (const char* file :
         {"CMakeLists.txt", "CMakePresets.json", "cmake/GpulabLabs.cmake", "framework/core/x.cpp",
          "kernels/k.cu", "tests/framework/t.cpp", "labs/lab01_x/lab.hpp", "labs/lab01_x/README.md",
          "labs/lab02_y/student.cu", "labs/lab01_x/student.cu", "labs/lab01_x/sub/part.cpp",
          "docs/guide.md", "solutions/lab01_x/student.cu", "build/me/CMakeCache.txt",
          "README.md"}) {
      write_file(root() / file, std::string("contents of ") + file + "\n");
    }
    write_file(hidden() / "lab01_x/hidden_test.cpp", "hidden test\n");
    manifest_.source_dir = root();
    manifest_.extra_tests_dir = hidden();
    manifest_.labs = {{"lab01", "One", "lab01_x", {"student.cu", "sub/part.cpp"}, {}, {}, {}},
                      {"lab02", "Two", "lab02_y", {"other.cu"}, {}, {}, {}}};
  }

  [[nodiscard]] fs::path root() const { return dir_.path() / "src"; }
  [[nodiscard]] fs::path hidden() const { return dir_.path() / "hidden"; }

  TempDir dir_{"gpulab-grading-test-tree"};
  LabManifest manifest_;
};

TEST_F(SealTree, InstructorFilesAreTheSealedFoldersLessTheStudentFiles) {
  Lines expected = {"CMakeLists.txt",
                    "CMakePresets.json",
                    "cmake/GpulabLabs.cmake",
                    "framework/core/x.cpp",
                    "kernels/k.cu",
                    "labs/lab01_x/lab.hpp",     // not labs/lab01_x/README.md: documentation
                    "labs/lab02_y/student.cu",  // a student file of lab01's name, in lab02
                    "tests/framework/t.cpp",
                    (hidden() / "lab01_x/hidden_test.cpp").generic_string()};
  std::sort(expected.begin(), expected.end());
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST_F(SealTree, AHiddenFolderInsideTheSealedFoldersIsListedOnce) {
  write_file(root() / "tests/hidden/lab01_x/h.cpp", "hidden\n");
  manifest_.extra_tests_dir = root() / "tests/hidden";
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(std::count(got.begin(), got.end(), "tests/hidden/lab01_x/h.cpp"), 1) << joined(got);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size()) << joined(got);
  for (const std::string& file : got) {
    EXPECT_FALSE(fs::path(file).is_absolute()) << file;
  }
}

TEST_F(SealTree, AHiddenFolderElsewhereInTheTreeIsSealedByRelativePath) {
  write_file(root() / "hidden/lab01_x/h.cpp", "hidden\n");
  manifest_.extra_tests_dir = root() / "hidden";
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(std::count(got.begin(), got.end(), "hidden/lab01_x/h.cpp"), 1) << joined(got);
}

TEST_F(SealTree, WithoutAHiddenFolderNothingOutsideTheTreeIsListed) {
  manifest_.extra_tests_dir.clear();
  for (const std::string& file : instructor_files(manifest_)) {
    EXPECT_FALSE(fs::path(file).is_absolute()) << file;
  }
  manifest_.extra_tests_dir = dir_.path() / "no-such-folder";
  EXPECT_EQ(instructor_files(manifest_).size(), 8u);
}

TEST_F(SealTree, SealFilesHashesEachFile) {
  const Lines files = instructor_files(manifest_);
  const std::vector<SealedFile> seal = seal_files(manifest_, files);
  ASSERT_EQ(seal.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(seal[i].path, files[i]);
    const fs::path path = fs::path(files[i]).is_absolute() ? fs::path(files[i]) : root() / files[i];
    EXPECT_EQ(seal[i].sha256, sha256_file(path)) << files[i];
  }
  const auto top = std::find_if(seal.begin(), seal.end(),
                                [](const SealedFile& f) { return f.path == "CMakeLists.txt"; });
  ASSERT_NE(top, seal.end());
  EXPECT_EQ(top->sha256, sha256_hex("contents of CMakeLists.txt\n"));
}

TEST_F(SealTree, TheSealIsWhatSha256sumChecks) {
  if (std::system("sha256sum --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs coreutils sha256sum";
  }
  write_file(dir_.path() / "seal.sha256",
             format_seal(seal_files(manifest_, instructor_files(manifest_))));
  const std::string check = "cd '" + root().string() + "' && sha256sum --check --quiet '" +
                            (dir_.path() / "seal.sha256").string() + "'";
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
  write_file(root() / "kernels/k.cu", "changed\n");
  EXPECT_NE(std::system((check + " > /dev/null 2>&1").c_str()), 0) << "a change goes unnoticed";
}

TEST_F(SealTree, AnUnchangedTreePassesTheCheck) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.checked);
  EXPECT_TRUE(check.ok()) << "changed:" << joined(check.changed)
                          << "\nmissing:" << joined(check.missing)
                          << "\nadded:" << joined(check.added);
}

TEST_F(SealTree, ChangedMissingAndAddedFilesAreFound) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  const std::string hidden_test = (hidden() / "lab01_x/hidden_test.cpp").generic_string();
  write_file(root() / "framework/core/x.cpp", "changed by the code under test\n");
  write_file(hidden_test, "changed too\n");
  fs::remove(root() / "kernels/k.cu");
  write_file(root() / "tests/framework/new_test.cpp", "added\n");
  write_file(hidden() / "lab01_x/new_hidden.cpp", "added\n");

  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.checked);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.changed, (Lines{hidden_test, "framework/core/x.cpp"})) << joined(check.changed);
  EXPECT_EQ(check.missing, Lines{"kernels/k.cu"}) << joined(check.missing);
  EXPECT_EQ(check.added, (Lines{(hidden() / "lab01_x/new_hidden.cpp").generic_string(),
                                "tests/framework/new_test.cpp"}))
      << joined(check.added);
}

TEST_F(SealTree, StudentFilesAndOtherFoldersMayChange) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  write_file(root() / "labs/lab01_x/student.cu", "the student's work\n");
  write_file(root() / "labs/lab01_x/sub/part.cpp", "more work\n");
  write_file(root() / "build/me/new.o", "build output\n");
  write_file(root() / "docs/guide.md", "notes\n");
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.ok()) << "changed:" << joined(check.changed)
                          << "\nadded:" << joined(check.added);
}

TEST_F(SealTree, WhatGradingRunsOfTheBuildIsSealedByAbsolutePath) {
  const fs::path build = dir_.path() / "build";
  manifest_.build_dir = build;
  manifest_.grade_runner = build / "bin/gpulab-grade-runner";
  const Lines build_files = {(build / "CTestTestfile.cmake").generic_string(),
                             (build / "bin/gpulab-grade-runner").generic_string(),
                             (build / "grading/manifest.json").generic_string(),
                             (build / "tests/labs/CTestTestfile.cmake").generic_string()};
  for (const std::string& file : build_files) {
    write_file(file, "build file " + file + "\n");
  }
  write_file(build / "tests/labs/other.cmake", "not run by grading\n");
  const Lines got = instructor_files(manifest_);
  ASSERT_GE(got.size(), build_files.size());
  EXPECT_EQ(Lines(got.end() - 4, got.end()), build_files) << joined(got);
  const std::vector<SealedFile> seal = seal_files(manifest_, got);
  write_file(build / "tests/labs/CTestTestfile.cmake", "rewritten by the code under test\n");
  write_file(build / "bin/gpulab-grade-runner", "rewritten too\n");
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_EQ(check.changed, (Lines{build_files[1], build_files[3]})) << joined(check.changed);
}

TEST(DefaultSealPath, IsOutsideTheBuildInTheUsersStateFolder) {
  const fs::path one = default_seal_path("/work/build/default", "/state", "/home/me");
  EXPECT_EQ(one.parent_path(), fs::path("/state/gpulab/seals"));
  EXPECT_TRUE(one.filename().string().starts_with("default-")) << one;
  EXPECT_EQ(one.extension(), ".sha256");
  EXPECT_EQ(default_seal_path("/work/build/default", "", "/home/me").parent_path(),
            fs::path("/home/me/.local/state/gpulab/seals"));
  EXPECT_EQ(default_seal_path("/work/build/default/", "/state", ""), one)
      << "the same folder written with a trailing slash";
  EXPECT_NE(default_seal_path("/other/build/default", "/state", ""), one)
      << "two builds of the same name elsewhere";
  const std::string message = runtime_error_of([] { (void)default_seal_path("/b", "", ""); });
  EXPECT_TRUE(contains(message, "--seal")) << message;
}

TEST_F(SealTree, AFileChangedToTheSameBytesIsNotChanged) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  write_file(root() / "kernels/k.cu", "contents of kernels/k.cu\n");
  EXPECT_TRUE(check_integrity(manifest_, seal).ok());
}

TEST(IntegrityCheck, ADefaultCheckWasNotMade) {
  const IntegrityCheck check;
  EXPECT_FALSE(check.checked);
  EXPECT_TRUE(check.ok());
  IntegrityCheck changed;
  changed.changed = {"a"};
  EXPECT_FALSE(changed.ok());
  IntegrityCheck missing;
  missing.missing = {"a"};
  EXPECT_FALSE(missing.ok());
  IntegrityCheck added;
  added.added = {"a"};
  EXPECT_FALSE(added.ok());
}

}  // namespace
}  // namespace gpulab
