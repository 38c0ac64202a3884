// Unit tests of staging.hpp: staging student files, the submitted files that cannot be graded,
// and where a function is defined.
#include "gpulab/grader/staging.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "grader_support.hpp"
#include "temp_dir.hpp"
#include "text_match.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

using gpulab::testing::contains;
using gpulab::testing::runtime_error_of;
using gpulab::testing::TempDir;
using gpulab::testing::write_file;

// ---------------------------------------------------------------------------------------------
// Staging student files
// ---------------------------------------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StageStudentFile, WritesTheFileBehindALineDirectiveNamingTheOriginal) {
  const TempDir dir("gpulab-grading-test-stage");
  const fs::path from = dir.path() / "sub mission" / "a\"b\\c.cu";
  write_file(from, "int x;\n");
  const fs::path to = dir.path() / "staged" / "deep" / "a.cu";
  EXPECT_TRUE(stage_student_file(from, to));
  EXPECT_EQ(read_text(to),
            "#line 1 \"" + (dir.path() / "sub mission").string() + "/a\\\"b\\\\c.cu\"\nint x;\n");
}

TEST(StageStudentFile, RewritesOnlyWhatChanged) {
  const TempDir dir("gpulab-grading-test-restage");
  const fs::path from = dir.path() / "a.cu";
  const fs::path to = dir.path() / "staged" / "a.cu";
  write_file(from, "int x;\n");
  ASSERT_TRUE(stage_student_file(from, to));
  const auto written = fs::last_write_time(to);
  EXPECT_FALSE(stage_student_file(from, to)) << "unchanged: not written again";
  EXPECT_EQ(fs::last_write_time(to), written);
  write_file(from, "int y;\n");
  EXPECT_TRUE(stage_student_file(from, to));
  EXPECT_TRUE(contains(read_text(to), "int y;"));
}

TEST(StageStudentFile, KeepExistingLeavesAStagedFileAlone) {
  const TempDir dir("gpulab-grading-test-keep");
  const fs::path from = dir.path() / "stub.cu";
  const fs::path to = dir.path() / "staged.cu";
  write_file(from, "stub\n");
  write_file(to, "the submission\n");
  EXPECT_FALSE(stage_student_file(from, to, /*keep_existing=*/true));
  EXPECT_EQ(read_text(to), "the submission\n");
  fs::remove(to);
  EXPECT_TRUE(stage_student_file(from, to, /*keep_existing=*/true));
  EXPECT_TRUE(contains(read_text(to), "stub\n"));
}

TEST(StageStudentFile, AnUnreadableFileIsARuntimeErrorNamingIt) {
  const TempDir dir("gpulab-grading-test-stage-missing");
  const fs::path from = dir.path() / "missing.cu";
  const std::string message =
      runtime_error_of([&] { (void)stage_student_file(from, dir.path() / "staged.cu"); });
  EXPECT_TRUE(contains(message, from.string())) << message;
  EXPECT_FALSE(fs::exists(dir.path() / "staged.cu"));
}

TEST(SubmittedFileProblem, APlainFileOfTheSubmissionIsGraded) {
  const TempDir dir("gpulab-grading-test-submitted");
  write_file(dir.path() / "lab01_x/work.cu", "int x;\n");
  EXPECT_EQ(gpulab::submitted_file_problem(dir.path(), "lab01_x/work.cu"), std::nullopt);
}

TEST(SubmittedFileProblem, LinksAnywhereBelowTheRootAreRefused) {
  const TempDir dir("gpulab-grading-test-submitted-links");
  const fs::path root = dir.path() / "alice";
  write_file(dir.path() / "answer.cu", "int answer;\n");
  write_file(root / "lab01_x/other.cu", "int x;\n");
  fs::create_symlink(dir.path() / "answer.cu", root / "lab01_x/work.cu");
  fs::create_directories(root / "real");
  write_file(root / "real/work.cu", "int y;\n");
  fs::create_directory_symlink(root / "real", root / "lab02_y");
  fs::create_directory_symlink(root, dir.path() / "bob");
  const auto problem = [&](const fs::path& at, const fs::path& file) {
    return gpulab::submitted_file_problem(at, file).value_or("(none)");
  };
  const std::string file_link = problem(root, "lab01_x/work.cu");
  EXPECT_TRUE(contains(file_link, "lab01_x/work.cu is a symbolic link (to " +
                                      (dir.path() / "answer.cu").string() + ")"))
      << file_link;
  EXPECT_TRUE(contains(problem(root, "lab02_y/work.cu"), "lab02_y is a symbolic link"))
      << "a linked folder on the way";
  EXPECT_TRUE(
      contains(problem(dir.path() / "bob", "lab01_x/other.cu"),
               "the submission folder " + (dir.path() / "bob").string() + " is a symbolic link"))
      << "a roster's linked student folder";
}

TEST(SubmittedFileProblem, HardLinksOtherFilesAndLargeFilesAreRefused) {
  const TempDir dir("gpulab-grading-test-submitted-kinds");
  write_file(dir.path() / "answer.cu", "int answer;\n");
  fs::create_directories(dir.path() / "sub/lab01_x");
  fs::create_hard_link(dir.path() / "answer.cu", dir.path() / "sub/lab01_x/work.cu");
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/work.cu").value_or("(none)"),
      "is a hard link (2 names)"));
  fs::create_directories(dir.path() / "sub/lab01_x/folder.cu");
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/folder.cu").value_or("(none)"),
      "is not a regular file"));
  write_file(dir.path() / "sub/lab01_x/big.cu", std::string(2048, 'x'));
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/big.cu", 1024).value_or("(none)"),
      "is larger than 1 KiB"));
  EXPECT_EQ(gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/big.cu"), std::nullopt)
      << "2 KiB is far below the 1 MiB a student file may have";
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/none.cu").value_or("(none)"),
      "does not exist"));
}

// ---------------------------------------------------------------------------------------------
// definition_line
// ---------------------------------------------------------------------------------------------

TEST(DefinitionLine, FindsTheDefinitionAtColumnZeroNotACallOrACommentOrAnotherName) {
  const std::string source =
      "// summarize_samples(x) in a comment\n"
      "#define X summarize_samples(1)\n"
      "namespace gpulab::lab01 {\n"
      "double my_summarize_samples(double x) { return x; }\n"
      "  const auto s = summarize_samples(samples);\n"
      "Summary summarize_samples(std::span<const double> samples_ms) {\n"
      "std::vector<double> time_kernel(const Launch& launch,\n"
      "                                cudaStream_t stream) {\n";
  EXPECT_EQ(definition_line(source, "summarize_samples"), 6);
  EXPECT_EQ(definition_line(source, "time_kernel"), 7);
  EXPECT_EQ(definition_line(source, "fraction_of_peak"), std::nullopt);
  EXPECT_EQ(definition_line("", "f"), std::nullopt);
  EXPECT_EQ(definition_line("int f(int);\nint gpulab::lab01::f(int x) {}", "f"), 1)
      << "a declaration at column 0 counts: the project's student files have none";
}

}  // namespace
}  // namespace gpulab
