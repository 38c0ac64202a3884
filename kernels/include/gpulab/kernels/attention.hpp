// Multi-head self-attention forward, fp32, row-major, as five separately launched components so
// that each can be timed, profiled and placed on a roofline (the component-profiling and
// bottleneck labs):
//
//   1  QKV Projection     qkv = x * w_qkv                       tiled GEMM, a batch of 1
//   2  Score Computation  scores[b,h] = Q[b,h] * K[b,h]^T / sqrt(dh)
//                                                               tiled GEMM, transposed B, B*H
//                                                               batches
//   3  Softmax            probs = softmax(scores) per row, causal rows masked
//                                                               one block per row, block reductions
//   4  Weighted Sum       attn[b,h] = probs[b,h] * V[b,h]       tiled GEMM, B*H batches
//   5  Output Projection  y = attn * w_out                      tiled GEMM, a batch of 1
//
// Two kernels do all of it: one 16 x 16 tiled shared-memory GEMM general enough for the four
// matrix multiplies (leading dimensions, optional transposed B, (batch, head) offsets) and one
// numerically stable row softmax. This is the unfused baseline: every intermediate (qkv, the
// B*H*S*S scores and probabilities, attn) makes a round trip through DRAM, which is what fused
// (flash) attention removes.
//
// Shapes, with B = batch, S = seq_len, D = d_model, H = heads, dh = D / H:
//   x [B*S, D]   w_qkv [D, 3D]   qkv [B*S, 3D]   scores, probs [B, H, S, S]   attn [B*S, D]
//   w_out [D, D]   y [B*S, D]
// A row of qkv is one token: columns 0..D-1 are Q, D..2D-1 are K, 2D..3D-1 are V, and head h of
// each is the dh columns starting at h*dh. Head h of attn is written to columns h*dh.. as well,
// so the heads are concatenated without a separate transpose.
//
// Analytic cost (component_cost), fp32 = 4 bytes per element, each tensor read or written once
// (a multiply-add is 2 FLOPs):
//   QKV Projection     flops 2*B*S*D*3D          bytes 4*(B*S*D + D*3D + B*S*3D)
//   Score Computation  flops 2*B*H*S*S*dh        bytes 4*(2*B*S*D + B*H*S*S)    read Q and K,
//                      (the 1/sqrt(dh) scale is fused into the GEMM and not counted)  write scores
//   Softmax            flops 5*B*H*S*S           bytes 4*2*B*H*S*S              read scores,
//                      (max, subtract, exp, sum, divide per element)            write probs
//   Weighted Sum       flops 2*B*H*S*S*dh        bytes 4*(B*H*S*S + B*S*D + B*S*D)  read P, V,
//                                                                                  write attn
//   Output Projection  flops 2*B*S*D*D           bytes 4*(B*S*D + D*D + B*S*D)
// Causal masking changes none of these: the kernels compute and store the full S x S matrices.
//
// The optimization ladder (attention_levels(), every level from x, w_qkv and w_out to y; the
// projections are the same in levels 0, 1, 3 and 4, cuBLAS in level 2):
//
//   L0  unfused        the five components above: scores and probs through DRAM (two S^2
//                      tensors per (b, h))
//   L1  fused softmax  scores, then one kernel that scales, masks and softmaxes each row on the fly
//                      and multiplies by V: P is never stored (one S^2 tensor, one round trip
//                      through DRAM fewer, four launches)
//   L2  cuBLAS         the four matrix products as cuBLAS (strided-batched) SGEMMs around an
//                      in-place masked softmax (one S^2 tensor): what a vendor library gives
//   L3  flash          one kernel per (b, h, block of query rows): K and V tiles through shared
//                      memory, an online softmax (running max and sum, rescaled as the max grows),
//                      causal tiles skipped; no S^2 tensor at all
//   L4  flash, tensor  L3 on tensor cores: Q, K, V in FP16 (converted after the projection), the
//       cores          products as WMMA m16n16k16 with FP32 accumulation; head_dim a multiple of
//                      16, at most 128
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/kernels/common.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab::kernels {

/// The shape of one attention layer.
struct AttentionConfig {
  int batch = 1;        ///< sequences
  int seq_len = 128;    ///< tokens per sequence (S)
  int d_model = 128;    ///< model width (D)
  int heads = 4;        ///< attention heads (H); head_dim = d_model / heads
  bool causal = false;  ///< mask future tokens

  /// d_model / heads (dh).
  [[nodiscard]] int head_dim() const;
  /// Throws std::invalid_argument with a clear message unless all positive and d_model % heads
  /// == 0.
  void validate() const;
};

/// The five components of the forward pass, in execution order.
enum class Component { qkv_projection, scores, softmax, weighted_sum, output_projection };
inline constexpr int kComponentCount = 5;

/// "QKV Projection", "Score Computation", "Softmax", "Weighted Sum", "Output Projection": the
/// NVTX range names, exactly.
[[nodiscard]] std::string_view component_name(Component component);
/// All five, in execution order.
[[nodiscard]] std::span<const Component> all_components();

/// Analytic FLOPs and DRAM bytes of one component (formulas in the header comment). Throws
/// std::invalid_argument for an invalid config.
[[nodiscard]] gpulab::OpCost component_cost(const AttentionConfig& config, Component component);
/// The sum of the five component costs.
[[nodiscard]] gpulab::OpCost forward_cost(const AttentionConfig& config);

/// The intermediates a level keeps in device memory besides the O(B*S*D) tensors.
struct AttentionWorkspace {
  bool scores = true;    ///< [B, H, S, S] floats: levels 0, 1, 2
  bool probs = true;     ///< [B, H, S, S] floats: level 0
  bool qkv_half = true;  ///< [B*S, 3D] halves: level 4
};

/// What level `level` of attention_levels() needs. Throws std::invalid_argument for no such level.
[[nodiscard]] AttentionWorkspace attention_workspace(int level);

/// Device buffers for one forward pass, sized for the config they were built with. // move-only
struct AttentionBuffers {
  DeviceBuffer<float> x;          ///< input activations [B*S, D]
  DeviceBuffer<float> w_qkv;      ///< QKV projection weights [D, 3D]
  DeviceBuffer<float> qkv;        ///< Q | K | V per token [B*S, 3D]
  DeviceBuffer<float> scores;     ///< Q K^T (scaled in levels 0 and 2) [B, H, S, S], or empty
  DeviceBuffer<float> probs;      ///< softmax of scores [B, H, S, S], or empty
  DeviceBuffer<__half> qkv_half;  ///< qkv in FP16 [B*S, 3D], or empty
  DeviceBuffer<float> attn;       ///< heads concatenated [B*S, D]
  DeviceBuffer<float> w_out;      ///< output projection weights [D, D]
  DeviceBuffer<float> y;          ///< layer output [B*S, D]

  /// Allocates the O(B*S*D) buffers and the intermediates `workspace` names (uninitialised; by
  /// default all, so every level can run). A level whose intermediate is missing throws. Throws
  /// std::invalid_argument for an invalid config.
  explicit AttentionBuffers(const AttentionConfig& config, AttentionWorkspace workspace = {});
  /// Total device memory held, in bytes.
  [[nodiscard]] std::size_t bytes() const;
  /// The bytes AttentionBuffers(config, workspace) holds, without allocating them. Throws
  /// std::invalid_argument for an invalid config.
  [[nodiscard]] static std::size_t bytes_for(const AttentionConfig& config,
                                             AttentionWorkspace workspace = {});
};

/// Host inputs of one forward pass.
struct AttentionInputs {
  std::vector<float> x;      ///< [B*S, D], uniform in [-1, 1]
  std::vector<float> w_qkv;  ///< [D, 3D], uniform in [-1, 1] / sqrt(D)
  std::vector<float> w_out;  ///< [D, D], uniform in [-1, 1] / sqrt(D)
};

/// Deterministic inputs from `seed` (std::mt19937's raw output, which the standard fixes, so the
/// values are the same on every platform). The 1/sqrt(D) weight scale keeps activations O(1).
[[nodiscard]] AttentionInputs make_attention_inputs(const AttentionConfig& config, unsigned seed);
/// Copies x, w_qkv and w_out to the device (synchronous). Throws std::invalid_argument when a
/// size differs from the buffer's.
void upload(const AttentionInputs& inputs, AttentionBuffers& buffers);

/// Throws std::invalid_argument unless `config` is valid and `buffers` were allocated for it (an
/// intermediate may be absent; one that is present must have the config's size).
void check_buffers(const AttentionConfig& config, const AttentionBuffers& buffers);

/// Launches one component on `stream`; it reads the previous component's output buffer (and the
/// weights) and writes its own. Throws std::invalid_argument for an invalid config or buffers
/// sized for another config.
void run_component(Component component, const AttentionConfig& config, AttentionBuffers& buffers,
                   cudaStream_t stream = nullptr);
/// All five components in order on `stream`: y from x, w_qkv and w_out (level 0).
void attention_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                       cudaStream_t stream = nullptr);
/// Level 1: the softmax fused into the weighted sum (needs buffers.scores).
void attention_fused_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                             cudaStream_t stream = nullptr);
/// Level 2: cuBLAS for the matrix products (needs buffers.scores).
void attention_cublas_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                              cudaStream_t stream = nullptr);
/// Level 3: flash attention in FP32 (no intermediate beyond qkv).
void flash_attention_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                             cudaStream_t stream = nullptr);
/// Level 4: flash attention on tensor cores, FP16 inputs, FP32 accumulation (needs
/// buffers.qkv_half; throws std::invalid_argument unless head_dim is a multiple of 16, at most
/// 128).
void flash_attention_wmma_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                                  cudaStream_t stream = nullptr);

