// The CUDA runtime's kernels on sim: attributes, occupancy and launches (runtime_state.hpp).
#include "gpulab/sim/runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "clock.hpp"
#include "counting.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/sim/sanitizer.hpp"
#include "queue.hpp"
#include "runtime_state.hpp"
#include "settings.hpp"
#include "symbols.hpp"

namespace gpulab::sim {

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

void set_kernel_resources(const void* kernel, int registers, std::size_t static_shared_bytes) {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  s.kernels[kernel].given = KernelFigures{registers, static_shared_bytes, 0};
}

namespace detail {

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
    auto launch = std::make_shared<KernelLaunch>(
        spec, call, order, id, counting() || modeled_clock(), counting(), sanitizing());
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
      if (settings().launch_blocking) {
        // The launch returns once its kernel has run, so that the error of a kernel that failed
        // is the next call's (cudaGetLastError right after the launch), as on a GPU.
        (void)cudaStreamSynchronize(spec.stream);
      }
    }
  } catch (const std::bad_alloc&) {
    fail(cudaErrorMemoryAllocation);
  }
}

}  // namespace detail
}  // namespace gpulab::sim

using gpulab::sim::fail;
using gpulab::sim::state;

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
