// The counted-traffic time model (gpulab/core/traffic_model.hpp) on H100 SXM, with hand-worked
// figures: 132 SMs, 1980 MHz, 3350 GB/s DRAM, DRAM latency 600 cycles = 303 ns, launch 3 us.
#include "gpulab/core/traffic_model.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "gpulab/core/specs.hpp"

namespace {

using gpulab::LaunchShape;
using gpulab::MemoryCounters;
using gpulab::ModelBound;

const gpulab::GpuSpec& h100() {
  static const gpulab::GpuSpec spec = *gpulab::find_spec("h100-sxm");
  return spec;
}

// Vector add of n = 2^24 floats, 256 threads per block: 2 loads and 1 store per thread, each a
// coalesced request of 4 sectors; every byte comes from and goes to DRAM once.
MemoryCounters vector_add_counts() {
  const std::uint64_t n = 1ull << 24;
  MemoryCounters c;
  c.global_load = {2 * n / 32, 2 * n / 8, 2 * n * 4, 2 * n};
  c.global_store = {n / 32, n / 8, n * 4, n};
  c.l2_sector_reads = 2 * n / 8;
  c.l2_sector_writes = n / 8;
  c.dram_bytes_read = 2 * n * 4;
  c.dram_bytes_written = n * 4;
  return c;
}

LaunchShape vector_add_shape() {
  LaunchShape shape;
  shape.grid = {(1u << 24) / 256, 1, 1};
  shape.block = {256, 1, 1};
  shape.resources.registers_per_thread = 16;
  shape.resources_known = true;
  return shape;
}

TEST(TrafficModel, StreamingKernelIsDramBandwidthBound) {
  // 8 blocks of 8 warps per SM (the warp limit): 1056 resident blocks, 8448 warps x 128 bytes in
  // flight / 303 ns = 3.57 TB/s > 3.35 TB/s, so the peak holds. DRAM: 201326592 B / 3.35 TB/s =
  // 60.1 us. L1: loads max(2^20 requests, 2^22 / 4) + stores max(2^19, 2^21 / 4) = 1.5 x 2^20
  // cycles over 132 SMs at 1980 MHz = 6.02 us; DRAM and L1 add: 66.1 us. waves = 65536 / 1056 =
  // 62.06, tail 63 / 62.06. t = 3 + 1.0152 x 66.1 = 70.1 us: 90% of the DRAM peak.
  const gpulab::ModeledTime m = gpulab::model_time(vector_add_counts(), vector_add_shape(), h100());
  EXPECT_EQ(m.bound, ModelBound::dram_bandwidth);
  EXPECT_EQ(m.active_blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(m.occupancy_fraction, 1.0);
  EXPECT_NEAR(m.dram_s, 201326592.0 / 3350e9, 1e-12);
  EXPECT_NEAR(m.l1_shared_s * 1e6, 1.5 * 1048576 / 132 / 1980.0, 1e-6);
  EXPECT_NEAR(m.waves, 65536.0 / 1056.0, 1e-9);
  EXPECT_NEAR(m.tail_factor, 63.0 / (65536.0 / 1056.0), 1e-9);
  EXPECT_NEAR(m.time_s, 3e-6 + m.tail_factor * (m.dram_s + m.l1_shared_s), 1e-12);
  EXPECT_NEAR(m.time_s * 1e6, 70.1, 0.1);
  EXPECT_EQ(m.spec, "H100 SXM");
  EXPECT_TRUE(m.assumptions.empty()) << m.assumptions;
}

TEST(TrafficModel, StoresThatWritePartOfASectorCostFourCyclesEach) {
  // A naive transpose's stores: each of 2^15 requests writes 4 bytes into each of 32 sectors.
  // L1: max(2^15, 2^20 / 4) = 2^18 cycles for the sectors plus 4 x 2^20 for the partial writes.
  MemoryCounters c;
  c.global_store = {1u << 15, 1u << 20, 4u << 20, 1u << 20, 1u << 20};
  LaunchShape shape = vector_add_shape();
  shape.grid = {(1u << 20) / 256, 1, 1};
  const gpulab::ModeledTime m = gpulab::model_time(c, shape, h100());
  EXPECT_EQ(m.bound, ModelBound::l1_shared);
  EXPECT_NEAR(m.l1_shared_s * 1e6, (262144.0 + 4.0 * 1048576) / 132 / 1980, 1e-6);
  c.global_store.partial_sectors = 0;  // the same sectors written whole
  EXPECT_NEAR(gpulab::model_time(c, shape, h100()).l1_shared_s * 1e6, 262144.0 / 132 / 1980, 1e-6);
}

TEST(TrafficModel, OneWarpCannotHideDramLatency) {
  // 1 warp, 1000 coalesced loads of 128 bytes: 128 bytes in flight / 303 ns = 0.42 GB/s, so the
  // 128000 bytes take 1000 x 303 ns = 303 us.
  MemoryCounters c;
  c.global_load = {1000, 4000, 128000, 32000};
  c.l2_sector_reads = 4000;
  c.dram_bytes_read = 128000;
  LaunchShape shape;
  shape.block = {32, 1, 1};
  shape.resources.registers_per_thread = 32;
  shape.resources_known = true;
  const gpulab::ModeledTime m = gpulab::model_time(c, shape, h100());
  EXPECT_EQ(m.bound, ModelBound::dram_latency);
  EXPECT_NEAR(m.dram_s, 1000 * 600 / 1980e6, 1e-9);
  EXPECT_NEAR(m.achievable_dram_gb_s, 128.0 / (600 / 1980e6) / 1e9, 1e-9);
}

TEST(TrafficModel, MoreResidentWarpsHideMoreLatency) {
  // The same traffic from 64 warps per SM instead of 8. One block per SM: 132 x 8 warps x 128 B =
  // 135168 B in flight / 303 ns = 446 GB/s; eight per SM: 3.57 TB/s, above the 3.35 TB/s peak.
  // The DRAM term shrinks by 3350 / 446 = 7.5.
  MemoryCounters c = vector_add_counts();
  LaunchShape few = vector_add_shape();
  few.grid = {132, 1, 1};  // one block per SM: 8 warps, 8 x 132 x 128 B in flight
  LaunchShape many = few;
  many.grid = {132 * 8, 1, 1};
  const auto slow = gpulab::model_time(c, few, h100());
  const auto fast = gpulab::model_time(c, many, h100());
  EXPECT_EQ(slow.bound, ModelBound::dram_latency);
  EXPECT_EQ(fast.bound, ModelBound::dram_bandwidth);
  EXPECT_NEAR(slow.dram_s / fast.dram_s, 3350e9 / (135168 / (600 / 1980e6)), 1e-9);
}

TEST(TrafficModel, AWarpKeepsAPhasesLoadsInFlightTogether) {
  // One block per SM as above (446 GB/s with one load in flight per warp), but each warp's two
  // loads per phase (a vector add's operands) in flight together: twice the bytes in flight.
  MemoryCounters c = vector_add_counts();
  LaunchShape few = vector_add_shape();
  few.grid = {132, 1, 1};
  const auto one = gpulab::model_time(c, few, h100());
  EXPECT_DOUBLE_EQ(one.loads_in_flight_per_warp, 1.0);  // no critical path counted: 1
  c.path_global_phases = (1u << 24) / 256;              // one phase per block of the 2^16
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 2.0);
  const auto two = gpulab::model_time(c, few, h100());
  EXPECT_EQ(two.bound, ModelBound::dram_latency);
  EXPECT_DOUBLE_EQ(two.loads_in_flight_per_warp, 2.0);
  EXPECT_NEAR(two.achievable_dram_gb_s, 2 * one.achievable_dram_gb_s, 1e-9);
  EXPECT_NEAR(one.dram_s / two.dram_s, 2.0, 1e-9);
}

TEST(TrafficModel, LoadsInFlightPerWarpAreAtLeastOneAndAtMostTheLimit) {
  MemoryCounters c;
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 1.0);  // nothing loads
  c.path_global_phases = 10;
  c.global_store.requests = 1000;  // stores are not waited for
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 1.0);
  c.global_load.requests = 40;  // fewer loads than warp phases: warps that do not load
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 1.0);
  c.global_load.requests = 200;
  c.global_atomic.requests = 40;  // atomics return a value too: 3 per warp and phase
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 3.0);
  c.global_load.requests = 100000;  // a long loop in one phase: as far as it is unrolled
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), gpulab::kMaxLoadsInFlightPerWarp);
  // Where runs of loads were counted, they decide: a store or atomic after every second load.
  c.global_load_runs = 50000;
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 2.0);
  c.global_load_runs = 100000;  // one load, then the atomic that needs it (a histogram)
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), 1.0);
  c.global_load_runs = 10;  // a long loop with no store: as far as it is unrolled
  EXPECT_DOUBLE_EQ(gpulab::loads_in_flight_per_warp(c, 8), gpulab::kMaxLoadsInFlightPerWarp);
}

