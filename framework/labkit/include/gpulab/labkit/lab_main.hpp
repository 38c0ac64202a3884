// The frame of every lab report program (`gpulab run labNN` runs
// gpulab.labNN.<variant>.run.<backend>): common options, the header that says which code and
// backend produced the numbers, the results file, and one clear line for every failure.
//
//   int main(int argc, char** argv) {
//     return gpulab::labkit::lab_main(argc, argv, GPULAB_LAB_INFO, add_options, report);
//   }
//
// Options every lab accepts: --spec NAME (the GPU modeled numbers are for; on sim also the GPU
// simulated), --json FILE (save the results), --quick (smaller problems: tests and CI).
// Exit codes: 0 the report ran, 1 it failed (including a function still not implemented), 2 bad
// arguments.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <string>

#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/labkit/report_variant.hpp"

namespace gpulab::labkit {

/// What a lab's report works with.
struct LabContext {
  std::string lab;              ///< e.g. "lab01"
  std::string title;            ///< e.g. "Benchmarking a kernel correctly"
  std::string variant;          ///< "student" or "solution"
  std::string backend;          ///< "cuda" or "sim"
  std::string device;           ///< the device's name (the simulated one on sim)
  GpuSpec spec;                 ///< the GPU modeled numbers are for
  bool quick = false;           ///< smaller problems, fewer samples
  ResultsFile results;          ///< append a Result per configuration; saved with --json
  std::ostream* out = nullptr;  ///< where the report goes (stdout)

  /// What CUDA events read, so what every time the lab's own code takes is: the GPU's clock
  /// (cuda), the sim's modeled clock (sim, by default: times modeled on `spec` from counted
  /// memory traffic and instructions, deterministic) or the host's clock (sim with
  /// GPULAB_SIM_CLOCK=host, or a build that cannot count: CPU time of the simulation).
  TimingClock clock = TimingClock::gpu;

  /// True on the sim backend.
  [[nodiscard]] bool on_sim() const { return backend == "sim"; }
  /// The label of timed columns: "measured" (GPU), "modeled clock (H100 SXM)" or "measured (CPU
  /// simulation)".
  [[nodiscard]] std::string measured_label() const;
  /// "modeled (H100 SXM)".
  [[nodiscard]] std::string modeled_label() const;
  /// A time the lab's code took on `clock`, or a figure derived from one, as a results metric:
  /// measured, or read from the modeled clock of `spec` (Metric::timed).
  [[nodiscard]] Metric timed(std::string name, double value) const;
  /// The command that runs this report again on the same code, with `args` for the report after
  /// --: "gpulab run lab01 --student -- --max-log2 28" (the solution: no --student).
  [[nodiscard]] std::string rerun(const std::string& args = "") const;
};

/// Which lab and which code a report program is: GPULAB_LAB_INFO, from the compile definitions
/// gpulab_add_lab (cmake/GpulabLabs.cmake) gives each report program, and report_variant().
struct LabInfo {
  const char* lab;      ///< e.g. "lab01"
  const char* title;    ///< e.g. "Benchmarking a kernel correctly"
  const char* variant;  ///< "student" or "solution"
};

#define GPULAB_LAB_INFO                                                 \
  ::gpulab::labkit::LabInfo {                                           \
    GPULAB_LAB_ID, GPULAB_LAB_TITLE, ::gpulab::labkit::report_variant() \
  }

/// Lets a lab add its own options to the command line.
using AddOptions = std::function<void(CLI::App&)>;
/// Prints the report and fills context.results.
using Report = std::function<void(LabContext&)>;

/// Parses the command line, sets up the context, prints the header, runs the report, saves the
/// results. Never throws; returns the exit code.
int lab_main(int argc, char** argv, const LabInfo& info, const AddOptions& add_options,
             const Report& report);

}  // namespace gpulab::labkit
