// Unit tests of lab.hpp: the "not implemented" signal of a student stub, and the rule that a lab
// file and its solution differ only inside TODO(labNN) regions, checked on synthetic texts and on
// every solution file of this source tree.
#include "gpulab/core/lab.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "text_match.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

// One line per element, each ending in '\n'.
std::string text(const Lines& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += line + "\n";
  }
  return out;
}

std::string joined(const Lines& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += "\n  " + line;
  }
  return out.empty() ? " (none)" : out;
}

using gpulab::testing::contains;

// A student file with two regions, 11 lines.
const Lines kLab = {
    "#include \"lab01.hpp\"",                        // 1
    "",                                              // 2
    "double f(double x) {",                          // 3
    "  // TODO(lab01) BEGIN: return twice x",        // 4
    "  gpulab::not_implemented(\"lab01\", \"f\");",  // 5
    "  // TODO(lab01) END",                          // 6
    "}",                                             // 7
    "int g() {",                                     // 8
    "  // TODO(lab01) BEGIN: return 42",             // 9
    "  // TODO(lab01) END",                          // 10
    "}",                                             // 11
};

// Its solution, 13 lines: the same outside the regions, longer bodies inside them.
const Lines kSolution = {
    "#include \"lab01.hpp\"",                  // 1
    "",                                        // 2
    "double f(double x) {",                    // 3
    "  // TODO(lab01) BEGIN: return twice x",  // 4
    "  const double twice = 2 * x;",           // 5
    "  return twice;",                         // 6
    "  // TODO(lab01) END",                    // 7
    "}",                                       // 8
    "int g() {",                               // 9
    "  // TODO(lab01) BEGIN: return 42",       // 10
    "  return 42;",                            // 11
    "  // TODO(lab01) END",                    // 12
    "}",                                       // 13
};

// ---------------------------------------------------------------------------------------------
// compare_outside_todo on synthetic texts
// ---------------------------------------------------------------------------------------------

TEST(CompareOutsideTodo, IdenticalFilesAgree) {
  const Lines d = compare_outside_todo(text(kLab), text(kLab), "lab01");
  EXPECT_TRUE(d.empty()) << "differences:" << joined(d);
}

TEST(CompareOutsideTodo, DifferentRegionBodiesAreAllowed) {
  const Lines d = compare_outside_todo(text(kLab), text(kSolution), "lab01");
  EXPECT_TRUE(d.empty()) << "differences:" << joined(d);
}

TEST(CompareOutsideTodo, AFileWithoutRegionsAgreesWithItself) {
  const std::string plain = text({"int main() {", "  return 0;", "}"});
  EXPECT_TRUE(compare_outside_todo(plain, plain, "lab01").empty());
  EXPECT_TRUE(compare_outside_todo("", "", "lab01").empty());
}

TEST(CompareOutsideTodo, ADifferenceOutsideIsReportedWithBothLineNumbers) {
  Lines solution = kSolution;
  solution[8] = "long g() {";  // line 9 of the solution; line 8 of the lab
  const Lines d = compare_outside_todo(text(kLab), text(solution), "lab01");
  ASSERT_EQ(d.size(), 1u) << "differences:" << joined(d);
  EXPECT_TRUE(contains(d[0], "line 8 of the lab")) << d[0];
  EXPECT_TRUE(contains(d[0], "line 9 of the solution")) << d[0];
  EXPECT_TRUE(contains(d[0], "int g() {")) << d[0];
  EXPECT_TRUE(contains(d[0], "long g() {")) << d[0];
}

TEST(CompareOutsideTodo, AnExtraLineAtTheEndOfEitherFileIsReported) {
  Lines longer_solution = kSolution;
  longer_solution.emplace_back("int h() { return 1; }");
  const Lines d1 = compare_outside_todo(text(kLab), text(longer_solution), "lab01");
  ASSERT_EQ(d1.size(), 1u) << "differences:" << joined(d1);
  EXPECT_TRUE(contains(d1[0], "line 14 of the solution")) << d1[0];
  EXPECT_TRUE(contains(d1[0], "int h()")) << d1[0];

  Lines longer_lab = kLab;
  longer_lab.emplace_back("int h() { return 1; }");
  const Lines d2 = compare_outside_todo(text(longer_lab), text(kSolution), "lab01");
  ASSERT_EQ(d2.size(), 1u) << "differences:" << joined(d2);
  EXPECT_TRUE(contains(d2[0], "line 12 of the lab")) << d2[0];
}