TEST(TrafficModel, TooFewWarpsCannotIssueEveryClock) {
  // 2^30 integer instructions on 132 SMs. With 16 warps per SM (4 per scheduler, each waiting 4
  // clocks between dependent instructions) the SM issues 4 a clock; with 1 warp per SM, one
  // instruction every 4 clocks: 16 times slower.
  MemoryCounters c;
  c.integer_instructions = 1u << 30;
  LaunchShape full;
  full.grid = {132, 1, 1};
  full.block = {512, 1, 1};
  full.resources.registers_per_thread = 32;
  full.resources_known = true;
  LaunchShape lone = full;
  lone.block = {32, 1, 1};
  const auto fast = gpulab::model_time(c, full, h100());
  const auto slow = gpulab::model_time(c, lone, h100());
  EXPECT_DOUBLE_EQ(fast.issue_per_clock_per_sm, 4.0);
  EXPECT_DOUBLE_EQ(slow.issue_per_clock_per_sm, 0.25);
  EXPECT_NEAR(slow.issue_s, 16 * fast.issue_s, 1e-12);
  EXPECT_NEAR(fast.issue_s, (1u << 30) / 4.0 / (132 * 1980e6), 1e-12);
  EXPECT_EQ(slow.bound, ModelBound::issue);
}

