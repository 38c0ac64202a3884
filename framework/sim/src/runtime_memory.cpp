// The CUDA runtime's memory on sim: allocations, copies and memsets (runtime_state.hpp).
#include "gpulab/sim/runtime.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "asan.hpp"
#include "clock.hpp"
#include "counting.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "queue.hpp"
#include "runtime_state.hpp"

// Under AddressSanitizer (GPULAB_SIM_ASAN) device memory comes from operator new, which ASan pads
// and checks; otherwise from mmap, with a guard page after each allocation (see
// allocate_device_memory).

namespace gpulab::sim {

DeviceRanges& device_ranges() {
  static DeviceRanges& ranges = *new DeviceRanges();  // never destroyed: used after main
  return ranges;
}

// The modeled address of a new allocation of `bytes` (detail::DeviceRange): the lowest gap that
// fits it among the live ones, aligned as cudaMalloc aligns. Under State::mutex.
std::uintptr_t place_modeled(State& s, std::size_t bytes) {
  constexpr std::uintptr_t kAlignment = 256;
  constexpr std::uintptr_t kFirst = std::uintptr_t{1} << 32;  // never null, never small
  const auto round_up = [](std::uintptr_t x) {
    return (x + kAlignment - 1) / kAlignment * kAlignment;
  };
  std::uintptr_t candidate = kFirst;
  for (const auto& [start, size] : s.modeled) {
    if (start >= candidate + bytes) {
      break;
    }
    candidate = std::max(candidate, round_up(start + size));
  }
  s.modeled.emplace(candidate, bytes);
  return candidate;
}

// True when [pointer, pointer + bytes) lies inside one live allocation of `table`.
bool inside(const AllocationTable& table, const void* pointer, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto it = table.upper_bound(address);
  if (it == table.begin()) {
    return false;
  }
  --it;
  const std::uintptr_t end = it->first + it->second.bytes;
  return address >= it->first && address <= end && bytes <= end - address;
}

bool inside_device_allocation(const State& s, const void* pointer, std::size_t bytes) {
  return inside(s.device_allocations, pointer, bytes);
}

// cudaMalloc's alignment guarantee (and cudaMallocHost's, on sim).
constexpr std::size_t kAllocationAlignment = 256;

// Device memory for `bytes` (> 0), 256-byte aligned, described in `allocation`; null when there
// is none to be had.
//
// Outside AddressSanitizer builds each allocation is its own anonymous mapping followed by a
// PROT_NONE guard page, and starts where its end, rounded up to 256 bytes, abuts the guard page. A
// kernel (or the host) that reads or writes more than that rounding (at most 255 bytes) past the
// end faults at once with SIGSEGV, the sim's cudaErrorIllegalAddress, instead of silently
// corrupting the heap. Under AddressSanitizer: operator new of exactly `bytes`, which ASan pads
// and checks, so it reports an access even one byte past the end, with the kernel's line.
void* allocate_device_memory(std::size_t bytes, Allocation& allocation) noexcept {
  allocation = Allocation{bytes, nullptr, 0};
#if defined(GPULAB_SIM_ASAN)
  return ::operator new (bytes, std::align_val_t{kAllocationAlignment}, std::nothrow);
#else
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > std::numeric_limits<std::size_t>::max() - 2 * page) {
    return nullptr;
  }
  const std::size_t rounded =
      (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  const std::size_t data_bytes = (rounded + page - 1) / page * page;
  const std::size_t mapping_bytes = data_bytes + page;
  void* mapping =
      mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    return nullptr;
  }
  char* guard = static_cast<char*>(mapping) + data_bytes;
  if (mprotect(guard, page, PROT_NONE) != 0) {
    munmap(mapping, mapping_bytes);
    return nullptr;
  }
  allocation.mapping = mapping;
  allocation.mapping_bytes = mapping_bytes;
  return guard - rounded;  // 256-byte aligned: so are the mapping and `rounded`
#endif
}

// Gives back the memory of the allocation that starts at `start` (device or pinned).
void release(std::uintptr_t start, const Allocation& allocation) noexcept {
  if (allocation.mapping != nullptr) {
    munmap(allocation.mapping, allocation.mapping_bytes);
  } else {
    ::operator delete (reinterpret_cast<void*>(start), std::align_val_t{kAllocationAlignment});
  }
}

