// Sum reduction of n floats, as a ladder:
//   1  shared-memory tree: each block sums 256 elements in shared memory, halving the active
//      threads each step with a __syncthreads between steps; passes repeat over the partial sums.
//   2  warp shuffle: each warp sums in registers with __shfl_down_sync, one shared slot per warp,
//      and one __syncthreads instead of eight.
// Both are deterministic (fixed order, no atomics), so results repeat exactly run to run.
//
// The op reduction_ladder is the ladder of Mark Harris, "Optimizing Parallel Reduction in CUDA"
// (NVIDIA, 2007), written for this project: (1) interleaved addressing with divergent branches,
// (2) interleaved addressing with bank conflicts, (3) sequential addressing, (4) first add during
// the global load, (5) the last warp unrolled, (6) completely unrolled, (7) many elements per
// thread. Its published times for 2^22 ints on a G80 (GeForce 8800 GTX) are 8.054, 3.456, 1.722,
// 0.965, 0.536, 0.381 and 0.268 ms: each level faster than the one before, the order a model of
// any GPU should keep. Level 5 synchronizes its last warp with __syncwarp (lanes need not run in
// lockstep since Volta), where the original relied on lockstep execution.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

inline constexpr unsigned kReduceBlock = 256;  // threads per block, elements per block and pass

/// CPU reference, accumulated in double.
double reduce_sum_reference(std::span<const float> in);

/// Floats of workspace reduce_sum needs for n elements (the partial sums of every pass).
std::size_t reduce_sum_workspace(std::size_t n);

using ReduceLaunch = void (*)(const float* in, float* out, std::size_t n, float* workspace,
                              cudaStream_t stream);

/// *out = sum of in[0..n) (n >= 1); `workspace` holds reduce_sum_workspace(n) floats.
void reduce_sum_shared(const float* in, float* out, std::size_t n, float* workspace,
                       cudaStream_t stream = nullptr);
void reduce_sum_warp(const float* in, float* out, std::size_t n, float* workspace,
                     cudaStream_t stream = nullptr);

/// The levels above, in order.
std::span<const Level<ReduceLaunch>> reduction_levels();

/// The seven levels of the published ladder, in order (same contract as reduce_sum_shared; each
/// fills the workspace with its passes' partial sums).
std::span<const Level<ReduceLaunch>> reduction_ladder_levels();

/// One pass of level 1 alone: partials[b] = sum of the b-th run of 256 elements.
void block_sums_shared(const float* in, float* partials, std::size_t n,
                       cudaStream_t stream = nullptr);

}  // namespace gpulab::kernels
