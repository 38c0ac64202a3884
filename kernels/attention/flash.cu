// Levels 3 and 4 of the attention ladder (attention.hpp): flash attention, in FP32 on the CUDA
// cores and in FP16 on the tensor cores. Both compute, for each (batch, head) and query row i,
//
//   o_i = sum_j exp(s_ij - m_i) v_j / l_i,   s_ij = q_i . k_j / sqrt(dh),
//   m_i = max_j s_ij,   l_i = sum_j exp(s_ij - m_i)
//
// without ever storing a row of s: the keys arrive in tiles, and after each tile the running
// maximum m, sum l and output o are updated (the online softmax). When a tile raises the maximum
// from m to m', everything accumulated so far was weighted by exp(s - m) instead of exp(s - m'),
// so l and o are multiplied by alpha = exp(m - m') before the tile's own terms are added. At the
// end o / l is the softmax-weighted sum, exactly as if the whole row had been seen at once.
// With causal, query row i attends to keys j <= i only: tiles entirely after a block's last query
// row are skipped, and the diagonal tile is masked element by element.
#include <cuda_fp16.h>
#include <mma.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/flash.hpp"
#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab::kernels {
namespace {

struct FlashArgs {
  int batch, seq, heads, d_model, head_dim;
  float scale;  // 1 / sqrt(head_dim)
  bool causal;
};

// ------------------------------------------------------------------------------------------------
// Level 3: FP32, a query row per 1, 2 or 4 threads
// ------------------------------------------------------------------------------------------------

constexpr int kFlashRows = 64;  // query rows per block
constexpr int kFlashKeys = 32;  // keys per K/V tile
// Columns of the head dimension per thread: its q, o and the tile's scores in registers make
// 32 + 32 + 32 floats. (64 + 64 + 32 already spills.)
constexpr int kFlashDimsPerThread = 32;

// Block (blockIdx.x, blockIdx.y = b * heads + h): query rows blockIdx.x * kFlashRows.., each owned
// by kMaxDim / 32 consecutive threads, which split its head dimension (32 columns each) and add
// their parts of each dot product by shuffles. A thread keeps its share of the query row and the
// output row in registers, and each row's threads its running max and sum. The block stages each
// tile of keys and values in shared memory, and its query and output rows too, so that every
// global access is coalesced (a thread reading its own row from global memory would touch a
// sector per lane per element).
template <int kMaxDim>
__device__ void flash_attention_rows(const float* __restrict__ qkv, float* __restrict__ attn,
                                     const FlashArgs a) {
  static_assert(2 * kFlashKeys == kFlashRows, "the K and V tiles together stage the block's rows");
  constexpr int kDims = kFlashDimsPerThread;  // columns per thread
  constexpr int kThreads = kMaxDim / kDims;   // threads per row: 1, 2 or 4
  // Rows 0..kFlashKeys-1 hold the K tile, the rest the V tile; at the start and the end all
  // kFlashRows rows stage the block's queries and outputs. One float of padding per row: the
  // threads reading their own rows (staging) hit different banks.
  __shared__ float tile[kFlashRows][kMaxDim + 1];
  const int dh = a.head_dim;
  const std::size_t ld = 3 * static_cast<std::size_t>(a.d_model);
  const std::size_t batch = blockIdx.y / static_cast<unsigned>(a.heads);
  const std::size_t head = blockIdx.y % static_cast<unsigned>(a.heads);
  const float* base = qkv + batch * static_cast<std::size_t>(a.seq) * ld + head * std::size_t(dh);
  const int row0 = static_cast<int>(blockIdx.x) * kFlashRows;
  const int t = static_cast<int>(threadIdx.x);
  const int threads = kFlashRows * kThreads;
  const int own = t / kThreads;            // the block's row this thread works on
  const int first = t % kThreads * kDims;  // its first column
  const int row = row0 + own;
  const bool active = row < a.seq;

  // Consecutive threads take consecutive elements of a row: coalesced.
  for (int i = t; i < kFlashRows * dh; i += threads) {
    const int r = i / dh;
    const int c = i % dh;
    tile[r][c] = row0 + r < a.seq ? base[std::size_t(row0 + r) * ld + std::size_t(c)] : 0.0f;
  }
  __syncthreads();
  float q[kDims];
  float o[kDims];
#pragma unroll
  for (int c = 0; c < kDims; ++c) {
    q[c] = first + c < dh ? a.scale * tile[own][first + c] : 0.0f;
    o[c] = 0.0f;
  }
  float m = -INFINITY;  // the running maximum of this row's scores
  float l = 0.0f;       // the running sum of exp(score - m)

  const int end = a.causal ? min(a.seq, row0 + kFlashRows) : a.seq;
  for (int t0 = 0; t0 < end; t0 += kFlashKeys) {
    __syncthreads();  // every thread is done with the previous tile (or its query row)
    for (int i = t; i < kFlashKeys * dh; i += threads) {
      const int r = i / dh;
      const int c = i % dh;
      const std::size_t key = std::size_t(t0 + r);
      const bool inside = t0 + r < a.seq;
      tile[r][c] = inside ? base[key * ld + std::size_t(a.d_model) + std::size_t(c)] : 0.0f;
      tile[kFlashKeys + r][c] =
          inside ? base[key * ld + 2 * std::size_t(a.d_model) + std::size_t(c)] : 0.0f;
    }
    __syncthreads();  // the tile is complete before any thread reads it
    // The scores of the whole tile, by every thread (the shuffles need every lane).
    float s[kFlashKeys];
#pragma unroll
    for (int j = 0; j < kFlashKeys; ++j) {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < kDims; ++c) {
        if (first + c < dh) {
          dot += q[c] * tile[j][first + c];
        }
      }
#pragma unroll
      for (int offset = 1; offset < kThreads; offset *= 2) {  // the row's other parts
        dot += __shfl_xor_sync(0xffffffffu, dot, offset);
      }
      s[j] = dot;
    }
    const int keys = min(kFlashKeys, (a.causal ? row + 1 : a.seq) - t0);  // this row's keys here
    if (active && keys > 0) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kFlashKeys; ++j) {
        tile_max = j < keys ? fmaxf(tile_max, s[j]) : tile_max;
      }
      const float m_new = fmaxf(m, tile_max);
      const float alpha = expf(m - m_new);  // 0 for the first tile (m = -inf)
      l *= alpha;
#pragma unroll
      for (int c = 0; c < kDims; ++c) {
        o[c] *= alpha;
      }
#pragma unroll
      for (int j = 0; j < kFlashKeys; ++j) {
        if (j < keys) {
          const float p = expf(s[j] - m_new);
          l += p;
#pragma unroll
          for (int c = 0; c < kDims; ++c) {
            if (first + c < dh) {
              o[c] += p * tile[kFlashKeys + j][first + c];
            }
          }
        }
      }
      m = m_new;
    }
  }
  __syncthreads();  // every thread is done with the last tile
