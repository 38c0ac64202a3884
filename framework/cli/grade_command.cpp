// `gpulab grade`: runs the graded lab tests through ctest (each test case in its own process,
// with its timeout) and sums the points of those that passed. A skipped or not-run test earns
// nothing. The exit code says whether grading ran (0), not what the score was.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "build_config.hpp"
#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/results.hpp"
#include "labs.hpp"

namespace gpulab::cli {

namespace {

struct GradeOptions {
  std::vector<std::string> labs;
  bool solution = false;
  bool student = false;
  std::string backend;
  std::string json;
  bool verbose = false;
  int jobs = 0;
};

std::string code_label(const std::string& variant) {
  return variant == "solution" ? "solutions/" : "labs/";
}

std::string test_case(const std::string& ctest_name) {
  const std::size_t slash = ctest_name.find('/');
  return slash == std::string::npos ? ctest_name : ctest_name.substr(slash + 1);
}

void print_grades(const std::vector<RunGrade>& grades, bool verbose) {
  Table table({{"lab", "", Align::left},
               {"title", "", Align::left},
               {"code", "", Align::left},
               {"backend", "", Align::left},
               {"points", ""},
               {"tests passed", ""}});
  for (const RunGrade& grade : grades) {
    int passed = 0;
    for (const TestGrade& test : grade.tests) {
      passed += test.outcome == TestOutcome::passed ? 1 : 0;
    }
    table.add_row({grade.lab, grade.title, code_label(grade.variant), grade.backend,
                   std::to_string(grade.earned) + "/" + std::to_string(grade.possible),
                   std::to_string(passed) + "/" + std::to_string(grade.tests.size())});
  }
  std::cout << "\nGrade summary (points of graded tests that passed; skipped tests earn nothing)\n"
            << table;
  for (const RunGrade& grade : grades) {
    std::vector<const TestGrade*> lost;
    for (const TestGrade& test : grade.tests) {
      if (test.earned < test.points) {
        lost.push_back(&test);
      }
    }
    if (lost.empty()) {
      continue;
    }
    std::cout << "\n"
              << grade.lab << " (" << code_label(grade.variant) << ", " << grade.backend
              << "): " << lost.size() << " test(s) did not pass\n";
    const std::size_t shown = verbose ? lost.size() : std::min<std::size_t>(lost.size(), 5);
    for (std::size_t i = 0; i < shown; ++i) {
      const TestGrade& test = *lost[i];
      std::cout << "  " << test_case(test.name) << "  0/" << test.points << "  "
                << to_string(test.outcome) << "\n";
      const std::size_t lines =
          verbose ? test.excerpt.size() : std::min<std::size_t>(test.excerpt.size(), 3);
      for (std::size_t j = 0; j < lines; ++j) {
        std::cout << "      " << test.excerpt[j] << "\n";
      }
    }
    if (shown < lost.size()) {
      std::cout << "  ... and " << lost.size() - shown << " more (--verbose lists them all)\n";
    }
  }
}

nlohmann::json grades_json(const std::vector<RunGrade>& grades) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RunGrade& grade : grades) {
    nlohmann::json tests = nlohmann::json::array();
    for (const TestGrade& test : grade.tests) {
      tests.push_back({{"name", test.name},
                       {"points", test.points},
                       {"earned", test.earned},
                       {"outcome", to_string(test.outcome)},
                       {"excerpt", test.excerpt}});
    }
    runs.push_back({{"lab", grade.lab},
                    {"title", grade.title},
                    {"variant", grade.variant},
                    {"backend", grade.backend},
                    {"earned", grade.earned},
                    {"possible", grade.possible},
                    {"tests", tests}});
  }
  const ResultsContext context =
      make_context(grades.empty() ? "sim" : grades.front().backend, "", "");
  return {{"schema_version", 1},
          {"gpulab_version", context.gpulab_version},
          {"date", context.date},
          {"runs", runs}};
}

