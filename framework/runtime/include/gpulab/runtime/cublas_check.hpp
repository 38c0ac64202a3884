// cuBLAS statuses through the same GPULAB_CHECK as CUDA runtime errors.
#pragma once

#include <cublas_v2.h>

#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab {

template <>
struct StatusTraits<cublasStatus_t> {
  static constexpr const char* library = "cuBLAS";
  static bool ok(cublasStatus_t status) noexcept { return status == CUBLAS_STATUS_SUCCESS; }
  static const char* name(cublasStatus_t status) noexcept { return cublasGetStatusName(status); }
  static const char* description(cublasStatus_t status) noexcept {
    return cublasGetStatusString(status);
  }
};

}  // namespace gpulab
