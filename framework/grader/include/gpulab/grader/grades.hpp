// Grades: what the test runner's exit says, the grade of each graded test from that exit and its
// verdict, the tests a forbidden call rejects, a lab's total, and the compiler's errors and
// warnings a student reads.
//
// A graded test earns its points only when the test runner (framework/grader/runner.cpp) exited
// 0 AND its verdict file says passed (gpulab/grader/verdict.hpp). Every other disposition earns
// nothing and is listed with its points.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/grader/code_checks.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/verdict.hpp"

namespace gpulab {

/// What the test runner's exit said about one test.
enum class TestOutcome {
  passed,   ///< exit 0
  failed,   ///< any other exit, a signal, or the grader's own time limit
  skipped,  ///< exit 77: skipped or not graded
  missing,  ///< not run at all (it could not be started)
};

/// "passed", "failed", "skipped", "missing".
[[nodiscard]] std::string_view to_string(TestOutcome outcome) noexcept;

/// The outcome of a test runner's process.
[[nodiscard]] TestOutcome runner_outcome(const ProcessResult& runner);

/// The grade of one test.
struct TestGrade {
  std::string name;  ///< "Suite.Name"
  int points = 0;    ///< possible
  int earned = 0;    ///< points when passed, else 0
  bool hidden = false;
  std::vector<std::string> covers;  ///< GradedTest::covers
  std::string checks;               ///< GradedTest::checks
  Verdict verdict;                  ///< disposition, detail, excerpt
};

/// A test's grade from the test runner's exit and its verdict (nullopt: no verdict file).
/// Passed only when both say so; a disagreement is a failure that says so.
[[nodiscard]] TestGrade grade_test(const GradedTest& test, TestOutcome runner,
                                   const std::optional<Verdict>& verdict);

/// The grade of one lab.
struct LabGrade {
  std::string lab;                        ///< "lab01"
  std::string title;                      ///< the lab's title
  int earned = 0;                         ///< sum of earned points
  int possible = 0;                       ///< sum of points
  std::string program;                    ///< the graded tests' program, built from the code
  std::vector<std::string> build_errors;  ///< the compiler's first errors when it did not build
  /// The compiler's warnings (never fatal: no points lost).
  std::vector<std::string> build_warnings;
  /// What its code does that lab code must not (code_checks.hpp): no test ran.
  std::vector<std::string> rejected_for;
  /// Where each function its tests cover is defined in the graded files: "<file>:<line>".
  std::map<std::string, std::string> defined_at;
  std::vector<TestGrade> tests;
};

/// Marks rejected, not to be run, the tests of `grade` that cover a lab function whose work a
/// forbidden call in the code does (the functions of every rule of `lab`'s forbidden_calls the
/// call matches), the detail naming the call and the file. Returns one line for each call no test
/// covers: then the whole lab is rejected.
[[nodiscard]] std::vector<std::string> reject_forbidden_calls(
    LabGrade& grade, const LabEntry& lab, const std::vector<ForbiddenCall>& calls);

/// Sums a lab's tests into earned and possible.
void total_lab(LabGrade& lab);

/// The first error lines of a compiler's output (lines with "error" and the one after each), at
/// most `max_lines`; the last lines when none says "error".
[[nodiscard]] std::vector<std::string> compiler_errors(std::string_view output,
                                                       std::size_t max_lines = 12);

/// The compiler's warnings in a build's output (each warning line and the one after it, the
/// source line), at most `max_lines`; none when it warned of nothing.
[[nodiscard]] std::vector<std::string> compiler_warnings(std::string_view output,
                                                         std::size_t max_lines = 12);

}  // namespace gpulab
