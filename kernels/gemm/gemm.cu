#include "gemm/gemm.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "gpulab/core/cuda_check.hpp"
#include "gpulab/core/memory.hpp"
#include "gpulab/core/numeric.hpp"

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
  };
  return levels;
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
