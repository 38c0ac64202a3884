// The sim's sanitizer for the scope of a lab's output check (docs/sim.md, "6.4 The sanitizer"): a
// race on shared memory in the code under test then fails its launch, saying where (its kernel,
// threads, shared variable and the lines of both accesses), instead of giving wrong values that
// depend on the schedule. Only where it costs little: the output checks run small problems, the
// timed tests run without it. Nothing on cuda (compute-sanitizer is the tool there) or in a sim
// build that cannot count (the asan preset).
#pragma once

#include <optional>

#if defined(GPULAB_BACKEND_SIM)
#include <cuda_runtime.h>

#include "gpulab/sim/sanitizer.hpp"
#endif

namespace gpulab::testing {

class SanitizeOnSim {
 public:
  SanitizeOnSim() {
#if defined(GPULAB_BACKEND_SIM)
    if (sim::counting_available()) {
      scope_.emplace();
    }
#endif
  }

 private:
#if defined(GPULAB_BACKEND_SIM)
  std::optional<sim::ScopedSanitizing> scope_;
#endif
};

}  // namespace gpulab::testing
