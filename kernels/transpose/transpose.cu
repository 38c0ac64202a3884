#include "gpulab/kernels/transpose.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab::kernels {

void transpose_reference(std::span<const float> in, std::span<float> out, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
    }
  }
}

namespace {

constexpr int kTile = static_cast<int>(kTransposeTile);
constexpr int kRows = static_cast<int>(kTransposeBlockRows);

// Each block covers one 32 x 32 tile with 32 x 8 threads: thread (x, y) handles rows y, y + 8,
// y + 16 and y + 24 of the tile, so a warp (one y) always touches 32 consecutive columns.
__global__ void transpose_copy_kernel(const float* __restrict__ in, float* __restrict__ out,
                                      int rows, int cols) {
  const int x = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  const int y = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
  for (int j = 0; j < kTile; j += kRows) {
    if (x < cols && y + j < rows) {
      out[static_cast<std::size_t>(y + j) * cols + x] =
          in[static_cast<std::size_t>(y + j) * cols + x];
    }
  }
}

__global__ void transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int rows, int cols) {
  const int x = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  const int y = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
  for (int j = 0; j < kTile; j += kRows) {
    if (x < cols && y + j < rows) {
      // The read is a row (coalesced); the write is a column: the 32 lanes of a warp write 32
      // floats `rows` floats apart, one sector each.
      out[static_cast<std::size_t>(x) * rows + (y + j)] =
          in[static_cast<std::size_t>(y + j) * cols + x];
    }
  }
}

// Through a tile in shared memory: read a tile of `in` by rows, write it to `out` by rows of the
// transposed tile. Columns = kTile + Pad: Pad 0 reads the tile by column with every lane in one
// bank (32-way conflicts); Pad 1 shifts each row by one bank.
template <int Pad>
__device__ void transpose_through_tile(const float* __restrict__ in, float* __restrict__ out,
                                       int rows, int cols) {
  __shared__ float tile[kTile][kTile + Pad];
  int x = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  int y = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
  for (int j = 0; j < kTile; j += kRows) {
    if (x < cols && y + j < rows) {
      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<std::size_t>(y + j) * cols + x];
    }
  }
  __syncthreads();  // the whole tile is written before any thread reads a column of it
  // The block's tile lands at the transposed tile position; threadIdx.x now runs along out's rows.
  x = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.x);
  y = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.y);
  for (int j = 0; j < kTile; j += kRows) {
    if (x < rows && y + j < cols) {
      out[static_cast<std::size_t>(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
  }
}

__global__ void transpose_coalesced_kernel(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
  transpose_through_tile<0>(in, out, rows, cols);
}

__global__ void transpose_conflict_free_kernel(const float* __restrict__ in,
                                               float* __restrict__ out, int rows, int cols) {
  transpose_through_tile<1>(in, out, rows, cols);
}

void check(const char* what, const float* in, const float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) {
    throw std::invalid_argument(std::string(what) + ": rows and cols must be positive, not " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  }
  if (in == nullptr || out == nullptr) {
    throw std::invalid_argument(std::string(what) + ": null input or output");
  }
}

dim3 grid_for(int rows, int cols) {
  return dim3(ceil_div(static_cast<std::size_t>(cols), kTransposeTile),
              ceil_div(static_cast<std::size_t>(rows), kTransposeTile));
}

const dim3 kBlock(kTransposeTile, kTransposeBlockRows);

}  // namespace

void transpose_copy(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  check("transpose_copy", in, out, rows, cols);
  transpose_copy_kernel<<<grid_for(rows, cols), kBlock, 0, stream>>>(in, out, rows, cols);
  GPULAB_CHECK_LAUNCH();
}

void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  check("transpose_naive", in, out, rows, cols);
  transpose_naive_kernel<<<grid_for(rows, cols), kBlock, 0, stream>>>(in, out, rows, cols);
  GPULAB_CHECK_LAUNCH();
}

void transpose_coalesced(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  check("transpose_coalesced", in, out, rows, cols);
  transpose_coalesced_kernel<<<grid_for(rows, cols), kBlock, 0, stream>>>(in, out, rows, cols);
  GPULAB_CHECK_LAUNCH();
}

void transpose_conflict_free(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  check("transpose_conflict_free", in, out, rows, cols);
  transpose_conflict_free_kernel<<<grid_for(rows, cols), kBlock, 0, stream>>>(in, out, rows, cols);
  GPULAB_CHECK_LAUNCH();
}

std::span<const Level<TransposeLaunch>> transpose_levels() {
  static const Level<TransposeLaunch> levels[] = {
      {0,
       "copy",
       "the ceiling: the same bytes read and written by rows",
       &transpose_copy,
       {GPULAB_KERNEL_REF(transpose_copy_kernel, kNoDynamicShared)}},
      {1,
       "naive",
       "reads rows, writes columns: a sector per lane on every write",
       &transpose_naive,
       {GPULAB_KERNEL_REF(transpose_naive_kernel, kNoDynamicShared)}},
      {2,
       "coalesced",
       "a shared-memory tile makes both global accesses rows",
       &transpose_coalesced,
       {GPULAB_KERNEL_REF(transpose_coalesced_kernel, kNoDynamicShared)}},
      {3,
       "conflict-free",
       "a padded tile removes the 32-way bank conflicts of the column reads",
       &transpose_conflict_free,
       {GPULAB_KERNEL_REF(transpose_conflict_free_kernel, kNoDynamicShared)}},
  };
  return levels;
}

namespace {

// An n x n matrix of random floats, transposed (level 0 copies it: its expected output is the
// input itself).
class TransposeProblem final : public OpProblem {
 public:
  explicit TransposeProblem(int n)
      : n_(n),
        in_(random_floats(std::size_t(n) * n, 5)),
        transposed_(in_.size()),
        d_in_(in_.size()),
        d_out_(in_.size()) {
    transpose_reference(in_, transposed_, n, n);
    d_in_.copy_from(in_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    level_at(transpose_levels(), index, "transpose")
        .launch(d_in_.data(), d_out_.data(), n_, n_, stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(transpose_levels(), index, "transpose");
    d_out_.fill_bytes_async(0xff, stream);
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    // Moving values changes no bits: exact.
    require_close(describe_level("transpose", level.number, level.name, 0),
                  level.number == 0 ? in_ : transposed_, d_out_.to_vector(), Tolerance{0, 0});
  }
  // No floating-point work; read the matrix once, write it once.
  [[nodiscard]] OpCost cost() const override { return {0, 8.0 * static_cast<double>(in_.size())}; }
  [[nodiscard]] std::string describe() const override {
    return std::to_string(n_) + " x " + std::to_string(n_) + " floats";
  }

 private:
  int n_;
  std::vector<float> in_;
  std::vector<float> transposed_;
  DeviceBuffer<float> d_in_;
  DeviceBuffer<float> d_out_;
};

}  // namespace

Op transpose_op() {
  return {
      .name = "transpose",
      .summary = "out = in^T of a square matrix of floats",
      .size_means = "rows (and columns) of the matrix",
      .default_size = 8192,
      .sim_size = 1024,
      .test_sizes = {1, 32, 33, 100},
      .default_block = 0,
      .levels = erase_levels(transpose_levels()),
      .max_size = 65536,
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<TransposeProblem>(static_cast<int>(n));
      },
  };
}

}  // namespace gpulab::kernels
