#include "reduction/reduction.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "gpulab/core/cuda_check.hpp"
#include "gpulab/core/memory.hpp"
#include "gpulab/core/numeric.hpp"

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

// Passes of one block kernel until one value is left: n -> n/256 -> ... -> 1. `pass(blocks, in,
// out, n, stream)` launches the kernel by its name, so the sim's counted launches name it too (a
// launch through a function pointer is named after the pointer).
template <class Pass>
void reduce_passes(Pass pass, const float* in, float* out, std::size_t n, float* workspace,
                   cudaStream_t stream) {
  if (n == 0) {
    throw std::invalid_argument("reduce_sum: n must be at least 1");
  }
  while (n > kReduceBlock) {
    const unsigned blocks = ceil_div(n, kReduceBlock);
    pass(blocks, in, workspace, n, stream);
    GPULAB_CHECK_LAUNCH();
    in = workspace;
    workspace += blocks;
    n = blocks;
  }
  pass(1, in, out, n, stream);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void reduce_sum_shared(const float* in, float* out, std::size_t n, float* workspace,
                       cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        block_sum_shared_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream);
}

void reduce_sum_warp(const float* in, float* out, std::size_t n, float* workspace,
                     cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        block_sum_warp_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream);
}

void block_sums_shared(const float* in, float* partials, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  block_sum_shared_kernel<<<ceil_div(n, kReduceBlock), kReduceBlock, 0, stream>>>(in, partials, n);
  GPULAB_CHECK_LAUNCH();
}

std::span<const Level<ReduceLaunch>> reduction_levels() {
  static const Level<ReduceLaunch> levels[] = {
      {1,
       "shared-memory tree",
       "a block sums in shared memory, __syncthreads between steps",
       &reduce_sum_shared,
       {GPULAB_KERNEL_REF(block_sum_shared_kernel, kNoDynamicShared)}},
      {2,
       "warp shuffle",
       "warps sum in registers with __shfl_down_sync; one barrier per block",
       &reduce_sum_warp,
       {GPULAB_KERNEL_REF(block_sum_warp_kernel, kNoDynamicShared)}},
  };
  return levels;
}

namespace {

// n random floats in [-1, 1) summed into one.
class ReductionProblem final : public OpProblem {
 public:
  explicit ReductionProblem(std::size_t n)
      : input_(random_floats(n, 3)),
        in_(n),
        out_(1),
        workspace_(reduce_sum_workspace(n) + 1),
        expected_{static_cast<float>(reduce_sum_reference(input_))} {
    in_.copy_from(input_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    level_at(reduction_levels(), index, "reduction")
        .launch(in_.data(), out_.data(), input_.size(), workspace_.data(), stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(reduction_levels(), index, "reduction");
    out_.fill_bytes_async(0xff, stream);
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    // A sum of n terms: fp32's tolerance grown with sqrt(n), for the typical magnitude of such a
    // sum, sqrt(n) * rms(input) (a random walk of n steps), not |expected|, which cancellation
    // can make arbitrarily small.
    const auto n = static_cast<std::int64_t>(input_.size());
    const Tolerance tolerance =
        scaled(tolerance_for(DType::fp32, n), std::sqrt(static_cast<double>(n)) * rms(input_));
    require_close(describe_level("reduction", level.number, level.name, 0), expected_,
                  out_.to_vector(), tolerance);
  }
  // One add per element; read the input once, write one float.
  [[nodiscard]] OpCost cost() const override {
    const auto n = static_cast<double>(input_.size());
    return {n, 4.0 * n + 4.0};
  }
  [[nodiscard]] std::string describe() const override {
    return std::to_string(input_.size()) + " floats";
  }

 private:
  std::vector<float> input_;
  DeviceBuffer<float> in_;
  DeviceBuffer<float> out_;
  DeviceBuffer<float> workspace_;
  std::vector<float> expected_;
};

}  // namespace

Op reduction_op() {
  return {
      .name = "reduction",
      .summary = "the sum of n floats, deterministic (fixed order, no atomics)",
      .size_means = "floats summed",
      .default_size = std::size_t{1} << 26,
      .sim_size = std::size_t{1} << 20,
      .test_sizes = {1, 31, 256, 257, 1000, 65536, 65536 * 4 + 3},
      .default_block = 0,
      .levels = erase_levels(reduction_levels()),
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<ReductionProblem>(n);
      },
  };
}

}  // namespace gpulab::kernels
