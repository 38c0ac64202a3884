// The register-blocked GEMM's closed form and the modeled library GEMM built on it
// (gpulab/core/gemm_model.hpp). The closed form's exactness against the sim's counts of the real
// kernels is tests/kernels/gemm_blocked_test.cpp; here its edge tiles, its L2 rule and what the
// model makes of it on H100 SXM (FP32 peak 66.9 TFLOP/s, 132 SMs, L2 50 MiB).
#include "gpulab/core/gemm_model.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace gpulab {
namespace {

const GpuSpec& h100() {
  static const GpuSpec spec = *find_spec("h100-sxm");
  return spec;
}

// The kernels' resources as ptxas reported them for sm_90 (the kernel table of this build is not
// linked here): 120, 71 and 66 registers.
std::optional<KernelResources> sm90_resources(std::string_view kernel) {
  constexpr int kRegisters[] = {120, 71, 66};
  for (std::size_t i = 0; i < std::size(kGemmTilings); ++i) {
    if (kGemmTilings[i].kernel == kernel) {
      return KernelResources{kRegisters[i],
                             4 * static_cast<std::uint64_t>(kGemmTilings[i].shared_floats()), 0};
    }
  }
  return std::nullopt;
}

double peak_seconds(const GemmShape& s, const GpuSpec& spec) {
  return 2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch) /
         (spec.fp32_tflop_s * 1e12);
}

TEST(GemmModel, TilingsDescribeThemselves) {
  EXPECT_EQ(kGemmTilings[0].describe(), "128 x 128 tiles, 8 x 8 per thread");
  EXPECT_EQ(kGemmTilings[0].threads(), 256);
  EXPECT_EQ(kGemmTilings[2].threads(), 64);
  EXPECT_EQ(kGemmTilings[0].shared_floats(), 8 * 132 + 8 * 128);
}

TEST(GemmModel, ABlocksFiguresFollowItsTile) {
  // One 128 x 128 tile, K = 8: one k-tile. A: 128 rows of 8 floats, 4 rows a request (32
  // requests, 128 sectors); B: 8 rows of 128 floats, 32 a request (32 requests, 128 sectors).
  // 8 warps x 8 x 8 x 8 multiply-adds; 8 x 8 x 4 16-byte shared loads of 4 wavefronts; C: 64 KiB
  // in 128-float requests (128 requests, 2048 sectors).
  const MemoryCounters c = gemm_tiling_counters(kGemmTilings[0], {128, 128, 8, 1}, 50u << 20);
  EXPECT_EQ(c.global_load.requests, 64u);
  EXPECT_EQ(c.global_load.sectors, 256u);
  EXPECT_EQ(c.global_store.requests, 128u);
  EXPECT_EQ(c.global_store.sectors, 2048u);
  EXPECT_EQ(c.fp32_fma_instructions, 8u * 512u);
  EXPECT_EQ(c.fp32_flop, 2u * 128u * 128u * 8u);
  EXPECT_EQ(c.shared_load.requests, 8u * 8u * 4u);
  EXPECT_EQ(c.shared_load.wavefronts, 4u * 8u * 8u * 4u);
  EXPECT_EQ(c.shared_store.requests, 64u);
  EXPECT_EQ(c.barrier_instructions, 16u);
  EXPECT_EQ(c.path_phases, 3u);
  EXPECT_EQ(c.dram_bytes_read, 2u * 128u * 8u * 4u);
  EXPECT_EQ(c.dram_bytes_written, 128u * 128u * 4u);
}

