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

// Levels 1 and 3 share one tiling of o = P V. A block owns kTileRows query rows and has
// kTileThreads threads (4 warps); thread (ty, tx) = (t / 8, t % 8) owns row ty and, of every 32
// output columns, the 4 from 4 tx. Per tile of kTileKeys keys, P (transposed: one key's
// probabilities for the block's rows in a shared row) and V go through shared memory; per key a
// thread reads its probability and 4 values of V per 32 columns (16 bytes, the 8 threads of a row
// 128 consecutive bytes) for 4 multiply-adds per 32 columns. 16 rows per block is a compromise:
// more rows per block read V fewer times, fewer make more blocks, and at 16 heads of 128 tokens
// the grid (128 blocks) already fills an H100's 132 SMs. Kernels are templates on kGroups, the
// head dimension rounded up to 32 columns (1 to 4 groups): shared rows are 32 * kGroups columns
// wide, the columns from dh on zero.
constexpr int kTileRows = 16;
constexpr int kTileKeys = 32;
constexpr int kTx = 8;  // threads across the columns
constexpr int kRowsPerThread = 1;
constexpr int kTileThreads = kTileRows / kRowsPerThread * kTx;  // 128: 4 warps
constexpr int kPtLd = kTileRows + 4;  // floats per shared row of P^T (16-byte aligned)
static_assert(kTileKeys == kWarp, "a tile of keys is one key per lane");

// Floats per shared row of a Q, K or V tile: 4 more than its width keeps rows 16-byte aligned and
// puts the rows 8 lanes read at the same column in different banks.
template <int kGroups>
constexpr int kTileLd = 32 * kGroups + 4;

// `rows` rows of a head's matrix (`from`, ld apart, dh columns) into shared rows of kTileLd
// floats, times `scale`; the rows from `valid` on and the columns from dh on are zero. Consecutive
// threads read consecutive columns (coalesced), 16 bytes each where dh and ld allow it (4 times
// the bytes in flight per request).
template <int kGroups>
__device__ void stage_tile(const float* __restrict__ from, std::size_t ld, int rows, int valid,
                           int dh, float scale, float* to) {
  constexpr int kWidth = 32 * kGroups;
  if (dh % 4 == 0 && ld % 4 == 0 && reinterpret_cast<std::size_t>(from) % 16 == 0) {
    for (int i = static_cast<int>(threadIdx.x); i < rows * kWidth / 4; i += kTileThreads) {
      const int r = i / (kWidth / 4);
      const int c = i % (kWidth / 4) * 4;
      float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (r < valid && c < dh) {
        x = *reinterpret_cast<const float4*>(from + std::size_t(r) * ld + c);
      }
      *reinterpret_cast<float4*>(to + r * kTileLd<kGroups> + c) =
          make_float4(scale * x.x, scale * x.y, scale * x.z, scale * x.w);
    }
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < rows * kWidth; i += kTileThreads) {
    const int r = i / kWidth;
    const int c = i % kWidth;
    to[r * kTileLd<kGroups> + c] =
        r < valid && c < dh ? scale * from[std::size_t(r) * ld + c] : 0.0f;
  }
}

// o += P V for one tile: pt[j * kPtLd + r] is row r's probability of key j, v the tile's V rows.
template <int kGroups>
__device__ void add_pv(const float* pt, const float* v, float (&o)[kRowsPerThread][4 * kGroups]) {
  const int ty = static_cast<int>(threadIdx.x) / kTx;
  const int tx = static_cast<int>(threadIdx.x) % kTx;
#pragma unroll 4
  for (int j = 0; j < kTileKeys; ++j) {
    const float* p = pt + j * kPtLd + kRowsPerThread * ty;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const float4 v4 =
          *reinterpret_cast<const float4*>(v + j * kTileLd<kGroups> + 32 * g + 4 * tx);
      const float vc[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          o[r][4 * g + k] += p[r] * vc[k];
        }
      }
    }
  }
}

// Writes the thread's outputs (times `factor[r]`) to attn: rows past the end and columns past dh
// are left out.
template <int kGroups>
__device__ void store_rows(const float (&o)[kRowsPerThread][4 * kGroups],
                           const float (&factor)[kRowsPerThread], float* attn, int row0,
                           const Shape& s) {
  const int ty = static_cast<int>(threadIdx.x) / kTx;
  const int tx = static_cast<int>(threadIdx.x) % kTx;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int row = row0 + kRowsPerThread * ty + r;
    if (row < s.seq) {
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int col = 32 * g + 4 * tx + k;
          if (col < s.head_dim) {
            attn[std::size_t(row) * std::size_t(s.d_model) + col] = o[r][4 * g + k] * factor[r];
          }
        }
      }
    }
  }
}