#pragma unroll
  for (int c = 0; c < kDims; ++c) {
    if (first + c < dh) {
      tile[own][first + c] = active ? o[c] / l : 0.0f;
    }
  }
  __syncthreads();
  float* out = attn + batch * std::size_t(a.seq) * std::size_t(a.d_model) + head * std::size_t(dh);
  for (int i = t; i < kFlashRows * dh; i += threads) {
    const int r = i / dh;
    const int c = i % dh;
    if (row0 + r < a.seq) {
      out[std::size_t(row0 + r) * std::size_t(a.d_model) + std::size_t(c)] = tile[r][c];
    }
  }
}

// One kernel per head-dimension bucket (1, 2 and 4 threads per row).
__global__ void flash_attention_hd32_kernel(const float* qkv, float* attn, FlashArgs a) {
  flash_attention_rows<32>(qkv, attn, a);
}
__global__ void flash_attention_hd64_kernel(const float* qkv, float* attn, FlashArgs a) {
  flash_attention_rows<64>(qkv, attn, a);
}
__global__ void flash_attention_hd128_kernel(const float* qkv, float* attn, FlashArgs a) {
  flash_attention_rows<128>(qkv, attn, a);
}

// ------------------------------------------------------------------------------------------------
// Level 4: FP16 Q, K, V on tensor cores (WMMA m16n16k16), FP32 accumulation
// ------------------------------------------------------------------------------------------------