TEST(CompareOutsideTodo, ARegionMissingFromTheSolutionIsReported) {
  // The solution kept g's body but dropped its markers.
  const Lines solution = {kSolution[0], kSolution[1],   kSolution[2], kSolution[3],
                          kSolution[4], kSolution[5],   kSolution[6], kSolution[7],
                          kSolution[8], "  return 42;", "}"};
  const Lines d = compare_outside_todo(text(kLab), text(solution), "lab01");
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(contains(d[0], "line 9 of the lab")) << d[0];
  EXPECT_TRUE(contains(d[0], "TODO(lab01) BEGIN")) << d[0];
}

TEST(CompareOutsideTodo, AnExtraRegionInTheSolutionIsReported) {
  const Lines lab = {"int g() {", "  return 42;", "}"};
  const Lines solution = {"int g() {", "  // TODO(lab01) BEGIN", "  return 42;",
                          "  // TODO(lab01) END", "}"};
  const Lines d = compare_outside_todo(text(lab), text(solution), "lab01");
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(contains(d[0], "line 2 of the solution")) << d[0];
}

TEST(CompareOutsideTodo, AnUnclosedRegionIsReportedWhereItOpened) {
  Lines lab = kLab;
  lab.erase(lab.begin() + 9);  // g's END (line 10)
  const Lines d = compare_outside_todo(text(lab), text(kSolution), "lab01");
  ASSERT_EQ(d.size(), 1u) << "differences:" << joined(d);
  EXPECT_TRUE(contains(d[0], "line 9 of the lab")) << d[0];
  EXPECT_TRUE(contains(d[0], "never closed")) << d[0];
}

TEST(CompareOutsideTodo, AnEndWithoutBeginIsReported) {
  Lines solution = kSolution;
  solution.erase(solution.begin() + 9);  // g's BEGIN (line 10)
  const Lines d = compare_outside_todo(text(kLab), text(solution), "lab01");
  ASSERT_EQ(d.size(), 1u) << "differences:" << joined(d);
  EXPECT_TRUE(contains(d[0], "line 11 of the solution")) << d[0];
  EXPECT_TRUE(contains(d[0], "never opened")) << d[0];
}

TEST(CompareOutsideTodo, ABeginInsideAnOpenRegionIsReported) {
  const Lines lab = {"// TODO(lab01) BEGIN: outer", "// TODO(lab01) BEGIN: nested", "x();",
                     "// TODO(lab01) END"};
  const Lines d = compare_outside_todo(text(lab), text(lab), "lab01");
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(contains(d[0], "line 2 of the lab")) << d[0];
  EXPECT_TRUE(contains(d[0], "line 1")) << d[0];
}

TEST(CompareOutsideTodo, ADifferentBeginHintIsReported) {
  Lines solution = kSolution;
  solution[3] = "  // TODO(lab01) BEGIN: return x times two";
  const Lines d = compare_outside_todo(text(kLab), text(solution), "lab01");
  ASSERT_EQ(d.size(), 1u) << "differences:" << joined(d);
  EXPECT_TRUE(contains(d[0], "line 4 of the lab / line 4 of the solution")) << d[0];
  EXPECT_TRUE(contains(d[0], "return x times two")) << d[0];
}

TEST(CompareOutsideTodo, AnotherLabsTagIsPlainText) {
  // For lab01 the lab02 markers are ordinary lines: identical ones agree, and a body that differs
  // between them is a difference outside lab01's regions.
  const Lines lab = {"// TODO(lab02) BEGIN", "stub();", "// TODO(lab02) END"};
  const Lines solution = {"// TODO(lab02) BEGIN", "done();", "// TODO(lab02) END"};
  EXPECT_TRUE(compare_outside_todo(text(lab), text(lab), "lab01").empty());
  const Lines d = compare_outside_todo(text(lab), text(solution), "lab01");
  ASSERT_EQ(d.size(), 1u) << "differences:" << joined(d);
  EXPECT_TRUE(contains(d[0], "line 2 of the lab / line 2 of the solution")) << d[0];
  // And for lab02 they are regions.
  EXPECT_TRUE(compare_outside_todo(text(lab), text(solution), "lab02").empty());
}