int grade(const GradeOptions& options) {
  const LabManifest manifest = build_manifest();
  const std::vector<const LabEntry*> labs = select_labs(manifest, options.labs);
  std::vector<std::string> variants;
  if (!options.solution) {
    variants.emplace_back("student");
  }
  if (!options.student && has_variant(manifest, "solution")) {
    variants.emplace_back("solution");
  } else if (options.solution) {
    throw UsageError("--solution: this tree has no solutions/ (a student release)");
  }
  const std::string backend = choose_backend(manifest, options.backend);

  std::vector<std::pair<const LabEntry*, const LabRun*>> runs;
  std::size_t test_count = 0;
  std::string regex;
  for (const LabEntry* lab : labs) {
    for (const std::string& variant : variants) {
      if (const LabRun* run = find_run(*lab, variant, backend)) {
        runs.emplace_back(lab, run);
        test_count += run->tests.size();
        regex += (regex.empty() ? "" : "|") + lab->id + "\\." + variant + "\\." + backend;
      }
    }
  }
  if (test_count == 0) {
    throw std::runtime_error(
        "no graded tests to run (was the build configured with "
        "GPULAB_BUILD_TESTS=OFF?)");
  }

  const std::filesystem::path build = build_dir();
  const std::filesystem::path junit = build / "grading" / "junit.xml";
  const std::filesystem::path log = build / "grading" / "ctest.log";
  std::filesystem::remove(junit);
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::cout << "gpulab grade: running " << test_count << " graded tests of " << labs.size()
            << " lab(s) with ctest (-j" << jobs << ", " << backend
            << " backend; log: " << log.string() << ")" << std::endl;
  // ctest's own output goes to the log; a terminal gets its one-line progress.
  const bool terminal = isatty(STDOUT_FILENO) != 0;
  std::vector<std::string> args = {"--test-dir",
                                   build.string(),
                                   "-R",
                                   "^gpulab\\.(" + regex + ")/",
                                   "-j",
                                   std::to_string(jobs),
                                   "--output-junit",
                                   junit.string(),
                                   "--output-log",
                                   log.string()};
  if (terminal) {
    args.emplace_back("--progress");
  } else {
    args.emplace_back("--quiet");
  }
  const int status = run_program(GPULAB_CTEST_COMMAND, args);
  if (!std::filesystem::exists(junit)) {
    throw std::runtime_error("ctest exited with " + std::to_string(status) +
                             " and wrote no results (" + junit.string() + "); see " + log.string());
  }
  std::ifstream in(junit, std::ios::binary);
  std::stringstream xml;
  xml << in.rdbuf();
  const std::map<std::string, JunitCase> results = parse_ctest_junit(xml.str());

  std::vector<RunGrade> grades;
  for (const auto& [lab, run] : runs) {
    grades.push_back(grade_run(*lab, *run, results));
  }
  print_grades(grades, options.verbose);
  if (!options.json.empty()) {
    const std::filesystem::path path(options.json);
    std::ofstream out(path);
    out << grades_json(grades).dump(2) << "\n";
    if (!out) {
      throw std::runtime_error("cannot write " + options.json);
    }
    std::cout << "\ngrade report saved to " << options.json << "\n";
  }
  return kSuccess;
}

}  // namespace

Command add_grade_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "grade", "Run the graded lab tests with ctest and print the points earned.");
  auto options = std::make_shared<GradeOptions>();
  command->add_option("LAB", options->labs, "lab01, 02, 3, ... or all (default: all)");
  command->add_flag("--student", options->student, "Grade only the student code in labs/");
  command->add_flag("--solution", options->solution, "Grade only the solutions/")
      ->excludes("--student");
  command
      ->add_option("--backend", options->backend,
                   "cuda or sim (default: cuda when a GPU is usable, else sim)")
      ->check(CLI::IsMember({"cuda", "sim"}));
  command->add_option("--json", options->json, "Also save the grade report as JSON");
  command->add_option("-j,--jobs", options->jobs, "Tests run in parallel (default: all cores)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--verbose", options->verbose,
                    "List every test that did not pass, with its failure lines");
  command->footer(
      "By default both the student code and, where solutions/ exists, the solutions are graded. "
      "The exit code is 0 when grading ran, whatever the score.");
  return {command, [options] { return grade(*options); }};
}

}  // namespace gpulab::cli
