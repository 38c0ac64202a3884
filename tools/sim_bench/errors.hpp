// How gpulab-sim-bench's files refuse: arguments and input files (usage_error; its exit codes are
// gpulab's, gpulab/core/exit_codes.hpp), and a kernel's wrong result (VerificationError).
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpulab/core/exit_codes.hpp"

namespace gpulab::sim_bench {

/// Prints "gpulab-sim-bench: error: MESSAGE (see gpulab-sim-bench --help)"; returns kUsage.
inline int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab-sim-bench: error: %s (see gpulab-sim-bench --help)\n",
               message.c_str());
  return kUsage;
}

/// A wrong result: never gets a time.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulab::sim_bench
