// Lab 04: optimization levels of attention. Fill in the TODO(lab04) regions; lab04.hpp has the
// contract of every function and README.md the background.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpulab/core/lab.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "lab04.hpp"

namespace gpulab::lab04 {
namespace {

namespace kernels = gpulab::kernels;

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
[[maybe_unused]] constexpr int kColsPerLane = kMaxHeadDim / kWarp;  // columns a lane owns: 4

// Helpers for your kernels and launchers ([[maybe_unused]]: the stubs do not call them yet).

// What every kernel needs to know about the layer (passed by value: kernel arguments live in
// constant memory).
struct Shape {
  int seq;       // S
  int heads;     // H
  int d_model;   // D
  int head_dim;  // dh
  float scale;   // 1 / sqrt(dh)
  bool causal;
};

[[maybe_unused]] Shape shape_of(const kernels::AttentionConfig& config) {
  return {config.seq_len,
          config.heads,
          config.d_model,
          config.head_dim(),
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(config.head_dim()))),
          config.causal};
}

// Element offsets of head blockIdx.y = b * H + h: Q, K and V rows of the head start at
// qkv + offset.q (+ i * 3D for row i), K and V D and 2D columns further; attn rows at
// attn + offset.out (+ i * D).
struct HeadOffsets {
  std::size_t q;
  std::size_t out;
};

[[maybe_unused]] __device__ HeadOffsets head_offsets(const Shape& s, unsigned pair) {
  const std::size_t batch = pair / static_cast<unsigned>(s.heads);
  const std::size_t head = pair % static_cast<unsigned>(s.heads);
  const std::size_t rows = batch * static_cast<std::size_t>(s.seq);
  const std::size_t column = head * static_cast<std::size_t>(s.head_dim);
  return {rows * 3 * static_cast<std::size_t>(s.d_model) + column,
          rows * static_cast<std::size_t>(s.d_model) + column};
}

// The largest and the sum of the 32 lanes' values, in every lane.
[[maybe_unused]] __device__ float warp_max(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  }
  return value;
}

[[maybe_unused]] __device__ float warp_sum(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(kFullMask, value, offset);
  }
  return value;
}

[[maybe_unused]] void require(bool condition, const std::string& what) {
  if (!condition) {
    throw std::invalid_argument(what);
  }
}

// The grid of a kernel with `rows` query rows per block: x over the rows, y over (batch, head).
[[maybe_unused]] dim3 grid_for(const kernels::AttentionConfig& config, int rows, const char* who) {
  const long long pairs = static_cast<long long>(config.batch) * config.heads;
  require(pairs <= 65535, std::string(who) + ": at most 65535 (batch, head) pairs (grid.y)");
  return dim3(static_cast<unsigned>((config.seq_len + rows - 1) / rows),
              static_cast<unsigned>(pairs));
}

// TODO(lab04) BEGIN: anything your levels share (optional)
// TODO(lab04) END

// ------------------------------------------------------------------------------------------------
// Level 1: the softmax fused into the weighted sum
// ------------------------------------------------------------------------------------------------

// TODO(lab04) BEGIN: level 1's kernel
// TODO(lab04) END

}  // namespace

void fused_softmax_attention(const kernels::AttentionConfig& config,
                             kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, the scores GEMM (run_component), then your kernel
  static_cast<void>(config), static_cast<void>(buffers), static_cast<void>(stream);
  gpulab::not_implemented("lab04", "fused_softmax_attention");
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// Level 3: flash attention, FP32
// ------------------------------------------------------------------------------------------------

namespace {

// TODO(lab04) BEGIN: level 3's kernel
// TODO(lab04) END

}  // namespace

void flash_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                     cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, then your kernel
  static_cast<void>(config), static_cast<void>(buffers), static_cast<void>(stream);
  gpulab::not_implemented("lab04", "flash_attention");
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// Level 4: flash attention on tensor cores
// ------------------------------------------------------------------------------------------------

namespace {

// TODO(lab04) BEGIN: level 4's kernel
// TODO(lab04) END

}  // namespace

void flash_attention_tensor_cores(const kernels::AttentionConfig& config,
                                  kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  // TODO(lab04) BEGIN: check (qkv_half, head_dim), then your kernel
  static_cast<void>(config), static_cast<void>(buffers), static_cast<void>(stream);
  gpulab::not_implemented("lab04", "flash_attention_tensor_cores");
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// The ladder
// ------------------------------------------------------------------------------------------------

void optimize_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                        int level, cudaStream_t stream) {
  // TODO(lab04) BEGIN: 0 and 2 call the framework's; 1, 3, 4: projection, your core, output one
  static_cast<void>(config), static_cast<void>(buffers), static_cast<void>(level),
      static_cast<void>(stream);
  gpulab::not_implemented("lab04", "optimize_attention");
  // TODO(lab04) END
}

}  // namespace gpulab::lab04