TEST(TrafficModel, SmsStartBlocksAtABoundedRate) {
  // Vector add in blocks of 32 threads: 2^19 blocks, 3972 per SM, one every 158 clocks at 1980
  // MHz: 317 us, five times the DRAM term.
  LaunchShape shape = vector_add_shape();
  shape.grid = {1u << 19, 1, 1};
  shape.block = {32, 1, 1};
  const auto m = gpulab::model_time(vector_add_counts(), shape, h100());
  EXPECT_NEAR(m.block_launch_s, (1u << 19) / 132.0 * 158 / 1980e6, 1e-12);
  EXPECT_EQ(m.bound, ModelBound::block_launch);
  EXPECT_EQ(gpulab::to_string(m.bound), "block launch rate");
  // In blocks of 256 the same work starts 8 times fewer blocks: DRAM bounds again.
  const auto wide = gpulab::model_time(vector_add_counts(), vector_add_shape(), h100());
  EXPECT_NEAR(wide.block_launch_s, m.block_launch_s / 8, 1e-12);
  EXPECT_EQ(wide.bound, ModelBound::dram_bandwidth);
}

TEST(TrafficModel, BankConflictsScaleTheSharedTerm) {
  // 2^20 wavefronts over 132 SMs at 1980 MHz = 4.01 us; 32-way conflicts make it 32 times that.
  MemoryCounters clean;
  clean.shared_load = {1u << 20, 1u << 20, 0, 32u << 20};
  MemoryCounters conflicted = clean;
  conflicted.shared_load.wavefronts = 32u << 20;
  conflicted.shared_load.bank_conflicts = 31u << 20;
  const LaunchShape shape = vector_add_shape();
  const auto a = gpulab::model_time(clean, shape, h100());
  const auto b = gpulab::model_time(conflicted, shape, h100());
  EXPECT_NEAR(a.l1_shared_s * 1e6, 1048576.0 / 132 / 1980, 1e-6);
  EXPECT_NEAR(b.l1_shared_s, 32 * a.l1_shared_s, 1e-12);
  EXPECT_EQ(b.bound, ModelBound::l1_shared);
}