/// buffers.qkv_half = buffers.qkv rounded to FP16 (to nearest even), on `stream`: level 4's input.
/// Throws std::invalid_argument for buffers of another config or without qkv_half.
void convert_qkv_to_half(const AttentionConfig& config, AttentionBuffers& buffers,
                         cudaStream_t stream = nullptr);

using AttentionLaunch = void (*)(const AttentionConfig& config, AttentionBuffers& buffers,
                                 cudaStream_t stream);

/// The levels of the forward pass, in order (attention_forward is level 0, the unfused baseline).
std::span<const Level<AttentionLaunch>> attention_levels();

// CPU references, accumulated in double, one per component on host vectors (shapes as above).

/// qkv = x * w_qkv.
[[nodiscard]] std::vector<float> qkv_projection_reference(const AttentionConfig& config,
                                                          std::span<const float> x,
                                                          std::span<const float> w_qkv);
/// scores[b,h,i,j] = Q[b,h,i] . K[b,h,j] / sqrt(dh), for every j (causal or not).
[[nodiscard]] std::vector<float> scores_reference(const AttentionConfig& config,
                                                  std::span<const float> qkv);
/// Row softmax of scores; with causal, probs[.., i, j > i] = 0 exactly.
[[nodiscard]] std::vector<float> softmax_reference(const AttentionConfig& config,
                                                   std::span<const float> scores);
