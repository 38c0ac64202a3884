#include "reduction/reduction.hpp"

#include <array>
#include <stdexcept>

#include "gpulab/core/cuda_check.hpp"
#include "registry.hpp"

namespace gpulab::kernels {

double reduce_sum_reference(std::span<const float> in) {
  double sum = 0.0;
  for (const float value : in) {
    sum += static_cast<double>(value);
  }
  return sum;
}

std::size_t reduce_sum_workspace(std::size_t n) {
  std::size_t floats = 0;
  for (std::size_t m = n; m > kReduceBlock; m = ceil_div(m, kReduceBlock)) {
    floats += ceil_div(m, kReduceBlock);
  }
  return floats;
}

namespace {

__global__ void block_sum_shared_kernel(const float* __restrict__ in, float* __restrict__ partials,
                                        std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  const std::size_t i = std::size_t{blockIdx.x} * kReduceBlock + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = kReduceBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      partial[t] += partial[t + stride];
    }
    __syncthreads();  // every thread's sum of this step is written before the next step reads it
  }
  if (t == 0) {
    partials[blockIdx.x] = partial[0];
  }
}

__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;  // lane 0 holds the warp's sum
}

__global__ void block_sum_warp_kernel(const float* __restrict__ in, float* __restrict__ partials,
                                      std::size_t n) {
  constexpr unsigned kWarps = kReduceBlock / 32;
  __shared__ float warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  const std::size_t i = std::size_t{blockIdx.x} * kReduceBlock + threadIdx.x;
  float value = warp_sum(i < n ? in[i] : 0.0f);
  if (lane == 0) {
    warp_sums[warp] = value;
  }
  __syncthreads();
  if (warp == 0) {
    value = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) {
      partials[blockIdx.x] = value;
    }
  }
}

using BlockKernel = void (*)(const float*, float*, std::size_t);

// Passes of `kernel` until one value is left: n -> n/256 -> ... -> 1.
void reduce_passes(BlockKernel kernel, const float* in, float* out, std::size_t n, float* workspace,
                   cudaStream_t stream) {
  if (n == 0) {
    throw std::invalid_argument("reduce_sum: n must be at least 1");
  }
  while (n > kReduceBlock) {
    const unsigned blocks = ceil_div(n, kReduceBlock);
    kernel<<<blocks, kReduceBlock, 0, stream>>>(in, workspace, n);
    GPULAB_CHECK_LAUNCH();
    in = workspace;
    workspace += blocks;
    n = blocks;
  }
  kernel<<<1, kReduceBlock, 0, stream>>>(in, out, n);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void reduce_sum_shared(const float* in, float* out, std::size_t n, float* workspace,
                       cudaStream_t stream) {
  reduce_passes(block_sum_shared_kernel, in, out, n, workspace, stream);
}

void reduce_sum_warp(const float* in, float* out, std::size_t n, float* workspace,
                     cudaStream_t stream) {
  reduce_passes(block_sum_warp_kernel, in, out, n, workspace, stream);
}

void block_sums_shared(const float* in, float* partials, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  block_sum_shared_kernel<<<ceil_div(n, kReduceBlock), kReduceBlock, 0, stream>>>(in, partials, n);
  GPULAB_CHECK_LAUNCH();
}

std::span<const Level<ReduceLaunch>> reduction_levels() {
  static constexpr std::array<Level<ReduceLaunch>, 2> levels{{
      {1, "shared-memory tree", "a block sums in shared memory, __syncthreads between steps",
       reduce_sum_shared},
      {2, "warp shuffle", "warps sum in registers with __shfl_down_sync; one barrier per block",
       reduce_sum_warp},
  }};
  return levels;
}

std::span<const RegisteredKernel> reduction_kernel_registry() {
  static const RegisteredKernel entries[] = {
      {"block_sum_shared_kernel", reinterpret_cast<const void*>(&block_sum_shared_kernel),
       kNoDynamicShared},
      {"block_sum_warp_kernel", reinterpret_cast<const void*>(&block_sum_warp_kernel),
       kNoDynamicShared},
  };
  return entries;
}

}  // namespace gpulab::kernels
