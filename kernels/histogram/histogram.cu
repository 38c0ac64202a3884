#include "gpulab/kernels/histogram.hpp"

#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"

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

namespace {

// One counter per bin: 256 bins (the catalog's problem, so first), and 12288, the most
// histogram_shared accepts (48 KiB).
constexpr std::uint64_t kPrivateShared[] = {256 * sizeof(unsigned), 12288 * sizeof(unsigned)};

}  // namespace

std::span<const Level<HistogramLaunch>> histogram_levels() {
  static const Level<HistogramLaunch> levels[] = {
      {1,
       "global atomics",
       "one atomicAdd on global memory per key",
       &histogram_global,
       {GPULAB_KERNEL_REF(histogram_global_kernel, kNoDynamicShared)}},
      {2,
       "privatized",
       "per-block counts in shared memory, merged with one atomic per bin",
       &histogram_shared,
       {GPULAB_KERNEL_REF(histogram_shared_kernel, kPrivateShared)}},
  };
  return levels;
}

namespace {

// n keys in 256 bins, uniformly random (std::mt19937's output is fixed by the standard).
class HistogramProblem final : public OpProblem {
 public:
  explicit HistogramProblem(std::size_t n) : keys_(n), counts_(kBins), expected_(kBins) {
    std::mt19937 random(42);
    std::vector<unsigned> keys(n);
    for (unsigned& key : keys) {
      key = static_cast<unsigned>(random() % kBins);
    }
    histogram_reference(keys, expected_);
    keys_.copy_from(keys);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    level_at(histogram_levels(), index, "histogram")
        .launch(keys_.data(), keys_.size(), counts_.data(), kBins, stream, block_size);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(histogram_levels(), index, "histogram");
    counts_.fill_bytes_async(0xff, stream);  // the launch zeroes the counts itself first
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    const std::vector<unsigned> got = counts_.to_vector();
    for (unsigned bin = 0; bin < kBins; ++bin) {
      if (got[bin] != expected_[bin]) {
        throw std::runtime_error(describe_level("histogram", level.number, level.name, block_size) +
                                 ": counted " + std::to_string(got[bin]) + " keys in bin " +
                                 std::to_string(bin) + ", expected " +
                                 std::to_string(expected_[bin]));
      }
    }
  }
  // No floating-point work; read the keys, write the counts.
  [[nodiscard]] OpCost cost() const override {
    return {0, 4.0 * static_cast<double>(keys_.size()) + 4.0 * kBins};
  }
  [[nodiscard]] std::string describe() const override {
    return std::to_string(keys_.size()) + " keys in " + std::to_string(kBins) + " bins";
  }

 private:
  static constexpr unsigned kBins = 256;
  DeviceBuffer<unsigned> keys_;
  DeviceBuffer<unsigned> counts_;
  std::vector<unsigned> expected_;
};

}  // namespace

Op histogram_op() {
  return {
      .name = "histogram",
      .summary = "counts of n random keys in 256 bins, with atomics",
      .size_means = "keys counted",
      .default_size = std::size_t{1} << 26,
      .sim_size = std::size_t{1} << 20,
      .test_sizes = {1, 1000, 100000},
      .default_block = 256,
      .levels = erase_levels(histogram_levels()),
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<HistogramProblem>(n);
      },
  };
}

}  // namespace gpulab::kernels