namespace {

// Which host sides of a copy are pageable (not from cudaMallocHost): the CUDA runtime makes such
// copies synchronous where the host could otherwise see or change the memory too early.
struct CopySides {
  bool src_pageable = false;
  bool dst_pageable = false;
  bool device_to_device = false;  // both sides in device memory
};

// Checks both sides of a copy against the allocation tables for the given direction.
cudaError_t check_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                       cudaStream_t stream, CopySides& sides) {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  if (!valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  if (bytes == 0) {
    return cudaSuccess;
  }
  if (dst == nullptr || src == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  const bool dst_device = inside_device_allocation(s, dst, bytes);
  const bool src_device = inside_device_allocation(s, src, bytes);
  sides.src_pageable = !src_device && !inside(s.host_allocations, src, bytes);
  sides.dst_pageable = !dst_device && !inside(s.host_allocations, dst, bytes);
  sides.device_to_device = dst_device && src_device;
  switch (kind) {
    case cudaMemcpyHostToHost:
      return cudaSuccess;
    case cudaMemcpyHostToDevice:
      return dst_device ? cudaSuccess : fail(cudaErrorInvalidValue);
    case cudaMemcpyDeviceToHost:
      return src_device ? cudaSuccess : fail(cudaErrorInvalidValue);
    case cudaMemcpyDeviceToDevice:
      return dst_device && src_device ? cudaSuccess : fail(cudaErrorInvalidValue);
    case cudaMemcpyDefault:
      return cudaSuccess;
  }
  return fail(cudaErrorInvalidMemcpyDirection);
}

}  // namespace

std::size_t allocated_bytes() noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return s.allocated;
}

namespace detail {

std::optional<std::pair<std::uintptr_t, std::size_t>> device_memory_at(std::uintptr_t address,
                                                                       std::size_t bytes,
                                                                       HostMemoryGap& gap) {
  DeviceRanges& d = device_ranges();
  std::shared_lock lock(d.mutex);
  gap.generation = device_memory_generation.load(std::memory_order_acquire);
  const std::uintptr_t last = address + (bytes == 0 ? 0 : bytes - 1);
  auto next = d.ranges.upper_bound(last);  // the first allocation starting after the access
  std::uintptr_t begin = 0;
  if (next != d.ranges.begin()) {
    const auto before = std::prev(next);
    if (before->first + before->second > address) {
      return *before;
    }
    begin = before->first + before->second;
  }
  gap.begin = begin;
  gap.end = next == d.ranges.end() ? std::numeric_limits<std::uintptr_t>::max() : next->first;
  return std::nullopt;
}

std::vector<DeviceRange> device_memory_ranges() {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  std::vector<DeviceRange> ranges;
  ranges.reserve(s.device_allocations.size() + s.host_allocations.size());
  for (const AllocationTable* table : {&s.device_allocations, &s.host_allocations}) {
    for (const auto& [start, allocation] : *table) {
      ranges.push_back(DeviceRange{start, allocation.bytes, allocation.modeled});
    }
  }
  return ranges;
}

}  // namespace detail
}  // namespace gpulab::sim

using gpulab::sim::fail;
using gpulab::sim::state;

