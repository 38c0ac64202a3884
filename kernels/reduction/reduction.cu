#include "gpulab/kernels/reduction.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"

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

// Passes of one block kernel until one value is left: n -> n/256 -> ... -> 1 (n/512 for a kernel
// whose block sums 512 elements; at most `max_blocks` blocks a pass for one that loops over the
// rest). `pass(blocks, in, out, n, stream)` launches the kernel by its name, so the sim's counted
// launches name it too (a launch through a function pointer is named after the pointer).
template <class Pass>
void reduce_passes(Pass pass, const float* in, float* out, std::size_t n, float* workspace,
                   cudaStream_t stream, std::size_t per_block = kReduceBlock,
                   unsigned max_blocks = 0) {
  if (n == 0) {
    throw std::invalid_argument("reduce_sum: n must be at least 1");
  }
  while (n > per_block) {
    unsigned blocks = ceil_div(n, per_block);
    blocks = max_blocks != 0 && blocks > max_blocks ? max_blocks : blocks;
    pass(blocks, in, workspace, n, stream);
    GPULAB_CHECK_LAUNCH();
    in = workspace;
    workspace += blocks;
    n = blocks;
  }
  pass(1, in, out, n, stream);
  GPULAB_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// The ladder of "Optimizing Parallel Reduction in CUDA" (reduction.hpp): seven block kernels, each
// writing its block's sum to out[blockIdx.x]. Kernels 1 to 5 loop over blockDim.x as a run-time
// value; 6 and 7 over the compile-time block size.
// ---------------------------------------------------------------------------------------------

// What every rung shares: a thread's element (kernels 1 to 3), the sum of the two a thread of
// kernels 4 to 6 loads (its own and the one a block further: a block covers 2 x blockDim.x), and
// the block's sum written by thread 0.
__device__ __forceinline__ float load_one(const float* in, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  return i < n ? in[i] : 0.0f;
}

__device__ __forceinline__ float load_two(const float* in, std::size_t n, unsigned block_size) {
  const std::size_t i = std::size_t{blockIdx.x} * 2 * block_size + threadIdx.x;
  return (i < n ? in[i] : 0.0f) + (i + block_size < n ? in[i + block_size] : 0.0f);
}

__device__ __forceinline__ void write_block_sum(float* out, const float* partial, unsigned t) {
  if (t == 0) {
    out[blockIdx.x] = partial[0];
  }
}

// Sequential addressing from stride `first` down to stride `last` (excluded): the lower half adds
// the upper half, conflict-free, with a barrier after each step. With constant bounds (kernels 6
// and 7) the loop is unrolled completely.
__device__ __forceinline__ void sequential_steps(float* partial, unsigned t, unsigned first,
                                                 unsigned last) {
#pragma unroll
  for (unsigned s = first; s > last; s /= 2) {
    if (t < s) {
      partial[t] += partial[t + s];
    }
    __syncthreads();
  }
}

// The last six steps, by the first warp alone: its lanes wait for each other with __syncwarp,
// not for the block (the warp-synchronous code of the original, written for GPUs since Volta,
// whose lanes need not run in lockstep).
__device__ __forceinline__ void last_warp_sum(float* partial, unsigned t) {
  if (t >= 32) {
    return;
  }
#pragma unroll
  for (unsigned s = 32; s > 0; s /= 2) {
    if (t < s) {
      partial[t] += partial[t + s];
    }
    __syncwarp();
  }
}

// 1: interleaved addressing; the threads that add are every (2s)-th one, in every warp.
__global__ void ladder_divergent_kernel(const float* __restrict__ in, float* __restrict__ out,
                                        std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_one(in, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (t % (2 * s) == 0) {
      partial[t] += partial[t + s];
    }
    __syncthreads();
  }
  write_block_sum(out, partial, t);
}

// 2: interleaved addressing by contiguous threads: no divergence, but the strided index puts many
// lanes of a warp on one bank.
__global__ void ladder_interleaved_kernel(const float* __restrict__ in, float* __restrict__ out,
                                          std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_one(in, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * t;
    if (index < blockDim.x) {
      partial[index] += partial[index + s];
    }
    __syncthreads();
  }
  write_block_sum(out, partial, t);
}

// 3: sequential addressing.
__global__ void ladder_sequential_kernel(const float* __restrict__ in, float* __restrict__ out,
                                         std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_one(in, n);
  __syncthreads();
  sequential_steps(partial, t, blockDim.x / 2, 0);
  write_block_sum(out, partial, t);
}

// 4: the first add during the load: half the blocks, each thread adding two elements first.
__global__ void ladder_add_on_load_kernel(const float* __restrict__ in, float* __restrict__ out,
                                          std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_two(in, n, blockDim.x);
  __syncthreads();
  sequential_steps(partial, t, blockDim.x / 2, 0);
  write_block_sum(out, partial, t);
}

// 5: the last warp unrolled: __syncthreads only while more than a warp adds.
__global__ void ladder_last_warp_kernel(const float* __restrict__ in, float* __restrict__ out,
                                        std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_two(in, n, blockDim.x);
  __syncthreads();
  sequential_steps(partial, t, blockDim.x / 2, 32);
  last_warp_sum(partial, t);
  write_block_sum(out, partial, t);
}

// 6: completely unrolled: the block size is a compile-time constant, so are the loops' bounds.
__global__ void ladder_unrolled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  partial[t] = load_two(in, n, kReduceBlock);
  __syncthreads();
  sequential_steps(partial, t, kReduceBlock / 2, 32);
  last_warp_sum(partial, t);
  write_block_sum(out, partial, t);
}

