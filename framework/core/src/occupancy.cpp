// Occupancy through the toolkit's cuda_occupancy.h (see occupancy.hpp).
//
// This file only translates: a GpuSpec becomes a cudaOccDeviceProp, KernelResources a
// cudaOccFuncAttributes, and the calculator's cudaOccResult an Occupancy. The rules themselves
// (allocation units, granularities, carveouts, block limits per compute capability) stay in
// NVIDIA's header, so they change when the toolkit does. What this file adds is the checking of
// the inputs, with messages a student can act on, and the choice of one limiter.
#include "gpulab/core/occupancy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

// framework/core/CMakeLists.txt defines it to 1 when it found the header.
#ifndef GPULAB_HAVE_CUDA_OCCUPANCY
#define GPULAB_HAVE_CUDA_OCCUPANCY 0
#endif
#if GPULAB_HAVE_CUDA_OCCUPANCY
#include <cuda_occupancy.h>
#endif

namespace gpulab {

#if GPULAB_HAVE_CUDA_OCCUPANCY
namespace {

// Registers one block may use, for every compute capability in the database (CUDA C++
// Programming Guide, "Compute Capabilities": "Maximum number of 32-bit registers per thread
// block" is 64K from 5.0 on).
constexpr int kRegistersPerBlock = 64 * 1024;
// Shared memory per block without the opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize): 48 KB
// on every compute capability in the database (same table).
constexpr std::uint64_t kDefaultSharedPerBlockBytes = 48 * 1024;

// The checks that do not need the calculator; each problem is one line.
void check_inputs(const GpuSpec& spec, const KernelResources& kernel, int block_size,
                  std::uint64_t dynamic_shared_bytes) {
  const std::string gpu = spec.name.empty() ? "the GPU" : spec.name;
  if (block_size <= 0) {
    throw std::invalid_argument("block size must be at least 1 thread (got " +
                                std::to_string(block_size) + ")");
  }
  if (block_size > spec.max_threads_per_block) {
    throw std::invalid_argument("block size " + std::to_string(block_size) + " is above " + gpu +
                                "'s limit of " + std::to_string(spec.max_threads_per_block) +
                                " threads per block");
  }
  if (kernel.max_threads_per_block < 0) {
    throw std::invalid_argument(
        "the kernel's max threads per block must be 0 (no limit) or "
        "positive (got " +
        std::to_string(kernel.max_threads_per_block) + ")");
  }
  if (kernel.max_threads_per_block > 0 && block_size > kernel.max_threads_per_block) {
    throw std::invalid_argument("block size " + std::to_string(block_size) +
                                " is above the kernel's __launch_bounds__ limit of " +
                                std::to_string(kernel.max_threads_per_block) + " threads");
  }
  if (kernel.registers_per_thread < 0 ||
      kernel.registers_per_thread > spec.max_registers_per_thread) {
    throw std::invalid_argument("registers per thread must be 0.." +
                                std::to_string(spec.max_registers_per_thread) + " (got " +
                                std::to_string(kernel.registers_per_thread) + ")");
  }
  const std::uint64_t optin = spec.shared_memory_per_block_optin_bytes;
  if (kernel.static_shared_bytes > optin ||
      dynamic_shared_bytes > optin - kernel.static_shared_bytes) {
    throw std::invalid_argument("shared memory per block (static " +
                                std::to_string(kernel.static_shared_bytes) + " B + dynamic " +
                                std::to_string(dynamic_shared_bytes) + " B) is above " + gpu +
                                "'s opt-in limit of " + std::to_string(optin) + " B per block");
  }
}

// The limiter: the smallest block limit; on ties the first in enum order (warps, registers,
// shared memory, blocks), so a kernel that fills the SM's warps exactly as its registers run out
// is reported as warp-limited (nothing would be gained by using fewer registers).
OccupancyLimiter tightest(const Occupancy& o) {
  OccupancyLimiter limiter = OccupancyLimiter::warps;
  int smallest = o.blocks_limit_warps;
  const auto consider = [&](OccupancyLimiter candidate, int limit) {
    if (limit < smallest) {
      smallest = limit;
      limiter = candidate;
    }
  };
  consider(OccupancyLimiter::registers, o.blocks_limit_registers);
  consider(OccupancyLimiter::shared_memory, o.blocks_limit_shared);
  consider(OccupancyLimiter::blocks, o.blocks_limit_blocks);
  return limiter;
}

cudaOccDeviceProp device_prop(const GpuSpec& spec) {
  cudaOccDeviceProp prop;
  prop.computeMajor = spec.cc_major;
  prop.computeMinor = spec.cc_minor;
  prop.maxThreadsPerBlock = spec.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = spec.max_threads_per_sm;
  prop.regsPerBlock = kRegistersPerBlock;
  prop.regsPerMultiprocessor = spec.registers_per_sm;
  prop.warpSize = spec.warp_size;
  prop.sharedMemPerBlock =
      std::min(kDefaultSharedPerBlockBytes, spec.shared_memory_per_block_optin_bytes);
  prop.sharedMemPerMultiprocessor = spec.shared_memory_per_sm_bytes;
  prop.numSms = spec.sm_count;
  prop.sharedMemPerBlockOptin = spec.shared_memory_per_block_optin_bytes;
  prop.reservedSharedMemPerBlock = spec.reserved_shared_memory_per_block_bytes;
  return prop;
}

cudaOccFuncAttributes func_attributes(const GpuSpec& spec, const KernelResources& kernel) {
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock =
      kernel.max_threads_per_block > 0 ? kernel.max_threads_per_block : spec.max_threads_per_block;
  attributes.numRegs = kernel.registers_per_thread;
  attributes.sharedSizeBytes = kernel.static_shared_bytes;
  // As if the kernel had called cudaFuncSetAttribute(kernel,
  // cudaFuncAttributeMaxDynamicSharedMemorySize, opt-in limit - static): dynamic shared memory up
  // to the opt-in limit is allowed, as the runtime allows it after that call.
  attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attributes.maxDynamicSharedSizeBytes =
      spec.shared_memory_per_block_optin_bytes - kernel.static_shared_bytes;
  // What cudaOccFuncAttributes(cudaFuncAttributes) sets: every kernel has its __syncthreads
  // barrier. On 9.0 it allows 2 x the block limit, so it never limits below the other four.
  attributes.numBlockBarriers = 1;
  return attributes;
}

std::string occ_error(cudaOccError status, const GpuSpec& spec) {
  if (status == CUDA_OCC_ERROR_UNKNOWN_DEVICE) {
    return "this toolkit's cuda_occupancy.h does not know compute capability " +
           spec.compute_capability();
  }
  return "cuda_occupancy.h rejected the spec of " + spec.name + " (compute capability " +
         spec.compute_capability() + ") as invalid input";
}

}  // namespace
#endif  // GPULAB_HAVE_CUDA_OCCUPANCY

std::string_view to_string(OccupancyLimiter limiter) noexcept {
  switch (limiter) {
    case OccupancyLimiter::warps:
      return "warps";
    case OccupancyLimiter::registers:
      return "registers";
    case OccupancyLimiter::shared_memory:
      return "shared memory";
    case OccupancyLimiter::blocks:
      return "blocks per SM";
  }
  return "?";
}

bool occupancy_available() noexcept {
  return GPULAB_HAVE_CUDA_OCCUPANCY != 0;
}

Occupancy compute_occupancy(const GpuSpec& spec, const KernelResources& kernel, int block_size,
                            std::uint64_t dynamic_shared_bytes) {
#if GPULAB_HAVE_CUDA_OCCUPANCY
  check_inputs(spec, kernel, block_size, dynamic_shared_bytes);

  const cudaOccDeviceProp prop = device_prop(spec);
  const cudaOccFuncAttributes attributes = func_attributes(spec, kernel);
  const cudaOccDeviceState state;  // no cache or carveout preference, as a fresh context has
  cudaOccResult result{};
  const cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
      &result, &prop, &attributes, &state, block_size, dynamic_shared_bytes);
  if (status != CUDA_OCC_SUCCESS) {
    throw std::runtime_error(occ_error(status, spec));
  }

