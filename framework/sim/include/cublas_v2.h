// The sim backend's <cublas_v2.h>: the cuBLAS subset gpulab uses, executed on the CPU.
// Names, enum values and signatures as in cublas_api.h of CUDA 13. Real cuBLAS maps some names to
// `_v2` symbols with macros (cublasSgemm -> cublasSgemm_v2); here they are plain C++ functions.
//
// Matrices are column-major, as in cuBLAS. Work such as cublasSgemm is queued on the handle's
// stream and runs in stream order, asynchronously to the host: synchronize before reading C.
#pragma once

#include "gpulab/sim/runtime.hpp"

/// cuBLAS status codes.
typedef enum : int {  // NOLINT: the cuBLAS spelling
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

/// What a routine applies to a matrix argument before using it: op(X) = X, X^T or X^H. On real
/// data CUBLAS_OP_C is the same as CUBLAS_OP_T. CUBLAS_OP_CONJG is a placeholder that cuBLAS does
/// not support; routines reject it as an invalid value.
typedef enum : int {  // NOLINT: the cuBLAS spelling
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,  // synonym of CUBLAS_OP_C
  CUBLAS_OP_CONJG = 3,
} cublasOperation_t;

/// Where scalar arguments (alpha, beta) live. HOST (the default): read when the routine is
/// called, so they may be stack variables. DEVICE: read from device memory when the queued work
/// runs, so they may be produced by earlier work on the same stream.
typedef enum : int {  // NOLINT: the cuBLAS spelling
  CUBLAS_POINTER_MODE_HOST = 0,
  CUBLAS_POINTER_MODE_DEVICE = 1,
} cublasPointerMode_t;

/// Which hardware paths cuBLAS may use (tensor cores, TF32, emulation). The sim stores the mode
/// and reports it back, but always computes single-precision routines in FP32 on the CPU: a TF32
/// mode does not reduce precision here as it can on a GPU.
typedef enum : int {  // NOLINT: the cuBLAS spelling
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,  // deprecated in cuBLAS
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
  CUBLAS_FP32_EMULATED_BF16X9_MATH = 4,
  CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH = 8,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,  // a flag, OR-ed with one of the above
} cublasMath_t;

struct cublasContext;
typedef cublasContext* cublasHandle_t;  // NOLINT: the cuBLAS spelling

const char* cublasGetStatusName(cublasStatus_t status) noexcept;
const char* cublasGetStatusString(cublasStatus_t status) noexcept;
cublasStatus_t cublasCreate(cublasHandle_t* handle) noexcept;
cublasStatus_t cublasDestroy(cublasHandle_t handle) noexcept;
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) noexcept;
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) noexcept;
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) noexcept;
cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) noexcept;
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) noexcept;
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) noexcept;

/// C = alpha * op(A) * op(B) + beta * C, column-major: op(A) is m x k, op(B) is k x n, C is m x n.
/// When beta == 0, C is not read (NaN or Inf in it do not propagate); when alpha == 0 or k == 0,
/// A and B are not read. Queued on the handle's stream.
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) noexcept;

/// batchCount independent cublasSgemm problems: problem i uses A + i * strideA, B + i * strideB
/// and C + i * strideC (a stride of 0 uses one A or B for every problem).
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) noexcept;
