#include "gpulab/sim/runtime.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "asan.hpp"
#include "clock.hpp"
#include "counting.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"
#include "queue.hpp"
#include "symbols.hpp"

// Under AddressSanitizer (GPULAB_SIM_ASAN) device memory comes from operator new, which ASan pads
// and checks; otherwise from mmap, with a guard page after each allocation (see
// allocate_device_memory).

// The version of the CUDA API this runtime follows (13.0), as cudaRuntimeGetVersion encodes it.
namespace {
constexpr int kCudaApiVersion = 13000;
}

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
namespace {

// The simulated device: one spec, chosen once.
struct Device {
  GpuSpec spec;
  std::string error;  // why the device cannot be used; empty when it can
  std::size_t capacity_bytes = 0;
  Schedule schedule;                  // GPULAB_SIM_SCHEDULE
  ClockMode clock = ClockMode::host;  // GPULAB_SIM_CLOCK
};

const Device& device() {
  // Never destroyed: the device thread, which reads the spec, outlives main.
  static const Device& instance = *new Device([] {
    Device d;
    SimSpecChoice choice = choose_sim_spec(sim_spec_request());
    if (choice.spec) {
      d.spec = std::move(*choice.spec);
    } else {
      d.error = std::move(choice.error);
    }
    d.capacity_bytes = static_cast<std::size_t>(d.spec.memory_bytes);
    if (const char* limit = std::getenv("GPULAB_SIM_MEMORY_BYTES"); limit != nullptr) {
      const auto bytes = detail::parse_decimal(limit);
      if (!bytes || *bytes == 0) {
        d.error = std::string("GPULAB_SIM_MEMORY_BYTES must be a positive byte count, not '") +
                  limit + "'";
      } else {
        d.capacity_bytes = static_cast<std::size_t>(*bytes);
      }
    }
    if (const char* file = std::getenv("GPULAB_SIM_COUNTERS"); file != nullptr && *file != '\0') {
      if (!counting_available()) {
        d.error = "GPULAB_SIM_COUNTERS is set, but " + counting_unavailable_reason();
      } else if (std::FILE* out = std::fopen(file, "a"); out == nullptr) {
        d.error = std::string("GPULAB_SIM_COUNTERS: cannot write '") + file + "'";
      } else {
        std::fclose(out);
      }
    }
    if (const char* text = std::getenv("GPULAB_SIM_CLOCK"); text != nullptr && *text != '\0') {
      if (std::string_view(text) == "modeled") {
        d.clock = ClockMode::modeled;
        if (!counting_available()) {
          d.error = "GPULAB_SIM_CLOCK=modeled needs memory counting, but " +
                    counting_unavailable_reason();
        }
      } else if (std::string_view(text) != "host") {
        d.error = std::string("GPULAB_SIM_CLOCK must be 'host' or 'modeled', not '") + text + "'";
      }
    }
    if (const char* control = std::getenv("GPULAB_SIM_CACHE_CONTROL");
        control != nullptr && std::string_view(control) != "all" &&
        std::string_view(control) != "none") {
      d.error =
          std::string("GPULAB_SIM_CACHE_CONTROL must be 'all' or 'none', not '") + control + "'";
    }
    if (const char* text = std::getenv("GPULAB_SIM_SCHEDULE"); text != nullptr && *text != '\0') {
      std::string why;
      if (!Schedule::parse(text, d.schedule, why)) {
        d.error = "GPULAB_SIM_SCHEDULE: " + why;
      }
    }
    return d;
  }());
  return instance;
}

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

DeviceRanges& device_ranges() {
  static DeviceRanges& ranges = *new DeviceRanges();  // never destroyed: used after main
  return ranges;
}

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
  Schedule schedule = device().schedule;
  std::uint64_t launches = 0;
};

State& state() {
  static State instance;
  return instance;
}

// The record of `kernel`, its function symbol's figures looked up the first time. Under
// State::mutex.
KernelRecord& kernel_record(State& s, const void* kernel) {
  KernelRecord& record = s.kernels[kernel];
  if (!record.given && !record.looked_up) {
    record.looked_up = true;
    const GpuSpec& spec = device().spec;
    if (const auto symbol = detail::function_symbol_at(kernel)) {
      if (const auto entry =
              find_kernel_symbol(symbol->name, symbol->source, spec.cc_major, spec.cc_minor)) {
        record.found =
            KernelFigures{entry->registers, entry->static_shared_bytes, entry->local_bytes};
      }
    }
  }
  return record;
}

std::optional<KernelFigures> figures_of(const KernelRecord& record) {
  return record.given ? record.given : record.found;
}