cudaError_t cudaMalloc(void** pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *pointer = nullptr;
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (bytes == 0) {
    return cudaSuccess;  // as on a GPU: a null pointer, no error
  }
  // A call into the driver: its host time whether it succeeds or not.
  gpulab::sim::detail::host_spend(gpulab::sim::detail::modeled_malloc_seconds(bytes));
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (bytes > gpulab::sim::device().capacity_bytes - s.allocated) {
    return fail(cudaErrorMemoryAllocation);
  }
  // 256-byte aligned, as cudaMalloc guarantees; a guard page or AddressSanitizer catches a
  // kernel's access past the end (see allocate_device_memory).
  gpulab::sim::Allocation allocation;
  void* memory = gpulab::sim::allocate_device_memory(bytes, allocation);
  if (memory == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  allocation.modeled = gpulab::sim::place_modeled(s, bytes);
  s.device_allocations.emplace(reinterpret_cast<std::uintptr_t>(memory), allocation);
  gpulab::sim::device_ranges().add(reinterpret_cast<std::uintptr_t>(memory), bytes);
  s.allocated += bytes;
  gpulab::note_device_malloc(memory, bytes);  // every allocation, in the memory accounting
  *pointer = memory;
  return cudaSuccess;
}

namespace {

// Frees an allocation of `table` after the device finished the work queued before (cudaFree and
// cudaFreeHost synchronize the device, as on a GPU), in the host time its allocation took.
cudaError_t free_allocation(gpulab::sim::AllocationTable gpulab::sim::State::*table,
                            void* pointer) noexcept {
  if (pointer == nullptr) {
    return cudaSuccess;
  }
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  queue.wait(queue.last_any());
  gpulab::sim::detail::host_waited_for_device();
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  const auto it = (s.*table).find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == (s.*table).end()) {
    return fail(cudaErrorInvalidValue);
  }
  gpulab::sim::detail::host_spend(
      table == &gpulab::sim::State::device_allocations
          ? gpulab::sim::detail::modeled_malloc_seconds(it->second.bytes)
          : gpulab::sim::detail::modeled_malloc_host_seconds(it->second.bytes));
  if (table == &gpulab::sim::State::device_allocations) {
    s.allocated -= it->second.bytes;
    gpulab::note_device_free(pointer);
    gpulab::sim::device_ranges().remove(it->first);
  }
  const gpulab::sim::Allocation allocation = it->second;
  s.modeled.erase(allocation.modeled);
  (s.*table).erase(it);
  gpulab::sim::release(reinterpret_cast<std::uintptr_t>(pointer), allocation);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaFree(void* pointer) noexcept {
  return free_allocation(&gpulab::sim::State::device_allocations, pointer);
}

cudaError_t cudaMallocHost(void** pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *pointer = nullptr;
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (bytes == 0) {
    return cudaSuccess;
  }
  gpulab::sim::detail::host_spend(gpulab::sim::detail::modeled_malloc_host_seconds(bytes));
  void* memory =
      ::operator new (bytes, std::align_val_t{gpulab::sim::kAllocationAlignment}, std::nothrow);
  if (memory == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  s.host_allocations.emplace(
      reinterpret_cast<std::uintptr_t>(memory),
      gpulab::sim::Allocation{bytes, nullptr, 0, gpulab::sim::place_modeled(s, bytes)});
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* pointer) noexcept {
  return free_allocation(&gpulab::sim::State::host_allocations, pointer);
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) noexcept {
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  *total_bytes = gpulab::sim::device().capacity_bytes;
  *free_bytes = *total_bytes - s.allocated;
  return cudaSuccess;
}

// Copies as the CUDA runtime does them: asynchronous between device and pinned memory; to
// pageable memory the call returns when the copy is done; from pageable memory the data is staged
// at the call, so the host may reuse its buffer as soon as the call returns.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  gpulab::sim::CopySides sides;
  if (const cudaError_t error = gpulab::sim::check_copy(dst, src, bytes, kind, stream, sides);
      error != cudaSuccess || bytes == 0) {
    return error;
  }
  using gpulab::sim::detail::enqueue_timed;
  const double modeled_s = gpulab::sim::detail::modeled_copy_seconds(bytes, sides.device_to_device);
  cudaError_t error = cudaSuccess;
  bool noted = false;  // a copy to pageable memory is noted before the host waits for it
  try {
    if (sides.dst_pageable) {
      error = enqueue_timed(stream, [=](double) {
        gpulab::sim::detail::count_copy(dst, src, bytes);
        std::memmove(dst, src, bytes);
        return modeled_s;
      });
      if (error == cudaSuccess) {
        gpulab::sim::note(stream, gpulab::sim::StreamOp::memcpy);  // then the host waits for it
        noted = true;
        error = cudaStreamSynchronize(stream);
      }
    } else if (sides.src_pageable) {
      auto staged = std::make_shared<std::vector<unsigned char>>(
          static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + bytes);
      error = enqueue_timed(stream, [=](double) {
        gpulab::sim::detail::count_copy(dst, staged->data(), bytes);
        std::memcpy(dst, staged->data(), bytes);
        return modeled_s;
      });
    } else {
      error = enqueue_timed(stream, [=](double) {
        gpulab::sim::detail::count_copy(dst, src, bytes);
        std::memmove(dst, src, bytes);
        return modeled_s;
      });
    }
  } catch (const std::bad_alloc&) {
    return fail(cudaErrorMemoryAllocation);
  }
  if (error == cudaSuccess && !noted) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::memcpy);
  }
  return error;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes,
                       cudaMemcpyKind kind) noexcept {
  if (const cudaError_t error = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
      error != cudaSuccess) {
    return error;
  }
  return cudaStreamSynchronize(nullptr);
}

cudaError_t cudaMemsetAsync(void* pointer, int value, std::size_t bytes,
                            cudaStream_t stream) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
    if (bytes == 0) {
      return cudaSuccess;
    }
    if (!gpulab::sim::inside_device_allocation(s, pointer, bytes)) {
      return fail(cudaErrorInvalidValue);
    }
  }
  const cudaError_t error = gpulab::sim::detail::enqueue_timed(stream, [=](double) {
    gpulab::sim::detail::count_copy(pointer, nullptr, bytes);
    std::memset(pointer, value, bytes);
    return gpulab::sim::detail::modeled_memset_seconds(bytes);
  });
  if (error == cudaSuccess) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::memset);
  }
  return error;
}

cudaError_t cudaMemset(void* pointer, int value, std::size_t bytes) noexcept {
  return cudaMemsetAsync(pointer, value, bytes, nullptr);
}

namespace {

// Copies to or from a __constant__/__device__ variable (host memory on sim) once the device is
// idle: the symbol copies are synchronous.
cudaError_t copy_symbol(void* dst, const void* src, std::size_t symbol_bytes, std::size_t bytes,
                        std::size_t offset, bool to_symbol, cudaMemcpyKind kind) noexcept {
  const cudaMemcpyKind host_side = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
    return fail(cudaErrorInvalidMemcpyDirection);
  }
  if (offset > symbol_bytes || bytes > symbol_bytes - offset || dst == nullptr || src == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
    return error;
  }
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemcpyToSymbol(void* symbol, std::size_t symbol_bytes, const void* src,
                               std::size_t bytes, std::size_t offset,
                               cudaMemcpyKind kind) noexcept {
  return copy_symbol(static_cast<unsigned char*>(symbol) + offset, src, symbol_bytes, bytes, offset,
                     true, kind);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, std::size_t symbol_bytes,
                                 std::size_t bytes, std::size_t offset,
                                 cudaMemcpyKind kind) noexcept {
  return copy_symbol(dst, static_cast<const unsigned char*>(symbol) + offset, symbol_bytes, bytes,
                     offset, false, kind);
}
