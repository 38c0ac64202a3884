// What runtime.cpp knows about the simulated device and tells the rest of the sim (internal to
// framework/sim).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::sim::detail {

/// The simulated GPU (the device is usable whenever work runs).
[[nodiscard]] const GpuSpec& device_spec();
/// Every live cudaMalloc and cudaMallocHost allocation as (start address, bytes).
[[nodiscard]] std::vector<std::pair<std::uintptr_t, std::size_t>> device_memory_ranges();
/// False for a stream created with cudaStreamNonBlocking (it does not synchronize with the
/// legacy default stream); true otherwise, the legacy stream included.
[[nodiscard]] bool stream_is_blocking(cudaStream_t stream);
/// The registers and static shared memory recorded with set_kernel_resources, if any.
[[nodiscard]] std::optional<KernelResources> recorded_resources(const void* kernel);

}  // namespace gpulab::sim::detail
