// Lab 04: optimization levels of attention. Fill in the TODO(lab04) regions; lab04.hpp has the
// contract of every function and README.md the background.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "attention/attention.hpp"
#include "gpulab/core/cuda_check.hpp"
#include "gpulab/core/lab.hpp"
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
// What level `level`'s core (1, 3 or 4) needs, checked before anything is enqueued (by the core,
// and by optimize_attention before the projection): buffers of this config, the level's
// intermediate, a head_dim the level tiles, and (batch, head) pairs that fit the grid.
void check_core(const kernels::AttentionConfig& config, const kernels::AttentionBuffers& buffers,
                int level, const std::string& who) {
  kernels::check_buffers(config, buffers);
  const bool present =
      level == 1 ? !buffers.scores.empty() : level != 4 || !buffers.qkv_half.empty();
  require(present, who + " needs buffers." + (level == 1 ? "scores" : "qkv_half") +
                       ": allocate the buffers with kernels::attention_workspace(" +
                       std::to_string(level) + ")");
  const int dh = config.head_dim();
  if (level == 4) {
    require(dh % 16 == 0 && dh <= kMaxHeadDim,
            who + ": head_dim " + std::to_string(dh) +
                " must be a multiple of 16 (the WMMA tile), at most " +
                std::to_string(kMaxHeadDim));
  } else {
    require(dh <= kMaxHeadDim,
            who + ": head_dim " + std::to_string(dh) + " is above " + std::to_string(kMaxHeadDim));
  }
  require(static_cast<long long>(config.batch) * config.heads <= 65535,
          who + ": at most 65535 (batch, head) pairs (grid.y)");
}
// TODO(lab04) END

// ------------------------------------------------------------------------------------------------
// Level 1: the softmax fused into the weighted sum
// ------------------------------------------------------------------------------------------------

// TODO(lab04) BEGIN: level 1's kernel
constexpr int kFusedWarps = 8;  // warps per block, one query row each

// Warp w of block (x, y) owns query row x * kFusedWarps + w of head y. Lane c of the warp owns
// output columns c, c + 32, ... so its reads of a V row and its writes of the output row are
// coalesced; the scores row is read twice, 32 consecutive keys at a time.
__global__ void fused_attention_row_kernel(const float* __restrict__ scores,
                                           const float* __restrict__ qkv, float* __restrict__ attn,
                                           Shape s) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int row =
      static_cast<int>(blockIdx.x) * kFusedWarps + static_cast<int>(threadIdx.x) / kWarp;
  if (row >= s.seq) {
    return;  // the whole warp: no row left
  }
  const HeadOffsets head = head_offsets(s, blockIdx.y);
  const std::size_t ld = 3 * static_cast<std::size_t>(s.d_model);
  const float* v = qkv + head.q + 2 * static_cast<std::size_t>(s.d_model);
  const float* score_row = scores + (std::size_t(blockIdx.y) * s.seq + row) * std::size_t(s.seq);
  const int keys = s.causal ? row + 1 : s.seq;  // the keys this row attends to

  // 1. The row's maximum and sum of exp(score - max) in one pass: each lane keeps its own, rescaled
  //    when its maximum grows, and the warp merges the 32 pairs.
  float m = -INFINITY;
  float l = 0.0f;
  for (int j = lane; j < keys; j += kWarp) {
    const float x = score_row[j];
    const float m_new = fmaxf(m, x);
    l = l * expf(m - m_new) + expf(x - m_new);
    m = m_new;
  }
  const float row_max = warp_max(m);
  l = warp_sum(m == -INFINITY ? 0.0f : l * expf(m - row_max));

  // 2. o = sum_j p_j v_j with p_j = exp(score_j - max) / l made on the fly: 32 keys at a time, lane
  //    j computes p of key j and the warp passes each p to every lane.
  float o[kColsPerLane] = {};
  for (int j0 = 0; j0 < keys; j0 += kWarp) {
    const int j = j0 + lane;
    const float p = j < keys ? expf(score_row[j] - row_max) / l : 0.0f;
    const int count = min(kWarp, keys - j0);
    for (int k = 0; k < count; ++k) {
      const float pk = __shfl_sync(kFullMask, p, k);
      const float* v_row = v + std::size_t(j0 + k) * ld;
#pragma unroll
      for (int c = 0; c < kColsPerLane; ++c) {
        const int col = lane + c * kWarp;
        if (col < s.head_dim) {
          o[c] += pk * v_row[col];
        }
      }
    }
  }
  float* out = attn + head.out + std::size_t(row) * std::size_t(s.d_model);