// Whether a block of `threads` threads of a kernel of these figures fits on an SM of `spec`: not
// when it would need more registers than one block may have. True when the registers are unknown
// or the occupancy calculator cannot say.
bool block_fits(const GpuSpec& spec, const KernelFigures& figures, int threads) {
  if (figures.registers == 0 || !occupancy_available()) {
    return true;
  }
  KernelResources resources;
  resources.registers_per_thread = figures.registers;
  resources.static_shared_bytes = figures.static_shared_bytes;
  try {
    return compute_occupancy(spec, resources, threads, 0).active_blocks_per_sm > 0;
  } catch (const std::invalid_argument&) {  // more registers than a block this large may have
    return false;
  } catch (const std::runtime_error&) {  // a compute capability the calculator lacks
    return true;
  }
}

// cudaFuncAttributes::maxThreadsPerBlock: the largest block, in whole warps up to the spec's
// limit, that fits.
int max_threads_per_block(const GpuSpec& spec, const KernelFigures& figures) {
  int threads = spec.max_threads_per_block;
  while (threads > spec.warp_size && !block_fits(spec, figures, threads)) {
    threads -= spec.warp_size;
  }
  return threads;
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

thread_local cudaError_t last_error = cudaSuccess;

// Records a failure as the thread's last error, like the CUDA runtime does.
cudaError_t fail(cudaError_t error) noexcept {
  last_error = error;
  return error;
}

cudaError_t check_device() noexcept {
  return device().error.empty() ? cudaSuccess : fail(cudaErrorInitializationError);
}

// The device is configured and holds no sticky error (a failed kernel's).
cudaError_t check_usable() noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  const cudaError_t sticky = detail::DeviceQueue::instance().sticky();
  return sticky == cudaSuccess ? cudaSuccess : fail(sticky);
}

void note_host_wait(std::uint64_t seq) noexcept;

// Waits until the queue has run everything up to `seq`; then the sticky error, if any.
cudaError_t wait_for(std::uint64_t seq) noexcept {
  detail::DeviceQueue::instance().wait(seq);
  note_host_wait(seq);
  return check_usable();
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

// Whether work on `stream` (a live stream, or the legacy one) synchronizes with the legacy stream.
bool blocking(const CUstream_st* stream) {
  return stream == nullptr || (stream->flags & cudaStreamNonBlocking) == 0;
}

bool valid_stream(const State& s, cudaStream_t stream) {
  return stream == nullptr || s.streams.contains(stream);
}

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

// Creates a handle and registers it as live (streams and events follow the same contract).
template <class Handle>
cudaError_t create_handle(std::set<Handle*> State::*live, Handle** out, Handle initial) noexcept {
  if (const cudaError_t error = check_usable(); error != cudaSuccess) {
    return error;
  }
  auto* created = new (std::nothrow) Handle(initial);
  if (created == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  State& s = state();
  std::scoped_lock lock(s.mutex);
  (s.*live).insert(created);
  *out = created;
  return cudaSuccess;
}

// Unregisters and deletes a live handle; anything else is an invalid handle.
template <class Handle>
cudaError_t destroy_handle(std::set<Handle*> State::*live, Handle* handle) noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  if (handle == nullptr || (s.*live).erase(handle) == 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  delete handle;
  return cudaSuccess;
}

struct ErrorText {
  cudaError_t error;
  const char* name;
  const char* description;
};

// Names and descriptions as the CUDA runtime prints them.
constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorStubLibrary, "cudaErrorStubLibrary", "CUDA driver is a stub library"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver",
     "API call is not supported in the installed CUDA driver"},
    {cudaErrorDevicesUnavailable, "cudaErrorDevicesUnavailable",
     "CUDA-capable device(s) is/are busy or unavailable"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidKernelImage, "cudaErrorInvalidKernelImage", "device kernel image is invalid"},
    {cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
     "no kernel image is available for execution on the device"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorIllegalInstruction, "cudaErrorIllegalInstruction",
     "an illegal instruction was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorInvalidPc, "cudaErrorInvalidPc", "invalid program counter"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorSystemDriverMismatch, "cudaErrorSystemDriverMismatch",
     "system has unsupported display driver / cuda driver combination"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* find_error(cudaError_t error) {
  const auto* it = std::find_if(std::begin(kErrors), std::end(kErrors),
                                [error](const ErrorText& e) { return e.error == error; });
  return it == std::end(kErrors) ? nullptr : it;
}

int clamp_int(std::uint64_t value) {
  return static_cast<int>(std::min<std::uint64_t>(value, 0x7fffffff));
}

}  // namespace

const std::string& configuration_error() {
  return device().error;
}

std::size_t allocated_bytes() noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return s.allocated;
}

