// What the runtime (runtime*.cpp) knows about the simulated device and tells the rest of the sim
// (internal to framework/sim).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::sim::detail {

/// The lanes of a warp.
inline constexpr unsigned kWarp = 32;

/// The simulated GPU (the device is usable whenever work runs).
[[nodiscard]] const GpuSpec& device_spec();
/// The worker threads the pool that runs blocks starts with (worker_count()); after this call
/// set_worker_count refuses.
[[nodiscard]] unsigned start_workers() noexcept;
/// A live cudaMalloc or cudaMallocHost allocation: where it is in this process, and where the
/// memory counting's L2 model sees it. The modeled address is given by a first-fit allocator in
/// allocation order, so L2 sets and lines do not depend on where the operating system placed the
/// memory (address space randomization): counts are the same in every run.
struct DeviceRange {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
  std::uintptr_t modeled = 0;
};
/// Every live cudaMalloc and cudaMallocHost allocation.
[[nodiscard]] std::vector<DeviceRange> device_memory_ranges();
/// The stretch of addresses around one that holds no device memory, as device_memory_at left it;
/// valid while device_memory_generation is `generation`.
struct HostMemoryGap {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::uint64_t generation = 0;
};
/// The live cudaMalloc allocation that [address, address + bytes) overlaps, as (start, bytes);
/// nullopt when none does, with `gap` set to the stretch around `address` free of device memory.
/// Takes a lock of its own (never State's): callable from any code, also from code the runtime
/// runs while it holds its own.
[[nodiscard]] std::optional<std::pair<std::uintptr_t, std::size_t>> device_memory_at(
    std::uintptr_t address, std::size_t bytes, HostMemoryGap& gap);
/// Changes whenever a cudaMalloc allocation is made or freed (under device_memory_at's lock).
/// Every instrumented access of host code reads it (check_host_access): a variable, not a call.
inline std::atomic<std::uint64_t> device_memory_generation{1};

/// False for a stream created with cudaStreamNonBlocking (it does not synchronize with the
/// legacy default stream); true otherwise, the legacy stream included.
[[nodiscard]] bool stream_is_blocking(cudaStream_t stream);
/// The next launch's id (launches so far, this one included): for a library call the sim models
/// as a kernel launch, given where the call is made, as a kernel launch's is.
[[nodiscard]] std::uint64_t next_launch_id();

/// The registers and static shared memory of a launched kernel: those recorded for its address
/// with set_kernel_resources, else ptxas's from the kernel table for the device's compute
/// capability (find_launched_kernel: `function` is the launch's function name, else its
/// expression; `launch_file` the launch's source file), else the table's for the function's
/// symbol (find_kernel_symbol). nullopt when none has them; when nvcc
/// could not compile `launch_file` for the table, says so once on stderr.
[[nodiscard]] std::optional<KernelResources> launched_kernel_resources(
    const void* kernel, std::string_view function, std::string_view launch_file);

}  // namespace gpulab::sim::detail
