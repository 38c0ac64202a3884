// Move-only owners of device and pinned host memory.
//
//   DeviceBuffer<float> x(n);                 cudaMalloc, freed in the destructor
//   x.copy_from(host);                        host -> device, sizes checked
//   x.fill_bytes_async(0xff, stream);         NaN poison, ordered before the next launch on stream
//   std::vector<float> y = x.to_vector();     device -> host
//   PinnedBuffer<float> staging(n);           cudaMallocHost: page-locked, for async copies
//   void* raw = device_malloc(bytes);         untyped device memory, accounted; device_free(raw)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab {
namespace detail {

template <class T>
std::size_t checked_bytes(std::size_t count) {
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
    throw std::length_error("buffer of " + std::to_string(count) + " elements of " +
                            std::to_string(sizeof(T)) + " bytes overflows size_t");
  }
  return count * sizeof(T);
}

inline void require_same_size(std::size_t host, std::size_t device, const char* what) {
  if (host != device) {
    throw std::invalid_argument(std::string(what) + ": host span has " + std::to_string(host) +
                                " elements, device buffer has " + std::to_string(device));
  }
}

/// Owns `size()` elements of T allocated by Memory::allocate and freed by Memory::release; the
/// shared half of DeviceBuffer and PinnedBuffer. // move-only
template <class T, class Memory>
class OwnedMemory {
  static_assert(std::is_trivially_copyable_v<T>, "CUDA buffers hold trivially copyable types");

 public:
  OwnedMemory() noexcept = default;
  /// Allocates `count` elements (uninitialised). Throws CudaError (cudaErrorMemoryAllocation)
  /// naming the caller's file and line.
  explicit OwnedMemory(std::size_t count,
                       std::source_location where = std::source_location::current())
      : size_(count) {
    if (count > 0) {
      Memory::allocate(reinterpret_cast<void**>(&data_), checked_bytes<T>(count), where);
    }
  }
  ~OwnedMemory() { reset(); }
  OwnedMemory(const OwnedMemory&) = delete;
  OwnedMemory& operator=(const OwnedMemory&) = delete;
  OwnedMemory(OwnedMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  OwnedMemory& operator=(OwnedMemory&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  /// The memory (nullptr when empty).
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Size in bytes.
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

  /// Frees the memory now; the buffer becomes empty.
  void reset() noexcept {
    if (data_ != nullptr) {
      Memory::release(data_);
    }
    data_ = nullptr;
    size_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// cudaMalloc for a DeviceBuffer made at `where`: recorded in the memory accounting
/// (memory_stats.hpp) under that file and line. Throws CudaError naming `where`; out of memory
/// explains itself (explain_out_of_memory: what holds the device's memory, and where it was made).
void allocate_device(void** pointer, std::size_t bytes, const std::source_location& where);
/// cudaFree for a DeviceBuffer; a failure is reported on stderr.
void free_device(void* pointer) noexcept;

struct DeviceMemory {
  static void allocate(void** pointer, std::size_t bytes, const std::source_location& where) {
    allocate_device(pointer, bytes, where);
  }
  static void release(void* pointer) noexcept { free_device(pointer); }
};

struct PinnedMemory {
  static void allocate(void** pointer, std::size_t bytes, const std::source_location& where) {
    check(cudaMallocHost(pointer, bytes), "cudaMallocHost", where.file_name(),
          static_cast<int>(where.line()));
  }
  static void release(void* pointer) noexcept {
    check_noexcept(cudaFreeHost(pointer), "cudaFreeHost", __FILE__, __LINE__);
  }
};

}  // namespace detail

/// cudaMalloc of `bytes` (nullptr for 0) that the memory accounting sees on both backends, under
/// the caller's file and line: for device memory a DeviceBuffer cannot own, such as a caching
/// allocator's blocks. Throws CudaError; out of memory explains itself, as a DeviceBuffer's does.
[[nodiscard]] void* device_malloc(std::size_t bytes,
                                  std::source_location where = std::source_location::current());
/// cudaFree of what device_malloc returned (nullptr: nothing to do). Throws CudaError.
void device_free(void* pointer);

/// Device memory for `size()` elements of T (cudaMalloc), freed on destruction. // move-only
template <class T>
class DeviceBuffer : public detail::OwnedMemory<T, detail::DeviceMemory> {
  using Base = detail::OwnedMemory<T, detail::DeviceMemory>;

 public:
  using Base::Base;
  using Base::bytes;
  using Base::data;
  using Base::size;

  /// Copies host -> device; the span must have size() elements. Synchronous.
  void copy_from(std::span<const T> host) {
    detail::require_same_size(host.size(), size(), "DeviceBuffer::copy_from");
    GPULAB_CHECK(cudaMemcpy(data(), host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// Copies device -> host; the span must have size() elements. Synchronous.
  void copy_to(std::span<T> host) const {
    detail::require_same_size(host.size(), size(), "DeviceBuffer::copy_to");
    GPULAB_CHECK(cudaMemcpy(host.data(), data(), bytes(), cudaMemcpyDeviceToHost));
  }
  /// Enqueues host -> device on `stream`; host memory should be pinned to overlap.
  void copy_from_async(std::span<const T> host, cudaStream_t stream) {
    detail::require_same_size(host.size(), size(), "DeviceBuffer::copy_from_async");
    GPULAB_CHECK(cudaMemcpyAsync(data(), host.data(), bytes(), cudaMemcpyHostToDevice, stream));
  }
  /// Enqueues device -> host on `stream`.
  void copy_to_async(std::span<T> host, cudaStream_t stream) const {
    detail::require_same_size(host.size(), size(), "DeviceBuffer::copy_to_async");
    GPULAB_CHECK(cudaMemcpyAsync(host.data(), data(), bytes(), cudaMemcpyDeviceToHost, stream));
  }
  /// Sets every byte to `value` (0xFF on float data gives NaN: poisoning before a kernel runs),
  /// on the legacy default stream (cudaMemset). A kernel launched on a gpulab::Stream
  /// (cudaStreamNonBlocking) does not wait for that stream and can run before the fill is done:
  /// poison with fill_bytes_async on the kernel's stream there.
  void fill_bytes(unsigned char value) { GPULAB_CHECK(cudaMemset(data(), value, bytes())); }
  /// Enqueues setting every byte to `value` on `stream` (cudaMemsetAsync): work queued on the same
  /// stream afterwards, such as the launch a NaN poison guards, runs after the fill.
  void fill_bytes_async(unsigned char value, cudaStream_t stream) {
    GPULAB_CHECK(cudaMemsetAsync(data(), value, bytes(), stream));
  }
  /// The contents as a host vector. Synchronous.
  [[nodiscard]] std::vector<T> to_vector() const {
    std::vector<T> host(size());
    copy_to(host);
    return host;
  }
};

/// Page-locked host memory (cudaMallocHost) for `size()` elements: the source or target of
/// copies that overlap with kernels. Freed on destruction. // move-only
template <class T>
class PinnedBuffer : public detail::OwnedMemory<T, detail::PinnedMemory> {
  using Base = detail::OwnedMemory<T, detail::PinnedMemory>;

 public:
  using Base::Base;
  using Base::data;
  using Base::size;

  [[nodiscard]] std::span<T> span() noexcept { return {data(), size()}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data(), size()}; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
};

}  // namespace gpulab