namespace {

// One operation noted on a stream, and the queue's sequence number when it was noted.
struct NotedEntry {
  StreamEntry entry;
  std::uint64_t seq = 0;
};

// What set_stream_recording keeps: per stream, the operations enqueued on it, in order.
struct StreamRecorder {
  std::mutex mutex;
  std::atomic<bool> on{false};  // read without the lock by every enqueue
  std::map<cudaStream_t, std::vector<NotedEntry>> entries;
};

StreamRecorder& recorder() {
  static StreamRecorder* const instance = new StreamRecorder();  // outlives static destructors
  return *instance;
}

// Notes an operation the runtime has just accepted on `stream`, while recording is on.
void note(cudaStream_t stream, StreamOp op, const char* kernel = "") noexcept {
  StreamRecorder& r = recorder();
  if (!r.on.load(std::memory_order_relaxed)) {
    return;  // the usual case: no lock on the launch path
  }
  std::scoped_lock lock(r.mutex);
  if (!r.on) {
    return;
  }
  try {
    r.entries[stream].push_back({{op, kernel}, detail::DeviceQueue::instance().last(stream)});
  } catch (const std::bad_alloc&) {
    r.on = false;  // a record with holes would mislead: stop recording instead
    r.entries.clear();
  }
}

// Notes, after the host waited for everything up to `seq`, a host wait on each recorded stream
// whose last operation that covers (once: two waits in a row are one).
void note_host_wait(std::uint64_t seq) noexcept {
  StreamRecorder& r = recorder();
  if (!r.on.load(std::memory_order_relaxed)) {
    return;
  }
  std::scoped_lock lock(r.mutex);
  if (!r.on) {
    return;
  }
  try {
    for (auto& [stream, noted] : r.entries) {
      if (!noted.empty() && noted.back().entry.op != StreamOp::host_wait &&
          noted.back().seq <= seq) {
        noted.push_back({{StreamOp::host_wait, ""}, seq});
      }
    }
  } catch (const std::bad_alloc&) {
    r.on = false;
    r.entries.clear();
  }
}

}  // namespace

void set_stream_recording(bool on) {
  StreamRecorder& r = recorder();
  std::scoped_lock lock(r.mutex);
  if (on) {
    r.entries.clear();
  }
  r.on = on;
}

std::vector<StreamEntry> stream_entries(cudaStream_t stream) {
  StreamRecorder& r = recorder();
  std::scoped_lock lock(r.mutex);
  std::vector<StreamEntry> entries;
  if (const auto it = r.entries.find(stream); it != r.entries.end()) {
    for (const NotedEntry& noted : it->second) {
      entries.push_back(noted.entry);
    }
  }
  return entries;
}

std::string describe(const StreamEntry& entry) {
  switch (entry.op) {
    case StreamOp::kernel:
      return "kernel " + entry.kernel;
    case StreamOp::event_record:
      return "event record";
    case StreamOp::event_wait:
      return "event wait";
    case StreamOp::memcpy:
      return "memcpy";
    case StreamOp::memset:
      return "memset";
    case StreamOp::l2_reset:
      return "L2 reset";
    case StreamOp::host_function:
      return "host function";
    case StreamOp::host_wait:
      return "host wait";
  }
  return "?";
}

}  // namespace gpulab::sim

using gpulab::sim::check_device;
using gpulab::sim::fail;
using gpulab::sim::state;

const char* cudaGetErrorName(cudaError_t error) noexcept {
  const auto* text = gpulab::sim::find_error(error);
  return text != nullptr ? text->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) noexcept {
  const auto* text = gpulab::sim::find_error(error);
  return text != nullptr ? text->description : "unrecognized error code";
}

// A sticky error (from a failed kernel) is returned by both and never cleared, as on a GPU.
cudaError_t cudaGetLastError() noexcept {
  const cudaError_t sticky = gpulab::sim::detail::DeviceQueue::instance().sticky();
  const cudaError_t last = std::exchange(gpulab::sim::last_error, cudaSuccess);
  return sticky != cudaSuccess ? sticky : last;
}

cudaError_t cudaPeekAtLastError() noexcept {
  const cudaError_t sticky = gpulab::sim::detail::DeviceQueue::instance().sticky();
  return sticky != cudaSuccess ? sticky : gpulab::sim::last_error;
}