TEST(TrafficModel, OneBlockPastAFullWaveNearlyDoublesTheTime) {
  LaunchShape shape = vector_add_shape();
  shape.grid = {1056 + 1, 1, 1};
  const auto m = gpulab::model_time(vector_add_counts(), shape, h100());
  EXPECT_NEAR(m.tail_factor, 2.0 / (1057.0 / 1056.0), 1e-9);
}

TEST(TrafficModel, DeclaredFlopsCanBound) {
  LaunchShape shape = vector_add_shape();
  shape.flop = 66.9e12 * 1e-3;  // 1 ms at the FP32 peak
  const auto m = gpulab::model_time(vector_add_counts(), shape, h100());
  EXPECT_EQ(m.bound, ModelBound::fp32);
  EXPECT_NEAR(m.fp32_s, 1e-3, 1e-12);
}

TEST(TrafficModel, AtomicsOnOneSectorSerialize) {
  // 1e6 atomic requests on one sector: one after the other in L2, whatever else the launch does.
  MemoryCounters c = vector_add_counts();
  c.l2_atomic_busiest_sector = 1000000;
  const auto m = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NEAR(m.atomic_s, 1e6 * gpulab::kAtomicSectorCycles / 1980e6, 1e-12);
  EXPECT_EQ(m.bound, ModelBound::atomics);
  EXPECT_NEAR(m.time_s, 3e-6 + m.tail_factor * m.atomic_s, 1e-12);
  EXPECT_EQ(gpulab::to_string(m.bound), "atomics on one sector (L2)");
  // The same requests spread so that no sector takes more than a few: the term vanishes.
  c.l2_atomic_busiest_sector = 4;
  const auto spread = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NE(spread.bound, ModelBound::atomics);
  EXPECT_LT(spread.time_s, m.time_s / 10);
}

TEST(TrafficModel, TensorCoreFlopsRunAtTheDensePeakOfTheirType) {
  MemoryCounters c = vector_add_counts();
  c.tensor_fp16_flop = 989'400'000'000;  // 1 ms at H100 SXM's dense FP16 peak (989.4 TFLOP/s)
  const auto fp16 = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_EQ(fp16.bound, ModelBound::tensor);
  EXPECT_NEAR(fp16.tensor_s, 989.4e9 / (h100().fp16_tensor_tflop_s * 1e12), 1e-12);
  EXPECT_EQ(gpulab::to_string(fp16.bound), "tensor cores");
  c.tensor_bf16_flop = c.tensor_fp16_flop;  // and as much again on bfloat16 inputs
  const auto both = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NEAR(both.tensor_s, fp16.tensor_s + 989.4e9 / (h100().bf16_tensor_tflop_s * 1e12), 1e-12);
  // V100 has no BF16 tensor cores: BF16 work is costed at its FP16 rate.
  const gpulab::GpuSpec v100 = *gpulab::find_spec("v100");
  c.tensor_fp16_flop = 0;
  EXPECT_NEAR(gpulab::model_time(c, vector_add_shape(), v100).tensor_s,
              989.4e9 / (v100.fp16_tensor_tflop_s * 1e12), 1e-12);
}