// The dynamic shared memory a block may have without cudaFuncSetAttribute.
constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

// Calls launch.operator()<k>() with k = n for n from 1 to kMax (above kMax: kMax): a kernel
// templated on a size known only at run time, compiled for each size it may take.
template <int kMax, typename Launch>
void with_constant(int n, const Launch& launch) {
  if constexpr (kMax > 1) {
    if (n < kMax) {
      with_constant<kMax - 1>(n, launch);
      return;
    }
  }
  launch.template operator()<kMax>();
}

// Calls launch.operator()<kGroups>() with kGroups = ceil(dh / 32): 1 to 4 for the head dims
// check_core lets through.
template <typename Launch>
void with_groups(int dh, const Launch& launch) {
  with_constant<kMaxHeadDim / 32>((dh + 31) / 32, launch);
}
// TODO(lab04) END

// ------------------------------------------------------------------------------------------------
// Level 1: the softmax fused into the weighted sum
// ------------------------------------------------------------------------------------------------

// TODO(lab04) BEGIN: level 1's kernel
// Block (x, y): query rows x * kTileRows.. of head y. First each warp finds m and 1/l of its share
// of the block's rows (lanes over the keys, coalesced, one online pass); then, per tile of
// kTileKeys keys, the block writes the tile's probabilities p = exp(s - m) / l into shared memory
// (P transposed) beside the tile's V rows, and every thread adds its 1 x 4 kGroups share of P V.
// Each V row is read from global memory once per block, not once per query row.
template <int kGroups>
__global__ void fused_attention_kernel(const float* __restrict__ scores,
                                       const float* __restrict__ qkv, float* __restrict__ attn,
                                       Shape s) {
  extern __shared__ __align__(16) float shared[];
  float* v_tile = shared;                             // [kTileKeys][kTileLd]
  float* pt = v_tile + kTileKeys * kTileLd<kGroups>;  // [kTileKeys][kPtLd]
  __shared__ float row_max[kTileRows];
  __shared__ float row_inv_sum[kTileRows];
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % kWarp;
  const int row0 = static_cast<int>(blockIdx.x) * kTileRows;
  const HeadOffsets head = head_offsets(s, blockIdx.y);
  const std::size_t ld = 3 * static_cast<std::size_t>(s.d_model);
  const float* v = qkv + head.q + 2 * static_cast<std::size_t>(s.d_model);
  const float* block_scores =
      scores + (std::size_t(blockIdx.y) * s.seq + std::size_t(row0)) * std::size_t(s.seq);

  // Scores rows are read 16 bytes at a time where their length allows it (16-byte aligned rows).
  const bool vector = s.seq % 4 == 0;

  // 1. m and l of each row in one pass: each lane keeps its own, rescaled when its maximum
  //    grows, and the warp merges the 32 pairs.
  for (int r = t / kWarp; r < kTileRows; r += kTileThreads / kWarp) {
    const int row = row0 + r;
    const int keys = row >= s.seq ? 0 : s.causal ? row + 1 : s.seq;  // the same in every lane
    const float* score_row = block_scores + std::size_t(r) * std::size_t(s.seq);
    float m = -INFINITY;
    float l = 0.0f;
    for (int j = 4 * lane; j < keys; j += 4 * kWarp) {
      float x[4];
      if (vector && j + 4 <= keys) {
        const float4 x4 = *reinterpret_cast<const float4*>(score_row + j);
        x[0] = x4.x;
        x[1] = x4.y;
        x[2] = x4.z;
        x[3] = x4.w;
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          x[k] = j + k < keys ? score_row[j + k] : -INFINITY;
        }
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (x[k] != -INFINITY) {
          const float m_new = fmaxf(m, x[k]);
          l = l * expf(m - m_new) + expf(x[k] - m_new);
          m = m_new;
        }
      }
    }
    const float m_row = warp_max(m);
    l = warp_sum(m == -INFINITY ? 0.0f : l * expf(m - m_row));
    if (lane == 0) {
      row_max[r] = m_row;
      row_inv_sum[r] = keys > 0 ? 1.0f / l : 0.0f;
    }
  }

  // 2. o = P V a tile at a time, p made from the scores on the fly (no key after the block's
  //    last row is read with causal). Thread i makes p of row i / 8, keys 4 (i % 8) .. + 3.
  float o[kRowsPerThread][4 * kGroups] = {};
  const int end = s.causal ? min(s.seq, row0 + kTileRows) : s.seq;
  for (int t0 = 0; t0 < end; t0 += kTileKeys) {
    __syncthreads();  // the previous tile is used up (and the row statistics written)
    for (int i = t; i < kTileRows * kTileKeys / 4; i += kTileThreads) {
      const int r = i / (kTileKeys / 4);
      const int j = i % (kTileKeys / 4) * 4;  // the first of its 4 keys in the tile
      const int row = row0 + r;
      const int keys = row >= s.seq ? 0 : s.causal ? row + 1 : s.seq;
      const float* score_row = block_scores + std::size_t(r) * std::size_t(s.seq) + t0 + j;
      float x[4];
      if (vector && t0 + j + 4 <= keys) {
        const float4 x4 = *reinterpret_cast<const float4*>(score_row);
        x[0] = x4.x;
        x[1] = x4.y;
        x[2] = x4.z;
        x[3] = x4.w;
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          x[k] = t0 + j + k < keys ? score_row[k] : -INFINITY;
        }
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        pt[(j + k) * kPtLd + r] =
            x[k] == -INFINITY ? 0.0f : expf(x[k] - row_max[r]) * row_inv_sum[r];
      }
    }
    stage_tile<kGroups>(v + std::size_t(t0) * ld, ld, kTileKeys, s.seq - t0, s.head_dim, 1.0f,
                        v_tile);
    __syncthreads();  // the tile is complete
    add_pv<kGroups>(pt, v_tile, o);
  }
  float one[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    one[r] = 1.0f;
  }
  store_rows<kGroups>(o, one, attn + head.out, row0, s);
}