  Occupancy o;
  o.block_size = block_size;
  o.dynamic_shared_bytes = dynamic_shared_bytes;
  o.warps_per_block = (block_size + spec.warp_size - 1) / spec.warp_size;
  o.blocks_limit_warps = result.blockLimitWarps;
  o.blocks_limit_registers = result.blockLimitRegs;
  o.blocks_limit_shared = result.blockLimitSharedMem;
  o.blocks_limit_blocks = result.blockLimitBlocks;
  o.allocated_registers_per_block = result.allocatedRegistersPerBlock;
  o.allocated_shared_bytes_per_block = result.allocatedSharedMemPerBlock;

  // Block size, registers per thread and shared memory were checked above, so the one way left to
  // fit no block at all is a block that needs more registers than a block may use. The hardware
  // check behind it rounds the block's warps up to a multiple of the 4 sub-partitions, so e.g.
  // 10 warps x 6400 registers = 64000 still does not fit (12 x 6400 = 76800 > 65536).
  if (result.blockLimitRegs == 0) {
    const int per_warp =
        o.warps_per_block > 0 ? o.allocated_registers_per_block / o.warps_per_block : 0;
    const int assumed_warps = (o.warps_per_block + 3) / 4 * 4;
    const std::string rounding =
        assumed_warps == o.warps_per_block
            ? std::string()
            : ": " + std::to_string(o.warps_per_block) + " rounded up to a multiple of 4";
    throw std::invalid_argument(
        "a block of " + std::to_string(block_size) + " threads x " +
        std::to_string(kernel.registers_per_thread) + " registers needs " +
        std::to_string(per_warp * assumed_warps) + " registers (" + std::to_string(per_warp) +
        " per warp x " + std::to_string(assumed_warps) + " warps" + rounding + "), above the " +
        std::to_string(kRegistersPerBlock) + " a block may use");
  }

