// The sim backend's <cublas_v2.h>: the cuBLAS subset gpulab uses, executed on the CPU.
// Status values as in cublas_api.h of CUDA 13.
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

struct cublasContext;
typedef cublasContext* cublasHandle_t;  // NOLINT: the cuBLAS spelling

const char* cublasGetStatusName(cublasStatus_t status) noexcept;
const char* cublasGetStatusString(cublasStatus_t status) noexcept;
cublasStatus_t cublasCreate(cublasHandle_t* handle) noexcept;
cublasStatus_t cublasDestroy(cublasHandle_t handle) noexcept;
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) noexcept;
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) noexcept;