TEST(GemmModel, EdgeTilesComputeWholeTilesButMoveOnlyTheMatrices) {
  // 100 x 72 x 32 fits in one 128 x 128 tile and 4 k-tiles: the multiply-adds of 128 x 128 x 32,
  // the loads and stores of what is inside the matrices.
  const GemmTiling& t = kGemmTilings[0];
  const MemoryCounters ragged = gemm_tiling_counters(t, {100, 72, 32, 1}, 50u << 20);
  const MemoryCounters whole = gemm_tiling_counters(t, {128, 128, 32, 1}, 50u << 20);
  EXPECT_EQ(ragged.fp32_fma_instructions, whole.fp32_fma_instructions);
  EXPECT_EQ(ragged.shared_load.requests, whole.shared_load.requests);
  EXPECT_LT(ragged.global_load.sectors, whole.global_load.sectors);
  EXPECT_LT(ragged.global_store.sectors, whole.global_store.sectors);
  EXPECT_EQ(ragged.global_load.bytes_requested, 4u * (100u + 72u) * 32u);
  EXPECT_EQ(ragged.global_store.bytes_requested, 4u * 100u * 72u);
}

TEST(GemmModel, BIsReadOncePerWaveWhenItDoesNotFitInL2) {
  // 1024^3 in 128 x 128 tiles: 8 x 8 blocks. With 16 resident at once, two rows of tiles run
  // together and share B's k-slabs: B comes from DRAM 8 / 2 = 4 times when L2 cannot keep it.
  const GemmShape s{1024, 1024, 1024, 1};
  const std::uint64_t b_bytes = 4u << 20;
  const MemoryCounters fits = gemm_tiling_counters(kGemmTilings[0], s, 8 * b_bytes, 16);
  const MemoryCounters spills = gemm_tiling_counters(kGemmTilings[0], s, b_bytes / 2, 16);
  const MemoryCounters all_at_once = gemm_tiling_counters(kGemmTilings[0], s, b_bytes / 2);
  EXPECT_EQ(fits.dram_bytes_read, 2 * b_bytes);
  EXPECT_EQ(spills.dram_bytes_read, b_bytes + 4 * b_bytes);
  EXPECT_EQ(all_at_once.dram_bytes_read, 2 * b_bytes);
  EXPECT_EQ(fits.l2_sector_reads, spills.l2_sector_reads);
}

TEST(GemmModel, ReadingCLoadsEachTileOfCOnceAsItIsStored) {
  // 100 x 72 of depth 32 in 64 x 64 tiles, once overwriting C and once adding to it (beta != 0):
  // the second loads C as the first stores it, through L2 and once from DRAM.
  GemmShape s{100, 72, 32, 1};
  const MemoryCounters overwrite = gemm_tiling_counters(kGemmTilings[1], s, 1u << 30);
  s.reads_c = true;
  const MemoryCounters accumulate = gemm_tiling_counters(kGemmTilings[1], s, 1u << 30);
  EXPECT_EQ(accumulate.global_load.requests,
            overwrite.global_load.requests + overwrite.global_store.requests);
  EXPECT_EQ(accumulate.global_load.sectors,
            overwrite.global_load.sectors + overwrite.global_store.sectors);
  EXPECT_EQ(accumulate.global_load.bytes_requested,
            overwrite.global_load.bytes_requested + 4u * 100u * 72u);
  EXPECT_EQ(accumulate.l2_sector_reads, overwrite.l2_sector_reads + overwrite.global_store.sectors);
  EXPECT_EQ(accumulate.dram_bytes_read,
            overwrite.dram_bytes_read + 32 * overwrite.global_store.sectors);
  EXPECT_EQ(accumulate.global_store, overwrite.global_store);
  EXPECT_EQ(accumulate.dram_bytes_written, overwrite.dram_bytes_written);
  // C already in L2 (an earlier kernel wrote it): its reads do not come from DRAM.
  const MemoryCounters held =
      gemm_tiling_counters(kGemmTilings[1], s, 1u << 30, 0, overwrite.global_store.sectors);
  EXPECT_EQ(held.dram_bytes_read, overwrite.dram_bytes_read);
}

TEST(GemmModel, BadShapesAreRefused) {
  EXPECT_THROW((void)gemm_tiling_counters(kGemmTilings[0], {-1, 4, 4, 1}, 1),
               std::invalid_argument);
  EXPECT_THROW((void)gemm_tiling_counters(kGemmTilings[0], {4, 0, 4, 1}, 1), std::invalid_argument);
  EXPECT_THROW((void)gemm_tiling_counters(kGemmTilings[0], {4, 4, 4, 0}, 1), std::invalid_argument);
}

