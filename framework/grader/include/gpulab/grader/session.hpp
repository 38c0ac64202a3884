// One grading of lab code, the steps `gpulab grade` (a grade of record) and `gpulab check` (the
// student's loop) share:
//
//   1. The instructor files (tests, interfaces, CMake, framework, and what grading runs of the
//      build, the test runner built first) are checked against the seal, kept outside the build
//      (default_seal_path, or --seal), written the first time (or with --reseal). `gpulab check`
//      skips this step and step 5: it grades the student's own tree for feedback, not for record.
//   2. Only the student files of each lab (its TODO files) are copied from the submission into a
//      free grading slot of the build, <build>/grading/slot<N>/submission/ (a grading waits for
//      one: GPULAB_GRADING_SLOTS gradings run at once); everything else comes from the
//      instructor's tree. A submitted copy of an instructor file is ignored and listed.
//   3. Each lab's graded suite is built on its own (one build at a time in a build folder): a lab
//      that does not compile scores 0 with the compiler's first errors, and the other labs are
//      still graded. Code that breaks a rule of lab code (code_checks.hpp) is rejected before any
//      test runs; a call to a framework function the lab forbids fails the tests that cover the
//      function making it.
//   4. Every graded test case runs through gpulab-grade-runner, as ctest runs it (own process
//      group, time limit, verdict from evidence, in the sandbox where bubblewrap works), -j at a
//      time (on the cuda backend, one grading's tests at a time on the GPU); the points are those
//      of tests whose runner exited 0 and whose verdict file agrees.
//   5. The instructor files and the graded test programs are checked again: code that changed
//      them while it ran gets nothing.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab {

struct GradeOptions {
  std::string command = "grade";  ///< what progress lines start with: "gpulab <command>: "
  bool for_record = true;         ///< seal the instructor files (false: `gpulab check`)
  std::vector<std::string> labs;
  std::string submission;
  std::string backend;
  std::string seal;
  double timeout_s = 0;
  int jobs = 0;       ///< builds and tests at once (0: the default)
  int test_jobs = 0;  ///< graded tests at once, overriding jobs (0: jobs; on cuda 1)
  bool reseal = false;
  bool no_sandbox = false;
  bool each_test = true;  ///< a progress line per test (false: one for all, `gpulab check --brief`)
  bool sanitize = false;  ///< the sim's sanitizer on for every launch (`gpulab check --sanitize`)
  CudaDevices cuda;       ///< the cuda backend's devices (empty: the command has no cuda backend)
};

/// The environment each graded test of `run` runs with, on `backend`: the run's own (the
/// manifest's), and GPULAB_SIM_SANITIZE=1 where `options.sanitize` asks for the sim's sanitizer.
/// Throws UsageError for --sanitize on the cuda backend (compute-sanitizer is the tool there) or
/// in a grading of record.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> graded_test_environment(
    const LabRun& run, const std::string& backend, const GradeOptions& options);

/// What a grading gave: its report (totalled) and the exit code (kSuccess when grading ran,
/// kIntegrityFailure, or kFailure when grading itself had problems).
struct GradingResult {
  GradeReport report;
  int code = 0;
};

/// Grades the submission (the steps above), printing progress lines. Throws UsageError for bad
/// options and std::runtime_error when grading cannot start.
[[nodiscard]] GradingResult grade_submission(const GradeOptions& options);

/// What a student reads about each test of `lab` that did not pass: its name and points, what it
/// checks, where the functions it covers are in the student's files, why it failed and the
/// failure's lines (`brief`: one line per test). Compiler errors and rejections first.
void print_failures(std::ostream& out, const LabGrade& lab, bool brief);

}  // namespace gpulab