cudaError_t cudaDriverGetVersion(int* version) noexcept {
  if (version == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *version = kCudaApiVersion;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) noexcept {
  return cudaDriverGetVersion(version);
}

cudaError_t cudaGetDeviceCount(int* count) noexcept {
  if (count == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *count = 0;
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) noexcept {
  if (device == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *device = 0;
  return check_device();
}

cudaError_t cudaSetDevice(int device) noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* props, int device) noexcept {
  if (props == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  if (device != 0) {
    return fail(cudaErrorInvalidDevice);
  }
  const gpulab::GpuSpec& spec = gpulab::sim::device().spec;
  *props = cudaDeviceProp{};
  const std::string name = "gpulab sim (" + spec.name + ")";
  std::snprintf(props->name, sizeof props->name, "%s", name.c_str());
  props->totalGlobalMem = gpulab::sim::device().capacity_bytes;
  props->sharedMemPerBlock = 48 * 1024;  // without opt-in, on every architecture
  props->regsPerBlock = spec.registers_per_sm;
  props->warpSize = spec.warp_size;
  props->maxThreadsPerBlock = spec.max_threads_per_block;
  props->maxThreadsDim[0] = 1024;
  props->maxThreadsDim[1] = 1024;
  props->maxThreadsDim[2] = 64;
  props->maxGridSize[0] = 0x7fffffff;
  props->maxGridSize[1] = 65535;
  props->maxGridSize[2] = 65535;
  props->totalConstMem = 64 * 1024;
  props->major = spec.cc_major;
  props->minor = spec.cc_minor;
  props->multiProcessorCount = spec.sm_count;
  props->memoryBusWidth = spec.memory_bus_width_bits;
  props->l2CacheSize = gpulab::sim::clamp_int(spec.l2_bytes);
  props->maxThreadsPerMultiProcessor = spec.max_threads_per_sm;
  props->sharedMemPerMultiprocessor = static_cast<std::size_t>(spec.shared_memory_per_sm_bytes);
  props->regsPerMultiprocessor = spec.registers_per_sm;
  props->sharedMemPerBlockOptin =
      static_cast<std::size_t>(spec.shared_memory_per_block_optin_bytes);
  props->maxBlocksPerMultiProcessor = spec.max_blocks_per_sm;
  props->reservedSharedMemPerBlock =
      static_cast<std::size_t>(spec.reserved_shared_memory_per_block_bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) noexcept {
  if (value == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  cudaDeviceProp props{};
  if (const cudaError_t error = cudaGetDeviceProperties(&props, device); error != cudaSuccess) {
    return error;
  }
  const gpulab::GpuSpec& spec = gpulab::sim::device().spec;
  // Memory clock from bandwidth and bus width: bandwidth = 2 (double data rate) x clock x bytes.
  const double memory_clock_khz =
      spec.memory_bus_width_bits > 0
          ? spec.dram_bandwidth_gb_s * 1e9 / (2.0 * spec.memory_bus_width_bits / 8.0) / 1e3
          : 0.0;
  switch (attribute) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = props.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxBlockDimX:
      *value = props.maxThreadsDim[0];
      break;
    case cudaDevAttrMaxBlockDimY:
      *value = props.maxThreadsDim[1];
      break;
    case cudaDevAttrMaxBlockDimZ:
      *value = props.maxThreadsDim[2];
      break;
    case cudaDevAttrMaxGridDimX:
      *value = props.maxGridSize[0];
      break;
    case cudaDevAttrMaxGridDimY:
      *value = props.maxGridSize[1];
      break;
    case cudaDevAttrMaxGridDimZ:
      *value = props.maxGridSize[2];
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(props.sharedMemPerBlock);
      break;
    case cudaDevAttrTotalConstantMemory:
      *value = static_cast<int>(props.totalConstMem);
      break;
    case cudaDevAttrWarpSize:
      *value = props.warpSize;
      break;
    case cudaDevAttrMaxRegistersPerBlock:
      *value = props.regsPerBlock;
      break;
    case cudaDevAttrClockRate:
      *value = static_cast<int>(spec.boost_clock_mhz * 1000.0);
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = props.multiProcessorCount;
      break;
    case cudaDevAttrMemoryClockRate:
      *value = static_cast<int>(memory_clock_khz + 0.5);
      break;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = props.memoryBusWidth;
      break;
    case cudaDevAttrL2CacheSize:
      *value = props.l2CacheSize;
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = props.maxThreadsPerMultiProcessor;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = props.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = props.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = static_cast<int>(props.sharedMemPerMultiprocessor);
      break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      *value = props.regsPerMultiprocessor;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(props.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      *value = props.maxBlocksPerMultiProcessor;
      break;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      *value = static_cast<int>(props.reservedSharedMemPerBlock);
      break;
    default:
      return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  const cudaError_t error =
      gpulab::sim::wait_for(gpulab::sim::detail::DeviceQueue::instance().last_any());
  gpulab::sim::detail::host_waited_for_device();
  return error;
}

cudaError_t cudaDeviceReset() noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  queue.wait(queue.last_any());
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  for (const auto& [address, allocation] : s.device_allocations) {
    gpulab::note_device_free(reinterpret_cast<const void*>(address));
    gpulab::sim::release(address, allocation);
  }
  for (const auto& [address, allocation] : s.host_allocations) {
    gpulab::sim::release(address, allocation);
  }
  for (CUstream_st* stream : s.streams) {
    queue.forget(stream);
    delete stream;
  }
  for (CUevent_st* event : s.events) {
    delete event;
  }
  s.device_allocations.clear();
  gpulab::sim::device_ranges().clear();
  s.host_allocations.clear();
  s.modeled.clear();
  s.streams.clear();
  s.events.clear();
  s.allocated = 0;
  queue.clear_sticky();
  gpulab::sim::last_error = cudaSuccess;
  return cudaSuccess;
}

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

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) noexcept {
  if (stream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) {
    return fail(cudaErrorInvalidValue);
  }
  return gpulab::sim::create_handle(&gpulab::sim::State::streams, stream, CUstream_st{flags});
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) noexcept {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

// As on a GPU, destroying a stream with queued work returns at once; the work still runs.
cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept {
  gpulab::sim::detail::DeviceQueue::instance().forget(stream);
  return gpulab::sim::destroy_handle(&gpulab::sim::State::streams, stream);
}

namespace {

// The last queue position of a live stream, or an invalid-handle error.
cudaError_t stream_position(cudaStream_t stream, std::uint64_t& seq) noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
  }
  // The legacy default stream waits for every stream; other streams only for their own work.
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  seq = stream == nullptr ? queue.last_any() : queue.last(stream);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept {
  std::uint64_t seq = 0;
  if (const cudaError_t error = stream_position(stream, seq); error != cudaSuccess) {
    return error;
  }
  const cudaError_t error = gpulab::sim::wait_for(seq);
  gpulab::sim::detail::host_waited_for_stream(stream);
  return error;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) noexcept {
  std::uint64_t seq = 0;
  if (const cudaError_t error = stream_position(stream, seq); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (!gpulab::sim::detail::DeviceQueue::instance().done(seq)) {
    return cudaErrorNotReady;
  }
  gpulab::sim::note_host_wait(seq);  // the host knows the stream's work is done: as if it waited
  gpulab::sim::detail::host_waited_for_stream(stream);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (fn == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
  }
  const cudaError_t error =
      gpulab::sim::detail::enqueue(stream, [fn, user_data] { fn(user_data); });
  if (error == cudaSuccess) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::host_function);
  }
  return error;
}

// One FIFO runs all streams in order, so work queued after an event's record always runs after it.
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  std::shared_ptr<EventRecord> record;
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!s.events.contains(event) || !gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
    if (flags != 0) {
      return fail(cudaErrorInvalidValue);
    }
    record = event->record;
  }
  if (record == nullptr) {
    return cudaSuccess;  // never recorded: nothing to wait for
  }
  // One FIFO runs everything in order; only the modeled clock has anything to wait for.
  const cudaError_t error = gpulab::sim::detail::enqueue(stream, [stream, record] {
    if (record->modeled) {
      gpulab::sim::detail::modeled_wait(stream, record->modeled_s);
    }
  });
  if (error == cudaSuccess) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::event_wait);
  }
  return error;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept {
  if (event == nullptr || (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming)) != 0) {
    return fail(cudaErrorInvalidValue);
  }
  return gpulab::sim::create_handle(&gpulab::sim::State::events, event, CUevent_st{flags, {}});
}