namespace wmma = nvcuda::wmma;

constexpr int kWmmaWarps = 4;               // warps per block, 16 query rows each
constexpr int kWmmaRows = 16 * kWmmaWarps;  // query rows per block
constexpr int kWmmaKeys = 32;               // keys per K/V tile
constexpr int kWmmaMaxDim = 128;            // largest head_dim
constexpr int kHalfPad = 8;   // halves of padding per shared row (16 bytes): the 8 rows a phase of
                              // a fragment load reads start in different banks
constexpr int kFloatPad = 4;  // floats of padding per shared row (16 bytes), likewise

// The dynamic shared memory of one block, for head_dim dh: byte offsets of each region and the
// leading dimensions (elements per row). Regions start on 128-byte boundaries (WMMA pointers must
// be 32-byte aligned).
struct WmmaLayout {
  int ldk;  // halves per row of the K and V tiles
  int lds;  // floats per row of a warp's scores
  int ldp;  // halves per row of a warp's probabilities
  int ldo;  // floats per row of a warp's output (also staged Q, as halves, at ldk)
  std::size_t k, v, s, p, o, total;
};

// `rows` rows of `ld` elements of `size` bytes, rounded up to 128 bytes.
__host__ __device__ constexpr std::size_t bytes(int rows, int ld, std::size_t size) {
  return (std::size_t(rows) * std::size_t(ld) * size + 127) / 128 * 128;
}

__host__ __device__ constexpr WmmaLayout wmma_layout(int dh) {
  WmmaLayout w{
      dh + kHalfPad, kWmmaKeys + kFloatPad, kWmmaKeys + kHalfPad, dh + kFloatPad, 0, 0, 0, 0, 0, 0};
  w.v = w.k + bytes(kWmmaKeys, w.ldk, 2);
  w.s = w.v + bytes(kWmmaKeys, w.ldk, 2);
  w.p = w.s + bytes(kWmmaRows, w.lds, 4);
  w.o = w.p + bytes(kWmmaRows, w.ldp, 2);
  const std::size_t o_bytes = bytes(kWmmaRows, w.ldo, 4);
  const std::size_t q_bytes = bytes(kWmmaRows, w.ldk, 2);
  w.total = w.o + (o_bytes > q_bytes ? o_bytes : q_bytes);
  return w;
}

// Copies `rows` rows of dh halves (ld halves apart in global memory, the first `valid` of them
// real, the rest zero) into shared rows of `ldk` halves, 16 bytes per access, by the whole block.
__device__ void stage_rows(const __half* __restrict__ from, std::size_t ld, int rows, int valid,
                           int dh, __half* to, int ldk) {
  const int chunks = dh / 8;  // 16-byte chunks per row
  for (int i = static_cast<int>(threadIdx.x); i < rows * chunks; i += blockDim.x) {
    const int r = i / chunks;
    const int c = i % chunks * 8;
    auto* destination = reinterpret_cast<uint4*>(to + r * ldk + c);
    if (r < valid) {
      *destination = *reinterpret_cast<const uint4*>(from + std::size_t(r) * ld + std::size_t(c));
    } else {
      *destination = make_uint4(0, 0, 0, 0);
    }
  }
}

