#include "gpulab/core/traffic_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpulab {

std::string_view to_string(ModelBound bound) noexcept {
  switch (bound) {
    case ModelBound::dram_bandwidth:
      return "DRAM bandwidth";
    case ModelBound::dram_latency:
      return "DRAM latency (occupancy)";
    case ModelBound::l2_bandwidth:
      return "L2 bandwidth";
    case ModelBound::l1_shared:
      return "L1/shared";
    case ModelBound::fp32:
      return "FP32";
    case ModelBound::fp64:
      return "FP64";
    case ModelBound::integer:
      return "integer";
    case ModelBound::special:
      return "special functions (SFU)";
    case ModelBound::issue:
      return "instruction issue";
    case ModelBound::latency:
      return "latency (critical path)";
    case ModelBound::tensor:
      return "tensor cores";
    case ModelBound::atomics:
      return "atomics on one sector (L2)";
    case ModelBound::clock_wait:
      return "clock64() wait";
    case ModelBound::block_launch:
      return "block launch rate";
    case ModelBound::launch:
      return "launch";
  }
  return "launch";
}

namespace {

double as_double(std::uint64_t v) {
  return static_cast<double>(v);
}

// L1 cycles of one kind of global request: one tag lookup per request, at most four sectors
// (128 bytes) per clock, and kPartialSectorWriteCycles more for each sector a store writes only
// part of.
double l1_cycles(const GlobalAccessCounts& c) {
  return std::max(as_double(c.requests), as_double(c.sectors) / 4.0) +
         kPartialSectorWriteCycles * as_double(c.partial_sectors);
}

}  // namespace

double loads_in_flight_per_warp(const MemoryCounters& c, int warps_per_block) {
  if (c.global_load_runs > 0) {
    return std::clamp(as_double(c.global_load.requests) / as_double(c.global_load_runs), 1.0,
                      kMaxLoadsInFlightPerWarp);
  }
  const double warp_phases = as_double(c.path_global_phases) * warps_per_block;
  if (warp_phases <= 0) {
    return 1.0;
  }
  const double loads = as_double(c.global_load.requests + c.global_atomic.requests);
  return std::clamp(loads / warp_phases, 1.0, kMaxLoadsInFlightPerWarp);
}

