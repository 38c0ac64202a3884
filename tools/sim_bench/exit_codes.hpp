// gpulab-sim-bench's exit codes, and the one way its files refuse arguments and input files.
#pragma once

#include <cstdio>
#include <string>

namespace gpulab::sim_bench {

inline constexpr int kSuccess = 0;
inline constexpr int kFailure = 1;  ///< a wrong result, a CUDA error, a run that failed
inline constexpr int kUsage = 2;    ///< bad arguments or files

/// Prints "gpulab-sim-bench: error: MESSAGE (see gpulab-sim-bench --help)"; returns kUsage.
inline int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab-sim-bench: error: %s (see gpulab-sim-bench --help)\n",
               message.c_str());
  return kUsage;
}

}  // namespace gpulab::sim_bench
