// The one way gpulab-sim-bench's files refuse arguments and input files; its exit codes are
// gpulab's (gpulab/core/exit_codes.hpp).
#pragma once

#include <cstdio>
#include <string>

#include "gpulab/core/exit_codes.hpp"

namespace gpulab::sim_bench {

/// Prints "gpulab-sim-bench: error: MESSAGE (see gpulab-sim-bench --help)"; returns kUsage.
inline int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab-sim-bench: error: %s (see gpulab-sim-bench --help)\n",
               message.c_str());
  return kUsage;
}

}  // namespace gpulab::sim_bench
