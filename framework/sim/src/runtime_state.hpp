// The sim runtime's shared state (internal to its files). The CUDA runtime API is implemented by
// area: runtime.cpp (the device, errors, the settings a program chooses, schedules and the
// clock), runtime_memory.cpp (allocations and copies), runtime_streams.cpp (streams, events and
// what each stream was given) and runtime_launch.cpp (kernel attributes, occupancy and launches).
// What each function here does is said where it is defined.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>

#include "counting.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/sim/runtime.hpp"
#include "settings.hpp"

struct CUstream_st {
  unsigned int flags = 0;
};

// An event's latest record: the queue position it waits for and, once the device thread reached
// it, the time. Shared with the queued work, so destroying a pending event is safe.
struct EventRecord {
  std::uint64_t seq = 0;
  std::chrono::steady_clock::time_point time;
  bool modeled = false;  // recorded under the modeled clock: modeled_s is its time
  double modeled_s = 0;
};

struct CUevent_st {
  unsigned int flags = 0;
  std::shared_ptr<EventRecord> record;  // null until recorded
};

namespace gpulab::sim {

// The simulated device: one spec, chosen once, at its first use (runtime.cpp).
struct Device {
  GpuSpec spec;
  std::string error;  // why the device cannot be used; empty when it can
  std::size_t capacity_bytes = 0;
};

const Device& device();

// What a kernel uses per thread and per block, as ptxas reports it.
struct KernelFigures {
  int registers = 0;
  std::size_t static_shared_bytes = 0;
  std::size_t local_bytes = 0;
};

// What is recorded about a kernel: its figures (set_kernel_resources's, else the kernel table's
// for its function symbol, looked up once) and its attributes (cudaFuncSetAttribute).
struct KernelRecord {
  std::optional<KernelFigures> given;
  bool looked_up = false;
  std::optional<KernelFigures> found;
  int max_dynamic_shared_bytes = 48 * 1024;  // without opt-in, on every architecture
  int carveout = -1;
};

// One live allocation: the bytes asked for and, for memory that is its own mapping (device memory
// outside AddressSanitizer builds), the mapping to unmap. `mapping` null: from operator new.
struct Allocation {
  std::size_t bytes = 0;
  void* mapping = nullptr;
  std::size_t mapping_bytes = 0;
  std::uintptr_t modeled = 0;  // its address in the L2 model (detail::DeviceRange)
};

using AllocationTable = std::map<std::uintptr_t, Allocation>;  // start -> allocation

// Where device memory is, for the check that host code never touches it (counting.cpp): the live
// cudaMalloc allocations, behind a lock of their own, since the check runs in any instrumented
// host code, also code the runtime calls while it holds State::mutex (a std::function's copy in
// enqueue). Lock order: State::mutex, then this one.
struct DeviceRanges {
  std::shared_mutex mutex;
  std::map<std::uintptr_t, std::size_t> ranges;  // start -> bytes

  void add(std::uintptr_t start, std::size_t bytes) {
    std::unique_lock lock(mutex);
    ranges.emplace(start, bytes);
    detail::device_memory_generation.fetch_add(1, std::memory_order_release);
  }
  void remove(std::uintptr_t start) {
    std::unique_lock lock(mutex);
    ranges.erase(start);
    detail::device_memory_generation.fetch_add(1, std::memory_order_release);
  }
  void clear() {
    std::unique_lock lock(mutex);
    ranges.clear();
    detail::device_memory_generation.fetch_add(1, std::memory_order_release);
  }
};

DeviceRanges& device_ranges();

// Live allocations and handles. One mutex: the runtime is called from any host thread.
struct State {
  std::mutex mutex;
  AllocationTable device_allocations;
  AllocationTable host_allocations;               // pinned (cudaMallocHost)
  std::map<std::uintptr_t, std::size_t> modeled;  // modeled start -> bytes, of both tables
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::map<const void*, KernelRecord> kernels;
  std::size_t allocated = 0;
  Schedule schedule = detail::settings().schedule;
  std::uint64_t launches = 0;
};

State& state();

// runtime.cpp
cudaError_t fail(cudaError_t error) noexcept;
cudaError_t check_device() noexcept;
cudaError_t check_usable() noexcept;
cudaError_t wait_for(std::uint64_t seq) noexcept;

// runtime_memory.cpp
std::uintptr_t place_modeled(State& s, std::size_t bytes);
bool inside(const AllocationTable& table, const void* pointer, std::size_t bytes);
bool inside_device_allocation(const State& s, const void* pointer, std::size_t bytes);
void* allocate_device_memory(std::size_t bytes, Allocation& allocation) noexcept;
void release(std::uintptr_t start, const Allocation& allocation) noexcept;

// runtime_streams.cpp
bool blocking(const CUstream_st* stream);
bool valid_stream(const State& s, cudaStream_t stream);
void note(cudaStream_t stream, StreamOp op, const char* kernel = "") noexcept;
void note_host_wait(std::uint64_t seq) noexcept;

// runtime_launch.cpp
KernelRecord& kernel_record(State& s, const void* kernel);
std::optional<KernelFigures> figures_of(const KernelRecord& record);
bool block_fits(const GpuSpec& spec, const KernelFigures& figures, int threads);
int max_threads_per_block(const GpuSpec& spec, const KernelFigures& figures);

}  // namespace gpulab::sim