// Block (blockIdx.x, blockIdx.y = b * heads + h): query rows blockIdx.x * kWmmaRows.., warp w the
// 16 rows from 16 w. Per tile of kWmmaKeys keys each warp computes its 16 x kWmmaKeys scores with
// mma_sync into shared memory; two lanes per row then update the row's running max and sum and
// write the probabilities as halves; the output, kept in shared memory between tiles (a fragment's
// element-to-row mapping is unspecified, so the per-row rescaling is done there), is loaded into
// accumulators, multiplied by the tile's P V and stored back.
__global__ void flash_attention_wmma_kernel(const __half* __restrict__ qkv,
                                            float* __restrict__ attn, FlashArgs a) {
  extern __shared__ __align__(128) unsigned char shared[];
  const int dh = a.head_dim;
  const int chunks = dh / 16;  // 16-wide fragments across the head dimension
  const WmmaLayout w = wmma_layout(dh);
  __half* k_tile = reinterpret_cast<__half*>(shared + w.k);
  __half* v_tile = reinterpret_cast<__half*>(shared + w.v);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  float* s_warp = reinterpret_cast<float*>(shared + w.s) + warp * 16 * w.lds;
  __half* p_warp = reinterpret_cast<__half*>(shared + w.p) + warp * 16 * w.ldp;
  float* o_warp = reinterpret_cast<float*>(shared + w.o) + warp * 16 * w.ldo;

  const std::size_t ld = 3 * static_cast<std::size_t>(a.d_model);
  const std::size_t batch = blockIdx.y / static_cast<unsigned>(a.heads);
  const std::size_t head = blockIdx.y % static_cast<unsigned>(a.heads);
  const __half* base = qkv + batch * std::size_t(a.seq) * ld + head * std::size_t(dh);
  const int row0 = static_cast<int>(blockIdx.x) * kWmmaRows;
  const int warp_row0 = row0 + 16 * warp;

  // Q: staged through the output region (rows past seq_len zero), then kept in fragments.
  __half* q_stage = reinterpret_cast<__half*>(shared + w.o);
  stage_rows(base + std::size_t(row0) * ld, ld, kWmmaRows, a.seq - row0, dh, q_stage, w.ldk);
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> q[kWmmaMaxDim / 16];
#pragma unroll
  for (int c = 0; c < kWmmaMaxDim / 16; ++c) {
    if (c < chunks) {
      wmma::load_matrix_sync(q[c], q_stage + 16 * warp * w.ldk + 16 * c, w.ldk);
    }
  }
  __syncthreads();  // every warp has its Q before the region becomes the output
  // Two lanes per row: lane 2r and 2r + 1 own row r's statistics and half of its columns each.
  const int r = lane / 2;
  const int half_lane = lane % 2;
  const int q_row = warp_row0 + r;
  for (int c = half_lane * dh / 2; c < (half_lane + 1) * dh / 2; ++c) {
    o_warp[r * w.ldo + c] = 0.0f;
  }
  float m = -INFINITY;
  float l = 0.0f;

  const int end = a.causal ? min(a.seq, row0 + kWmmaRows) : a.seq;
  for (int t0 = 0; t0 < end; t0 += kWmmaKeys) {
    __syncthreads();  // every warp is done with the previous tile
    stage_rows(base + std::size_t(t0) * ld + std::size_t(a.d_model), ld, kWmmaKeys, a.seq - t0, dh,
               k_tile, w.ldk);
    stage_rows(base + std::size_t(t0) * ld + 2 * std::size_t(a.d_model), ld, kWmmaKeys, a.seq - t0,
               dh, v_tile, w.ldk);
    __syncthreads();  // the tile is complete
    if (warp_row0 >= a.seq || (a.causal && t0 > warp_row0 + 15)) {
      continue;  // the whole warp: rows past the end, or keys after all of its rows
    }
    // S = Q K^T: K^T's columns are K's rows, so K's tile is matrix_b in column-major order.
    for (int n = 0; n < kWmmaKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int c = 0; c < kWmmaMaxDim / 16; ++c) {
        if (c < chunks) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> k_frag;
          wmma::load_matrix_sync(k_frag, k_tile + 16 * n * w.ldk + 16 * c, w.ldk);
          wmma::mma_sync(acc, q[c], k_frag, acc);
        }
      }
      wmma::store_matrix_sync(s_warp + 16 * n, acc, w.lds, wmma::mem_row_major);
    }
    __syncwarp();
    // The online softmax of this tile, two lanes per row, 16 keys each.
    constexpr int kPerLane = kWmmaKeys / 2;
    float x[kPerLane];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int key = t0 + half_lane * kPerLane + j;
      const bool valid = key < a.seq && (!a.causal || key <= q_row);
      x[j] = valid ? a.scale * s_warp[r * w.lds + half_lane * kPerLane + j] : -INFINITY;
      tile_max = fmaxf(tile_max, x[j]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float alpha = m_new == -INFINITY ? 1.0f : expf(m - m_new);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const __half p = __float2half(x[j] == -INFINITY ? 0.0f : expf(x[j] - m_new));
      sum += __half2float(p);  // the sum of the P that multiplies V: the same rounding in both
      p_warp[r * w.ldp + half_lane * kPerLane + j] = p;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    for (int c = half_lane * dh / 2; c < (half_lane + 1) * dh / 2; ++c) {
      o_warp[r * w.ldo + c] *= alpha;
    }
    __syncwarp();
    // O += P V, one 16-column chunk of the output at a time.
#pragma unroll
    for (int c = 0; c < kWmmaMaxDim / 16; ++c) {
      if (c < chunks) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::load_matrix_sync(acc, o_warp + 16 * c, w.ldo, wmma::mem_row_major);
        for (int k = 0; k < kWmmaKeys / 16; ++k) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> p_frag;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> v_frag;
          wmma::load_matrix_sync(p_frag, p_warp + 16 * k, w.ldp);
          wmma::load_matrix_sync(v_frag, v_tile + 16 * k * w.ldk + 16 * c, w.ldk);
          wmma::mma_sync(acc, p_frag, v_frag, acc);
        }
        wmma::store_matrix_sync(o_warp + 16 * c, acc, w.ldo, wmma::mem_row_major);
      }
    }
    __syncwarp();
  }
  // o / l, row by row: the 32 lanes write consecutive columns of one row (coalesced), each row's
  // sum l from the lanes that own it.
  float* out = attn + batch * std::size_t(a.seq) * std::size_t(a.d_model) + head * std::size_t(dh);
  for (int row = 0; row < 16; ++row) {
    const float row_l = __shfl_sync(0xffffffffu, l, 2 * row);
    if (warp_row0 + row < a.seq) {
      for (int c = lane; c < dh; c += 32) {
        out[std::size_t(warp_row0 + row) * std::size_t(a.d_model) + std::size_t(c)] =
            o_warp[row * w.ldo + c] / row_l;
      }
    }
  }
}