#pragma unroll
  for (int c = 0; c < kColsPerLane; ++c) {
    const int col = lane + c * kWarp;
    if (col < s.head_dim) {
      out[col] = o[c];
    }
  }
}
// TODO(lab04) END

}  // namespace

void fused_softmax_attention(const kernels::AttentionConfig& config,
                             kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, the scores GEMM (run_component), then your kernel
  check_core(config, buffers, 1, "fused_softmax_attention");
  const dim3 grid = grid_for(config, kFusedWarps, "fused_softmax_attention");
  kernels::run_component(kernels::Component::scores, config, buffers, stream);
  fused_attention_row_kernel<<<grid, kFusedWarps * kWarp, 0, stream>>>(
      buffers.scores.data(), buffers.qkv.data(), buffers.attn.data(), shape_of(config));
  GPULAB_CHECK_LAUNCH();
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// Level 3: flash attention, FP32
// ------------------------------------------------------------------------------------------------

namespace {

// TODO(lab04) BEGIN: level 3's kernel
constexpr int kFlashWarps = 2;                          // warps per block
constexpr int kRowsPerWarp = 4;                         // query rows each warp owns
constexpr int kFlashRows = kFlashWarps * kRowsPerWarp;  // query rows per block
constexpr int kFlashKeys = kWarp;                       // keys per K/V tile: one per lane
constexpr int kPad = 1;  // a float of padding per shared row: lane j reading row j of the K tile
                         // hits bank (j * (dh + 1) + c) % 32, a different bank per lane

// Block (x, y): query rows x * kFlashRows.. of head y; warp w the kRowsPerWarp rows from
// w * kRowsPerWarp. Per K/V tile, lane j computes the score of key j for all of the warp's rows
// at once (each K element read from shared memory serves every row), the warp reduces each row's
// maximum and sum, and lane c accumulates output columns c, c + 32, .. of every row, with the
// probabilities passed around by shuffles (each V element read serves every row too). m, l and o
// of each row live in registers.
__global__ void flash_attention_fp32_kernel(const float* __restrict__ qkv, float* __restrict__ attn,
                                            Shape s) {
  __shared__ float q_tile[kFlashRows][kMaxHeadDim + kPad];
  __shared__ float k_tile[kFlashKeys][kMaxHeadDim + kPad];
  __shared__ float v_tile[kFlashKeys][kMaxHeadDim + kPad];
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % kWarp;
  const int first = t / kWarp * kRowsPerWarp;  // the warp's first row in the block
  const int row0 = static_cast<int>(blockIdx.x) * kFlashRows;
  const int dh = s.head_dim;
  const std::size_t ld = 3 * static_cast<std::size_t>(s.d_model);
  const HeadOffsets head = head_offsets(s, blockIdx.y);
  const float* q = qkv + head.q;
  const float* k = q + s.d_model;
  const float* v = k + s.d_model;

  // The block's query rows, scaled by 1/sqrt(dh) once; consecutive threads read consecutive
  // columns (coalesced). Rows past the end are zero.
  for (int i = t; i < kFlashRows * dh; i += blockDim.x) {
    const int r = i / dh;
    const int c = i % dh;
    q_tile[r][c] = row0 + r < s.seq ? s.scale * q[std::size_t(row0 + r) * ld + c] : 0.0f;
  }
  float m[kRowsPerWarp];
  float l[kRowsPerWarp];
  float o[kRowsPerWarp][kColsPerLane];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < kColsPerLane; ++c) {
      o[r][c] = 0.0f;
    }
  }

  // With causal, no row of this block attends to a key after its last row.
  const int end = s.causal ? min(s.seq, row0 + kFlashRows) : s.seq;
  for (int t0 = 0; t0 < end; t0 += kFlashKeys) {
    __syncthreads();  // every warp is done with the previous tile (and q_tile is written)
    for (int i = t; i < kFlashKeys * dh; i += blockDim.x) {
      const int r = i / dh;
      const int c = i % dh;
      const bool inside = t0 + r < s.seq;
      k_tile[r][c] = inside ? k[std::size_t(t0 + r) * ld + c] : 0.0f;
      v_tile[r][c] = inside ? v[std::size_t(t0 + r) * ld + c] : 0.0f;
    }
    __syncthreads();  // the tile is complete before any warp reads it
    // Lane j: the score of key t0 + j for each row.
    float score[kRowsPerWarp] = {};
    for (int c = 0; c < dh; ++c) {
      const float kc = k_tile[lane][c];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        score[r] += q_tile[first + r][c] * kc;  // the same address in every lane: a broadcast
      }
    }
    // The online softmax: each row's new maximum, the rescaling of what it summed so far, and
    // lane j's probability p[r] of key t0 + j.
    const int key = t0 + lane;
    float p[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = row0 + first + r;
      const bool valid = row < s.seq && key < s.seq && (!s.causal || key <= row);
      const float m_new = fmaxf(m[r], warp_max(valid ? score[r] : -INFINITY));
      if (m_new == -INFINITY) {  // the same in every lane: no key of this row so far
        p[r] = 0.0f;
        continue;
      }
      const float alpha = expf(m[r] - m_new);  // 0 for the first tile (m = -inf)
      p[r] = valid ? expf(score[r] - m_new) : 0.0f;
      l[r] = l[r] * alpha + warp_sum(p[r]);
      m[r] = m_new;
#pragma unroll
      for (int c = 0; c < kColsPerLane; ++c) {
        o[r][c] *= alpha;
      }
    }
    // o += P V: lane c reads V[j][c] once for all rows, and gets each row's p of key j from lane j.
    for (int j = 0; j < kFlashKeys; ++j) {
      float vj[kColsPerLane];
#pragma unroll
      for (int c = 0; c < kColsPerLane; ++c) {
        const int col = lane + c * kWarp;
        vj[c] = col < dh ? v_tile[j][col] : 0.0f;
      }
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float pj = __shfl_sync(kFullMask, p[r], j);
#pragma unroll
        for (int c = 0; c < kColsPerLane; ++c) {
          o[r][c] += pj * vj[c];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = row0 + first + r;
    if (row < s.seq) {
      float* out = attn + head.out + std::size_t(row) * std::size_t(s.d_model);
#pragma unroll
      for (int c = 0; c < kColsPerLane; ++c) {
        const int col = lane + c * kWarp;
        if (col < dh) {
          out[col] = o[r][c] / l[r];
        }
      }
    }
  }
}
// TODO(lab04) END

}  // namespace