// 7: many elements per thread: a grid of one full wave whose threads each sum a grid-stride run
// of elements in a register first.
__global__ void ladder_many_per_thread_kernel(const float* __restrict__ in, float* __restrict__ out,
                                              std::size_t n) {
  __shared__ float partial[kReduceBlock];
  const unsigned t = threadIdx.x;
  const std::size_t stride = std::size_t{gridDim.x} * 2 * kReduceBlock;
  float sum = 0.0f;
  for (std::size_t i = std::size_t{blockIdx.x} * 2 * kReduceBlock + t; i < n; i += stride) {
    sum += in[i] + (i + kReduceBlock < n ? in[i + kReduceBlock] : 0.0f);
  }
  partial[t] = sum;
  __syncthreads();
  sequential_steps(partial, t, kReduceBlock / 2, 32);
  last_warp_sum(partial, t);
  write_block_sum(out, partial, t);
}

// Blocks of level 7's passes: one full wave of the device (its SMs times the 256-thread blocks an
// SM holds), the modern form of the original's fixed grid: at the default 2^22 on an H100 (132 x 8
// blocks) each thread sums 8 pairs of elements before the tree.
unsigned full_wave_blocks() {
  int device = 0;
  GPULAB_CHECK(cudaGetDevice(&device));
  int sms = 0;
  int threads_per_sm = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPULAB_CHECK(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return static_cast<unsigned>(sms) * static_cast<unsigned>(threads_per_sm / kReduceBlock);
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

namespace {

// The ladder's launchers (reached through reduction_ladder_levels()): each launches its kernel by
// name (so a counted launch is named after it) over the passes, with the elements a block sums
// and the cap on blocks of its kernel.
void reduce_ladder_divergent(const float* in, float* out, std::size_t n, float* workspace,
                             cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_divergent_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, kReduceBlock, 0);
}

void reduce_ladder_interleaved(const float* in, float* out, std::size_t n, float* workspace,
                               cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_interleaved_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, kReduceBlock, 0);
}

void reduce_ladder_sequential(const float* in, float* out, std::size_t n, float* workspace,
                              cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_sequential_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, kReduceBlock, 0);
}

void reduce_ladder_add_on_load(const float* in, float* out, std::size_t n, float* workspace,
                               cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_add_on_load_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, 2 * kReduceBlock, 0);
}

void reduce_ladder_last_warp(const float* in, float* out, std::size_t n, float* workspace,
                             cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_last_warp_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, 2 * kReduceBlock, 0);
}

void reduce_ladder_unrolled(const float* in, float* out, std::size_t n, float* workspace,
                            cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_unrolled_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, 2 * kReduceBlock, 0);
}

void reduce_ladder_many_per_thread(const float* in, float* out, std::size_t n, float* workspace,
                                   cudaStream_t stream) {
  reduce_passes(
      [](unsigned blocks, const float* from, float* to, std::size_t count, cudaStream_t s) {
        ladder_many_per_thread_kernel<<<blocks, kReduceBlock, 0, s>>>(from, to, count);
      },
      in, out, n, workspace, stream, 2 * kReduceBlock, full_wave_blocks());
}

}  // namespace

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

