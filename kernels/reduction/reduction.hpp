// Sum reduction of n floats, as a ladder:
//   1  shared-memory tree: each block sums 256 elements in shared memory, halving the active
//      threads each step with a __syncthreads between steps; passes repeat over the partial sums.
//   2  warp shuffle: each warp sums in registers with __shfl_down_sync, one shared slot per warp,
//      and one __syncthreads instead of eight.
// Both are deterministic (fixed order, no atomics), so results repeat exactly run to run.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "common.hpp"

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

/// One pass of level 1 alone: partials[b] = sum of the b-th run of 256 elements.
void block_sums_shared(const float* in, float* partials, std::size_t n,
                       cudaStream_t stream = nullptr);

}  // namespace gpulab::kernels
