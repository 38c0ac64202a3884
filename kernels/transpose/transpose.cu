#include "transpose/transpose.hpp"

#include <stdexcept>
#include <string>

#include "gpulab/core/cuda_check.hpp"
#include "registry.hpp"

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
      {0, "copy", "the ceiling: the same bytes read and written by rows", &transpose_copy},
      {1, "naive", "reads rows, writes columns: a sector per lane on every write",
       &transpose_naive},
      {2, "coalesced", "a shared-memory tile makes both global accesses rows",
       &transpose_coalesced},
      {3, "conflict-free", "a padded tile removes the 32-way bank conflicts of the column reads",
       &transpose_conflict_free},
  };
  return levels;
}

std::span<const RegisteredKernel> transpose_kernel_registry() {
  static const RegisteredKernel entries[] = {
      {"transpose_copy_kernel", reinterpret_cast<const void*>(&transpose_copy_kernel),
       kNoDynamicShared},
      {"transpose_naive_kernel", reinterpret_cast<const void*>(&transpose_naive_kernel),
       kNoDynamicShared},
      {"transpose_coalesced_kernel", reinterpret_cast<const void*>(&transpose_coalesced_kernel),
       kNoDynamicShared},
      {"transpose_conflict_free_kernel",
       reinterpret_cast<const void*>(&transpose_conflict_free_kernel), kNoDynamicShared},
  };
  return entries;
}

}  // namespace gpulab::kernels
