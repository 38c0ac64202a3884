// query_devices(): the CUDA runtime's view of this backend's devices, and the one rule that
// resolves a program's device, spec and clock from it. Built once per backend.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/runtime/device_query.hpp"

#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab {
namespace {

// Error 35 means either "no driver" or "driver too old"; the driver version tells which.
std::string reason_for(cudaError_t error) {
  std::string reason = explain_device_error(static_cast<int>(error));
  if (error == cudaErrorInsufficientDriver) {
    int driver = 0;
    int runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    const auto version = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    if (driver == 0) {
      reason = "no NVIDIA driver is loaded on this machine";
    } else {
      reason = "the NVIDIA driver supports CUDA " + version(driver) +
               ", older than the CUDA runtime " + version(runtime) + " gpulab was built with";
    }
  }
#if GPULAB_BACKEND_SIM
  if (!sim::configuration_error().empty()) {
    reason = sim::configuration_error();
  }
#endif
  return reason;
}

DeviceUnavailable unavailable(cudaError_t error) {
  (void)cudaGetLastError();  // a failed query must not look like a later kernel's error
  return {static_cast<int>(error), cudaGetErrorName(error), reason_for(error)};
}

// One device's properties. Clocks come from cudaDeviceGetAttribute: CUDA 13 removed the clock
// fields from cudaDeviceProp.
cudaError_t read_device(int index, DeviceInfo& info) {
  cudaDeviceProp props{};
  if (const cudaError_t error = cudaGetDeviceProperties(&props, index); error != cudaSuccess) {
    return error;
  }
  info.index = index;
  info.name = props.name;
  info.uuid = "GPU-";
  for (std::size_t i = 0; i < sizeof props.uuid.bytes; ++i) {
    constexpr char kHex[] = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(props.uuid.bytes[i]);
    info.uuid += {kHex[byte >> 4], kHex[byte & 15]};
    if (i == 3 || i == 5 || i == 7 || i == 9) {
      info.uuid += '-';
    }
  }
  info.global_memory_bytes = props.totalGlobalMem;

  struct Attribute {
    cudaDeviceAttr attribute;
    int* target;
  };
  int l2 = 0;
  int smem_sm = 0;
  int smem_block = 0;
  int smem_optin = 0;
  int smem_reserved = 0;
  const Attribute attributes[] = {
      {cudaDevAttrComputeCapabilityMajor, &info.cc_major},
      {cudaDevAttrComputeCapabilityMinor, &info.cc_minor},
      {cudaDevAttrMultiProcessorCount, &info.sm_count},
      {cudaDevAttrClockRate, &info.sm_clock_khz},
      {cudaDevAttrMemoryClockRate, &info.memory_clock_khz},
      {cudaDevAttrGlobalMemoryBusWidth, &info.memory_bus_width_bits},
      {cudaDevAttrL2CacheSize, &l2},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, &smem_sm},
      {cudaDevAttrMaxSharedMemoryPerBlock, &smem_block},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, &smem_optin},
      {cudaDevAttrReservedSharedMemoryPerBlock, &smem_reserved},
      {cudaDevAttrMaxRegistersPerMultiprocessor, &info.registers_per_sm},
      {cudaDevAttrMaxRegistersPerBlock, &info.registers_per_block},
      {cudaDevAttrMaxThreadsPerMultiProcessor, &info.max_threads_per_sm},
      {cudaDevAttrMaxThreadsPerBlock, &info.max_threads_per_block},
      {cudaDevAttrMaxBlocksPerMultiprocessor, &info.max_blocks_per_sm},
      {cudaDevAttrWarpSize, &info.warp_size},
  };
  for (const Attribute& a : attributes) {
    if (const cudaError_t error = cudaDeviceGetAttribute(a.target, a.attribute, index);
        error != cudaSuccess) {
      return error;
    }
  }
  info.l2_bytes = static_cast<std::uint64_t>(l2);
  info.shared_memory_per_sm_bytes = static_cast<std::uint64_t>(smem_sm);
  info.shared_memory_per_block_bytes = static_cast<std::uint64_t>(smem_block);
  info.shared_memory_per_block_optin_bytes = static_cast<std::uint64_t>(smem_optin);
  info.reserved_shared_memory_per_block_bytes = static_cast<std::uint64_t>(smem_reserved);
  return cudaSuccess;
}

}  // namespace

const char* backend_name() noexcept {
#if GPULAB_BACKEND_CUDA
  return "cuda";
#else
  return "sim";
#endif
}

void prepare_sim_device(const std::string& sim_spec_key) {
#if GPULAB_BACKEND_SIM
  if (std::string why; !sim::prepare_device(sim_spec_key, &why)) {
    throw std::runtime_error(why);
  }
#else
  (void)sim_spec_key;
#endif
}

TimingClock event_clock() noexcept {
#if GPULAB_BACKEND_SIM
  return sim::clock_mode() == sim::ClockMode::modeled ? TimingClock::modeled : TimingClock::host;
#else
  return TimingClock::gpu;
#endif
}

DeviceContext resolve_device_context(const std::string& spec_key) {
  std::optional<GpuSpec> chosen;
  if (!spec_key.empty()) {
    chosen = find_spec(spec_key);
    if (!chosen) {
      throw UsageError("no GPU named \"" + spec_key + "\" (see `gpulab specs`)");
    }
  }
  // On sim the simulated device follows the spec, and events read the modeled clock unless
  // GPULAB_SIM_CLOCK chose otherwise or the build cannot count.
  prepare_sim_device(chosen ? chosen->key : "");
  const DeviceQuery query = query_devices();
  if (!query.usable()) {
    throw std::runtime_error(
        std::string("no usable ") + backend_name() + " device: " +
        (query.unavailable ? query.unavailable->reason : std::string("unknown reason")));
  }
  DeviceContext context;
  context.backend = query.backend;
  context.device = query.devices.front();
  context.spec = chosen ? *chosen : spec_for_device(context.device);
  context.clock = event_clock();
  return context;
}

DeviceQuery query_devices() noexcept {
  DeviceQuery query;
  try {
    query.backend = backend_name();
    int count = 0;
    if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
      query.unavailable = unavailable(error);
      return query;
    }
    if (count == 0) {
      query.unavailable = unavailable(cudaErrorNoDevice);
      return query;
    }
    for (int index = 0; index < count; ++index) {
      DeviceInfo info;
      if (const cudaError_t error = read_device(index, info); error != cudaSuccess) {
        query.devices.clear();
        query.unavailable = unavailable(error);
        query.unavailable->reason =
            "device " + std::to_string(index) + " cannot be queried: " + query.unavailable->reason;
        return query;
      }
      query.devices.push_back(std::move(info));
    }
  } catch (const std::exception& e) {  // out of memory building strings: report, do not throw
    query.devices.clear();
    query.unavailable = DeviceUnavailable{0, "", e.what()};
  }
  return query;
}

}  // namespace gpulab