template <int kGroups>
void launch_fused_attention(const kernels::AttentionConfig& config,
                            kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  constexpr std::size_t bytes = sizeof(float) * (kTileKeys * kTileLd<kGroups> + kTileKeys * kPtLd);
  static_assert(bytes <= kDefaultSharedBytes, "the V and P tiles fit the default limit");
  fused_attention_kernel<kGroups>
      <<<grid_for(config, kTileRows, "fused_softmax_attention"), kTileThreads, bytes, stream>>>(
          buffers.scores.data(), buffers.qkv.data(), buffers.attn.data(), shape_of(config));
  GPULAB_CHECK_LAUNCH();
}
// TODO(lab04) END

}  // namespace

void fused_softmax_attention(const kernels::AttentionConfig& config,
                             kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, the scores GEMM (run_component), then your kernel
  check_core(config, buffers, 1, "fused_softmax_attention");
  kernels::run_component(kernels::Component::scores, config, buffers, stream);
  with_groups(config.head_dim(),
              [&]<int kGroups>() { launch_fused_attention<kGroups>(config, buffers, stream); });
  // TODO(lab04) END
}

// ------------------------------------------------------------------------------------------------
// Level 3: flash attention, FP32
// ------------------------------------------------------------------------------------------------

namespace {

// TODO(lab04) BEGIN: level 3's kernel
// Block (x, y): query rows x * kTileRows.. of head y, its Q rows (scaled by 1/sqrt(dh) once) in
// shared memory. Per tile of kTileKeys keys staged in shared memory, thread (ty, tx) computes the
// scores of its row against keys tx, tx + 8, tx + 16, tx + 24 (16-byte reads, each Q read
// serving 4 keys); the 8 threads of a row merge its tile maximum and sum
// with shuffles and update m, l and the thread's share of o (rescaled by alpha); the
// probabilities go through shared memory into the same P V as level 1. m, l and o live in
// registers.
template <int kGroups>
__global__ void flash_attention_fp32_kernel(const float* __restrict__ qkv, float* __restrict__ attn,
                                            Shape s) {
  constexpr int kLd = kTileLd<kGroups>;
  constexpr int kKeysPerThread = kTileKeys / kTx;  // 4
  extern __shared__ __align__(16) float shared[];
  float* q_tile = shared;                    // [kTileRows][kLd]
  float* k_tile = q_tile + kTileRows * kLd;  // [kTileKeys][kLd]
  float* v_tile = k_tile + kTileKeys * kLd;  // [kTileKeys][kLd]
  float* pt = v_tile + kTileKeys * kLd;      // [kTileKeys][kPtLd]
  const int ty = static_cast<int>(threadIdx.x) / kTx;
  const int tx = static_cast<int>(threadIdx.x) % kTx;
  const int row0 = static_cast<int>(blockIdx.x) * kTileRows;
  const std::size_t ld = 3 * static_cast<std::size_t>(s.d_model);
  const HeadOffsets head = head_offsets(s, blockIdx.y);
  const float* q = qkv + head.q;
  const float* k = q + s.d_model;
  const float* v = k + s.d_model;
  stage_tile<kGroups>(q + std::size_t(row0) * ld, ld, kTileRows, s.seq - row0, s.head_dim, s.scale,
                      q_tile);

  float m[kRowsPerThread];
  float l[kRowsPerThread];
  float o[kRowsPerThread][4 * kGroups] = {};
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  // With causal, no row of this block attends to a key after its last row.
  const int end = s.causal ? min(s.seq, row0 + kTileRows) : s.seq;
  for (int t0 = 0; t0 < end; t0 += kTileKeys) {
    __syncthreads();  // the previous tile is used up (and the Q tile written)
    stage_tile<kGroups>(k + std::size_t(t0) * ld, ld, kTileKeys, s.seq - t0, s.head_dim, 1.0f,
                        k_tile);
    stage_tile<kGroups>(v + std::size_t(t0) * ld, ld, kTileKeys, s.seq - t0, s.head_dim, 1.0f,
                        v_tile);
    __syncthreads();  // the tile is complete
    float score[kRowsPerThread][kKeysPerThread] = {};
#pragma unroll 2
    for (int c = 0; c < 32 * kGroups; c += 4) {
      float4 qr[kRowsPerThread];
      float4 kr[kKeysPerThread];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        qr[r] = *reinterpret_cast<const float4*>(q_tile + (kRowsPerThread * ty + r) * kLd + c);
      }
#pragma unroll
      for (int i = 0; i < kKeysPerThread; ++i) {
        kr[i] = *reinterpret_cast<const float4*>(k_tile + (tx + kTx * i) * kLd + c);
      }
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
        for (int i = 0; i < kKeysPerThread; ++i) {
          score[r][i] +=
              qr[r].x * kr[i].x + qr[r].y * kr[i].y + qr[r].z * kr[i].z + qr[r].w * kr[i].w;
        }
      }
    }
    // The online softmax: each row's new maximum over the 8 threads that hold it (lanes 8 apart
    // in a warp are other rows), the rescaling of what it summed so far, and p of the keys.
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int row = row0 + kRowsPerThread * ty + r;
      float x[kKeysPerThread];
      float tile_max = -INFINITY;
#pragma unroll
      for (int i = 0; i < kKeysPerThread; ++i) {
        const int key = t0 + tx + kTx * i;
        const bool valid = key < s.seq && (!s.causal || key <= row);
        x[i] = valid ? score[r][i] : -INFINITY;
        tile_max = fmaxf(tile_max, x[i]);
      }
      for (int offset = kTx / 2; offset > 0; offset /= 2) {
        tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, offset));
      }
      const float m_new = fmaxf(m[r], tile_max);
      // 0 on the first tile (m = -inf); 1 while the row has seen no key (nothing to rescale).
      const float alpha = m_new == -INFINITY ? 1.0f : expf(m[r] - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i < kKeysPerThread; ++i) {
        const float p = x[i] == -INFINITY ? 0.0f : expf(x[i] - m_new);
        pt[(tx + kTx * i) * kPtLd + kRowsPerThread * ty + r] = p;
        sum += p;
      }
      for (int offset = kTx / 2; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(kFullMask, sum, offset);
      }
      l[r] = l[r] * alpha + sum;
      m[r] = m_new;