void flash_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                     cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, then your kernel
  check_core(config, buffers, 3, "flash_attention");
  const dim3 grid = grid_for(config, kFlashRows, "flash_attention");
  flash_attention_fp32_kernel<<<grid, kFlashWarps * kWarp, 0, stream>>>(
      buffers.qkv.data(), buffers.attn.data(), shape_of(config));
  GPULAB_CHECK_LAUNCH();
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// Level 4: flash attention on tensor cores
// ------------------------------------------------------------------------------------------------

namespace {

// TODO(lab04) BEGIN: level 4's kernel
namespace wmma = nvcuda::wmma;

constexpr int kTcWarps = 2;             // warps per block, 16 query rows each
constexpr int kTcRows = 16 * kTcWarps;  // query rows per block
constexpr int kTcKeys = 32;             // keys per K/V tile
// Leading dimensions of the shared tiles, padded by 16 bytes: the 8 rows one phase of a fragment
// load reads start in different banks. Each is a multiple of 16 bytes, as WMMA requires.
constexpr int kLdh = kMaxHeadDim + 8;  // halves per row of the Q, K and V tiles
constexpr int kLds = kTcKeys + 4;      // floats per row of a warp's scores
constexpr int kLdp = kTcKeys + 8;      // halves per row of a warp's probabilities
constexpr int kLdo = kMaxHeadDim + 4;  // floats per row of a warp's output

// Copies `rows` rows of dh halves (`ld` apart) into shared rows of kLdh halves, 16 bytes per
// access, rows from `valid` on zero.
__device__ void stage_rows(const __half* __restrict__ from, std::size_t ld, int rows, int valid,
                           int dh, __half* to) {
  const int chunks = dh / 8;  // 16-byte chunks per row
  for (int i = static_cast<int>(threadIdx.x); i < rows * chunks; i += blockDim.x) {
    const int r = i / chunks;
    const int c = i % chunks * 8;
    const uint4 value = r < valid ? *reinterpret_cast<const uint4*>(from + std::size_t(r) * ld + c)
                                  : make_uint4(0, 0, 0, 0);
    *reinterpret_cast<uint4*>(to + r * kLdh + c) = value;
  }
}

// Block (x, y): query rows x * kTcRows.. of head y, warp w the 16 rows from 16 w. Per tile of
// kTcKeys keys, each warp computes its 16 x 32 scores with mma_sync into shared memory; two lanes
// per row update the row's m and l and write P in FP16; the output, kept in shared memory (which
// row a fragment element belongs to is unspecified, so the per-row rescaling happens there), is
// loaded into accumulators, added P V and stored back.
__global__ void flash_attention_fp16_kernel(const __half* __restrict__ qkv,
                                            float* __restrict__ attn, Shape s) {
  __shared__ __align__(32) __half k_tile[kTcKeys * kLdh];  // also stages Q at the start
  __shared__ __align__(32) __half v_tile[kTcKeys * kLdh];
  __shared__ __align__(32) float s_tile[kTcRows * kLds];
  __shared__ __align__(32) __half p_tile[kTcRows * kLdp];
  __shared__ __align__(32) float o_tile[kTcRows * kLdo];
  static_assert(kTcRows <= kTcKeys, "Q is staged in the K tile");
  const int dh = s.head_dim;
  const int chunks = dh / 16;  // 16-wide pieces of the head dimension
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  float* s_warp = s_tile + warp * 16 * kLds;
  __half* p_warp = p_tile + warp * 16 * kLdp;
  float* o_warp = o_tile + warp * 16 * kLdo;
  const std::size_t ld = 3 * static_cast<std::size_t>(s.d_model);
  const HeadOffsets head = head_offsets(s, blockIdx.y);
  const __half* q = qkv + head.q;
  const int row0 = static_cast<int>(blockIdx.x) * kTcRows;
  const int warp_row0 = row0 + 16 * warp;

  stage_rows(q + std::size_t(row0) * ld, ld, kTcRows, s.seq - row0, dh, k_tile);
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> q_frag[kMaxHeadDim / 16];
#pragma unroll
  for (int c = 0; c < kMaxHeadDim / 16; ++c) {
    if (c < chunks) {
      wmma::load_matrix_sync(q_frag[c], k_tile + 16 * warp * kLdh + 16 * c, kLdh);
    }
  }
  // Lanes 2r and 2r + 1 own row r of the warp: its m and l, and half of its output columns.
  const int r = lane / 2;
  const int half_lane = lane % 2;
  const int row = warp_row0 + r;
  for (int c = half_lane * dh / 2; c < (half_lane + 1) * dh / 2; ++c) {
    o_warp[r * kLdo + c] = 0.0f;
  }
  float m = -INFINITY;
  float l = 0.0f;

  const int end = s.causal ? min(s.seq, row0 + kTcRows) : s.seq;
  for (int t0 = 0; t0 < end; t0 += kTcKeys) {
    __syncthreads();  // every warp is done with the previous tile (or its Q)
    stage_rows(q + std::size_t(t0) * ld + s.d_model, ld, kTcKeys, s.seq - t0, dh, k_tile);
    stage_rows(q + std::size_t(t0) * ld + 2 * std::size_t(s.d_model), ld, kTcKeys, s.seq - t0, dh,
               v_tile);
    __syncthreads();  // the tile is complete
    if (warp_row0 >= s.seq || (s.causal && t0 > warp_row0 + 15)) {
      continue;  // the whole warp: rows past the end, or keys after all of its rows
    }
    // S = Q K^T: the columns of K^T are the rows of K, so the K tile is matrix_b in column-major
    // order.
    for (int n = 0; n < kTcKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int c = 0; c < kMaxHeadDim / 16; ++c) {
        if (c < chunks) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> k_frag;
          wmma::load_matrix_sync(k_frag, k_tile + 16 * n * kLdh + 16 * c, kLdh);
          wmma::mma_sync(acc, q_frag[c], k_frag, acc);
        }
      }
      wmma::store_matrix_sync(s_warp + 16 * n, acc, kLds, wmma::mem_row_major);
    }
    __syncwarp();
    // The online softmax of the tile, two lanes per row, 16 keys each.
    constexpr int kPerLane = kTcKeys / 2;
    float x[kPerLane];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int key = t0 + half_lane * kPerLane + j;
      const bool valid = key < s.seq && (!s.causal || key <= row);
      x[j] = valid ? s.scale * s_warp[r * kLds + half_lane * kPerLane + j] : -INFINITY;
      tile_max = fmaxf(tile_max, x[j]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float alpha = m_new == -INFINITY ? 1.0f : expf(m - m_new);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const __half p = __float2half(x[j] == -INFINITY ? 0.0f : expf(x[j] - m_new));
      sum += __half2float(p);  // the P that multiplies V: l sums the same rounded values
      p_warp[r * kLdp + half_lane * kPerLane + j] = p;
    }
    sum += __shfl_xor_sync(kFullMask, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    for (int c = half_lane * dh / 2; c < (half_lane + 1) * dh / 2; ++c) {
      o_warp[r * kLdo + c] *= alpha;
    }
    __syncwarp();
    // O += P V, one 16-column piece of the output at a time.
#pragma unroll
    for (int c = 0; c < kMaxHeadDim / 16; ++c) {
      if (c < chunks) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::load_matrix_sync(acc, o_warp + 16 * c, kLdo, wmma::mem_row_major);
        for (int k = 0; k < kTcKeys / 16; ++k) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> p_frag;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> v_frag;
          wmma::load_matrix_sync(p_frag, p_warp + 16 * k, kLdp);
          wmma::load_matrix_sync(v_frag, v_tile + 16 * k * kLdh + 16 * c, kLdh);
          wmma::mma_sync(acc, p_frag, v_frag, acc);
        }
        wmma::store_matrix_sync(o_warp + 16 * c, acc, kLdo, wmma::mem_row_major);
      }
    }
    __syncwarp();
  }
  // o / l row by row: the 32 lanes write consecutive columns of a row (coalesced), with the row's
  // l from the lane that owns it.
  for (int i = 0; i < 16; ++i) {
    const float row_l = __shfl_sync(kFullMask, l, 2 * i);
    if (warp_row0 + i < s.seq) {
      float* out = attn + head.out + std::size_t(warp_row0 + i) * std::size_t(s.d_model);
      for (int c = lane; c < dh; c += kWarp) {
        out[c] = o_warp[i * kLdo + c] / row_l;
      }
    }
  }
}
// TODO(lab04) END

}  // namespace

