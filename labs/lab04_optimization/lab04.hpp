// Lab 04: optimization levels of attention. The interface of the functions you implement in
// attention.cu (this header is the instructor's: do not edit it).
//
// One attention layer (kernels/attention, attention/attention.hpp) computed five ways, each level
// a targeted fix of what made the one before slow:
//
//   level  name                 attention core (attn from qkv)                 S x S tensors
//   0      unfused              scores GEMM, softmax, P V GEMM (given)         scores, probs
//   1      fused softmax        scores GEMM, then YOUR kernel: scale is done,  scores
//                               mask + softmax + P V on the fly, P never
//                               stored
//   2      cuBLAS               the products as cuBLAS SGEMMs (given)          scores
//   3      flash attention      YOUR kernel: K/V tiles through shared memory,  none
//                               online softmax, causal tiles skipped
//   4      flash, tensor cores  YOUR kernel: level 3 on FP16 Q, K, V with      none
//                               nvcuda::wmma m16n16k16 and FP32 accumulation
//
// Every level computes y = attention(x * w_qkv) * w_out: the same projections around a different
// attention core. The core reads qkv ([B*S, 3D]: per token Q | K | V, head h at columns h*dh..)
// and writes attn ([B*S, D], head h at columns h*dh..), with
//   attn[b, i, h*dh + c] = sum_j softmax_j(Q_i . K_j / sqrt(dh)) V[j, c]
// over the keys j of row i (with causal, j <= i only). README.md derives the online softmax.
//
// Your code must not call the framework's own levels; a call fails, without running them, the
// graded tests of the function whose work it does:
//   kernels::attention_fused_forward       the work of fused_softmax_attention
//   kernels::flash_attention_forward       the work of flash_attention
//   kernels::flash_attention_wmma_forward  the work of flash_attention_tensor_cores
// Allowed (and needed): kernels::run_component, kernels::attention_forward (level 0),
// kernels::attention_cublas_forward (level 2), kernels::check_buffers,
// kernels::convert_qkv_to_half, gpulab::DeviceBuffer, GPULAB_CHECK_LAUNCH, and CUDA's
// <cuda_fp16.h> and <mma.h> (labs/CMakeLists.txt's ALLOWED_CALLS for lab04).
// What lab code may call is an allowlist (docs/grading.md, "Code checks"): `gpulab grade`
// rejects a lab whose code calls anything else, such as a process, thread, signal, file or
// dynamic-loading function, the sim's instruments, or GoogleTest.
//
// Conventions: every function enqueues its work on `stream` and returns without waiting for it.
// Bad input (an invalid config, buffers allocated for another config or without an intermediate
// the level needs, a head_dim the level cannot handle) throws std::invalid_argument before any
// work is enqueued. No function allocates device memory: the buffers hold all a level needs.
#pragma once

#include <cuda_runtime_api.h>

#include "gpulab/kernels/attention.hpp"

namespace gpulab::lab04 {

/// The largest head_dim (d_model / heads) levels 1, 3 and 4 handle: 128.
inline constexpr int kMaxHeadDim = 128;

/// Level 1's attention core: buffers.attn from buffers.qkv through one S x S tensor.
/// kernels::run_component(Component::scores, ...) writes scores = Q K^T / sqrt(dh) into
/// buffers.scores; then one kernel of yours computes, for every (batch, head, query row), the
/// row's softmax (masked with causal: keys after the row get probability 0) and its product with V
/// in the same pass, without writing the probabilities anywhere.
/// Needs buffers.scores (kernels::attention_workspace(1)); head_dim at most kMaxHeadDim.
void fused_softmax_attention(const kernels::AttentionConfig& config,
                             kernels::AttentionBuffers& buffers, cudaStream_t stream);

/// Level 3's attention core: buffers.attn from buffers.qkv in one kernel that writes nothing else.
/// Each block takes a tile of query rows of one (batch, head) and walks the keys in tiles staged
/// in shared memory, keeping per row a running maximum m, running sum l and unnormalized output o,
/// rescaled by exp(m_old - m_new) whenever the maximum grows; with causal, key tiles entirely
/// after the block's last query row are not loaded at all. No S x S tensor exists at any time.
/// Needs no intermediate (kernels::attention_workspace(3)); head_dim at most kMaxHeadDim.
void flash_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                     cudaStream_t stream);

/// Level 4's attention core: buffers.attn from buffers.qkv_half (qkv in FP16, which
/// optimize_attention fills with kernels::convert_qkv_to_half before calling this): level 3's
/// algorithm with both products on the tensor cores (nvcuda::wmma m16n16k16 fragments of __half
/// with float accumulators): S = Q K^T per tile, then O += P V with P rounded to FP16. The running
/// statistics and the output stay in FP32. Needs buffers.qkv_half
/// (kernels::attention_workspace(4)); head_dim a multiple of 16, at most kMaxHeadDim.
void flash_attention_tensor_cores(const kernels::AttentionConfig& config,
                                  kernels::AttentionBuffers& buffers, cudaStream_t stream);

/// The whole layer at optimization level `level` (0 to 4): buffers.y from buffers.x, w_qkv and
/// w_out. Level 0 is kernels::attention_forward and level 2 kernels::attention_cublas_forward;
/// levels 1, 3 and 4 run kernels::run_component(Component::qkv_projection), their attention core
/// above (level 4 after kernels::convert_qkv_to_half), and
/// kernels::run_component(Component::output_projection). `buffers` are allocated with (at least)
/// kernels::attention_workspace(level). Throws std::invalid_argument for a level outside 0..4,
/// besides the level's own errors.
void optimize_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                        int level, cudaStream_t stream);

}  // namespace gpulab::lab04