/// attn[b, i, h*dh + c] = sum_j probs[b,h,i,j] * V[b,h,j,c].
[[nodiscard]] std::vector<float> weighted_sum_reference(const AttentionConfig& config,
                                                        std::span<const float> probs,
                                                        std::span<const float> qkv);
/// y = attn * w_out.
[[nodiscard]] std::vector<float> output_projection_reference(const AttentionConfig& config,
                                                             std::span<const float> attn,
                                                             std::span<const float> w_out);

/// Every intermediate of the reference forward pass.
struct AttentionStages {
  std::vector<float> qkv;     ///< [B*S, 3D]
  std::vector<float> scores;  ///< [B, H, S, S]
  std::vector<float> probs;   ///< [B, H, S, S]
  std::vector<float> attn;    ///< [B*S, D]
  std::vector<float> y;       ///< [B*S, D]
};

/// The five references chained: every stage, so tests can check each component on its own.
[[nodiscard]] AttentionStages attention_reference_stages(const AttentionConfig& config,
                                                         const AttentionInputs& inputs);
/// The whole forward pass on the CPU: y.
[[nodiscard]] std::vector<float> attention_reference(const AttentionConfig& config,
                                                     const AttentionInputs& inputs);

/// The fp32 tolerance of the forward output y against attention_reference, for an output whose
/// typical magnitude is `scale` (the rms of the reference): the project's numeric policy
/// (gpulab/core/numeric.hpp, docs/grading.md) applied to the chain of five components. Errors add
/// along a chain, so it is the sum of the components' tolerances, each fp32's grown with sqrt(k)
/// for its k-term sums: the QKV projection over d_model, the scores over head_dim, the softmax over
/// seq_len (the row sum), the weighted sum over seq_len, the output projection over d_model.
/// Throws std::invalid_argument for an invalid config.
[[nodiscard]] gpulab::Tolerance forward_tolerance(const AttentionConfig& config, double scale);
/// The tolerance of level `level`'s y: forward_tolerance, and for level 4 the FP16 rounding of Q,
/// K, V and P on top: the numeric policy's FP16 rtol grown over head_dim (the scores) plus over
/// seq_len (the weighted sum), as both the relative part and, times `scale`, the absolute part.
/// Throws std::invalid_argument for an invalid config or level.
[[nodiscard]] gpulab::Tolerance level_tolerance(const AttentionConfig& config, int level,
                                                double scale);

/// y's shape (and attn's: heads concatenated, [B*S, D]) for messages such as compare_close's:
/// batch, row (the token), column.
[[nodiscard]] inline gpulab::TensorShape output_shape(const AttentionConfig& config) {
  return {{"batch", static_cast<std::size_t>(config.batch)},
          {"row", static_cast<std::size_t>(config.seq_len)},
          {"column", static_cast<std::size_t>(config.d_model)}};
}

/// attn with its heads apart ([B, S, H, dh], the same elements as output_shape's): batch, row,
/// head, and column within the head.
[[nodiscard]] inline gpulab::TensorShape heads_shape(const AttentionConfig& config) {
  return {{"batch", static_cast<std::size_t>(config.batch)},
          {"row", static_cast<std::size_t>(config.seq_len)},
          {"head", static_cast<std::size_t>(config.heads)},
          {"column", static_cast<std::size_t>(config.head_dim())}};
}

}  // namespace gpulab::kernels