cudaError_t cudaEventCreate(cudaEvent_t* event) noexcept {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) noexcept {
  return gpulab::sim::destroy_handle(&gpulab::sim::State::events, event);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  const double issue_s = gpulab::sim::detail::host_now();
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(event) || !gpulab::sim::valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  auto record = std::make_shared<EventRecord>();
  record->seq = gpulab::sim::detail::DeviceQueue::instance().push(
      stream, [record, stream, issue_s, blocking = gpulab::sim::blocking(stream)] {
        record->time = gpulab::sim::detail::DeviceQueue::instance().ready_time();
        if (gpulab::sim::detail::modeled_clock()) {
          record->modeled = true;
          record->modeled_s = gpulab::sim::detail::modeled_now(stream, blocking, issue_s);
        }
      });
  event->record = std::move(record);
  gpulab::sim::note(stream, gpulab::sim::StreamOp::event_record);
  return cudaSuccess;
}

namespace {

// The queue position of an event's last record (0: never recorded), or an invalid-handle error.
cudaError_t event_record(cudaEvent_t event, std::shared_ptr<EventRecord>& record) noexcept {
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(event)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  record = event->record;
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept {
  std::shared_ptr<EventRecord> record;
  if (const cudaError_t error = event_record(event, record); error != cudaSuccess) {
    return error;
  }
  const cudaError_t error = gpulab::sim::wait_for(record ? record->seq : 0);
  if (record != nullptr && record->modeled) {
    gpulab::sim::detail::host_waited_until(record->modeled_s);
  }
  return error;
}

cudaError_t cudaEventQuery(cudaEvent_t event) noexcept {
  std::shared_ptr<EventRecord> record;
  if (const cudaError_t error = event_record(event, record); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  // Never recorded: cudaSuccess, as the CUDA runtime documents.
  if (record == nullptr) {
    return cudaSuccess;
  }
  if (!gpulab::sim::detail::DeviceQueue::instance().done(record->seq)) {
    return cudaErrorNotReady;
  }
  gpulab::sim::note_host_wait(record->seq);  // the host knows the event is done: as if it waited
  if (record->modeled) {
    gpulab::sim::detail::host_waited_until(record->modeled_s);
  }
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) noexcept {
  if (ms == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  std::shared_ptr<EventRecord> first;
  std::shared_ptr<EventRecord> second;
  if (const cudaError_t error = event_record(start, first); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = event_record(stop, second); error != cudaSuccess) {
    return error;
  }
  // As on a GPU: both events recorded, with timing enabled, and both completed.
  if (((start->flags | stop->flags) & cudaEventDisableTiming) != 0 || !first || !second) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  if (!queue.done(first->seq) || !queue.done(second->seq)) {
    return fail(cudaErrorNotReady);
  }
  if (first->modeled != second->modeled) {
    return fail(cudaErrorInvalidResourceHandle);  // one on each clock: no common time base
  }
  *ms = first->modeled
            ? static_cast<float>((second->modeled_s - first->modeled_s) * 1e3)
            : std::chrono::duration<float, std::milli>(second->time - first->time).count();
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Kernels
// ------------------------------------------------------------------------------------------------

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* kernel) noexcept {
  if (attributes == nullptr || kernel == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  const gpulab::GpuSpec& spec = gpulab::sim::device().spec;
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  const gpulab::sim::KernelRecord& record = gpulab::sim::kernel_record(s, kernel);
  const gpulab::sim::KernelFigures figures =
      gpulab::sim::figures_of(record).value_or(gpulab::sim::KernelFigures{});
  *attributes = cudaFuncAttributes{};
  attributes->sharedSizeBytes = figures.static_shared_bytes;
  attributes->localSizeBytes = figures.local_bytes;
  attributes->maxThreadsPerBlock = gpulab::sim::max_threads_per_block(spec, figures);
  attributes->numRegs = figures.registers;
  attributes->ptxVersion = spec.cc_major * 10 + spec.cc_minor;
  attributes->binaryVersion = attributes->ptxVersion;
  attributes->maxDynamicSharedSizeBytes = record.max_dynamic_shared_bytes;
  attributes->preferredShmemCarveout = record.carveout;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attribute,
                                 int value) noexcept {
  if (kernel == nullptr) {
    return fail(cudaErrorInvalidDeviceFunction);
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  const gpulab::GpuSpec& spec = gpulab::sim::device().spec;
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  gpulab::sim::KernelRecord& record = gpulab::sim::kernel_record(s, kernel);
  switch (attribute) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: {
      const auto static_bytes = gpulab::sim::figures_of(record)
                                    .value_or(gpulab::sim::KernelFigures{})
                                    .static_shared_bytes;
      const auto limit = static_cast<std::int64_t>(spec.shared_memory_per_block_optin_bytes) -
                         static_cast<std::int64_t>(static_bytes);
      if (value < 0 || value > limit) {
        return fail(cudaErrorInvalidValue);
      }
      record.max_dynamic_shared_bytes = value;
      return cudaSuccess;
    }
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100) {
        return fail(cudaErrorInvalidValue);
      }
      record.carveout = value;
      return cudaSuccess;
  }
  return fail(cudaErrorInvalidValue);
}

// The project's one occupancy calculation (gpulab::compute_occupancy: the toolkit's host-only
// cuda_occupancy.h, which gpulab occupancy and the viewer use too) on the simulated device's spec
// and the kernel's attributes as cudaFuncGetAttributes reports them.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int* blocks, const void* kernel, int block_size, std::size_t dynamic_shared_bytes) noexcept {
  if (blocks == nullptr || kernel == nullptr || block_size <= 0) {
    return fail(cudaErrorInvalidValue);
  }
  *blocks = 0;
  cudaFuncAttributes attributes{};
  if (const cudaError_t error = cudaFuncGetAttributes(&attributes, kernel); error != cudaSuccess) {
    return error;
  }
  // compute_occupancy assumes the kernel opted in to the spec's whole shared memory per block;
  // the runtime answers for the kernel as its attributes stand. Dynamic shared memory above its
  // maxDynamicSharedSizeBytes (48 KiB until cudaFuncSetAttribute raises it) cannot launch (see
  // the launch check), so no block is resident: 0, as cuda_occupancy.h gives for the attributes
  // cudaFuncGetAttributes reports.
  if (dynamic_shared_bytes > static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes)) {
    return cudaSuccess;
  }
  const gpulab::KernelResources resources{attributes.numRegs,
                                          static_cast<std::uint64_t>(attributes.sharedSizeBytes),
                                          attributes.maxThreadsPerBlock};
  try {
    *blocks = gpulab::compute_occupancy(gpulab::sim::device().spec, resources, block_size,
                                        dynamic_shared_bytes)
                  .active_blocks_per_sm;
    return cudaSuccess;
  } catch (const std::invalid_argument&) {
    // A configuration that cannot launch (a block above the thread or register limits): no block
    // of it is ever resident. cuda_occupancy.h answers 0 for these too, without an error.
    return cudaSuccess;
  } catch (const std::runtime_error&) {  // no cuda_occupancy.h in this build, or an unknown CC
    return fail(cudaErrorNotSupported);
  } catch (const std::bad_alloc&) {
    return fail(cudaErrorMemoryAllocation);
  }
}

namespace gpulab::sim {

bool Schedule::parse(std::string_view text, Schedule& out, std::string& error) {
  if (text == "forward" || text == "reverse") {
    out = Schedule{text == "forward" ? Order::forward : Order::reverse, 0};
    return true;
  }
  constexpr std::string_view prefix = "shuffle:";
  if (text.starts_with(prefix)) {
    if (const auto seed = detail::parse_decimal(text.substr(prefix.size()))) {
      out = Schedule{Order::shuffle, *seed};
      return true;
    }
  }
  error = "a schedule is forward, reverse or shuffle:<seed> (a decimal number), not '" +
          std::string(text) + "'";
  return false;
}

std::string Schedule::to_string() const {
  switch (order) {
    case Order::forward:
      return "forward";
    case Order::reverse:
      return "reverse";
    case Order::shuffle:
      return "shuffle:" + std::to_string(seed);
  }
  return "forward";
}

Schedule schedule() noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return s.schedule;
}

void set_schedule(const Schedule& schedule) noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  s.schedule = schedule;
}

std::string kernel_failure() {
  return detail::DeviceQueue::instance().sticky_message();
}

unsigned worker_count() noexcept {
  static const unsigned count = [] {
    unsigned value = std::max(1u, std::thread::hardware_concurrency());
    if (const char* text = std::getenv("GPULAB_SIM_WORKERS"); text != nullptr) {
      const auto parsed = detail::parse_decimal(text);
      if (parsed && *parsed >= 1 && *parsed <= 1024) {
        value = static_cast<unsigned>(*parsed);
      } else {
        std::fprintf(stderr, "gpulab sim: ignoring GPULAB_SIM_WORKERS='%s' (1 to 1024)\n", text);
      }
    }
    return value;
  }();
  return count;
}

void set_kernel_resources(const void* kernel, int registers, std::size_t static_shared_bytes) {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  s.kernels[kernel].given = KernelFigures{registers, static_shared_bytes, 0};
}

namespace {
std::atomic<ClockMode>& clock_setting() {
  static std::atomic<ClockMode> setting{device().clock};
  return setting;
}
}  // namespace

ClockMode clock_mode() noexcept {
  return clock_setting().load(std::memory_order_relaxed);
}

bool set_clock_mode(ClockMode mode) noexcept {
  if (mode == ClockMode::modeled && !counting_available()) {
    return false;
  }
  clock_setting().store(mode, std::memory_order_relaxed);
  return true;
}

std::string clock_description() {
  return clock_mode() == ClockMode::modeled
             ? "modeled (" + device().spec.name + ") from counted memory traffic and instructions"
             : std::string("CPU time of the simulation");
}

ScopedCounting::ScopedCounting() : previous_(counting()) {
  if (!set_counting(true)) {
    throw std::runtime_error(counting_unavailable_reason());
  }
}

cudaError_t reset_modeled_l2(cudaStream_t stream) noexcept {
  const cudaError_t error = detail::enqueue(stream, [] { detail::reset_l2_model(); });
  if (error == cudaSuccess) {
    note(stream, StreamOp::l2_reset);
  }
  return error;
}

std::vector<CountedLaunch> count_launches(const std::function<void()>& work) {
  clear_counted_launches();
  {
    const ScopedCounting on;
    work();
    if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
      clear_counted_launches();
      throw std::runtime_error(std::string("the counted work failed: ") +
                               cudaGetErrorString(error));
    }
  }
  std::vector<CountedLaunch> launches = counted_launches();
  clear_counted_launches();
  return launches;
}

