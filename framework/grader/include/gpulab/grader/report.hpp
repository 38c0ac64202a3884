// The report of a whole grading and its files, one printer each: JSON (src/report_json.cpp),
// Gradescope's results.json (src/report_gradescope.cpp), JUnit XML (src/report_junit.cpp). The
// console's is `gpulab grade`'s (framework/cli).
#pragma once

#include <string>
#include <vector>

#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/seal.hpp"

namespace gpulab {

/// A whole grading: one submission, one backend, every lab graded.
struct GradeReport {
  std::string submission;  ///< what was graded (a path)
  std::string backend;     ///< "sim" or "cuda"
  std::string date;        ///< ISO 8601, UTC
  std::string gpulab_version;
  /// Where the tests ran: "bubblewrap", or "none: <why>" (sandbox.hpp).
  std::string sandbox;
  /// How the test processes were locked down: "seccomp", or "none: <why>" (lockdown.hpp).
  std::string lockdown;
  IntegrityCheck integrity;           ///< the instructor files before and after grading
  std::vector<std::string> ignored;   ///< submission files not graded (e.g. a changed test)
  std::vector<std::string> problems;  ///< what went wrong in grading itself
  std::vector<LabGrade> labs;
  [[nodiscard]] int earned() const;
  [[nodiscard]] int possible() const;
};

/// The report as JSON (schema_version 2), for scripts and the class loop.
[[nodiscard]] std::string report_json(const GradeReport& report);
/// Gradescope's results.json: score, output, and one test per graded test case (score,
/// max_score, name, output, visibility: hidden suites "after_published", others "visible").
[[nodiscard]] std::string gradescope_json(const GradeReport& report);
/// JUnit XML: one <testsuite> per lab, one <testcase> per graded test, <failure> or <skipped>
/// with the disposition and detail.
[[nodiscard]] std::string junit_xml(const GradeReport& report);

}  // namespace gpulab
