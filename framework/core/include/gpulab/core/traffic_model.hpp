// A modeled GPU time for a kernel launch, computed from what the sim counted it doing to memory
// (counters.hpp) and a spec's figures (specs.hpp). It follows the code: coalescing changes the
// sectors, tiling changes the L2 and DRAM traffic, padding changes the wavefronts, block size and
// registers change the occupancy and so the latency hiding. Every result is "modeled (SPEC)", never
// measured; docs/sim.md, "The time model", gives the equations and their limits.
//
//   t = launch overhead + tail x max(DRAM + L1/shared, L2, pipes, issue, tensor, atomics, latency,
//                                    blocks)
//
//   DRAM      (dram bytes read + written) / min(DRAM bandwidth, bytes in flight / DRAM latency)
//             bytes in flight = resident warps x loads in flight per warp x bytes per global
//             request (Little's law); a warp's loads in flight are its global load requests per
//             run of loads (loads with no global store or atomic between them), at least 1, at
//             most kMaxLoadsInFlightPerWarp
//   L2        (L2 sectors read + written) x 32 / L2 bandwidth
//   L1/shared per SM: global requests' L1 cycles (max(1, sectors / 4) each: one tag lookup and at
//             most 128 bytes per clock, plus kPartialSectorWriteCycles per sector a store writes
//             only part of) plus shared-memory wavefronts (one per clock), spread over the SMs
//             the grid occupies
//   pipes     per pipe, its counted warp instructions x 32 / (its lanes per SM x SMs x clock):
//             FP32 (FMA and other FP32; at least the declared FLOPs at the FP32 peak), FP64,
//             integer, special functions and conversions (counted by the gpulab_count_ops plugin)
//   issue     every counted warp instruction (arithmetic, addresses and loop control, branches,
//             memory requests, barriers, warp collectives, mma_sync) / (issue rate x SMs x clock),
//             issue rate = schedulers per SM x min(1, resident warps per scheduler / clocks
//             between a warp's dependent instructions): too few warps cannot issue every clock
//   blocks    blocks / SMs x clocks between two blocks an SM starts / clock
//   tensor    counted mma_sync FLOPs / the dense tensor peak of their input type (FP16, BF16)
//   atomics   atomic requests on the busiest 32-byte sector x kAtomicSectorCycles / clock: atomics
//             on one sector are applied in L2 one request after the other, however many SMs send
//             them
//   latency   max(waves, 1) x a block's mean critical path / clock: per barrier phase, a global
//             load's latency if the block loads (L2's, DRAM's for the share of reads L2 missed),
//             a shared load's if it uses shared memory, the latency of each warp collective of
//             its slowest warp (a warp reduction's chain), an issue clock per shared request and
//             arithmetic instruction of that warp, and the barrier
//   tail      ceil(waves) / waves for waves = blocks / (resident blocks per SM x SMs) >= 1
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab {

/// The launch being modeled: its configuration and resources.
struct LaunchShape {
  std::array<std::uint32_t, 3> grid{1, 1, 1};   ///< blocks, x y z
  std::array<std::uint32_t, 3> block{1, 1, 1};  ///< threads per block, x y z
  std::uint64_t dynamic_shared_bytes = 0;       ///< dynamic shared memory per block
  KernelResources resources;                    ///< registers and static shared memory
  bool resources_known = false;  ///< false: registers assumed (kAssumedRegisters), static smem 0
  double flop = 0;               ///< FLOPs the launch declares (0: none declared)
};

/// Registers per thread assumed when the kernel's are unknown (not in the ptxas kernel table).
inline constexpr int kAssumedRegisters = 32;

/// SM clocks a store takes on the L1-to-L2 path for each 32-byte sector it writes only part of.
/// NVIDIA publishes no figure; 4 is fitted to one published measurement, a naive transpose (every
/// lane writes its own sector) on H100 80GB HBM3: 475.5 GB/s for a 32768 x 32768 float matrix
/// (yencal, "Optimizing GPU Matrix Transpose: From 14% to 88% of Peak Bandwidth", 2025), which
/// is about 4.4 clocks per element per SM at 1980 MHz. An assumption: docs/sim.md.
inline constexpr double kPartialSectorWriteCycles = 4;

/// SM clocks one global atomic request holds its 32-byte sector in L2: the next atomic request on
/// the same sector waits that long. NVIDIA publishes no figure for its recent GPUs; 25.5 is fitted
/// to one measurement, the catalog's global-atomics histogram on an H200 SXM (2^26 uniform keys in
/// 256 bins, 1024 blocks of 256 threads: 17.30 ms, docs/results/h200-sxm-2026-11-26.md), whose
/// busiest sector took 1,339,809 atomic requests on sim: 17.30 ms x 1980 MHz / 1,339,809. An
/// assumption: docs/sim.md.
inline constexpr double kAtomicSectorCycles = 25.5;

/// Global loads one warp keeps in flight at most in the DRAM term. A warp issues the loads of a
/// phase without waiting until an instruction uses one, so straight-line loads (a tile staged, an
/// add's two operands) overlap; a loop's loads overlap as far as the compiler unrolls it, and
/// nvcc does not document how far it unrolls a loop of unknown trip count. 4 is an assumption, not
/// fitted: docs/sim.md, section 10.
inline constexpr double kMaxLoadsInFlightPerWarp = 4;

/// Global loads one warp of `warps_per_block` keeps in flight in the DRAM term: the counted load
/// requests per run of loads (global_load_runs: a store or atomic may need what was loaded, so it
/// ends a run), clamped to [1, kMaxLoadsInFlightPerWarp]. Counts without runs (files from before
/// they were counted, the modeled GEMMs): the load and atomic requests per warp and barrier phase
/// that loads, clamped the same way; 1 when no phase loads.
[[nodiscard]] double loads_in_flight_per_warp(const MemoryCounters& counters, int warps_per_block);

/// Which term bounds a modeled time.
enum class ModelBound {
  dram_bandwidth,
  dram_latency,
  l2_bandwidth,
  l1_shared,
  fp32,
  fp64,
  integer,
  special,
  issue,
  latency,
  tensor,
  atomics,
  clock_wait,
  block_launch,
  launch
};

/// "DRAM bandwidth", "DRAM latency (occupancy)", "L2 bandwidth", "L1/shared", "FP32", "FP64",
/// "integer", "special functions (SFU)", "instruction issue", "latency (critical path)",
/// "tensor cores", "atomics on one sector (L2)", "clock64() wait", "block launch rate", "launch".
[[nodiscard]] std::string_view to_string(ModelBound bound) noexcept;

/// The modeled time of one launch and its terms (seconds).
struct ModeledTime {
  double time_s = 0;          ///< launch + tail x the largest term (the header's equation)
  double dram_s = 0;          ///< DRAM bytes at the achievable DRAM bandwidth
  double l2_s = 0;            ///< L2 sectors at the L2 bandwidth
  double l1_shared_s = 0;     ///< L1 request cycles and shared wavefronts per SM
  double fp32_s = 0;          ///< counted FP32 instructions on the FP32 lanes (or declared FLOPs)
  double fp64_s = 0;          ///< counted FP64 instructions on the FP64 lanes
  double integer_s = 0;       ///< counted integer instructions on the integer lanes
  double special_s = 0;       ///< counted special functions and conversions on their lanes
  double issue_s = 0;         ///< every counted warp instruction at the schedulers' issue rate
  double block_launch_s = 0;  ///< the blocks at the SMs' rate of starting blocks
  double latency_s = 0;       ///< waves x a block's mean critical path
  double tensor_s = 0;        ///< counted tensor-core FLOPs at the dense peaks
  double atomic_s = 0;        ///< the busiest sector's atomics, one after the other
  double launch_s = 0;        ///< launch overhead
  double tail_factor = 1;     ///< ceil(waves) / waves
  double waves = 0;           ///< blocks / blocks resident at once
  double achievable_dram_gb_s = 0;        ///< min(peak, bytes in flight / latency)
  double loads_in_flight_per_warp = 1;    ///< in the DRAM term: loads_in_flight_per_warp()
  double issue_per_clock_per_sm = 0;      ///< warp instructions an SM issues per clock
  double occupancy_fraction = 0;          ///< resident warps / max warps per SM
  int active_blocks_per_sm = 0;           ///< resident blocks per SM (0: cannot launch)
  ModelBound bound = ModelBound::launch;  ///< the largest term (of DRAM + L1/shared: the larger)
  std::string spec;                       ///< the spec's name, for "modeled (SPEC)"
  std::string assumptions;  ///< what was assumed (unknown registers, ...); empty when nothing
};

/// Models one launch on `spec`. Throws std::invalid_argument for an empty grid or block, and for
/// a launch that cannot run on the spec (occupancy 0), naming the reason.
[[nodiscard]] ModeledTime model_time(const MemoryCounters& counters, const LaunchShape& shape,
                                     const GpuSpec& spec);

}  // namespace gpulab
