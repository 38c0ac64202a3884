// `gpulab run LAB...`: builds each lab's report program (gpulab.<lab>.<variant>.run.<backend>)
// from the current sources, then runs it in its own process, so a crash in lab code ends that
// lab's report, not gpulab.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab::cli {

namespace {

struct RunOptions {
  std::vector<std::string> labs;
  bool solution = false;
  bool student = false;
  std::string backend;
  std::string spec;
  std::string json;
  bool quick = false;
  std::vector<std::string> extra;
};

// "out.json" -> "out.lab01.json" when several labs share one --json.
std::string json_for(const std::string& path, const std::string& lab, bool several) {
  if (!several) {
    return path;
  }
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + lab + p.extension().string())).string();
}

int run(const RunOptions& options) {
  const LabManifest manifest = build_manifest();
  const std::vector<const LabEntry*> labs = select_labs(manifest, options.labs);
  const std::string variant = choose_variant(manifest, options.solution, options.student);
  const std::string backend = choose_backend(manifest, options.backend, cuda_devices());
  std::vector<std::string> args;
  if (!options.spec.empty()) {
    args.insert(args.end(), {"--spec", options.spec});
  }
  if (options.quick) {
    args.emplace_back("--quick");
  }
  args.insert(args.end(), options.extra.begin(), options.extra.end());

  std::vector<std::pair<std::string, int>> outcomes;
  for (const LabEntry* lab : labs) {
    const LabRun* lab_run = find_run(*lab, variant, backend);
    if (lab_run == nullptr) {
      std::cerr << "gpulab run: " << lab->id << " has no " << variant << " build for the "
                << backend << " backend\n";
      outcomes.emplace_back(lab->id, kFailure);
      continue;
    }
    if (!build_report(*lab, *lab_run, "run")) {
      outcomes.emplace_back(lab->id, kFailure);
      continue;
    }
    std::vector<std::string> lab_args = args;
    if (!options.json.empty()) {
      lab_args.insert(lab_args.end(), {"--json", json_for(options.json, lab->id, labs.size() > 1)});
    }
    std::cout << std::flush;
    const int status = run_program(lab_run->report, lab_args);
    outcomes.emplace_back(lab->id, status);
    if (labs.size() > 1) {
      std::cout << "\n" << std::string(100, '=') << "\n\n";
    }
  }
  if (labs.size() == 1) {
    return outcomes.front().second;  // the lab's own exit code: 0, 1, or 2 for its bad arguments
  }
  int failures = 0;
  {
    std::cout << "gpulab run: " << outcomes.size() << " labs, " << variant << " code, " << backend
              << " backend\n";
    for (const auto& [id, status] : outcomes) {
      std::cout << "  " << id << "  "
                << (status == 0 ? std::string("ok")
                                : "failed (exit " + std::to_string(status) + ")")
                << "\n";
    }
  }
  for (const auto& outcome : outcomes) {
    failures += outcome.second != 0 ? 1 : 0;
  }
  return failures == 0 ? kSuccess : kFailure;
}

}  // namespace

Command add_run_command(CLI::App& app, const std::vector<std::string>& lab_args) {
  CLI::App* command =
      app.add_subcommand("run", "Run labs and print their reports (each in its own process).");
  auto options = std::make_shared<RunOptions>();
  command->add_option("LAB", options->labs, "lab01, 02, 3, ... or all (default: all)");
  command->add_flag("--solution", options->solution,
                    "Run the instructor's solutions (default where solutions/ exists)");
  command
      ->add_flag("--student", options->student,
                 "Run the student code in labs/ (default in a student release)")
      ->excludes("--solution");
  command
      ->add_option("--backend", options->backend,
                   "cuda or sim (default: cuda when a GPU is usable, else sim)")
      ->check(CLI::IsMember({"cuda", "sim"}));
  command->add_option("--spec", options->spec,
                      "GPU the modeled numbers are for (see `gpulab specs`)");
  command->add_option("--json", options->json,
                      "Save results to FILE (several labs: FILE with the lab before the "
                      "extension, e.g. out.lab01.json)");
  command->add_flag("--quick", options->quick, "Smaller problems and fewer samples");
  command->footer(
      "Options after -- go to the lab's report program, e.g. gpulab run lab01 -- --max-log2 24 "
      "(gpulab run lab01 -- --help lists them).");
  return {command, [options, &lab_args] {
            options->extra = lab_args;
            return run(*options);
          }};
}

}  // namespace gpulab::cli
