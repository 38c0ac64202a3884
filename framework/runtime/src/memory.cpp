// DeviceBuffer's allocation path (memory.hpp): cudaMalloc with the caller's source line in the
// memory accounting, and an out-of-memory error that says what holds the device's memory.
#include "gpulab/runtime/memory.hpp"

#include <string>

#include "gpulab/core/memory_stats.hpp"

namespace gpulab::detail {

void allocate_device(void** pointer, std::size_t bytes, const std::source_location& where) {
  const AllocationSite site(where);
  const cudaError_t status = cudaMalloc(pointer, bytes);
  const auto line = static_cast<int>(where.line());
  if (status == cudaSuccess) {
#if GPULAB_BACKEND_CUDA
    note_device_malloc(*pointer, bytes);  // on sim the runtime reports every cudaMalloc itself
#endif
    return;
  }
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not a sticky error: the next call must not see it
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      free_bytes = 0;
      total_bytes = 0;
    }
    throw CudaError("CUDA", static_cast<int>(status), cudaGetErrorName(status),
                    std::string(cudaGetErrorString(status)) + "\n" +
                        explain_out_of_memory(bytes, total_bytes, free_bytes),
                    "cudaMalloc", where.file_name(), line);
  }
  check(status, "cudaMalloc", where.file_name(), line);
}

void free_device(void* pointer) noexcept {
#if GPULAB_BACKEND_CUDA
  note_device_free(pointer);
#endif
  (void)check_noexcept(cudaFree(pointer), "cudaFree", __FILE__, __LINE__);
}

}  // namespace gpulab::detail

namespace gpulab {

void* device_malloc(std::size_t bytes, std::source_location where) {
  void* pointer = nullptr;
  if (bytes > 0) {
    detail::allocate_device(&pointer, bytes, where);
  }
  return pointer;
}

void device_free(void* pointer) {
  if (pointer == nullptr) {
    return;
  }
#if GPULAB_BACKEND_CUDA
  // Before the free, as free_device: once freed, another thread's cudaMalloc may get the address.
  note_device_free(pointer);  // on sim the runtime reports every cudaFree itself
#endif
  GPULAB_CHECK(cudaFree(pointer));
}

}  // namespace gpulab