void flash_attention_tensor_cores(const kernels::AttentionConfig& config,
                                  kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  // TODO(lab04) BEGIN: check (qkv_half, head_dim), then your kernel
  check_core(config, buffers, 4, "flash_attention_tensor_cores");
  const dim3 grid = grid_for(config, kTcRows, "flash_attention_tensor_cores");
  flash_attention_fp16_kernel<<<grid, kTcWarps * kWarp, 0, stream>>>(
      buffers.qkv_half.data(), buffers.attn.data(), shape_of(config));
  GPULAB_CHECK_LAUNCH();
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// The ladder
// ------------------------------------------------------------------------------------------------

void optimize_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                        int level, cudaStream_t stream) {
  // TODO(lab04) BEGIN: 0 and 2 call the framework's; 1, 3, 4: projection, your core, output one
  require(level >= 0 && level <= 4,
          "optimize_attention: level " + std::to_string(level) + " is not one of 0 to 4");
  if (level == 0) {
    kernels::attention_forward(config, buffers, stream);
    return;
  }
  if (level == 2) {
    kernels::attention_cublas_forward(config, buffers, stream);
    return;
  }
  // Everything the core checks, before the projection is enqueued.
  check_core(config, buffers, level, "optimize_attention (level " + std::to_string(level) + ")");
  kernels::run_component(kernels::Component::qkv_projection, config, buffers, stream);
  if (level == 1) {
    fused_softmax_attention(config, buffers, stream);
  } else if (level == 3) {
    flash_attention(config, buffers, stream);
  } else {
    kernels::convert_qkv_to_half(config, buffers, stream);
    flash_attention_tensor_cores(config, buffers, stream);
  }
  kernels::run_component(kernels::Component::output_projection, config, buffers, stream);
  // TODO(lab04) END
}

}  // namespace gpulab::lab04