ModeledTime model_time(const MemoryCounters& c, const LaunchShape& shape, const GpuSpec& spec) {
  const std::uint64_t threads = std::uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  const std::uint64_t blocks = std::uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  if (threads == 0 || blocks == 0) {
    throw std::invalid_argument("time model: the launch has an empty grid or block");
  }
  ModeledTime m;
  m.spec = spec.name;

  KernelResources resources = shape.resources;
  if (!shape.resources_known) {
    resources.registers_per_thread = kAssumedRegisters;
    m.assumptions = "registers unknown: " + std::to_string(kAssumedRegisters) +
                    " per thread assumed, no static shared memory";
  }
  const int warps_per_block = static_cast<int>((threads + 31) / 32);
  int blocks_per_sm = 0;
  try {
    const Occupancy occupancy =
        compute_occupancy(spec, resources, static_cast<int>(threads), shape.dynamic_shared_bytes);
    blocks_per_sm = occupancy.active_blocks_per_sm;
  } catch (const std::runtime_error&) {
    // No cuda_occupancy.h in this build: the warp and block limits alone.
    blocks_per_sm = std::min(spec.max_blocks_per_sm, spec.max_warps_per_sm / warps_per_block);
    m.assumptions += std::string(m.assumptions.empty() ? "" : "; ") +
                     "occupancy from the warp and block limits only (no cuda_occupancy.h)";
  }
  if (blocks_per_sm <= 0) {
    throw std::invalid_argument("time model: a block of " + std::to_string(threads) +
                                " threads cannot be resident on " + spec.name);
  }
  m.active_blocks_per_sm = blocks_per_sm;
  m.occupancy_fraction = static_cast<double>(blocks_per_sm * warps_per_block) /
                         static_cast<double>(spec.max_warps_per_sm);

  const double slots = static_cast<double>(blocks_per_sm) * spec.sm_count;
  m.waves = as_double(blocks) / slots;
  m.tail_factor = m.waves >= 1.0 ? std::ceil(m.waves) / m.waves : 1.0;
  const double resident_blocks = std::min(as_double(blocks), slots);
  const double active_sms = std::min(as_double(blocks), static_cast<double>(spec.sm_count));
  const double clock_hz = spec.boost_clock_mhz * 1e6;

  // DRAM, with Little's law: each resident warp keeps the global loads of one barrier phase in
  // flight together (they do not wait for each other: a tile staged, the two operands of an add),
  // at least one and at most kMaxLoadsInFlightPerWarp.
  const std::uint64_t requests =
      c.global_load.requests + c.global_store.requests + c.global_atomic.requests;
  const std::uint64_t sectors =
      c.global_load.sectors + c.global_store.sectors + c.global_atomic.sectors;
  const double bytes_per_request =
      requests > 0 ? 32.0 * as_double(sectors) / as_double(requests) : 128.0;
  m.loads_in_flight_per_warp = loads_in_flight_per_warp(c, warps_per_block);
  const double in_flight_bytes =
      resident_blocks * warps_per_block * m.loads_in_flight_per_warp * bytes_per_request;
  const double peak_bytes_s = spec.dram_bandwidth_gb_s * 1e9;
  const double latency_bytes_s = in_flight_bytes / (spec.dram_latency_ns * 1e-9);
  const double achievable = std::min(peak_bytes_s, latency_bytes_s);
  m.achievable_dram_gb_s = achievable / 1e9;
  m.dram_s = as_double(c.dram_bytes_read + c.dram_bytes_written) / achievable;

  m.l2_s =
      32.0 * as_double(c.l2_sector_reads + c.l2_sector_writes) / (spec.l2_bandwidth_gb_s * 1e9);

  const double l1_shared_cycles =
      l1_cycles(c.global_load) + l1_cycles(c.global_store) + l1_cycles(c.global_atomic) +
      as_double(c.shared_load.wavefronts + c.shared_store.wavefronts + c.shared_atomic.wavefronts) *
          128.0 / spec.shared_memory_bytes_per_clock_per_sm;
  m.l1_shared_s = l1_shared_cycles / active_sms / clock_hz;

  // The pipes and issue, from the counted warp instructions, over the SMs the grid occupies.
  const double sm_clocks_s = active_sms * clock_hz;
  const auto on_lanes = [&](std::uint64_t warp_instructions, int lanes) {
    return lanes > 0 ? as_double(warp_instructions) * spec.warp_size / lanes / sm_clocks_s : 0.0;
  };
  m.fp32_s =
      std::max(shape.flop / (spec.fp32_tflop_s * 1e12),
               on_lanes(c.fp32_fma_instructions + c.fp32_instructions, spec.fp32_lanes_per_sm));
  m.fp64_s = on_lanes(c.fp64_instructions, spec.fp64_lanes_per_sm);
  m.integer_s = on_lanes(c.integer_instructions, spec.integer_lanes_per_sm);
  m.special_s =
      on_lanes(c.special_instructions + c.conversion_instructions, spec.special_lanes_per_sm);
  const std::uint64_t issued =
      c.fp32_fma_instructions + c.fp32_instructions + c.fp64_instructions + c.integer_instructions +
      c.special_instructions + c.conversion_instructions + c.branch_instructions +
      c.address_instructions + requests + c.shared_load.requests + c.shared_store.requests +
      c.shared_atomic.requests + c.barrier_instructions + c.shuffle_instructions +
      c.vote_instructions + c.warp_sync_instructions + c.tensor_mma;
  // A scheduler issues every clock only with enough warps to cover the clocks a warp waits between
  // dependent instructions; with fewer, at warps / dependent_issue_cycles per clock.
  const double schedulers = spec.warp_issue_per_clock_per_sm;
  const double warps_per_scheduler =
      resident_blocks / active_sms * warps_per_block / std::max(schedulers, 1.0);
  m.issue_per_clock_per_sm =
      schedulers * (spec.dependent_issue_cycles > 0
                        ? std::min(1.0, warps_per_scheduler / spec.dependent_issue_cycles)
                        : 1.0);
  m.issue_s = m.issue_per_clock_per_sm > 0
                  ? as_double(issued) / m.issue_per_clock_per_sm / sm_clocks_s
                  : 0.0;
  // The SMs start blocks at a bounded rate, however little each block does.
  m.block_launch_s = as_double(blocks) / active_sms * spec.block_launch_cycles / clock_hz;

  // The latency term: a block's mean critical path, once per wave.
  const double dram_cycles = spec.dram_latency_ns * 1e-9 * clock_hz;
  const double missed =
      c.l2_sector_reads > 0
          ? std::clamp(as_double(c.dram_bytes_read) / 32.0 / as_double(c.l2_sector_reads), 0.0, 1.0)
          : 1.0;
  const double global_cycles =
      spec.l2_latency_cycles + missed * std::max(0.0, dram_cycles - spec.l2_latency_cycles);
  const double barriers = c.path_phases > blocks ? as_double(c.path_phases - blocks) : 0.0;
  // Loads of one phase are mostly independent of each other (a tile staged, a loop over it): one
  // latency of each kind per phase. Shuffles are a chain (a warp reduction's steps). A warp issues
  // at most one instruction a clock: a clock per shared request and arithmetic instruction of the
  // slowest warp (dependent arithmetic waits longer on a GPU; the counts cannot tell which is).
  const double path_cycles = as_double(c.path_global_phases) * global_cycles +
                             as_double(c.path_shared_phases) * spec.shared_latency_cycles +
                             as_double(c.path_collectives) * spec.collective_latency_cycles +
                             as_double(c.path_shared_requests + c.path_arithmetic) +
                             barriers * spec.barrier_latency_cycles;
  m.latency_s = std::max(m.waves, 1.0) * path_cycles / as_double(blocks) / clock_hz;
  // A spec without BF16 tensor cores (Volta, Turing) runs BF16 as a GPU of that generation
  // cannot: at its FP16 rate, so that such a kernel still has a time on every spec.
  const double bf16_peak =
      spec.bf16_tensor_tflop_s > 0 ? spec.bf16_tensor_tflop_s : spec.fp16_tensor_tflop_s;
  m.tensor_s = as_double(c.tensor_fp16_flop) / (spec.fp16_tensor_tflop_s * 1e12) +
               as_double(c.tensor_bf16_flop) / (bf16_peak * 1e12);
  m.atomic_s = as_double(c.l2_atomic_busiest_sector) * kAtomicSectorCycles / clock_hz;
  m.launch_s = spec.launch_overhead_us * 1e-6;

  double largest = 0;
  const auto consider = [&](double t, ModelBound bound) {
    if (t > largest) {
      largest = t;
      m.bound = bound;
    }
  };
  // DRAM and the SM's load/store path add up: the published transposes on H100 fit within a few
  // percent that way, and are 1.6 to 2 times faster than measured where the two overlap
  // (docs/results/model-ladders-*.md). The larger of the two names the bound.
  const ModelBound dram_bound =
      latency_bytes_s < peak_bytes_s ? ModelBound::dram_latency : ModelBound::dram_bandwidth;
  consider(m.dram_s + m.l1_shared_s,
           m.dram_s >= m.l1_shared_s ? dram_bound : ModelBound::l1_shared);
  consider(m.l2_s, ModelBound::l2_bandwidth);
  consider(m.fp32_s, ModelBound::fp32);
  consider(m.fp64_s, ModelBound::fp64);
  consider(m.integer_s, ModelBound::integer);
  consider(m.special_s, ModelBound::special);
  consider(m.issue_s, ModelBound::issue);
  consider(m.latency_s, ModelBound::latency);
  consider(m.tensor_s, ModelBound::tensor);
  consider(m.atomic_s, ModelBound::atomics);
  consider(m.block_launch_s, ModelBound::block_launch);
  const double body = m.tail_factor * largest;
  if (body < m.launch_s) {
    m.bound = ModelBound::launch;
  }
  m.time_s = m.launch_s + body;
  return m;
}

}  // namespace gpulab
