// What a CUDA device is, as the device query reports it (gpulab/runtime/device_query.hpp), and the
// host-side arithmetic on it: bandwidth, the results-file entry, failure explanations, and the
// CUDA_VISIBLE_DEVICES of a child process. No CUDA call: built once, in gpulab.core.host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/results.hpp"

namespace gpulab {

/// Properties of one CUDA device, as the runtime reports them (the sim's UUID is all zero).
struct DeviceInfo {
  int index = 0;                                 ///< CUDA device ordinal
  std::string name;                              ///< e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;                              ///< "GPU-" + 32 hex digits (MIG: its own)
  int cc_major = 0;                              ///< compute capability, major
  int cc_minor = 0;                              ///< compute capability, minor
  int sm_count = 0;                              ///< streaming multiprocessors
  int sm_clock_khz = 0;                          ///< peak SM clock (cudaDevAttrClockRate)
  int memory_clock_khz = 0;                      ///< peak memory clock (cudaDevAttrMemoryClockRate)
  int memory_bus_width_bits = 0;                 ///< global memory bus width
  std::uint64_t global_memory_bytes = 0;         ///< total global memory
  std::uint64_t l2_bytes = 0;                    ///< L2 cache size
  std::uint64_t shared_memory_per_sm_bytes = 0;  ///< shared memory per SM
  std::uint64_t shared_memory_per_block_bytes = 0;           ///< per block without opt-in (48 KiB)
  std::uint64_t shared_memory_per_block_optin_bytes = 0;     ///< per block with opt-in
  std::uint64_t reserved_shared_memory_per_block_bytes = 0;  ///< reserved by the driver per block
  int registers_per_sm = 0;                                  ///< 32-bit registers per SM
  int registers_per_block = 0;                               ///< 32-bit registers per block
  int max_threads_per_sm = 0;                                ///< resident threads per SM
  int max_threads_per_block = 0;                             ///< threads per block
  int max_blocks_per_sm = 0;                                 ///< resident blocks per SM
  int warp_size = 0;                                         ///< threads per warp

  /// Compute capability as "9.0".
  [[nodiscard]] std::string compute_capability() const;
  /// Theoretical DRAM bandwidth from memory clock and bus width (double data rate), in GB/s.
  [[nodiscard]] double theoretical_bandwidth_gb_s() const;
};

/// Why no device is usable: the CUDA error and an explanation for a person.
struct DeviceUnavailable {
  int error_code = 0;      ///< cudaError_t value, e.g. 35 or 100; 0 when no CUDA call was made
  std::string error_name;  ///< e.g. "cudaErrorInsufficientDriver"
  std::string reason;      ///< one line: what it means and what to do
};

/// Result of a device query: the devices, or why there are none.
struct DeviceQuery {
  std::string backend;                           ///< "cuda" or "sim"
  std::vector<DeviceInfo> devices;               ///< empty when unavailable
  std::optional<DeviceUnavailable> unavailable;  ///< set when no device is usable

  /// True when at least one device can run kernels.
  [[nodiscard]] bool usable() const { return !devices.empty(); }
};

/// A device's properties as a results-file entry named "device" (params: index, name, compute
/// capability; metrics with units in their names, provenance measured: read from the runtime).
[[nodiscard]] Result device_properties_result(const DeviceInfo& device);

/// The CUDA_VISIBLE_DEVICES that gives a child process only this process's device `ordinal`:
/// this process's own entry for it when `cuda_visible_devices` (its CUDA_VISIBLE_DEVICES, or
/// null) is set, since a child reads the variable against every device of the machine; else the
/// ordinal itself. Entries are separated by commas; spaces around them are dropped. Throws
/// std::out_of_range when the variable has no entry `ordinal`.
[[nodiscard]] std::string child_visible_devices(int ordinal, const char* cuda_visible_devices);

/// Explains a cudaGetDeviceCount failure for a person (35: no driver or an old one; 100: no
/// device; ...), for `DeviceUnavailable::reason`.
[[nodiscard]] std::string explain_device_error(int cuda_error_code);

}  // namespace gpulab