// Counted warp instructions on H100 SXM (132 SMs at 1980 MHz, 128 FP32 lanes, 64 integer, 16
// special, 4 schedulers); vector add's 65536 blocks cover every SM.
TEST(TrafficModel, EachPipeRunsItsWarpInstructionsOnItsLanes) {
  const double sm_clocks = 132 * 1980e6;
  MemoryCounters c = vector_add_counts();
  c.fp32_fma_instructions = 4'000'000'000;  // 32 x 4e9 / 128 lanes = 1e9 SM clocks
  auto m = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NEAR(m.fp32_s, 1e9 / sm_clocks, 1e-12);
  // 128 lanes take 4 warp instructions a clock, as the schedulers issue: with the memory requests
  // issued too, issue bounds. A100's 64 FP32 lanes take half that: FP32 bounds.
  EXPECT_EQ(m.bound, ModelBound::issue);
  const gpulab::GpuSpec a100 = *gpulab::find_spec("a100");
  m = gpulab::model_time(c, vector_add_shape(), a100);
  EXPECT_NEAR(m.fp32_s, 4e9 * 32 / 64 / (108 * 1410e6), 1e-12);
  EXPECT_EQ(m.bound, ModelBound::fp32);
  c.fp32_fma_instructions = 0;
  c.integer_instructions = 2'000'000'000;  // 32 x 2e9 / 64 lanes = 1e9
  m = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NEAR(m.integer_s, 1e9 / sm_clocks, 1e-12);
  EXPECT_EQ(m.bound, ModelBound::integer);
  c.integer_instructions = 0;
  c.special_instructions = 300'000'000;  // (3e8 + 2e8) x 32 / 16 lanes = 1e9
  c.conversion_instructions = 200'000'000;
  m = gpulab::model_time(c, vector_add_shape(), h100());
  EXPECT_NEAR(m.special_s, 1e9 / sm_clocks, 1e-12);
  EXPECT_EQ(m.bound, ModelBound::special);
  EXPECT_EQ(gpulab::to_string(m.bound), "special functions (SFU)");
  // FP64: 64 lanes on H100, 2 on L4 (CUDA C++ Programming Guide's throughput table).
  c = vector_add_counts();
  c.fp64_instructions = 2'000'000'000;
  EXPECT_EQ(gpulab::model_time(c, vector_add_shape(), h100()).bound, ModelBound::fp64);
  const gpulab::GpuSpec l4 = *gpulab::find_spec("l4");
  EXPECT_NEAR(gpulab::model_time(c, vector_add_shape(), l4).fp64_s,
              2e9 * 32 / 2 / (l4.sm_count * l4.boost_clock_mhz * 1e6), 1e-9);
}

TEST(TrafficModel, AMixOfPipesIsBoundByIssue) {
  // Each pipe at half its rate or less, together 4 warp instructions a clock: the schedulers'.
  MemoryCounters c = vector_add_counts();
  c.fp32_fma_instructions = 2'000'000'000;  // FP32 pipe: 5e8 clocks
  c.integer_instructions = 1'000'000'000;   // integer pipe: 5e8
  c.branch_instructions = 1'000'000'000;
  const auto m = gpulab::model_time(c, vector_add_shape(), h100());
  const double issued = 4e9 + 2.0 * (1 << 24) / 32 + (1 << 24) / 32.0;  // + memory requests
  EXPECT_NEAR(m.issue_s, issued / 4 / (132 * 1980e6), 1e-12);
  EXPECT_EQ(m.bound, ModelBound::issue);
  EXPECT_EQ(gpulab::to_string(m.bound), "instruction issue");
}

TEST(TrafficModel, ABlocksCriticalPathIsPaidOncePerWave) {
  // Per block: 10 phases (9 barriers), a global load in one, shared memory in 4, 20 shared
  // requests, 10 shuffles and 100 arithmetic instructions on its slowest warps: with the load
  // served by DRAM, 600 + 4 x 29 + 10 x 29 + (20 + 100) x 1 + 9 x 20 = 1306 clocks (more than the
  // 160 blocks per SM take to start: 160 x 158 = 25280 clocks against 20 x 1306).
  const auto path = [](std::uint32_t blocks, bool dram) {
    MemoryCounters c;
    c.path_phases = 10ull * blocks;
    c.path_global_phases = blocks;
    c.path_shared_phases = 4ull * blocks;
    c.path_shared_requests = 20ull * blocks;
    c.path_collectives = 10ull * blocks;
    c.path_arithmetic = 100ull * blocks;
    c.l2_sector_reads = 1000;
    c.dram_bytes_read = dram ? 1000 * 32 : 0;  // every read missed L2, or none did
    return c;
  };
  // 21120 blocks of 256 threads, 8 resident per SM: 20 waves.
  LaunchShape shape = vector_add_shape();
  shape.grid = {21120, 1, 1};
  auto m = gpulab::model_time(path(21120, true), shape, h100());
  EXPECT_NEAR(m.waves, 20.0, 1e-12);
  EXPECT_NEAR(m.latency_s, 20 * 1306 / 1980e6, 1e-12);
  EXPECT_EQ(m.bound, ModelBound::latency);
  EXPECT_EQ(gpulab::to_string(m.bound), "latency (critical path)");
  // Reads that hit L2 wait L2's latency instead: 262 clocks where DRAM took 600.
  m = gpulab::model_time(path(21120, false), shape, h100());
  EXPECT_NEAR(m.latency_s, 20 * (1306 - 600 + 262) / 1980e6, 1e-12);
  // Half a wave still takes a whole path.
  shape.grid = {528, 1, 1};
  m = gpulab::model_time(path(528, true), shape, h100());
  EXPECT_NEAR(m.latency_s, 1306 / 1980e6, 1e-12);
}