TEST(GemmModel, TheLaunchIsTheTilesGrid) {
  const LaunchShape unknown = gemm_tiling_launch(kGemmTilings[1], {100, 200, 10, 3}, std::nullopt);
  EXPECT_EQ(unknown.grid, (std::array<std::uint32_t, 3>{4, 2, 3}));
  EXPECT_EQ(unknown.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
  EXPECT_FALSE(unknown.resources_known);
  EXPECT_EQ(unknown.resources.static_shared_bytes, 4u * (8 * 68 + 8 * 64));
  const LaunchShape known =
      gemm_tiling_launch(kGemmTilings[0], {128, 128, 8, 1}, sm90_resources(kGemmTilings[0].kernel));
  EXPECT_TRUE(known.resources_known);
  EXPECT_EQ(known.resources.registers_per_thread, 120);
}

TEST(GemmModel, ATilingsModelIsTheTimeModelOnItsCountsAndLaunch) {
  // 2048^3 on H100: 256 blocks of 128 x 128, all resident (2 per SM), so B is read once.
  const GemmShape s{2048, 2048, 2048, 1};
  const auto resources = sm90_resources(kGemmTilings[0].kernel);
  const ModeledGemm g = model_gemm_tiling(kGemmTilings[0], s, h100(), resources);
  EXPECT_EQ(g.tiling.kernel, kGemmTilings[0].kernel);
  EXPECT_EQ(g.launch.grid, gemm_tiling_launch(kGemmTilings[0], s, resources).grid);
  EXPECT_EQ(g.counters, gemm_tiling_counters(kGemmTilings[0], s, h100().l2_bytes, 2 * 132));
  EXPECT_DOUBLE_EQ(g.time.time_s, model_time(g.counters, g.launch, h100()).time_s);
}

TEST(GemmModel, ALargeSquareProductTakesTheLargestTileBelowTheFp32Peak) {
  // 4096^3: 1024 tiles of 128 x 128, 2 blocks per SM (120 registers x 256 threads), 3.9 waves;
  // each warp issues 512 multiply-adds, 32 shared loads, 16 requests and 2 barriers a k-tile.
  const GemmShape s{4096, 4096, 4096, 1};
  const ModeledGemm g = model_fastest_gemm(s, h100(), sm90_resources);
  EXPECT_EQ(g.tiling.kernel, kGemmTilings[0].kernel);
  const double efficiency = peak_seconds(s, h100()) / g.time.time_s;
  EXPECT_GT(efficiency, 0.6);
  EXPECT_LT(efficiency, 0.95);
}

TEST(GemmModel, ASkinnyProductTakesSmallerTiles) {
  // Attention's P V: 2048 x 64 per head, depth 2048, 4 heads. 128 x 128 tiles would leave half of
  // each tile empty and 68 of 132 SMs idle.
  const GemmShape s{2048, 64, 2048, 4};
  const ModeledGemm g = model_fastest_gemm(s, h100(), sm90_resources);
  EXPECT_NE(g.tiling.kernel, kGemmTilings[0].kernel);
  const ModeledTime large = model_time(
      gemm_tiling_counters(kGemmTilings[0], s, h100().l2_bytes),
      gemm_tiling_launch(kGemmTilings[0], s, sm90_resources(kGemmTilings[0].kernel)), h100());
  EXPECT_LT(g.time.time_s, large.time_s);
}

TEST(GemmModel, NoProductIsModeledAtTheFp32Peak) {
  for (const std::int64_t m : {1, 37, 128, 1000, 4096}) {
    for (const std::int64_t k : {1, 64, 1024}) {
      const GemmShape s{m, 512, k, 2};
      const ModeledGemm g = model_fastest_gemm(s, h100(), sm90_resources);
      EXPECT_GT(g.time.time_s, peak_seconds(s, h100()) + h100().launch_overhead_us * 1e-6)
          << m << " x 512 x " << k;
    }
  }
}

}  // namespace
}  // namespace gpulab
