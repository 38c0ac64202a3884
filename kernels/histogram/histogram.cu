#include "histogram/histogram.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "gpulab/core/cuda_check.hpp"
#include "registry.hpp"

namespace gpulab::kernels {

void histogram_reference(std::span<const unsigned> keys, std::span<unsigned> counts) {
  for (unsigned& count : counts) {
    count = 0;
  }
  for (const unsigned key : keys) {
    if (key < counts.size()) {
      ++counts[key];
    }
  }
}

namespace {

constexpr unsigned kMaxBlocks = 1024;  // grid-stride beyond this, so a block's copy pays off

__global__ void histogram_global_kernel(const unsigned* __restrict__ keys, std::size_t n,
                                        unsigned* __restrict__ counts, unsigned bins) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned key = keys[i];
    if (key < bins) {
      atomicAdd(&counts[key], 1u);
    }
  }
}

__global__ void histogram_shared_kernel(const unsigned* __restrict__ keys, std::size_t n,
                                        unsigned* __restrict__ counts, unsigned bins) {
  extern __shared__ unsigned local[];  // this block's counts
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
    local[b] = 0;
  }
  __syncthreads();
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned key = keys[i];
    if (key < bins) {
      atomicAdd(&local[key], 1u);
    }
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
    if (local[b] != 0) {
      atomicAdd(&counts[b], local[b]);
    }
  }
}

unsigned grid_for(std::size_t n, unsigned block_size) {
  const unsigned blocks = ceil_div(n, block_size);
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

void check_block_size(const char* launcher, unsigned block_size) {
  if (block_size == 0 || block_size > 1024) {
    throw std::invalid_argument(std::string(launcher) + ": a block has 1 to 1024 threads, not " +
                                std::to_string(block_size));
  }
}

}  // namespace

void histogram_global(const unsigned* keys, std::size_t n, unsigned* counts, unsigned bins,
                      cudaStream_t stream, unsigned block_size) {
  check_block_size("histogram_global", block_size);
  GPULAB_CHECK(cudaMemsetAsync(counts, 0, std::size_t{bins} * sizeof(unsigned), stream));
  if (n == 0) {
    return;
  }
  histogram_global_kernel<<<grid_for(n, block_size), block_size, 0, stream>>>(keys, n, counts,
                                                                              bins);
  GPULAB_CHECK_LAUNCH();
}

void histogram_shared(const unsigned* keys, std::size_t n, unsigned* counts, unsigned bins,
                      cudaStream_t stream, unsigned block_size) {
  check_block_size("histogram_shared", block_size);
  if (std::size_t{bins} * sizeof(unsigned) > 48 * 1024) {
    throw std::invalid_argument(
        "histogram_shared: at most 12288 bins fit in 48 KiB of shared memory");
  }
  GPULAB_CHECK(cudaMemsetAsync(counts, 0, std::size_t{bins} * sizeof(unsigned), stream));
  if (n == 0) {
    return;
  }
  histogram_shared_kernel<<<grid_for(n, block_size), block_size,
                            std::size_t{bins} * sizeof(unsigned), stream>>>(keys, n, counts, bins);
  GPULAB_CHECK_LAUNCH();
}

std::span<const Level<HistogramLaunch>> histogram_levels() {
  static constexpr std::array<Level<HistogramLaunch>, 2> levels{{
      {1, "global atomics", "one atomicAdd on global memory per key", histogram_global},
      {2, "privatized", "per-block counts in shared memory, merged with one atomic per bin",
       histogram_shared},
  }};
  return levels;
}

std::span<const RegisteredKernel> histogram_kernel_registry() {
  // One counter per bin: 256 bins, and 12288, the most histogram_shared accepts (48 KiB).
  static constexpr std::uint64_t kPrivateShared[] = {256 * sizeof(unsigned),
                                                     12288 * sizeof(unsigned)};
  static const RegisteredKernel entries[] = {
      {"histogram_global_kernel", reinterpret_cast<const void*>(&histogram_global_kernel),
       kNoDynamicShared},
      {"histogram_shared_kernel", reinterpret_cast<const void*>(&histogram_shared_kernel),
       kPrivateShared},
  };
  return entries;
}

}  // namespace gpulab::kernels
