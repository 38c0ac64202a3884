// `gpulab grade`: grades one submission of lab code for the record (gpulab/grader/session.hpp has
// the steps). A report is always printed and written (--json, --gradescope, --junit). Exit code:
// 0 when grading ran, whatever the score; 3 on an integrity failure; 1 when grading itself failed.
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/roster.hpp"
#include "gpulab/grader/session.hpp"

namespace gpulab::cli {

namespace {

struct GradeCommandOptions {
  GradeOptions grading;
  RosterOptions roster;
  std::string json;
  std::string gradescope;
  std::string junit;
  bool verbose = false;
  bool brief = false;
};

void print_report(const GradeReport& report, const GradeCommandOptions& options) {
  for (const LabGrade& lab : report.labs) {
    std::cout << "\n"
              << lab.lab << "  " << lab.title << ": " << lab.earned << "/" << lab.possible
              << " points\n";
    Table table({{"test", "", Align::left},
                 {"points", ""},
                 {"result", "", Align::left},
                 {"detail", "", Align::left}});
    for (const TestGrade& test : lab.tests) {
      std::string detail = test.verdict.detail;
      if (!options.verbose && detail.size() > 70) {
        detail = detail.substr(0, 67) + "...";
      }
      table.add_row({test.name + (test.hidden ? " (hidden)" : ""),
                     std::to_string(test.earned) + "/" + std::to_string(test.points),
                     display_name(test.verdict.disposition), detail});
    }
    std::cout << table;
    print_failures(std::cout, lab, options.brief);
  }
  for (const std::string& file : report.ignored) {
    std::cout << "\nignored: " << file;
  }
  for (const std::string& problem : report.problems) {
    std::cout << "\nproblem: " << problem;
  }
  Table summary({{"lab", "", Align::left}, {"title", "", Align::left}, {"points", ""}});
  for (const LabGrade& lab : report.labs) {
    summary.add_row(
        {lab.lab, lab.title, std::to_string(lab.earned) + "/" + std::to_string(lab.possible)});
  }
  summary.add_row(
      {"total", "", std::to_string(report.earned()) + "/" + std::to_string(report.possible())});
  std::cout << "\n\nGrade of " << report.submission << " (" << report.backend
            << " backend; only passed tests earn points)\n"
            << summary;
}

void save_reports(const GradeReport& report, const GradeCommandOptions& options) {
  const std::pair<const std::string*, std::string> outputs[] = {
      {&options.json, report_json(report)},
      {&options.gradescope, gradescope_json(report)},
      {&options.junit, junit_xml(report)}};
  for (const auto& [path, text] : outputs) {
    if (!path->empty()) {
      write_file_atomically(*path, text);
      std::cout << "saved " << *path << "\n";
    }
  }
}

int grade(const GradeCommandOptions& options) {
  if (!options.roster.roster.empty()) {
    RosterOptions roster = options.roster;
    roster.grading = options.grading;
    roster.parallel = options.grading.jobs;
    return grade_roster(roster);
  }
  const GradingResult result = grade_submission(options.grading);
  print_report(result.report, options);
  save_reports(result.report, options);
  return result.code;
}

}  // namespace

void add_grading_options(CLI::App& command, GradeOptions& options) {
  options.cuda = cuda_devices();
  command.add_option("LAB", options.labs, "lab01, 02, 3, ... or all (default: all)");
  command
      .add_option("--backend", options.backend,
                  "cuda, sim or auto (default auto: cuda when a GPU is usable, else sim)")
      ->check(CLI::IsMember({"cuda", "sim", "auto"}));
  command
      .add_option("--timeout", options.timeout_s,
                  "Time limit of each test in seconds (at most the build's, "
                  "GPULAB_LAB_TEST_TIMEOUT)")
      ->check(CLI::PositiveNumber);
  command
      .add_option("-j,--jobs", options.jobs,
                  "Builds and tests run in parallel (default: all cores; tests one at a time "
                  "on the cuda backend, where they share the GPU and time kernels)")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--test-jobs", options.test_jobs,
                  "Graded tests run in parallel, whatever -j says (default: -j; without -j, 1 "
                  "on the cuda backend)")
      ->check(CLI::PositiveNumber);
  command.add_flag("--no-sandbox", options.no_sandbox,
                   "Run the tests outside the bubblewrap sandbox (not for grades of record)");
}

