#include "gpulab/kernels/gemm.hpp"

#include <cstddef>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/gemm_model.hpp"
#include "gpulab/core/numeric.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab::kernels {

void gemm_reference(std::span<const float> a, std::span<const float> b, std::span<float> c, int m,
                    int n, int k) {
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      double sum = 0.0;
      for (int i = 0; i < k; ++i) {
        sum += static_cast<double>(a[std::size_t(row) * k + i]) *
               static_cast<double>(b[std::size_t(i) * n + col]);
      }
      c[std::size_t(row) * n + col] = static_cast<float>(sum);
    }
  }
}

namespace {

__global__ void gemm_naive_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int m, int n, int k) {
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= m || col >= n) {
    return;
  }
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) {
    sum += a[std::size_t(row) * k + i] * b[std::size_t(i) * n + col];
  }
  c[std::size_t(row) * n + col] = sum;
}

__global__ void gemm_tiled_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int m, int n, int k) {
  extern __shared__ float tiles[];  // T x T of A, then T x T of B
  const int t = static_cast<int>(blockDim.x);
  float* a_tile = tiles;
  float* b_tile = tiles + t * t;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int row = static_cast<int>(blockIdx.y) * t + ty;
  const int col = static_cast<int>(blockIdx.x) * t + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < k; k0 += t) {
    // Every thread loads one element of each tile (zero outside the matrices)...
    a_tile[ty * t + tx] = row < m && k0 + tx < k ? a[std::size_t(row) * k + k0 + tx] : 0.0f;
    b_tile[ty * t + tx] = k0 + ty < k && col < n ? b[std::size_t(k0 + ty) * n + col] : 0.0f;
    __syncthreads();  // ...before any thread reads the tiles
    for (int i = 0; i < t; ++i) {
      sum += a_tile[ty * t + i] * b_tile[i * t + tx];
    }
    __syncthreads();  // and every thread is done with them before the next load
  }
  if (row < m && col < n) {
    c[std::size_t(row) * n + col] = sum;
  }
}

// One BM x BN tile of C per block, each thread a TM x TN sub-tile in registers (a tiling of
// kGemmTilings). gpulab/core/gemm_model.hpp counts what this code does in closed form, and the
// sim's cuBLAS is modeled from it: keep the two in step (tests/kernels/gemm_blocked_test.cpp).
template <int BM, int BN, int BK, int TM, int TN>
__device__ void gemm_blocked_tile(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int m, int n, int k, float* a_tile,
                                  float* b_tile) {
  constexpr int kThreadsX = BN / TN;  // threads along a row of the tile
  constexpr int kThreadsY = BM / TM;
  constexpr int kThreads = kThreadsX * kThreadsY;
  // a_tile[p][i] = A(row0 + i, k0 + p): A's tile transposed, its rows padded by 4 floats so that
  // a warp's store of 4 rows x 8 columns of A lands on 32 different banks.
  constexpr int kPitchA = BM + 4;
  const int t = static_cast<int>(threadIdx.x);
  const int tx = t % kThreadsX;
  const int ty = t / kThreadsX;
  const int row0 = static_cast<int>(blockIdx.y) * BM;
  const int col0 = static_cast<int>(blockIdx.x) * BN;
  a += std::size_t(blockIdx.z) * m * k;
  b += std::size_t(blockIdx.z) * k * n;
  c += std::size_t(blockIdx.z) * m * n;

  float sums[TM][TN] = {};
  for (int k0 = 0; k0 < k; k0 += BK) {
    // Stage the tiles: a warp reads 4 rows of 8 floats of A, or 32 floats of one row of B.
    for (int e = t; e < BM * BK; e += kThreads) {
      const int i = e / BK;
      const int p = e % BK;
      a_tile[p * kPitchA + i] =
          row0 + i < m && k0 + p < k ? a[std::size_t(row0 + i) * k + k0 + p] : 0.0f;
    }
    for (int e = t; e < BK * BN; e += kThreads) {
      const int p = e / BN;
      const int j = e % BN;
      b_tile[p * BN + j] =
          k0 + p < k && col0 + j < n ? b[std::size_t(k0 + p) * n + col0 + j] : 0.0f;
    }
    __syncthreads();  // the tiles are whole before any thread reads them
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      // A thread's rows (columns) come in groups of 4, 4 kThreadsY (4 kThreadsX) apart: the 8
      // lanes of each phase of a 16-byte load read 32 consecutive words, or one word group.
      // Each group is copied whole: a 16-byte load, on a GPU and on sim (docs/sim.md).
      float4 a_frag[TM / 4];
      float4 b_frag[TN / 4];
      const auto* a_row = reinterpret_cast<const float4*>(a_tile + p * kPitchA);
      const auto* b_row = reinterpret_cast<const float4*>(b_tile + p * BN);
#pragma unroll
      for (int q = 0; q < TM / 4; ++q) {
        a_frag[q] = a_row[q * kThreadsY + ty];
      }
#pragma unroll
      for (int q = 0; q < TN / 4; ++q) {
        b_frag[q] = b_row[q * kThreadsX + tx];
      }
      const auto* a_values = reinterpret_cast<const float*>(a_frag);
      const auto* b_values = reinterpret_cast<const float*>(b_frag);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          sums[i][j] += a_values[i] * b_values[j];
        }
      }
    }
    __syncthreads();  // every thread is done with the tiles before the next are staged
  }

  // 16-byte stores where the row allows them (whole, aligned groups of 4), else one float each;
  // each group is stored whole from a float4 (as above).
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + (i / 4) * 4 * kThreadsY + ty * 4 + i % 4;
    if (row >= m) {
      continue;
    }
    for (int q = 0; q < TN / 4; ++q) {
      const int col = col0 + q * 4 * kThreadsX + tx * 4;
      float* out = c + std::size_t(row) * n + col;
      float4 group;
      auto* group_values = reinterpret_cast<float*>(&group);
      for (int s = 0; s < 4; ++s) {
        group_values[s] = sums[i][4 * q + s];
      }
      if (n % 4 == 0 && col + 3 < n) {
        *reinterpret_cast<float4*>(out) = group;
      } else {
        for (int s = 0; s < 4 && col + s < n; ++s) {
          out[s] = group_values[s];
        }
      }
    }
  }
}