namespace detail {

const GpuSpec& device_spec() {
  return device().spec;
}

bool stream_is_blocking(cudaStream_t stream) {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return !s.streams.contains(stream) || blocking(stream);
}

std::optional<KernelResources> launched_kernel_resources(const void* kernel,
                                                         std::string_view function,
                                                         std::string_view launch_file) {
  State& s = state();
  const auto resources = [](const KernelFigures& figures) {
    KernelResources r;
    r.registers_per_thread = figures.registers;
    r.static_shared_bytes = figures.static_shared_bytes;
    return r;
  };
  if (kernel != nullptr) {
    std::scoped_lock lock(s.mutex);
    if (const auto it = s.kernels.find(kernel); it != s.kernels.end() && it->second.given) {
      return resources(*it->second.given);
    }
  }
  const GpuSpec& spec = device().spec;
  if (const auto entry =
          find_launched_kernel(function, launch_file, spec.cc_major, spec.cc_minor)) {
    return resources_of(*entry);
  }
  // A launch through an expression that names no one function (a pointer variable): the
  // function's own symbol says which kernel it is.
  if (kernel != nullptr) {
    std::scoped_lock lock(s.mutex);
    if (const auto figures = figures_of(kernel_record(s, kernel))) {
      return resources(*figures);
    }
  }
  if (const auto why = kernel_source_failure(launch_file)) {
    static std::mutex said_mutex;
    static std::set<std::string, std::less<>> said;
    const std::scoped_lock lock(said_mutex);
    if (said.insert(std::string(launch_file)).second) {
      std::fprintf(stderr,
                   "gpulab sim: %.*s: nvcc cannot compile this file, so the modeled clock "
                   "assumes %d registers per thread and no static shared memory for its kernels "
                   "(nvcc: %.*s)\n",
                   static_cast<int>(launch_file.size()), launch_file.data(), kAssumedRegisters,
                   static_cast<int>(why->size()), why->data());
    }
  }
  return std::nullopt;
}

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

cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) noexcept {
  if (const cudaError_t error = check_usable(); error != cudaSuccess) {
    return error;
  }
  State& s = state();
  std::scoped_lock lock(s.mutex);
  if (!valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  try {
    DeviceQueue::instance().push(stream, std::move(work));
  } catch (const std::bad_alloc&) {
    return fail(cudaErrorMemoryAllocation);
  }
  return cudaSuccess;
}

namespace {

// The launch checks a GPU makes before running anything. An impossible configuration fails with
// cudaErrorInvalidValue, as the CUDA 13.0 runtime's launches did on an H200 (CUDA's documentation,
// and earlier runtimes, name cudaErrorInvalidConfiguration).
cudaError_t check_launch(const LaunchSpec& spec) {
  const dim3 b = spec.block;
  const dim3 g = spec.grid;
  const std::uint64_t threads = std::uint64_t{b.x} * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024 ||
      g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) {
    return cudaErrorInvalidValue;
  }
  const KernelRecord record =
      spec.kernel != nullptr ? kernel_record(state(), spec.kernel) : KernelRecord{};
  if (spec.shared_bytes > static_cast<std::size_t>(record.max_dynamic_shared_bytes)) {
    return cudaErrorInvalidValue;
  }
  // A block that needs more registers than one block may have: "too many resources requested
  // for launch".
  if (const auto figures = figures_of(record);
      figures && !block_fits(device().spec, *figures, static_cast<int>(threads))) {
    return cudaErrorLaunchOutOfResources;
  }
  return cudaSuccess;
}

}  // namespace