Command add_grade_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "grade",
      "Build and grade lab code: each graded test in its own process group with a time limit, "
      "points from the evidence of each test process, a report always written.");
  auto options = std::make_shared<GradeCommandOptions>();
  GradeOptions& grading = options->grading;
  add_grading_options(*command, grading);
  CLI::Option* submission = command->add_option(
      "--submission", grading.submission,
      "The code to grade: a copy of the tree, or a folder with the labs' folders "
      "(e.g. solutions); only the labs' student files are taken from it "
      "(default: this tree's labs/)");
  CLI::Option* roster =
      command->add_option("--roster", options->roster.roster,
                          "Grade a class: every folder of DIR is a student's submission, graded "
                          "as --submission would grade it, -j at a time (default: as the cores "
                          "and grading slots allow; one at a time on cuda); already graded and "
                          "unchanged submissions are kept (docs/grading.md)");
  roster->excludes(submission);
  command
      ->add_option("--out", options->roster.out,
                   "With --roster: where the gradebook, the class summary and each "
                   "student's reports go (default: <DIR>-grades beside DIR)")
      ->needs(roster);
  command
      ->add_flag("--regrade", options->roster.regrade,
                 "With --roster: grade every submission again, changed or not")
      ->needs(roster);
  RosterOptions& r = options->roster;
  CLI::Option* slurm =
      command
          ->add_flag("--slurm", r.slurm,
                     "With --roster: submit the gradings to Slurm as one job array (sbatch "
                     "--array; -j: tasks at once, default the build's grading slots) instead of "
                     "grading here; --collect writes the gradebook afterwards (docs/grading.md)")
          ->needs(roster);
  command->add_option("--partition", r.slurm_options.partition, "With --slurm: the partition")
      ->needs(slurm);
  command
      ->add_option("--gpus-per-task", r.slurm_options.gpus_per_task,
                   "With --slurm: GPUs each array task asks for (for --backend cuda)")
      ->check(CLI::NonNegativeNumber)
      ->needs(slurm);
  command
      ->add_option("--cpus-per-task", r.slurm_options.cpus_per_task,
                   "With --slurm: cores each array task asks for, and its grading uses "
                   "(default 1)")
      ->check(CLI::PositiveNumber)
      ->needs(slurm);
  command
      ->add_option("--time", r.slurm_options.time,
                   "With --slurm: each array task's time limit, in Slurm's format (MM, HH:MM:SS, "
                   "D-HH:MM, ...)")
      ->check(CLI::Validator(
          [](const std::string& value) {
            return is_slurm_time(value) ? std::string()
                                        : "'" + value +
                                              "' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, "
                                              "D-HH:MM or D-HH:MM:SS)";
          },
          "TIME"))
      ->needs(slurm);
  command->add_flag("--wait", r.wait, "With --slurm: wait until the array has ended, then collect")
      ->needs(slurm);
  command
      ->add_flag("--collect", r.collect,
                 "With --roster: grade nothing; write the gradebook and the class summary from "
                 "what is graded and list every submission without a grade, with why (after "
                 "--slurm: its array task's state)")
      ->needs(roster)
      ->excludes(slurm)
      ->excludes("--regrade");
  // What an array task runs (the job script passes them): not for people.
  CLI::Option* task_list =
      command->add_option("--slurm-tasks", r.task_list)->group("")->needs(roster);
  CLI::Option* task = command->add_option("--slurm-task", r.task, "")
                          ->group("")
                          ->check(CLI::NonNegativeNumber)
                          ->needs(task_list)
                          ->excludes(slurm);
  task_list->needs(task);
  command->add_option("--json", options->json, "Save the grade report as JSON")->excludes(roster);
  command->add_option("--gradescope", options->gradescope, "Save Gradescope's results.json")
      ->excludes(roster);
  command->add_option("--junit", options->junit, "Save a JUnit XML report for CI systems")
      ->excludes(roster);
  command
      ->add_flag("--reseal", grading.reseal,
                 "Accept the instructor files as they are now (after editing tests on purpose)")
      ->excludes(roster);
  command->add_option("--seal", grading.seal,
                      "The seal's file (default: $XDG_STATE_HOME/gpulab/seals/<build>-<digest>"
                      ".sha256, or ~/.local/state/...)");
  command->add_flag("--verbose", options->verbose, "Show each test's detail in full in the table");
  command
      ->add_flag("--brief", options->brief,
                 "One line per failed test (default: what it checks, where the code is, and "
                 "every failure line)")
      ->excludes("--verbose");
  command->footer(
      "Exit code: 0 when grading ran, whatever the score; 3 on an integrity failure (the "
      "instructor files, the test runner or ctest's files differ from the seal, or a test "
      "changed its own program); 1 when grading itself failed. Students: `gpulab check LAB` "
      "is the loop for your own code. docs/grading.md is the instructor guide.");
  return {command, [options] { return grade(*options); }};
}

}  // namespace gpulab::cli