// One kernel per tiling of kGemmTilings, named as the tiling names it (the kernel table and the
// sim's cuBLAS model find it by that name). The tiles are float4 arrays for the 16-byte loads.
template <std::size_t I>
__device__ void gemm_blocked(const float* a, const float* b, float* c, int m, int n, int k,
                             float4* a_tile, float4* b_tile) {
  constexpr GemmTiling kT = kGemmTilings[I];
  gemm_blocked_tile<kT.block_m, kT.block_n, kT.block_k, kT.thread_m, kT.thread_n>(
      a, b, c, m, n, k, reinterpret_cast<float*>(a_tile), reinterpret_cast<float*>(b_tile));
}

template <std::size_t I>
constexpr int kBlockedTileA = kGemmTilings[I].block_k*(kGemmTilings[I].block_m + 4) / 4;
template <std::size_t I>
constexpr int kBlockedTileB = kGemmTilings[I].block_k* kGemmTilings[I].block_n / 4;

__global__ void gemm_blocked_128x128_kernel(const float* __restrict__ a,
                                            const float* __restrict__ b, float* __restrict__ c,
                                            int m, int n, int k) {
  __shared__ float4 a_tile[kBlockedTileA<0>];
  __shared__ float4 b_tile[kBlockedTileB<0>];
  gemm_blocked<0>(a, b, c, m, n, k, a_tile, b_tile);
}

__global__ void gemm_blocked_64x64_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, int m, int n, int k) {
  __shared__ float4 a_tile[kBlockedTileA<1>];
  __shared__ float4 b_tile[kBlockedTileB<1>];
  gemm_blocked<1>(a, b, c, m, n, k, a_tile, b_tile);
}

__global__ void gemm_blocked_32x32_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, int m, int n, int k) {
  __shared__ float4 a_tile[kBlockedTileA<2>];
  __shared__ float4 b_tile[kBlockedTileB<2>];
  gemm_blocked<2>(a, b, c, m, n, k, a_tile, b_tile);
}

void check_sizes(const char* what, int m, int n, int k) {
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument(std::string(what) + ": sizes must not be negative");
  }
}

}  // namespace

void gemm_naive(const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream) {
  check_sizes("gemm_naive", m, n, k);
  if (m == 0 || n == 0) {
    return;
  }
  const dim3 block(16, 16);
  const dim3 grid(ceil_div(std::size_t(n), block.x), ceil_div(std::size_t(m), block.y));
  gemm_naive_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  GPULAB_CHECK_LAUNCH();
}

void gemm_tiled(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                int tile) {
  check_sizes("gemm_tiled", m, n, k);
  if (tile != 16 && tile != 32) {
    throw std::invalid_argument("gemm_tiled: tile must be 16 or 32, not " + std::to_string(tile));
  }
  if (m == 0 || n == 0) {
    return;
  }
  const auto side = static_cast<unsigned>(tile);
  const dim3 block(side, side);
  const dim3 grid(ceil_div(std::size_t(n), side), ceil_div(std::size_t(m), side));
  const std::size_t shared_bytes = 2 * std::size_t(tile) * tile * sizeof(float);
  gemm_tiled_kernel<<<grid, block, shared_bytes, stream>>>(a, b, c, m, n, k);
  GPULAB_CHECK_LAUNCH();
}