std::span<const Level<ReduceLaunch>> reduction_ladder_levels() {
  static const Level<ReduceLaunch> levels[] = {
      {1,
       "interleaved, divergent",
       "a tree in shared memory; the threads that add are every (2s)-th one, in every warp",
       &reduce_ladder_divergent,
       {GPULAB_KERNEL_REF(ladder_divergent_kernel, kNoDynamicShared)}},
      {2,
       "interleaved, bank conflicts",
       "contiguous threads add (no divergence), at a strided index that conflicts on banks",
       &reduce_ladder_interleaved,
       {GPULAB_KERNEL_REF(ladder_interleaved_kernel, kNoDynamicShared)}},
      {3,
       "sequential addressing",
       "the lower half adds the upper half: contiguous threads, no bank conflicts",
       &reduce_ladder_sequential,
       {GPULAB_KERNEL_REF(ladder_sequential_kernel, kNoDynamicShared)}},
      {4,
       "first add during load",
       "each thread adds two elements as it loads them: half the blocks, no idle first step",
       &reduce_ladder_add_on_load,
       {GPULAB_KERNEL_REF(ladder_add_on_load_kernel, kNoDynamicShared)}},
      {5,
       "last warp unrolled",
       "the last six steps by one warp with __syncwarp instead of block-wide barriers",
       &reduce_ladder_last_warp,
       {GPULAB_KERNEL_REF(ladder_last_warp_kernel, kNoDynamicShared)}},
      {6,
       "completely unrolled",
       "the block size is a compile-time constant: every loop of the tree unrolled",
       &reduce_ladder_unrolled,
       {GPULAB_KERNEL_REF(ladder_unrolled_kernel, kNoDynamicShared)}},
      {7,
       "many elements per thread",
       "a fixed grid whose threads sum a grid-stride run in a register before the tree",
       &reduce_ladder_many_per_thread,
       {GPULAB_KERNEL_REF(ladder_many_per_thread_kernel, kNoDynamicShared)}},
  };
  return levels;
}

namespace {

// n random floats in [-1, 1) summed into one, by any level of `levels` (the op named `op`).
class ReductionProblem final : public OpProblem {
 public:
  using Levels = std::span<const Level<ReduceLaunch>> (*)();
  ReductionProblem(std::size_t n, Levels levels, std::string_view op)
      : levels_(levels),
        op_(op),
        input_(random_floats(n, 3)),
        in_(n),
        out_(1),
        workspace_(reduce_sum_workspace(n) + 1),
        expected_{static_cast<float>(reduce_sum_reference(input_))} {
    in_.copy_from(input_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    level_at(levels_(), index, op_)
        .launch(in_.data(), out_.data(), input_.size(), workspace_.data(), stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(levels_(), index, op_);
    out_.fill_bytes_async(0xff, stream);
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    // A sum of n terms: fp32's tolerance grown with sqrt(n), for the typical magnitude of such a
    // sum, sqrt(n) * rms(input) (a random walk of n steps), not |expected|, which cancellation
    // can make arbitrarily small.
    const auto n = static_cast<std::int64_t>(input_.size());
    const Tolerance tolerance =
        scaled(tolerance_for(DType::fp32, n), std::sqrt(static_cast<double>(n)) * rms(input_));
    require_close(describe_level(op_, level.number, level.name, 0), expected_, out_.to_vector(),
                  tolerance);
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
  Levels levels_;
  std::string_view op_;
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
        return std::make_unique<ReductionProblem>(n, &reduction_levels, "reduction");
      },
  };
}

Op reduction_ladder_op() {
  return {
      .name = "reduction_ladder",
      .summary = "the sum of n floats by the seven kernels of \"Optimizing Parallel Reduction\"",
      .size_means = "floats summed",
      .default_size = std::size_t{1} << 22,
      .sim_size = std::size_t{1} << 20,
      .test_sizes = {1, 31, 256, 257, 513, 1000, 65536, 65536 * 4 + 3},
      .default_block = 0,
      .levels = erase_levels(reduction_ladder_levels()),
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<ReductionProblem>(n, &reduction_ladder_levels, "reduction_ladder");
      },
  };
}

}  // namespace gpulab::kernels
