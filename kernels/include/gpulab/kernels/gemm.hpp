// Single-precision matrix multiply C = A * B, row-major (A is M x K, B is K x N, C is M x N):
//   1  naive: one thread per element of C, every operand read from global memory (K loads of A
//      and of B per output);
//   2  tiled: the block stages T x T tiles of A and B in dynamic shared memory (2 T^2 floats,
//      T = the block's side, 16 or 32), so each global load serves T multiply-adds;
//   3  register-blocked: a block of 256 threads computes a 128 x 128 tile of C, each thread an
//      8 x 8 sub-tile in registers, from 128 x 8 and 8 x 128 tiles of A and B in shared memory:
//      each 16-byte shared load serves 16 multiply-adds (one of the tilings of
//      gpulab/core/gemm_model.hpp, which models the sim's cuBLAS from them).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

/// CPU reference, accumulated in double.
void gemm_reference(std::span<const float> a, std::span<const float> b, std::span<float> c, int m,
                    int n, int k);

using GemmLaunch = void (*)(const float* a, const float* b, float* c, int m, int n, int k,
                            cudaStream_t stream);

void gemm_naive(const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream = nullptr);
/// Tiled with `tile` x `tile` blocks (16 or 32).
void gemm_tiled(const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream = nullptr, int tile = 16);

/// Register-blocked with kGemmTilings[tiling] (gpulab/core/gemm_model.hpp), on `batch` products
/// stored one after the other (A: m x k each, B: k x n, C: m x n).
void gemm_register_blocked(const float* a, const float* b, float* c, int m, int n, int k,
                           cudaStream_t stream = nullptr, std::size_t tiling = 0, int batch = 1);

/// The levels above, in order (level 2 with 16 x 16 tiles).
std::span<const Level<GemmLaunch>> gemm_levels();

}  // namespace gpulab::kernels