  o.active_blocks_per_sm = result.activeBlocksPerMultiprocessor;
  o.active_warps_per_sm = o.active_blocks_per_sm * o.warps_per_block;
  o.max_warps_per_sm = spec.max_threads_per_sm / spec.warp_size;
  o.occupancy_fraction =
      static_cast<double>(o.active_warps_per_sm) / static_cast<double>(o.max_warps_per_sm);
  o.limiter = tightest(o);

  // The carveout: the calculator takes the preference (none: the largest the architecture
  // supports, i.e. the spec's shared memory per SM aligned up to a supported carveout), and only
  // when one block does not fit in it, the smallest carveout that holds one block (from 7.0 on;
  // before, the fixed size). The same steps here, through the header's own helpers, so the figure
  // shown is the one it divided by.
  std::size_t carveout = 0;
  if (cudaOccSMemPerMultiprocessor(&carveout, &prop, &state) != CUDA_OCC_SUCCESS) {
    throw std::runtime_error(occ_error(CUDA_OCC_ERROR_UNKNOWN_DEVICE, spec));
  }
  if (spec.cc_major >= 7 && carveout < o.allocated_shared_bytes_per_block) {
    carveout = o.allocated_shared_bytes_per_block;
    if (cudaOccAlignUpShmemSizeVoltaPlus(&carveout, &prop) != CUDA_OCC_SUCCESS) {
      throw std::runtime_error(occ_error(CUDA_OCC_ERROR_UNKNOWN_DEVICE, spec));
    }
  }
  o.shared_memory_per_sm_bytes = carveout;
  return o;
#else
  (void)spec;
  (void)kernel;
  (void)block_size;
  (void)dynamic_shared_bytes;
  throw std::runtime_error(
      "occupancy is unavailable: this build found no cuda_occupancy.h (install the CUDA toolkit "
      "and reconfigure)");
#endif
}

namespace {

// One sweep point: the result, or why the configuration cannot launch.
OccupancyPoint point_at(int x, const GpuSpec& spec, const KernelResources& kernel, int block_size,
                        std::uint64_t dynamic_shared_bytes) {
  OccupancyPoint point;
  point.x = x;
  try {
    point.occupancy = compute_occupancy(spec, kernel, block_size, dynamic_shared_bytes);
  } catch (const std::invalid_argument& e) {
    point.error = e.what();
  }
  return point;
}

}  // namespace

std::vector<OccupancyPoint> sweep_block_size(const GpuSpec& spec, const KernelResources& kernel,
                                             std::uint64_t dynamic_shared_bytes) {
  int limit = spec.max_threads_per_block;
  if (kernel.max_threads_per_block > 0) {
    limit = std::min(limit, kernel.max_threads_per_block);
  }
  std::vector<OccupancyPoint> points;
  if (limit > 0 && limit < spec.warp_size) {
    points.push_back(point_at(limit, spec, kernel, limit, dynamic_shared_bytes));
    return points;
  }
  for (int block = spec.warp_size; block <= limit; block += spec.warp_size) {
    points.push_back(point_at(block, spec, kernel, block, dynamic_shared_bytes));
  }
  return points;
}

std::vector<OccupancyPoint> sweep_registers(const GpuSpec& spec, const KernelResources& kernel,
                                            int block_size, std::uint64_t dynamic_shared_bytes) {
  std::vector<OccupancyPoint> points;
  KernelResources k = kernel;
  for (int registers = 1; registers <= spec.max_registers_per_thread; ++registers) {
    k.registers_per_thread = registers;
    points.push_back(point_at(registers, spec, k, block_size, dynamic_shared_bytes));
  }
  return points;
}

std::vector<OccupancyPoint> sweep_shared_memory(const GpuSpec& spec, const KernelResources& kernel,
                                                int block_size, std::uint64_t step_bytes) {
  if (step_bytes == 0) {
    throw std::invalid_argument("the shared memory sweep's step must be at least 1 byte");
  }
  std::vector<OccupancyPoint> points;
  const std::uint64_t optin = spec.shared_memory_per_block_optin_bytes;
  if (kernel.static_shared_bytes > optin) {
    points.push_back(point_at(0, spec, kernel, block_size, 0));
    return points;
  }
  const std::uint64_t last = optin - kernel.static_shared_bytes;
  for (std::uint64_t dynamic = 0;; dynamic += step_bytes) {
    points.push_back(point_at(static_cast<int>(dynamic), spec, kernel, block_size, dynamic));
    if (last - dynamic < step_bytes) {  // the next step would pass the limit (or wrap around)
      break;
    }
  }
  return points;
}

}  // namespace gpulab
