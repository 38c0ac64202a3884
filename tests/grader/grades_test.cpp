// Unit tests of grades.hpp: what the test runner's exit says, the grade of a test from that exit
// and its verdict, the tests a forbidden call rejects, a lab's total, and compiler error and
// warning excerpts. The reports: reports_test.cpp.
#include "gpulab/grader/grades.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "text_match.hpp"

namespace gpulab {

// gtest prints dispositions and outcomes by their names.
void PrintTo(Disposition disposition, std::ostream* out) {
  *out << to_string(disposition);
}
void PrintTo(TestOutcome outcome, std::ostream* out) {
  *out << to_string(outcome);
}

namespace {

using Lines = std::vector<std::string>;

using gpulab::testing::contains;
using gpulab::testing::joined;

// ---------------------------------------------------------------------------------------------
// Running a graded test: what the runner's exit says
// ---------------------------------------------------------------------------------------------

ProcessResult exited(int code) {
  ProcessResult result;
  result.started = true;
  result.exit_code = code;
  return result;
}

TEST(RunnerOutcome, FollowsTheRunnersExitStatus) {
  EXPECT_EQ(runner_outcome(exited(0)), TestOutcome::passed);
  EXPECT_EQ(runner_outcome(exited(77)), TestOutcome::skipped);
  for (const int code : {1, 2, 76, 78, 255}) {
    EXPECT_EQ(runner_outcome(exited(code)), TestOutcome::failed) << code;
  }
  ProcessResult signalled = exited(0);
  signalled.exit_code.reset();
  signalled.signal = 9;
  EXPECT_EQ(runner_outcome(signalled), TestOutcome::failed);
  ProcessResult timed_out = exited(0);
  timed_out.exit_code.reset();
  timed_out.timed_out = true;
  EXPECT_EQ(runner_outcome(timed_out), TestOutcome::failed);
  EXPECT_EQ(runner_outcome(ProcessResult{}), TestOutcome::missing);
}

TEST(TestOutcome, Names) {
  EXPECT_EQ(to_string(TestOutcome::passed), "passed");
  EXPECT_EQ(to_string(TestOutcome::failed), "failed");
  EXPECT_EQ(to_string(TestOutcome::skipped), "skipped");
  EXPECT_EQ(to_string(TestOutcome::missing), "missing");
}

TEST(RejectForbiddenCalls, FailsTheTestsCoveringTheWorkTheCallDoesAndNamesIt) {
  LabEntry lab;
  lab.forbidden_calls = {{"gpulab::summarize(", {"summarize_samples"}},
                         {"gpulab::measure(", {"time_kernel"}},
                         {"gpulab::quantile(", {"unused_helper"}}};
  LabGrade grade;
  for (const auto& [name, covers] :
       {std::pair{"Summary.Mean", Lines{"summarize_samples"}},
        std::pair{"Timing.Order", Lines{"time_kernel"}},
        std::pair{"Both.Errors", Lines{"time_kernel", "summarize_samples"}}}) {
    grade.tests.push_back(
        grade_test({name, 5, false, covers, "x"}, TestOutcome::missing, std::nullopt));
  }
  const std::vector<ForbiddenCall> calls = {
      {"benchmark.cu", "gpulab::summarize(std::span<double const>)"},
      {"benchmark.cu", "gpulab::quantile(double)"}};
  const Lines uncovered = reject_forbidden_calls(grade, lab, calls);
  EXPECT_EQ(grade.tests[0].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(grade.tests[0].verdict.detail,
            "benchmark.cu calls gpulab::summarize(std::span<double const>), which does the work "
            "of summarize_samples: the lab asks for your own implementation");
  EXPECT_EQ(grade.tests[1].verdict.disposition, Disposition::not_run) << "time_kernel is its own";
  EXPECT_EQ(grade.tests[2].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(uncovered, (Lines{"benchmark.cu calls gpulab::quantile(double), which does the work "
                              "of unused_helper: the lab asks for your own implementation"}))
      << "a call no test covers rejects the lab";
  EXPECT_TRUE(reject_forbidden_calls(grade, lab, {}).empty());
}

TEST(RejectForbiddenCalls, ACallMatchingSeveralRulesFailsTheTestsOfEach) {
  LabEntry lab;
  lab.forbidden_calls = {{"gpulab::Roofline::", {"ridge_point"}},
                         {"gpulab::Roofline::bound(", {"place_on_roofline"}}};
  LabGrade grade;
  for (const auto& [name, covers] : {std::pair{"Ridge.Point", Lines{"ridge_point"}},
                                     std::pair{"Place.Op", Lines{"place_on_roofline"}}}) {
    grade.tests.push_back(
        grade_test({name, 5, false, covers, "x"}, TestOutcome::missing, std::nullopt));
  }
  EXPECT_TRUE(
      reject_forbidden_calls(grade, lab,
                             {{"bottleneck.cpp", "gpulab::Roofline::bound(gpulab::OpCost const&)"}})
          .empty());
  EXPECT_EQ(grade.tests[0].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(grade.tests[1].verdict.disposition, Disposition::rejected);
  EXPECT_NE(grade.tests[1].verdict.detail.find("the work of ridge_point and place_on_roofline"),
            std::string::npos)
      << grade.tests[1].verdict.detail;
}

// ---------------------------------------------------------------------------------------------
// grade_test, total_lab
// ---------------------------------------------------------------------------------------------

const GradedTest kTest{
    "Lab01Summary.CountMinMaxAndMean", 5, false, {"summarize_samples"}, "count, min, max and mean"};

std::string describe(const TestGrade& grade) {
  return std::string(to_string(grade.verdict.disposition)) + " " + std::to_string(grade.earned) +
         "/" + std::to_string(grade.points) + ": " + grade.verdict.detail;
}

TEST(GradeTest, PassedByTheRunnerAndTheVerdictEarnsThePoints) {
  const TestGrade grade =
      grade_test(kTest, TestOutcome::passed, Verdict{Disposition::passed, "", {}});
  EXPECT_EQ(grade.name, "Lab01Summary.CountMinMaxAndMean");
  EXPECT_EQ(grade.points, 5);
  EXPECT_EQ(grade.earned, 5) << describe(grade);
  EXPECT_FALSE(grade.hidden);
  EXPECT_EQ(grade.covers, (Lines{"summarize_samples"}));
  EXPECT_EQ(grade.checks, "count, min, max and mean");
  EXPECT_EQ(grade.verdict.disposition, Disposition::passed);
}

TEST(GradeTest, HiddenIsKept) {
  const GradedTest hidden{"Lab01Hidden.Robustness", 10, true, {"f"}, "what it checks"};
  const TestGrade grade =
      grade_test(hidden, TestOutcome::passed, Verdict{Disposition::passed, "", {}});
  EXPECT_TRUE(grade.hidden);
  EXPECT_EQ(grade.earned, 10);
}

TEST(GradeTest, AVerdictOfPassedThatTheRunnersExitDisagreesWithEarnsNothing) {
  for (const TestOutcome runner :
       {TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
    const TestGrade grade = grade_test(kTest, runner, Verdict{Disposition::passed, "", {}});
    EXPECT_EQ(grade.earned, 0) << describe(grade);
    EXPECT_EQ(grade.verdict.disposition, Disposition::failed) << describe(grade);
    EXPECT_TRUE(contains(grade.verdict.detail, "verdict file says passed")) << describe(grade);
    EXPECT_TRUE(contains(grade.verdict.detail, "exit says " + std::string(to_string(runner))))
        << describe(grade);
  }
}

TEST(GradeTest, NoVerdictIsNotRun) {
  for (const TestOutcome runner :
       {TestOutcome::passed, TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
    const TestGrade grade = grade_test(kTest, runner, std::nullopt);
    EXPECT_EQ(grade.earned, 0) << describe(grade);
    EXPECT_EQ(grade.points, 5);
    EXPECT_EQ(grade.verdict.disposition, Disposition::not_run) << describe(grade);
    EXPECT_FALSE(grade.verdict.detail.empty());
  }
  EXPECT_TRUE(contains(grade_test(kTest, TestOutcome::passed, std::nullopt).verdict.detail,
                       "no verdict file (the test runner: passed)"));
  EXPECT_TRUE(contains(grade_test(kTest, TestOutcome::missing, std::nullopt).verdict.detail,
                       "the test runner did not run it"));
}

TEST(GradeTest, EveryOtherDispositionEarnsNothingAndIsKept) {
  for (int i = 0; i < kDispositionCount; ++i) {
    const auto disposition = static_cast<Disposition>(i);
    if (disposition == Disposition::passed) {
      continue;
    }
    for (const TestOutcome runner :
         {TestOutcome::passed, TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
      const Verdict verdict{disposition, "why", {"line 1", "line 2"}};
      const TestGrade grade = grade_test(kTest, runner, verdict);
      EXPECT_EQ(grade.earned, 0) << to_string(disposition) << "/" << to_string(runner);
      EXPECT_EQ(grade.points, 5);
      EXPECT_EQ(grade.verdict.disposition, disposition) << to_string(runner);
      EXPECT_EQ(grade.verdict.detail, "why");
      EXPECT_EQ(grade.verdict.excerpt, (Lines{"line 1", "line 2"}));
    }
  }
}

TestGrade graded(const std::string& name, int points, bool passed, bool hidden = false) {
  return grade_test({name, points, hidden, {"f"}, "what it checks"},
                    passed ? TestOutcome::passed : TestOutcome::failed,
                    Verdict{passed ? Disposition::passed : Disposition::failed, "", {}});
}

TEST(TotalLab, SumsEarnedAndPossible) {
  LabGrade lab;
  lab.earned = 999;  // recomputed, not added to
  lab.possible = 999;
  lab.tests = {graded("S.A", 5, true), graded("S.B", 10, false), graded("S.C", 20, true, true)};
  total_lab(lab);
  EXPECT_EQ(lab.earned, 25);
  EXPECT_EQ(lab.possible, 35);
  lab.tests.clear();
  total_lab(lab);
  EXPECT_EQ(lab.earned, 0);
  EXPECT_EQ(lab.possible, 0);
}

// ---------------------------------------------------------------------------------------------
// compiler_errors
// ---------------------------------------------------------------------------------------------

TEST(CompilerErrors, GccErrorsWithTheSourceLineAfterEach) {
  const std::string output =
      "[1/3] Building CXX object labs/CMakeFiles/lab01.dir/lab01_benchmarking/benchmark.cpp.o\n"
      "FAILED: labs/CMakeFiles/lab01.dir/lab01_benchmarking/benchmark.cpp.o\n"
      "/usr/bin/c++ -I/src/framework/core/include -O2 -g -Wall -Wextra -Werror -std=c++20 -o "
      "benchmark.cpp.o -c /src/labs/lab01_benchmarking/benchmark.cpp\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp: In function 'double total(const "
      "std::vector<double>&)':\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp:31:10: error: 'totl' was not declared in this "
      "scope; did you mean 'total'?\n"
      "   31 |   return totl;\n"
      "      |          ^~~~\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp:40:3: error: expected ';' before '}' token\n"
      "   40 |   }\n"
      "      |   ^\n"
      "ninja: build stopped: subcommand failed.\n";
  const Lines expected = {
      "/src/labs/lab01_benchmarking/benchmark.cpp:31:10: error: 'totl' was not declared in this "
      "scope; did you mean 'total'?",
      "   31 |   return totl;",
      "/src/labs/lab01_benchmarking/benchmark.cpp:40:3: error: expected ';' before '}' token",
      "   40 |   }",
  };
  const Lines got = compiler_errors(output);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(CompilerErrors, AWarningMadeAnErrorIsAnError) {
  const Lines got = compiler_errors(
      "x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]\n"
      "    3 |   int n = 0;\n");
  EXPECT_EQ(got, (Lines{"x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]",
                        "    3 |   int n = 0;"}));
}

TEST(CompilerErrors, NvccErrors) {
  const std::string output =
      "FAILED: labs/CMakeFiles/lab02.dir/lab02_profiling/kernels.cu.o\n"
      "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -Werror all-warnings -lineinfo "
      "-c /src/labs/lab02_profiling/kernels.cu -o kernels.cu.o\n"
      "/src/labs/lab02_profiling/kernels.cu(27): error: identifier \"blockIdxx\" is undefined\n"
      "      int i = blockIdxx.x * blockDim.x + threadIdx.x;\n"
      "              ^\n"
      "\n"
      "1 error detected in the compilation of \"/src/labs/lab02_profiling/kernels.cu\".\n"
      "ninja: build stopped: subcommand failed.\n";
  const Lines expected = {
      "/src/labs/lab02_profiling/kernels.cu(27): error: identifier \"blockIdxx\" is undefined",
      "      int i = blockIdxx.x * blockDim.x + threadIdx.x;",
      "1 error detected in the compilation of \"/src/labs/lab02_profiling/kernels.cu\".",
  };
  const Lines got = compiler_errors(output);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(CompilerErrors, AtMostMaxLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "x.cpp:" + std::to_string(i) + ":1: error: e" + std::to_string(i) + "\n";
  }
  const Lines got = compiler_errors(output, 5);
  ASSERT_EQ(got.size(), 5u) << joined(got);
  EXPECT_EQ(got.front(), "x.cpp:0:1: error: e0");
  EXPECT_EQ(got.back(), "x.cpp:4:1: error: e4");
  EXPECT_EQ(compiler_errors(output).size(), 12u);
}

TEST(CompilerWarnings, GccAndNvccWarningsWithTheSourceLineAfterEach) {
  const std::string output =
      "[1/3] Building CXX object labs/CMakeFiles/lab01.dir/benchmark.cpp.o\n"
      "/home/a/sub/benchmark.cpp: In function 'double total(const std::vector<double>&)':\n"
      "/home/a/sub/benchmark.cpp:31:10: warning: use of old-style cast to 'double' "
      "[-Wold-style-cast]\n"
      "   31 |   return (double)n;\n"
      "      |          ^~~~~~~~\n"
      "/home/a/sub/kernels.cu(27): warning #177-D: variable \"x\" was declared but never "
      "referenced\n"
      "      int x = 0;\n"
      "[2/3] Linking CXX static library labs/liblab01.a\n";
  const Lines expected = {
      "/home/a/sub/benchmark.cpp:31:10: warning: use of old-style cast to 'double' "
      "[-Wold-style-cast]",
      "   31 |   return (double)n;",
      "/home/a/sub/kernels.cu(27): warning #177-D: variable \"x\" was declared but never "
      "referenced",
      "      int x = 0;",
  };
  EXPECT_EQ(compiler_warnings(output), expected) << joined(compiler_warnings(output));
}

TEST(CompilerWarnings, AWarningWithoutASourceLineDoesNotTakeTheBuildToolsNextLine) {
  // The kernel table's note that nvcc cannot compile a student's file (kernel_table_ptxas.cmake)
  // is one line; the build's progress lines after it are ninja's and make's, not source.
  const std::string output =
      "/s/attention.cu: warning: nvcc cannot compile this file, so on a GPU it would not build\n"
      "[6/8] Writing the kernel table of gpulab.lab04.submission.kernel_table\n"
      "/s/memory.cu: warning: nvcc cannot compile this file\n"
      "[ 50%] Building CXX object labs/CMakeFiles/x.dir/memory.cu.o\n";
  const Lines expected = {
      "/s/attention.cu: warning: nvcc cannot compile this file, so on a GPU it would not build",
      "/s/memory.cu: warning: nvcc cannot compile this file",
  };
  EXPECT_EQ(compiler_warnings(output), expected) << joined(compiler_warnings(output));
}

TEST(CompilerWarnings, NoneWithoutAWarningAndErrorsAreNotWarnings) {
  EXPECT_TRUE(compiler_warnings("").empty());
  EXPECT_TRUE(compiler_warnings("[1/2] Building CXX object a.o\n[2/2] Linking a\n").empty());
  EXPECT_TRUE(compiler_warnings("x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]\n")
                  .empty());
  EXPECT_TRUE(compiler_warnings("-Wall -Wextra -Wno-warning-option-name\n").empty());
}

TEST(CompilerWarnings, AtMostMaxLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "x.cpp:" + std::to_string(i) + ":1: warning: w" + std::to_string(i) + "\n";
  }
  const Lines got = compiler_warnings(output, 5);
  ASSERT_EQ(got.size(), 5u) << joined(got);
  EXPECT_EQ(got.back(), "x.cpp:4:1: warning: w4");
  EXPECT_EQ(compiler_warnings(output).size(), 12u);
}

TEST(CompilerErrors, WithoutAnErrorLineTheLastLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "line " + std::to_string(i) + "\n";
  }
  Lines expected;
  for (int i = 8; i < 20; ++i) {
    expected.push_back("line " + std::to_string(i));
  }
  EXPECT_EQ(compiler_errors(output), expected) << joined(compiler_errors(output));
  EXPECT_EQ(compiler_errors("only\ntwo\n"), (Lines{"only", "two"}));
  EXPECT_TRUE(compiler_errors("").empty());
}

TEST(CompilerErrors, ControlCharactersAndInvalidUtf8AreReplaced) {
  const Lines got = compiler_errors("x.cpp:1:1: \x1b[01;31merror:\x1b[m bad \xff byte \xc3\xa9\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "x.cpp:1:1: ?[01;31merror:?[m bad ? byte \xc3\xa9");
}

}  // namespace
}  // namespace gpulab