// qkv in FP16 for level 4 (a fused GEMM epilogue would write it directly; here it is one pass).
__global__ void convert_to_half_kernel(const float* __restrict__ in, __half* __restrict__ out,
                                       std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = __float2half(in[i]);
  }
}

// ------------------------------------------------------------------------------------------------
// Launchers
// ------------------------------------------------------------------------------------------------

FlashArgs flash_args(const AttentionConfig& config) {
  config.validate();
  return {config.batch,
          config.seq_len,
          config.heads,
          config.d_model,
          config.head_dim(),
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(config.head_dim()))),
          config.causal};
}

// The grid of both flash kernels: blocks of `rows` query rows, one grid row per (batch, head).
dim3 flash_grid(const FlashArgs& a, int rows, const char* level) {
  const long long pairs = static_cast<long long>(a.batch) * a.heads;
  require(pairs <= 65535,
          std::string(level) + ": at most 65535 (batch, head) pairs (grid.y limit)");
  return dim3(ceil_div(std::size_t(a.seq), std::size_t(rows)), static_cast<unsigned>(pairs));
}

constexpr std::uint64_t kWmmaCatalogShared[] = {wmma_layout(64).total};  // head_dim 64

}  // namespace

void flash_attention_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                             cudaStream_t stream) {
  const FlashArgs a = flash_args(config);
  require(a.head_dim <= 128, "attention level 3 (flash): head_dim " + std::to_string(a.head_dim) +
                                 " is above the largest it supports, 128");
  run_component(Component::qkv_projection, config, buffers, stream);
  const dim3 grid = flash_grid(a, kFlashRows, "attention level 3 (flash)");
  if (a.head_dim <= 32) {
    flash_attention_hd32_kernel<<<grid, kFlashRows, 0, stream>>>(buffers.qkv.data(),
                                                                 buffers.attn.data(), a);
  } else if (a.head_dim <= 64) {
    flash_attention_hd64_kernel<<<grid, 2 * kFlashRows, 0, stream>>>(buffers.qkv.data(),
                                                                     buffers.attn.data(), a);
  } else {
    flash_attention_hd128_kernel<<<grid, 4 * kFlashRows, 0, stream>>>(buffers.qkv.data(),
                                                                      buffers.attn.data(), a);
  }
  GPULAB_CHECK_LAUNCH();
  run_component(Component::output_projection, config, buffers, stream);
}