#pragma unroll
      for (int c = 0; c < 4 * kGroups; ++c) {
        o[r][c] *= alpha;
      }
    }
    __syncthreads();  // P is complete
    add_pv<kGroups>(pt, v_tile, o);
  }
  float inverse[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    inverse[r] = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
  }
  store_rows<kGroups>(o, inverse, attn + head.out, row0, s);
}

template <int kGroups>
void launch_flash_attention(const kernels::AttentionConfig& config,
                            kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  constexpr std::size_t bytes =
      sizeof(float) * ((kTileRows + 2 * kTileKeys) * kTileLd<kGroups> + kTileKeys * kPtLd);
  static_assert(bytes <= kDefaultSharedBytes, "the Q, K, V and P tiles fit the default limit");
  flash_attention_fp32_kernel<kGroups>
      <<<grid_for(config, kTileRows, "flash_attention"), kTileThreads, bytes, stream>>>(
          buffers.qkv.data(), buffers.attn.data(), shape_of(config));
  GPULAB_CHECK_LAUNCH();
}
// TODO(lab04) END

}  // namespace

void flash_attention(const kernels::AttentionConfig& config, kernels::AttentionBuffers& buffers,
                     cudaStream_t stream) {
  // TODO(lab04) BEGIN: check, then your kernel
  check_core(config, buffers, 3, "flash_attention");
  with_groups(config.head_dim(),
              [&]<int kGroups>() { launch_flash_attention<kGroups>(config, buffers, stream); });
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
