#include <cublas_v2.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <new>
#include <set>

struct cublasContext {
  cudaStream_t stream = nullptr;
};

namespace {

struct StatusText {
  cublasStatus_t status;
  const char* name;
  const char* description;
};

// Names and descriptions as cuBLAS prints them.
constexpr StatusText kStatuses[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an invalid numeric value was used as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "an absent device architectural feature is required"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
     "the functionality requested requires some license"},
};

const StatusText* find_status(cublasStatus_t status) {
  const auto* it = std::find_if(std::begin(kStatuses), std::end(kStatuses),
                                [status](const StatusText& s) { return s.status == status; });
  return it == std::end(kStatuses) ? nullptr : it;
}

struct Handles {
  std::mutex mutex;
  std::set<cublasHandle_t> live;
};

Handles& handles() {
  static Handles instance;
  return instance;
}

bool live(cublasHandle_t handle) {
  std::scoped_lock lock(handles().mutex);
  return handles().live.contains(handle);
}

}  // namespace

const char* cublasGetStatusName(cublasStatus_t status) noexcept {
  const auto* text = find_status(status);
  return text != nullptr ? text->name : "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) noexcept {
  const auto* text = find_status(status);
  return text != nullptr ? text->description : "unknown error";
}

cublasStatus_t cublasCreate(cublasHandle_t* handle) noexcept {
  if (handle == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  auto* created = new (std::nothrow) cublasContext{};
  if (created == nullptr) {
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  std::scoped_lock lock(handles().mutex);
  handles().live.insert(created);
  *handle = created;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) noexcept {
  std::scoped_lock lock(handles().mutex);
  if (handles().live.erase(handle) == 0) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (stream == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
