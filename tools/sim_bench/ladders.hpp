// gpulab-sim-bench --ladders: the time model against published ladders. Each level of the kernel
// catalog's transpose at the published sizes, counted on sim, with its modeled effective bandwidth
// next to published measurements on several specs, and whether the ladder keeps its order; then
// the reduction ladder on the simulated spec and the GEMM ladder on several specs, the same way
// (docs/results/model-ladders-*.md, reduction-ladder-*.md, gemm-ladder-*.md).
#pragma once

#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/kernels/catalog.hpp"

namespace gpulab::sim_bench {

/// Every launch of each level of `op` on `problem` (at the op's default block size where its levels
/// take one), verified against the CPU reference first
/// (VerificationError when wrong: a wrong result is never counted), then counted with a cold L2,
/// as Nsight Compute measures (by line too where counting by line is on).
[[nodiscard]] std::vector<std::vector<gpulab::CountedLaunch>> count_levels(
    const gpulab::kernels::Op& op, gpulab::kernels::OpProblem& problem);

/// Prints the four ladders. Throws VerificationError when a level's result is wrong, and
/// std::runtime_error when the build cannot count or the catalog lacks a ladder.
void run_ladders();

}  // namespace gpulab::sim_bench