std::uint64_t next_launch_id() {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return ++s.launches;
}

void submit_launch(const LaunchSpec& spec, KernelCall call) noexcept {
  if (inside_kernel()) {  // nvcc rejects this without relocatable device code
    call.destroy(call.payload);
    fail_kernel(false, "a kernel launch inside a kernel (dynamic parallelism) is not simulated",
                spec.where);
  }
  try {
    Schedule order;
    {
      State& s = state();
      std::scoped_lock lock(s.mutex);
      order = s.schedule;
    }
    const std::uint64_t id = next_launch_id();
    auto launch = std::make_shared<KernelLaunch>(spec, call, order, id,
                                                 counting() || modeled_clock(), counting());
    if (check_usable() != cudaSuccess) {
      return;
    }
    {
      State& s = state();
      std::scoped_lock lock(s.mutex);
      if (const cudaError_t error = check_launch(spec); error != cudaSuccess) {
        fail(error);
        return;
      }
    }
    const cudaError_t queued = enqueue_timed(spec.stream, [launch](double start_s) {
      launch->start_cycles =
          static_cast<std::uint64_t>(start_s * device_spec().boost_clock_mhz * 1e6);
      std::optional<CountedLaunch> counted;
      if (auto failure = execute_kernel(*launch, counted)) {
        DeviceQueue::instance().set_sticky(failure->error, std::move(failure->message));
        return 0.0;
      }
      return counted ? modeled_kernel_seconds(*counted) : 0.0;
    });
    if (queued == cudaSuccess) {
      note(spec.stream, StreamOp::kernel, spec.name);
    }
  } catch (const std::bad_alloc&) {
    fail(cudaErrorMemoryAllocation);
  }
}

}  // namespace detail
}  // namespace gpulab::sim