TEST(CompareOutsideTodo, ATagThatOnlyStartsLikeTheLabsIsNotARegion) {
  // "TODO(lab1)" must not match "TODO(lab10)".
  const Lines lab = {"// TODO(lab10) BEGIN", "stub();", "// TODO(lab10) END"};
  const Lines solution = {"// TODO(lab10) BEGIN", "done();", "// TODO(lab10) END"};
  EXPECT_FALSE(compare_outside_todo(text(lab), text(solution), "lab1").empty());
}

// ---------------------------------------------------------------------------------------------
// not_implemented
// ---------------------------------------------------------------------------------------------

void throw_from_a_lab_file();  // defined at the end of this file, under a #line of a lab file

TEST(NotImplemented, ThrowsAMessageNamingLabFunctionFileAndLine) {
  const int line = __LINE__ + 2;
  try {
    not_implemented("lab07", "tile_gemm");
    FAIL() << "not_implemented returned";
  } catch (const NotImplemented& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "lab07: tile_gemm is not implemented yet")) << message;
    EXPECT_TRUE(contains(message, "TODO(lab07)")) << message;
    EXPECT_TRUE(contains(message, "lab_files_test.cpp:" + std::to_string(line))) << message;
  }
}

TEST(NotImplemented, IsALogicError) {
  EXPECT_THROW(not_implemented("lab01", "f"), std::logic_error);
}

TEST(NotImplemented, NamesALabFileRelativeToTheSourceTree) {
  try {
    throw_from_a_lab_file();
    FAIL() << "not_implemented returned";
  } catch (const NotImplemented& e) {
    EXPECT_STREQ(e.what(),
                 "lab01: time_kernel is not implemented yet (fill in the TODO(lab01) region at "
                 "labs/lab01_benchmarking/benchmark.cu:42)");
  }
}

// ---------------------------------------------------------------------------------------------
// This source tree
// ---------------------------------------------------------------------------------------------

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

TEST(LabFiles, EverySolutionMatchesItsLabOutsideTodoRegions) {
  const fs::path root = GPULAB_SOURCE_DIR;
  const fs::path solutions = root / "solutions";
  if (!fs::is_directory(solutions)) {
    GTEST_SKIP() << "no solutions/ folder in " << root.string()
                 << ": a student release has no solutions to compare";
  }
  const std::regex lab_dir_pattern("(lab[0-9][0-9])_.*");
  int files = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(solutions)) {
    std::smatch match;
    const std::string dir_name = dir.path().filename().string();
    if (!dir.is_directory() || !std::regex_match(dir_name, match, lab_dir_pattern)) {
      continue;
    }
    const std::string lab = match[1];
    for (const fs::directory_entry& file : fs::recursive_directory_iterator(dir.path())) {
      if (!file.is_regular_file()) {
        continue;
      }
      const fs::path relative = fs::relative(file.path(), solutions);
      const fs::path lab_file = root / "labs" / relative;
      SCOPED_TRACE("solutions/" + relative.generic_string());
      ++files;
      ASSERT_TRUE(fs::is_regular_file(lab_file))
          << "labs/" << relative.generic_string() << " is missing: every solution file replaces "
          << "a student file of the same name";
      const std::string lab_text = read_file(lab_file);
      const Lines d = compare_outside_todo(lab_text, read_file(file.path()), lab);
      EXPECT_TRUE(d.empty()) << "labs/" << relative.generic_string()
                             << " and its solution differ outside the TODO(" << lab
                             << ") regions:" << joined(d);
      EXPECT_TRUE(contains(lab_text, "TODO(" + lab + ") BEGIN"))
          << "labs/" << relative.generic_string() << " has no TODO(" << lab
          << ") region: a student file with nothing to fill in has no solution";
    }
  }
  EXPECT_GT(files, 0) << "solutions/ exists but holds no labNN_* files";
}

}  // namespace
}  // namespace gpulab

// Last in the file: the #line below renames the rest of it, as a stub in labs/ is named in any
// checkout, so nothing after it may rely on this file's own name or line numbers.
namespace gpulab {
namespace {

void throw_from_a_lab_file() {
#line 42 "/home/student/gpulab/labs/lab01_benchmarking/benchmark.cu"
  not_implemented("lab01", "time_kernel");
}

}  // namespace
}  // namespace gpulab
