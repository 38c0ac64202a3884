// Matrix transpose out = in^T of a rows x cols float matrix (row-major), as a ladder whose levels
// follow the variants of NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++" (Parallel
// Forall blog, 2013): 32 x 32 tiles, blocks of 32 x 8 threads, each thread handling 4 elements.
//   0  copy: out = in, coalesced reads and writes: the bandwidth a transpose should reach
//   1  naive: reads rows (coalesced), writes columns (each lane its own 32-byte sector)
//   2  coalesced: a 32 x 32 tile through shared memory, so both the read and the write of global
//      memory are rows; the tile is read by column: 32-way bank conflicts
//   3  conflict-free: the same with the tile padded to 33 columns, so a column spans 32 banks
// gpulab-sim-bench --ladders compares each level's modeled bandwidth with the blog's figures
// (docs/results/model-ladders-*.md).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

inline constexpr unsigned kTransposeTile = 32;      // tile side
inline constexpr unsigned kTransposeBlockRows = 8;  // threads per block: 32 x 8

/// CPU reference: out[c * rows + r] = in[r * cols + c].
void transpose_reference(std::span<const float> in, std::span<float> out, int rows, int cols);

using TransposeLaunch = void (*)(const float* in, float* out, int rows, int cols,
                                 cudaStream_t stream);

/// Level 0: out = in (rows x cols floats), with the transposes' tiling, as the ceiling they aim at.
void transpose_copy(const float* in, float* out, int rows, int cols, cudaStream_t stream = nullptr);
void transpose_naive(const float* in, float* out, int rows, int cols,
                     cudaStream_t stream = nullptr);
void transpose_coalesced(const float* in, float* out, int rows, int cols,
                         cudaStream_t stream = nullptr);
void transpose_conflict_free(const float* in, float* out, int rows, int cols,
                             cudaStream_t stream = nullptr);

/// The levels above, in order (level 0 is the copy: its output is not a transpose).
std::span<const Level<TransposeLaunch>> transpose_levels();

}  // namespace gpulab::kernels
