// The CUDA runtime on sim: the device (its spec chosen once), errors, versions and properties, the
// settings a program chooses (spec, schedule, clock) and counting's entry points. Memory, streams
// and events, and kernels are in runtime_memory.cpp, runtime_streams.cpp and runtime_launch.cpp
// (their shared state: runtime_state.hpp).
#include "gpulab/sim/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clock.hpp"
#include "counting.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/specs.hpp"
#include "queue.hpp"
#include "runtime_state.hpp"
#include "settings.hpp"

// The version of the CUDA API this runtime follows (13.0), as cudaRuntimeGetVersion encodes it.
namespace {
constexpr int kCudaApiVersion = 13000;
}

namespace gpulab::sim {
namespace {

// The spec prepare_device chose, and whether the device was made (after which it cannot change).
struct DeviceChoice {
  std::mutex mutex;
  std::string spec;  // empty: the settings' (GPULAB_SIM_SPEC), else H100 SXM
  bool made = false;
  std::string made_key;  // once made: its spec's key and name (empty when it has none)
  std::string made_name;
};

DeviceChoice& device_choice() {
  static DeviceChoice& choice = *new DeviceChoice();
  return choice;
}

// The calling thread's last error (cudaGetLastError).
thread_local cudaError_t last_error = cudaSuccess;

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

const Device& device() {
  // Never destroyed: the device thread, which reads the spec, outlives main.
  static const Device& instance = *new Device([] {
    const detail::Settings& environment = detail::settings();
    DeviceChoice& chosen = device_choice();
    std::scoped_lock lock(chosen.mutex);
    chosen.made = true;
    Device d;
    SimSpecChoice choice = choose_sim_spec(chosen.spec.empty() ? environment.spec : chosen.spec);
    if (choice.spec) {
      d.spec = std::move(*choice.spec);
      chosen.made_key = d.spec.key;
      chosen.made_name = d.spec.name;
    } else {
      d.error = std::move(choice.error);
    }
    d.capacity_bytes =
        environment.memory_bytes.value_or(static_cast<std::size_t>(d.spec.memory_bytes));
    if (d.error.empty()) {
      d.error = environment.error;
    }
    return d;
  }());
  return instance;
}

State& state() {
  static State instance;
  return instance;
}

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

// Waits until the queue has run everything up to `seq`; then the sticky error, if any.
cudaError_t wait_for(std::uint64_t seq) noexcept {
  detail::DeviceQueue::instance().wait(seq);
  note_host_wait(seq);
  return check_usable();
}

const std::string& configuration_error() {
  return device().error;
}

bool prepare_device(std::string_view spec, std::string* why) {
  const auto refuse = [&](std::string reason) {
    if (why != nullptr) {
      *why = std::move(reason);
    }
    return false;
  };
  if (!spec.empty()) {
    const std::optional<GpuSpec> found = find_spec(spec);
    if (!found) {
      return refuse("no GPU named '" + std::string(spec) + "' (see `gpulab specs`)");
    }
    DeviceChoice& chosen = device_choice();
    std::scoped_lock lock(chosen.mutex);
    if (chosen.made && chosen.made_key != found->key) {
      return refuse("the simulated device is in use already as " +
                    (chosen.made_name.empty() ? std::string("no GPU") : chosen.made_name) +
                    ": its spec is chosen before the first CUDA call");
    }
    chosen.spec = found->key;
  }
  if (!detail::settings().clock && counting_available()) {
    set_clock_mode(ClockMode::modeled);
  }
  return true;
}

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

namespace {

// set_worker_count's choice (0: none), and whether the pool started (after which it stays).
struct WorkerChoice {
  std::mutex mutex;
  unsigned count = 0;
  bool started = false;
};

WorkerChoice& worker_choice() {
  static WorkerChoice& choice = *new WorkerChoice();  // never destroyed: read by the pool's start
  return choice;
}

}  // namespace

unsigned worker_count() noexcept {
  WorkerChoice& choice = worker_choice();
  std::scoped_lock lock(choice.mutex);
  return choice.count != 0 ? choice.count : detail::settings().workers;
}

bool set_worker_count(unsigned count) noexcept {
  WorkerChoice& choice = worker_choice();
  std::scoped_lock lock(choice.mutex);
  if (choice.started || count == 0 || count > 1024) {
    return false;
  }
  choice.count = count;
  return true;
}

namespace {
std::atomic<ClockMode>& clock_setting() {
  static std::atomic<ClockMode> setting{detail::settings().clock.value_or(ClockMode::host)};
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

unsigned start_workers() noexcept {
  WorkerChoice& choice = worker_choice();
  std::scoped_lock lock(choice.mutex);
  choice.started = true;
  return choice.count != 0 ? choice.count : settings().workers;
}

}  // namespace detail
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
