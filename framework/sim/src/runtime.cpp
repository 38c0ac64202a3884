#include "gpulab/sim/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "gpulab/core/specs.hpp"

// The version of the CUDA API this runtime follows (13.0), as cudaRuntimeGetVersion encodes it.
namespace {
constexpr int kCudaApiVersion = 13000;
}

struct CUstream_st {
  unsigned int flags = 0;
};

struct CUevent_st {
  unsigned int flags = 0;
  std::optional<std::chrono::steady_clock::time_point> recorded_at;
};

namespace gpulab::sim {
namespace {

// The simulated device: one spec, chosen once.
struct Device {
  GpuSpec spec;
  std::string error;  // why the device cannot be used; empty when it can
  std::size_t capacity_bytes = 0;
};

const Device& device() {
  static const Device instance = [] {
    Device d;
    SimSpecChoice choice = choose_sim_spec(sim_spec_request());
    if (choice.spec) {
      d.spec = std::move(*choice.spec);
    } else {
      d.error = std::move(choice.error);
    }
    d.capacity_bytes = static_cast<std::size_t>(d.spec.memory_bytes);
    if (const char* limit = std::getenv("GPULAB_SIM_MEMORY_BYTES"); limit != nullptr) {
      char* end = nullptr;
      const unsigned long long bytes = std::strtoull(limit, &end, 10);
      if (end == limit || *end != '\0' || bytes == 0) {
        d.error = std::string("GPULAB_SIM_MEMORY_BYTES must be a positive byte count, not '") +
                  limit + "'";
      } else {
        d.capacity_bytes = static_cast<std::size_t>(bytes);
      }
    }
    return d;
  }();
  return instance;
}

// Live allocations and handles. One mutex: the runtime is called from any host thread.
struct State {
  std::mutex mutex;
  std::map<std::uintptr_t, std::size_t> device_allocations;  // start -> bytes
  std::set<void*> host_allocations;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::size_t allocated = 0;
};

State& state() {
  static State instance;
  return instance;
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

// True when [pointer, pointer + bytes) lies inside one live device allocation.
bool inside_device_allocation(const State& s, const void* pointer, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto it = s.device_allocations.upper_bound(address);
  if (it == s.device_allocations.begin()) {
    return false;
  }
  --it;
  const std::uintptr_t end = it->first + it->second;
  return address >= it->first && address <= end && bytes <= end - address;
}

bool valid_stream(const State& s, cudaStream_t stream) {
  return stream == nullptr || s.streams.contains(stream);
}

// Checks both sides of a copy against the allocation table for the given direction.
cudaError_t check_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                       cudaStream_t stream) {
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
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
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

cudaError_t cudaGetLastError() noexcept {
  return std::exchange(gpulab::sim::last_error, cudaSuccess);
}

cudaError_t cudaPeekAtLastError() noexcept {
  return gpulab::sim::last_error;
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
  return check_device();
}

cudaError_t cudaMalloc(void** pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *pointer = nullptr;
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  if (bytes == 0) {
    return cudaSuccess;  // as on a GPU: a null pointer, no error
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (bytes > gpulab::sim::device().capacity_bytes - s.allocated) {
    return fail(cudaErrorMemoryAllocation);
  }
  // 256-byte alignment, as cudaMalloc guarantees.
  void* memory = ::operator new (bytes, std::align_val_t{256}, std::nothrow);
  if (memory == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  s.device_allocations.emplace(reinterpret_cast<std::uintptr_t>(memory), bytes);
  s.allocated += bytes;
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) noexcept {
  if (pointer == nullptr) {
    return cudaSuccess;
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  const auto it = s.device_allocations.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == s.device_allocations.end()) {
    return fail(cudaErrorInvalidValue);
  }
  s.allocated -= it->second;
  s.device_allocations.erase(it);
  ::operator delete (pointer, std::align_val_t{256});
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  *pointer = nullptr;
  if (bytes == 0) {
    return cudaSuccess;
  }
  void* memory = ::operator new (bytes, std::align_val_t{256}, std::nothrow);
  if (memory == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  s.host_allocations.insert(memory);
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* pointer) noexcept {
  if (pointer == nullptr) {
    return cudaSuccess;
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (s.host_allocations.erase(pointer) == 0) {
    return fail(cudaErrorInvalidValue);
  }
  ::operator delete (pointer, std::align_val_t{256});
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) noexcept {
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  *total_bytes = gpulab::sim::device().capacity_bytes;
  *free_bytes = *total_bytes - s.allocated;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = gpulab::sim::check_copy(dst, src, bytes, kind, stream);
      error != cudaSuccess || bytes == 0) {
    return error;
  }
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes,
                       cudaMemcpyKind kind) noexcept {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}

cudaError_t cudaMemsetAsync(void* pointer, int value, std::size_t bytes,
                            cudaStream_t stream) noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
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
  std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* pointer, int value, std::size_t bytes) noexcept {
  return cudaMemsetAsync(pointer, value, bytes, nullptr);
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

cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept {
  return gpulab::sim::destroy_handle(&gpulab::sim::State::streams, stream);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept {
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  return gpulab::sim::valid_stream(s, stream) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) noexcept {
  return cudaStreamSynchronize(stream);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept {
  if (event == nullptr || (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming)) != 0) {
    return fail(cudaErrorInvalidValue);
  }
  return gpulab::sim::create_handle(&gpulab::sim::State::events, event,
                                    CUevent_st{flags, std::nullopt});
}

cudaError_t cudaEventCreate(cudaEvent_t* event) noexcept {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) noexcept {
  return gpulab::sim::destroy_handle(&gpulab::sim::State::events, event);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) noexcept {
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(event) || !gpulab::sim::valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  event->recorded_at = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept {
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  return s.events.contains(event) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventQuery(cudaEvent_t event) noexcept {
  return cudaEventSynchronize(event);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) noexcept {
  if (ms == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(start) || !s.events.contains(stop)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  // As on a GPU: both events must have been recorded, and with timing enabled.
  if (((start->flags | stop->flags) & cudaEventDisableTiming) != 0 || !start->recorded_at ||
      !stop->recorded_at) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  *ms = std::chrono::duration<float, std::milli>(*stop->recorded_at - *start->recorded_at).count();
  return cudaSuccess;
}