void gemm_register_blocked(const float* a, const float* b, float* c, int m, int n, int k,
                           cudaStream_t stream, std::size_t tiling, int batch) {
  check_sizes("gemm_register_blocked", m, n, k);
  if (tiling >= std::size(kGemmTilings)) {
    throw std::invalid_argument("gemm_register_blocked: tiling must be below " +
                                std::to_string(std::size(kGemmTilings)) + ", not " +
                                std::to_string(tiling));
  }
  if (batch < 0) {
    throw std::invalid_argument("gemm_register_blocked: batch must not be negative");
  }
  if (m == 0 || n == 0 || batch == 0) {
    return;
  }
  const GemmTiling& t = kGemmTilings[tiling];
  const dim3 block(static_cast<unsigned>(t.threads()));
  const dim3 grid(ceil_div(std::size_t(n), std::size_t(t.block_n)),
                  ceil_div(std::size_t(m), std::size_t(t.block_m)), static_cast<unsigned>(batch));
  // Launched by name: the sim names a counted launch after its launch expression.
  static_assert(std::size(kGemmTilings) == 3);
  switch (tiling) {
    case 0:
      gemm_blocked_128x128_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
      break;
    case 1:
      gemm_blocked_64x64_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
      break;
    default:
      gemm_blocked_32x32_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
      break;
  }
  GPULAB_CHECK_LAUNCH();
}

namespace {

// gemm_tiled's two T x T tiles of floats, T = 16 (the level table's, so first) or 32.
constexpr std::uint64_t kTiledShared[] = {2 * 16 * 16 * sizeof(float), 2 * 32 * 32 * sizeof(float)};

}  // namespace

std::span<const Level<GemmLaunch>> gemm_levels() {
  static const Level<GemmLaunch> levels[] = {
      {1,
       "naive",
       "one thread per output, operands from global memory",
       &gemm_naive,
       {GPULAB_KERNEL_REF(gemm_naive_kernel, kNoDynamicShared)}},
      {2,
       "tiled",
       "16 x 16 tiles in dynamic shared memory: each load serves 16 multiply-adds",
       [](const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
         gemm_tiled(a, b, c, m, n, k, stream, 16);
       },
       {GPULAB_KERNEL_REF(gemm_tiled_kernel, kTiledShared)}},
      {3,
       "register-blocked",
       "128 x 128 tiles, 8 x 8 outputs per thread in registers: each shared load serves 16 "
       "multiply-adds",
       [](const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
         gemm_register_blocked(a, b, c, m, n, k, stream);
       },
       {GPULAB_KERNEL_REF(gemm_blocked_128x128_kernel, kNoDynamicShared)}},
  };
  return levels;
}

std::span<const KernelRef> gemm_tiling_kernels() {
  static const KernelRef entries[] = {
      GPULAB_KERNEL_REF(gemm_blocked_128x128_kernel, kNoDynamicShared),
      GPULAB_KERNEL_REF(gemm_blocked_64x64_kernel, kNoDynamicShared),
      GPULAB_KERNEL_REF(gemm_blocked_32x32_kernel, kNoDynamicShared)};
  static_assert(std::size(entries) == std::size(kGemmTilings));
  return entries;
}

namespace {

// C = A * B, all n x n, inputs random in [-1, 1).
class GemmProblem final : public OpProblem {
 public:
  explicit GemmProblem(int n)
      : n_(n),
        a_(random_floats(std::size_t(n) * n, 5)),
        b_(random_floats(std::size_t(n) * n, 6)),
        expected_(std::size_t(n) * n),
        da_(a_.size()),
        db_(b_.size()),
        dc_(expected_.size()) {
    gemm_reference(a_, b_, expected_, n, n, n);
    da_.copy_from(a_);
    db_.copy_from(b_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    level_at(gemm_levels(), index, "gemm")
        .launch(da_.data(), db_.data(), dc_.data(), n_, n_, n_, stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(gemm_levels(), index, "gemm");
    dc_.fill_bytes_async(0xff, stream);
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    // Each element sums n products: fp32's tolerance grown with sqrt(n), at the scale of C.
    require_close(describe_level("gemm", level.number, level.name, 0), expected_, dc_.to_vector(),
                  scaled(tolerance_for(DType::fp32, n_), rms(expected_)));
  }
  // n^3 multiply-adds; read A and B, write C.
  [[nodiscard]] OpCost cost() const override {
    const auto n = static_cast<double>(n_);
    return {2.0 * n * n * n, 12.0 * n * n};
  }
  [[nodiscard]] std::string describe() const override {
    return std::to_string(n_) + " x " + std::to_string(n_) + " matrices";
  }

 private:
  int n_;
  std::vector<float> a_;
  std::vector<float> b_;
  std::vector<float> expected_;
  DeviceBuffer<float> da_;
  DeviceBuffer<float> db_;
  DeviceBuffer<float> dc_;
};

}  // namespace

Op gemm_op() {
  return {
      .name = "gemm",
      .summary = "C = A * B in fp32, square n x n matrices",
      .size_means = "rows (and columns) of each matrix",
      .default_size = 2048,
      .sim_size = 128,
      .test_sizes = {1, 16, 37, 100},
      .default_block = 0,
      .levels = erase_levels(gemm_levels()),
      .max_size = 16384,
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<GemmProblem>(static_cast<int>(n));
      },
  };
}

}  // namespace gpulab::kernels