void convert_qkv_to_half(const AttentionConfig& config, AttentionBuffers& buffers,
                         cudaStream_t stream) {
  check_buffers(config, buffers);
  require_intermediate(!buffers.qkv_half.empty(), "convert_qkv_to_half", "qkv_half", 4);
  const std::size_t n = buffers.qkv.size();
  convert_to_half_kernel<<<std::min<unsigned>(ceil_div(n, 256), 65535), 256, 0, stream>>>(
      buffers.qkv.data(), buffers.qkv_half.data(), n);
  GPULAB_CHECK_LAUNCH();
}

void flash_attention_wmma_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                                  cudaStream_t stream) {
  const FlashArgs a = flash_args(config);
  require(a.head_dim % 16 == 0 && a.head_dim <= kWmmaMaxDim,
          "attention level 4 (flash, tensor cores): head_dim " + std::to_string(a.head_dim) +
              " must be a multiple of 16 (the WMMA tile), at most 128");
  require_intermediate(!buffers.qkv_half.empty(), "attention level 4", "qkv_half", 4);
  run_component(Component::qkv_projection, config, buffers, stream);
  convert_qkv_to_half(config, buffers, stream);
  const std::size_t shared = wmma_layout(a.head_dim).total;
  if (shared > 48 * 1024) {  // above the default limit: opt in (up to the device's maximum)
    int device = 0;
    int optin = 0;
    GPULAB_CHECK(cudaGetDevice(&device));
    GPULAB_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    require(shared <= static_cast<std::size_t>(optin),
            "attention level 4: head_dim " + std::to_string(a.head_dim) + " needs " +
                std::to_string(shared) + " bytes of shared memory per block; the device has " +
                std::to_string(optin));
    GPULAB_CHECK(cudaFuncSetAttribute(flash_attention_wmma_kernel,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(shared)));
  }
  const dim3 grid = flash_grid(a, kWmmaRows, "attention level 4 (flash, tensor cores)");
  flash_attention_wmma_kernel<<<grid, 32 * kWmmaWarps, shared, stream>>>(buffers.qkv_half.data(),
                                                                         buffers.attn.data(), a);
  GPULAB_CHECK_LAUNCH();
  run_component(Component::output_projection, config, buffers, stream);
}

std::vector<KernelRef> flash_attention_kernels() {
  return {GPULAB_KERNEL_REF(flash_attention_hd64_kernel, kNoDynamicShared),
          GPULAB_KERNEL_REF(flash_attention_hd32_kernel, kNoDynamicShared),
          GPULAB_KERNEL_REF(flash_attention_hd128_kernel, kNoDynamicShared)};
}

std::vector<KernelRef> flash_attention_wmma_kernels() {
  return {GPULAB_KERNEL_REF(flash_attention_wmma_kernel, kWmmaCatalogShared),
          GPULAB_KERNEL_REF(convert_to_half_kernel, kNoDynamicShared)};
}

}  // namespace gpulab::kernels
