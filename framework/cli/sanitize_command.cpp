// `gpulab sanitize TARGET [--solution|--student] [-- ARGS]`: runs a lab's report (or any sim
// program) with the sim's sanitizer on for every kernel launch (GPULAB_SIM_SANITIZE=1: races on
// shared memory, reads of shared memory no thread wrote, on top of the checks every launch has:
// out-of-bounds and misaligned accesses, barriers not every thread reaches), and says what it
// checked. What it finds fails the launch: the program reports the error, with the sim's
// diagnosis (docs/debugging.md). On a GPU, compute-sanitizer is the tool.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "build_config.hpp"
#include "commands.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab::cli {
namespace {

struct Options {
  std::string target;
  bool solution = false;
  bool student = false;
  std::vector<std::string> args;
};

int run(const Options& options) {
  if (!GPULAB_SIM_COUNTING_AVAILABLE) {
    throw std::runtime_error(
        "the sanitizer needs memory counting, which this build does not have "
        "(" GPULAB_SIM_COUNTING_STATUS ")");
  }
  const std::filesystem::path program =
      target_program(options.target, options.solution, options.student, "sim", "sanitize");
  // The launches that finished, checked, are appended to a file in a private temporary folder.
  const PrivateTempFolder folder("gpulab-sanitize", "the checked launches");
  const std::filesystem::path file = folder.path() / "launches.jsonl";
  std::cout << "gpulab sanitize: " << program.filename().string()
            << " with the sim's sanitizer on for every kernel launch\n"
            << std::flush;
  const int status = run_program(program, options.args,
                                 {{"GPULAB_SIM_SANITIZE", "1"}, {"GPULAB_SIM_COUNTERS", file}});
  const std::vector<CountedLaunch> launches =
      std::filesystem::exists(file) ? read_counted_launches(file) : std::vector<CountedLaunch>{};
  std::vector<std::string> kernels;
  for (const CountedLaunch& launch : launches) {
    if (std::find(kernels.begin(), kernels.end(), launch.kernel) == kernels.end()) {
      kernels.push_back(launch.kernel);
    }
  }
  std::string names;
  for (std::size_t i = 0; i < kernels.size() && i < 6; ++i) {
    names += (i == 0 ? "" : ", ") + kernels[i];
  }
  if (kernels.size() > 6) {
    names += " and " + std::to_string(kernels.size() - 6) + " more";
  }
  const std::string checked =
      std::to_string(launches.size()) + (launches.size() == 1 ? " launch" : " launches") + " of " +
      std::to_string(kernels.size()) + (kernels.size() == 1 ? " kernel" : " kernels") +
      (names.empty() ? "" : " (" + names + ")");
  if (status != 0) {
    std::cerr << "\ngpulab sanitize: " << program.filename().string() << " exited with status "
              << status << " after " << checked
              << " ran clean; a launch the sanitizer failed says why in the output above (a race "
                 "on shared memory, a read of shared memory no thread wrote, an out-of-bounds or "
                 "misaligned access, a barrier not every thread reached: docs/debugging.md)\n";
    return kFailure;
  }
  std::cout << "\ngpulab sanitize: " << checked
            << " checked: no race on shared memory, no read of shared memory no thread wrote, no "
               "out-of-bounds or misaligned access, no barrier left unreached\n";
  return kSuccess;
}

}  // namespace

Command add_sanitize_command(CLI::App& app, const std::vector<std::string>& program_args) {
  CLI::App* command = app.add_subcommand(
      "sanitize",
      "Runs a lab's report (or a sim-backend program) with the sim's sanitizer on for every "
      "kernel launch: races on shared memory, reads of shared memory no thread wrote, "
      "out-of-bounds and misaligned accesses, barriers not every thread reaches");
  auto options = std::make_shared<Options>();
  options->args = program_args;
  command->add_option("target", options->target, "A lab (lab01, 02, ...) or a program's path")
      ->required();
  auto* solution = command->add_flag("--solution", options->solution, "The solution's code");
  auto* student = command->add_flag("--student", options->student, "The code in labs/");
  solution->excludes(student);
  command->footer(
      "Example: gpulab sanitize lab04 --student\n"
      "Arguments after -- go to the program. Any sim program is checked the same way with "
      "GPULAB_SIM_SANITIZE=1 set (docs/sim.md); a lab's graded tests with gpulab check LAB "
      "--sanitize. On a GPU: compute-sanitizer.");
  return {command, [options] { return run(*options); }};
}

}  // namespace gpulab::cli
