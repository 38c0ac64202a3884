// Occupancy: how many blocks of a kernel an SM holds at once, and which resource stops it from
// holding more. Computed on the host from a GPU spec through the CUDA toolkit's host-only
// `cuda_occupancy.h` (NVIDIA's standalone occupancy calculator), so it needs no GPU.
//
// An SM holds as many blocks as the tightest of four limits allows:
//   warps           max warps per SM / warps per block (a block's threads round up to warps)
//   registers       registers per SM / registers per block, where a warp's registers (per
//                   thread x 32) are rounded up to the allocation unit of 256 registers
//   shared memory   the SM's shared memory (the carveout, see below) / the block's shared
//                   memory (static + dynamic + the per-block reservation, rounded up to the
//                   allocation granularity)
//   blocks          the hardware's limit of resident blocks per SM
// Occupancy = active warps / max warps per SM. docs/occupancy.md works examples by hand.
//
// The rules are the toolkit's, not re-derived here; two of them surprise people. Registers: the
// SM's register file is split among its 4 sub-partitions (16384 registers each on a 64K-register
// SM) and a warp's registers come from one of them, so the register limit is
// floor(16384 / registers per warp) x 4 warps, which can be less than 65536 / registers per block.
// Shared memory: with no carveout preference the calculator assumes the largest carveout the
// architecture supports (the spec's shared memory per SM), not the smallest that would fit.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/specs.hpp"

namespace gpulab {

/// What a kernel needs per thread and per block (from the build's ptxas output, the runtime's
/// cudaFuncGetAttributes, or typed in).
struct KernelResources {
  int registers_per_thread = 0;           ///< registers per thread (ptxas "Used N registers")
  std::uint64_t static_shared_bytes = 0;  ///< static __shared__ bytes per block
  int max_threads_per_block = 0;          ///< __launch_bounds__ limit; 0 when none (1024)
};

/// A block limit that does not apply: the kernel uses none of that resource (0 registers, or no
/// shared memory at all on an architecture that reserves none per block).
inline constexpr int kUnlimitedBlocks = std::numeric_limits<int>::max();

/// The resource that limits resident blocks per SM; when two limits are equal the first in this
/// order is named.
enum class OccupancyLimiter {
  warps,          ///< resident warps (threads) per SM
  registers,      ///< the register file
  shared_memory,  ///< shared memory per SM
  blocks,         ///< resident blocks per SM
};

/// "warps", "registers", "shared memory", "blocks per SM".
[[nodiscard]] std::string_view to_string(OccupancyLimiter limiter) noexcept;

/// Occupancy of one launch configuration on one spec.
struct Occupancy {
  int block_size = 0;                      ///< threads per block
  std::uint64_t dynamic_shared_bytes = 0;  ///< dynamic shared memory per block
  int warps_per_block = 0;                 ///< threads per block rounded up to whole warps
  int active_blocks_per_sm = 0;            ///< resident blocks per SM
  int active_warps_per_sm = 0;             ///< resident warps per SM
  int max_warps_per_sm = 0;                ///< the spec's resident-warp limit
  double occupancy_fraction = 0;           ///< active / max warps, 0..1
  OccupancyLimiter limiter = OccupancyLimiter::warps;  ///< the tightest limit (ties: in enum order)
  int blocks_limit_warps = 0;                          ///< blocks per SM the warp limit allows
  int blocks_limit_registers = 0;  ///< blocks per SM the register file allows (or kUnlimitedBlocks)
  int blocks_limit_shared = 0;     ///< blocks per SM shared memory allows (or kUnlimitedBlocks)
  int blocks_limit_blocks = 0;     ///< the spec's resident-block limit
  int allocated_registers_per_block = 0;               ///< registers a block takes, after rounding
  std::uint64_t allocated_shared_bytes_per_block = 0;  ///< static+dynamic+reserved, rounded up
  std::uint64_t shared_memory_per_sm_bytes = 0;        ///< the carveout the calculator assumes
};

/// Occupancy of `kernel` at `block_size` threads and `dynamic_shared_bytes` on `spec`, as if the
/// kernel had opted in to the spec's largest shared memory per block and left the carveout at its
/// default. Throws std::invalid_argument with one line naming the problem for a configuration
/// that cannot launch (block size 0 or above the spec's or the kernel's limit, registers outside
/// 0..255, static + dynamic shared memory above the opt-in limit, more registers per block than a
/// block may use) and std::runtime_error when this build has no cuda_occupancy.h
/// (occupancy_available()) or the toolkit does not know the spec's compute capability.
[[nodiscard]] Occupancy compute_occupancy(const GpuSpec& spec, const KernelResources& kernel,
                                          int block_size, std::uint64_t dynamic_shared_bytes = 0);

/// True when this build found the toolkit's cuda_occupancy.h.
[[nodiscard]] bool occupancy_available() noexcept;

/// One point of a sweep; `occupancy` is empty (and `error` says why) where the configuration
/// cannot launch.
struct OccupancyPoint {
  int x = 0;                           ///< the swept value (block size, registers or bytes)
  std::optional<Occupancy> occupancy;  ///< the result; empty when it cannot launch
  std::string error;                   ///< why not; empty otherwise
};

/// Block sizes 32, 64, ... up to the kernel's and the spec's limit (one point at that limit when
/// it is below one warp).
[[nodiscard]] std::vector<OccupancyPoint> sweep_block_size(const GpuSpec& spec,
                                                           const KernelResources& kernel,
                                                           std::uint64_t dynamic_shared_bytes = 0);
/// Registers per thread 1..255 at a fixed block size (the kernel's registers are replaced).
[[nodiscard]] std::vector<OccupancyPoint> sweep_registers(const GpuSpec& spec,
                                                          const KernelResources& kernel,
                                                          int block_size,
                                                          std::uint64_t dynamic_shared_bytes = 0);
/// Dynamic shared memory per block from 0 to the spec's opt-in limit minus the static part,
/// in `step_bytes` steps, at a fixed block size (one error point at 0 when the static part alone
/// is above the limit). Throws std::invalid_argument when `step_bytes` is 0.
[[nodiscard]] std::vector<OccupancyPoint> sweep_shared_memory(const GpuSpec& spec,
                                                              const KernelResources& kernel,
                                                              int block_size,
                                                              std::uint64_t step_bytes = 1024);

}  // namespace gpulab