TEST(TrafficModel, NothingCountedIsLaunchBound) {
  // One block per SM: starting it (158 clocks) takes less than the launch.
  LaunchShape shape = vector_add_shape();
  shape.grid = {132, 1, 1};
  const auto m = gpulab::model_time(MemoryCounters{}, shape, h100());
  EXPECT_EQ(m.bound, ModelBound::launch);
  EXPECT_NEAR(m.time_s, 3e-6 + 158 / 1980e6, 1e-15);
  EXPECT_EQ(gpulab::to_string(m.bound), "launch");
}

TEST(TrafficModel, UnknownRegistersAreAssumedAndSaidSo) {
  LaunchShape shape = vector_add_shape();
  shape.resources_known = false;
  const auto m = gpulab::model_time(vector_add_counts(), shape, h100());
  EXPECT_NE(m.assumptions.find("32 per thread assumed"), std::string::npos) << m.assumptions;
}

TEST(TrafficModel, ImpossibleLaunchesAreRejected) {
  LaunchShape shape = vector_add_shape();
  shape.grid = {0, 1, 1};
  EXPECT_THROW(static_cast<void>(gpulab::model_time(MemoryCounters{}, shape, h100())),
               std::invalid_argument);
  shape = vector_add_shape();
  shape.dynamic_shared_bytes = 1ull << 30;  // no SM has a GiB of shared memory
  EXPECT_THROW(static_cast<void>(gpulab::model_time(MemoryCounters{}, shape, h100())),
               std::invalid_argument);
}

TEST(TrafficModel, EverySpecHasItsMemoryFigures) {
  for (const gpulab::GpuSpec& spec : gpulab::all_specs()) {
    SCOPED_TRACE(spec.key);
    EXPECT_GT(spec.l2_bandwidth_gb_s, spec.dram_bandwidth_gb_s);
    EXPECT_EQ(spec.shared_memory_bytes_per_clock_per_sm, 128);
    EXPECT_GT(spec.dram_latency_ns, 200);
    EXPECT_LT(spec.dram_latency_ns, 600);
    EXPECT_GT(spec.launch_overhead_us, 0);
    EXPECT_NE(spec.memory_model_source.find("L2"), std::string::npos);
    // The instruction figures: 4 schedulers, FP32 lanes from the peak (64 or 128 per SM).
    EXPECT_EQ(spec.warp_issue_per_clock_per_sm, 4);
    EXPECT_TRUE(spec.fp32_lanes_per_sm == 64 || spec.fp32_lanes_per_sm == 128)
        << spec.fp32_lanes_per_sm;
    EXPECT_GE(spec.fp64_lanes_per_sm, 2);
    EXPECT_GT(spec.l2_latency_cycles, spec.shared_latency_cycles);
    EXPECT_LT(spec.l2_latency_cycles, spec.dram_latency_ns * spec.boost_clock_mhz * 1e-3);
    EXPECT_NE(spec.instruction_model_source.find("Programming Guide"), std::string::npos);
    EXPECT_EQ(spec.dependent_issue_cycles, 4);
    EXPECT_GT(spec.block_launch_cycles, 0);
  }
  // The published figure: A100's 5120 bytes per clock at 1410 MHz.
  EXPECT_NEAR(gpulab::find_spec("a100")->l2_bandwidth_gb_s, 5120 * 1.41, 1e-9);
}

}  // namespace
