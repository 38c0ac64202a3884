// The backend-neutral members of device.hpp: formatting and arithmetic on DeviceInfo, and the
// explanations of device-query failures. The query itself is in device_query.cpp.
#include "gpulab/core/device_info.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpulab {

std::string DeviceInfo::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

double DeviceInfo::theoretical_bandwidth_gb_s() const {
  // Data moves on both clock edges (double data rate), bus_width_bits / 8 bytes per transfer.
  const double transfers_per_s = 2.0 * memory_clock_khz * 1e3;
  const double bytes_per_transfer = memory_bus_width_bits / 8.0;
  return transfers_per_s * bytes_per_transfer / 1e9;
}

std::string child_visible_devices(int ordinal, const char* cuda_visible_devices) {
  if (ordinal < 0) {
    throw std::out_of_range("no device " + std::to_string(ordinal));
  }
  if (cuda_visible_devices == nullptr) {
    return std::to_string(ordinal);
  }
  const std::string_view all = cuda_visible_devices;
  std::size_t begin = 0;
  for (int entry = 0; begin <= all.size(); ++entry) {
    const std::size_t end = std::min(all.find(',', begin), all.size());
    if (entry == ordinal) {
      std::string_view id = all.substr(begin, end - begin);
      id.remove_prefix(std::min(id.size(), id.find_first_not_of(' ')));
      id.remove_suffix(id.size() - (id.find_last_not_of(' ') + 1));
      if (!id.empty()) {
        return std::string(id);
      }
      break;
    }
    begin = end + 1;
  }
  throw std::out_of_range("CUDA_VISIBLE_DEVICES=" + std::string(all) + " has no device " +
                          std::to_string(ordinal));
}

std::string explain_device_error(int cuda_error_code) {
  // Codes and meanings: the cudaError enum in the CUDA Runtime API reference (driver_types.h).
  switch (cuda_error_code) {
    case 3:  // cudaErrorInitializationError
      return "the CUDA driver and runtime could not be initialized: check that the NVIDIA kernel "
             "module is loaded (nvidia-smi) and /dev/nvidia* is accessible";
    case 34:  // cudaErrorStubLibrary
      return "the CUDA driver library found is a stub, not a real driver: remove the toolkit's "
             "lib64/stubs directory from LD_LIBRARY_PATH, or install the NVIDIA driver";
    case 35:  // cudaErrorInsufficientDriver
      return "no NVIDIA driver is loaded, or the driver is older than the CUDA runtime gpulab "
             "was built with";
    case 46:  // cudaErrorDevicesUnavailable
      return "all CUDA devices are busy or unavailable: a GPU in exclusive-process or prohibited "
             "compute mode is in use by another process (see nvidia-smi)";
    case 100:  // cudaErrorNoDevice
      return "the NVIDIA driver found no CUDA-capable device";
    case 101:  // cudaErrorInvalidDevice
      return "the requested CUDA device does not exist: check CUDA_VISIBLE_DEVICES";
    case 802:  // cudaErrorSystemNotReady
      return "the system is not ready for CUDA: on NVSwitch systems, start the NVIDIA Fabric "
             "Manager service";
    case 803:  // cudaErrorSystemDriverMismatch
      return "the NVIDIA kernel driver and the CUDA user-mode driver (libcuda) have different "
             "versions: reboot after a driver update, or reinstall the driver";
    case 804:  // cudaErrorCompatNotSupportedOnDevice
      return "the CUDA forward-compatibility package is in use but this GPU does not support "
             "it: remove the compat libraries from the library path";
    case 999:  // cudaErrorUnknown
      return "the CUDA driver failed with an unknown error: check nvidia-smi and the kernel log "
             "(dmesg); a driver reload or reboot may be needed";
    default:
      return "CUDA error " + std::to_string(cuda_error_code);
  }
}

Result device_properties_result(const DeviceInfo& d) {
  Result result;
  result.name = "device";
  result.params = {{"index", std::to_string(d.index)},
                   {"name", d.name},
                   {"compute_capability", d.compute_capability()}};
  const auto add = [&result](std::string name, double value) {
    result.metrics.push_back(Metric::measured(std::move(name), value));
  };
  add("sm_count", d.sm_count);
  add("sm_clock_mhz", d.sm_clock_khz / 1000.0);
  add("memory_clock_mhz", d.memory_clock_khz / 1000.0);
  add("memory_bus_width_bits", d.memory_bus_width_bits);
  add("theoretical_bandwidth_gb_s", d.theoretical_bandwidth_gb_s());
  add("global_memory_bytes", static_cast<double>(d.global_memory_bytes));
  add("l2_bytes", static_cast<double>(d.l2_bytes));
  add("shared_memory_per_sm_bytes", static_cast<double>(d.shared_memory_per_sm_bytes));
  add("shared_memory_per_block_optin_bytes",
      static_cast<double>(d.shared_memory_per_block_optin_bytes));
  add("registers_per_sm_count", d.registers_per_sm);
  add("max_threads_per_sm_count", d.max_threads_per_sm);
  add("max_blocks_per_sm_count", d.max_blocks_per_sm);
  return result;
}

}  // namespace gpulab
