// gpulab-sim-bench --fidelity: the catalog levels a GPU measured (the corpus, or `gpulab bench`
// results files), each run on sim at the same op, level, size, block size and spec, their
// modeled-clock times beside the measured ones (gpulab/core/fidelity.hpp).
#pragma once

#include <string>
#include <vector>

namespace gpulab::sim_bench {

struct FidelityOptions {
  std::vector<std::string> files;  ///< corpora and results files
  std::vector<std::string> skip;   ///< ops to leave out
  /// Only this GPU's measurements (a child run of one spec); empty: every GPU of the files, each
  /// in a run of its own (the sim simulates one spec per process).
  std::string spec;
  std::string points_file;  ///< where a child run writes its points for the parent; empty: none
  /// Bounds the summary over every GPU must keep, or the run fails (exit 1); negative: none.
  double max_error_pct = -1;   ///< mean absolute error, in percent
  double max_ratio = -1;       ///< the worst kernel's max(modeled / measured, measured / modeled)
  bool require_order = false;  ///< every ladder in its measured order
};

/// Runs the comparison and prints it; the exit code (0, 1 failure or a bound broken, 2 bad files
/// or arguments).
[[nodiscard]] int run_fidelity(const FidelityOptions& options);

/// Adds the `gpulab bench` times of GPU results files to a corpus file (created when missing):
/// a new time of a kernel already there replaces it. The exit code.
[[nodiscard]] int add_to_corpus(const std::string& corpus, const std::vector<std::string>& files);

}  // namespace gpulab::sim_bench
