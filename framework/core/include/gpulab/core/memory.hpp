// Move-only owners of device and pinned host memory.
//
//   DeviceBuffer<float> x(n);                 cudaMalloc, freed in the destructor
//   x.copy_from(host);                        host -> device, sizes checked
//   std::vector<float> y = x.to_vector();     device -> host
//   PinnedBuffer<float> staging(n);           cudaMallocHost: page-locked, for async copies
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/core/cuda_check.hpp"

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

}  // namespace detail

/// Device memory for `size()` elements of T, freed on destruction. // move-only
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

 public:
  DeviceBuffer() noexcept = default;
  /// Allocates `count` elements (uninitialised). Throws CudaError (cudaErrorMemoryAllocation).
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) {
      GPULAB_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), detail::checked_bytes<T>(count)));
    }
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  /// Device pointer (nullptr when empty).
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
      GPULAB_CHECK_NOEXCEPT(cudaFree(data_));
    }
    data_ = nullptr;
    size_ = 0;
  }

  /// Copies host -> device; the span must have size() elements. Synchronous.
  void copy_from(std::span<const T> host) {
    detail::require_same_size(host.size(), size_, "DeviceBuffer::copy_from");
    GPULAB_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// Copies device -> host; the span must have size() elements. Synchronous.
  void copy_to(std::span<T> host) const {
    detail::require_same_size(host.size(), size_, "DeviceBuffer::copy_to");
    GPULAB_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
  }
  /// Enqueues host -> device on `stream`; host memory should be pinned to overlap.
  void copy_from_async(std::span<const T> host, cudaStream_t stream) {
    detail::require_same_size(host.size(), size_, "DeviceBuffer::copy_from_async");
    GPULAB_CHECK(cudaMemcpyAsync(data_, host.data(), bytes(), cudaMemcpyHostToDevice, stream));
  }
  /// Enqueues device -> host on `stream`.
  void copy_to_async(std::span<T> host, cudaStream_t stream) const {
    detail::require_same_size(host.size(), size_, "DeviceBuffer::copy_to_async");
    GPULAB_CHECK(cudaMemcpyAsync(host.data(), data_, bytes(), cudaMemcpyDeviceToHost, stream));
  }
  /// Sets every byte to `value` (0xFF on float data gives NaN: poisoning before a kernel runs).
  void fill_bytes(unsigned char value) { GPULAB_CHECK(cudaMemset(data_, value, bytes())); }
  /// The contents as a host vector. Synchronous.
  [[nodiscard]] std::vector<T> to_vector() const {
    std::vector<T> host(size_);
    copy_to(host);
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Page-locked host memory (cudaMallocHost) for `size()` elements: the source or target of
/// copies that overlap with kernels. Freed on destruction. // move-only
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "pinned buffers hold trivially copyable types");

 public:
  PinnedBuffer() noexcept = default;
  /// Allocates `count` elements (uninitialised). Throws CudaError.
  explicit PinnedBuffer(std::size_t count) : size_(count) {
    if (count > 0) {
      GPULAB_CHECK(
          cudaMallocHost(reinterpret_cast<void**>(&data_), detail::checked_bytes<T>(count)));
    }
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::span<T> span() noexcept { return {data_, size_}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_, size_}; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }

  /// Frees the memory now; the buffer becomes empty.
  void reset() noexcept {
    if (data_ != nullptr) {
      GPULAB_CHECK_NOEXCEPT(cudaFreeHost(data_));
    }
    data_ = nullptr;
    size_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gpulab
