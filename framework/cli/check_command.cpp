// `gpulab check LAB`: the student's loop. Builds what changed in the student's own files (this
// tree's labs/), runs the lab's graded tests as `gpulab grade` does (gpulab/grader/session.hpp,
// without the seal: feedback, not a grade of record) and prints what each failed test checks, where
// the code it covers is and why it failed. Exit code 0 when every test passed, 1 otherwise.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/session.hpp"

namespace gpulab::cli {

namespace {

struct CheckOptions {
  GradeOptions grading;
  bool brief = false;
};

int check(CheckOptions options) {
  options.grading.each_test = !options.brief;
  const GradingResult result = grade_submission(options.grading);
  const GradeReport& report = result.report;
  int failed = 0;
  std::string labs;
  for (const LabGrade& lab : report.labs) {
    int passed = 0;
    for (const TestGrade& test : lab.tests) {
      passed += test.verdict.disposition == Disposition::passed ? 1 : 0;
    }
    failed += static_cast<int>(lab.tests.size()) - passed;
    labs += (labs.empty() ? "" : " ") + lab.lab;
    std::cout << "\n"
              << lab.lab << "  " << lab.title << ": " << lab.earned << "/" << lab.possible
              << " points, " << passed << " of " << lab.tests.size() << " tests passed ("
              << report.backend << " backend)\n";
    print_failures(std::cout, lab, options.brief);
  }
  for (const std::string& problem : report.problems) {
    std::cout << "problem: " << problem << "\n";
  }
  if (failed == 0 && result.code == kSuccess) {
    std::cout << "\nEvery test passed. `gpulab grade` gives the grade of record.\n";
    return kSuccess;
  }
  std::cout << "\n"
            << failed << (failed == 1 ? " test" : " tests")
            << " to fix. After an edit, run `gpulab check " << labs
            << "` again: it rebuilds what changed first.\n";
  return kFailure;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "check",
      "Your loop while working on a lab: rebuild your code in labs/, run the lab's graded tests "
      "and show what each failed test checks, where your code is and why it failed.");
  auto options = std::make_shared<CheckOptions>();
  GradeOptions& grading = options->grading;
  grading.command = "check";
  grading.for_record = false;
  add_grading_options(*command, grading);
  command->add_flag("--brief", options->brief, "One line per failed test");
  command->add_flag("--sanitize", grading.sanitize,
                    "The sim's sanitizer on for every kernel launch of the tests, not only in the "
                    "output checks: races on shared memory and reads of shared memory no thread "
                    "wrote fail the test that made them, with their lines (sim backend; slower)");
  command->footer(
      "Exit code: 0 when every test passed, 1 when one did not (or the code did not build). "
      "The points are those `gpulab grade` would give this code; the grade of record is "
      "`gpulab grade`'s.");
  return {command, [options] { return check(*options); }};
}

}  // namespace gpulab::cli
