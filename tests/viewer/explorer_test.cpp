// Unit tests of the occupancy explorer (gpulab/viewer/explorer.hpp): clamping of its inputs to the
// spec, kernel figures from the build's kernel table, typed-in figures, the three sweeps and how
// a configuration that cannot launch is reported. Occupancy needs the toolkit's cuda_occupancy.h
// at build time; without it the tests that need numbers skip with that reason.
#include "gpulab/viewer/explorer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "gpulab/core/kernel_table.hpp"
#include "test_specs.hpp"

namespace gpulab::viewer {
namespace {

constexpr std::uint64_t kKiB = 1024;

using gpulab::testing::spec;

#define SKIP_WITHOUT_OCCUPANCY()                                                      \
  if (!occupancy_available()) {                                                       \
    GTEST_SKIP() << "this build found no cuda_occupancy.h: occupancy is unavailable"; \
  }

#define SKIP_WITHOUT_KERNEL_TABLE(explorer)                                          \
  if ((explorer).kernels().empty()) {                                                \
    GTEST_SKIP() << "the kernel table is empty: " << (explorer).kernel_table_note(); \
  }

// The index of a kernel the table has on every architecture the build targets, preferring
// vector_add_kernel.
std::size_t preferred_kernel(const OccupancyExplorer& explorer) {
  const auto& names = explorer.kernels();
  const auto it = std::find(names.begin(), names.end(), "vector_add_kernel");
  return it == names.end() ? 0 : static_cast<std::size_t>(it - names.begin());
}

void expect_same(const Occupancy& a, const Occupancy& b) {
  EXPECT_EQ(a.block_size, b.block_size);
  EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes);
  EXPECT_EQ(a.active_blocks_per_sm, b.active_blocks_per_sm);
  EXPECT_EQ(a.active_warps_per_sm, b.active_warps_per_sm);
  EXPECT_EQ(a.occupancy_fraction, b.occupancy_fraction);
  EXPECT_EQ(a.limiter, b.limiter);
  EXPECT_EQ(a.blocks_limit_registers, b.blocks_limit_registers);
  EXPECT_EQ(a.blocks_limit_shared, b.blocks_limit_shared);
}

TEST(OccupancyExplorer, StartsWithTypedInFiguresAndFullOccupancyOnH100) {
  const OccupancyExplorer e(spec("h100-sxm"));
  EXPECT_EQ(e.spec().key, "h100-sxm");
  EXPECT_EQ(e.registers(), 32);
  EXPECT_EQ(e.block_size(), 256);
  EXPECT_EQ(e.dynamic_shared_bytes(), 0u);
  EXPECT_EQ(e.static_shared_bytes(), 0u);
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_EQ(e.figures_origin(), "typed in");
  EXPECT_TRUE(e.note().empty());
  EXPECT_EQ(e.kernels().empty(), !e.kernel_table_note().empty());
  SKIP_WITHOUT_OCCUPANCY();
  ASSERT_TRUE(e.result()) << e.error();
  EXPECT_TRUE(e.error().empty());
  // 256 threads = 8 warps; 64 warps per SM / 8 = 8 blocks; 32 registers x 32 threads = 1024 per
  // warp, 16 warps per 16K-register sub-partition x 4 = 64 warps: also 8 blocks. Warps win ties.
  EXPECT_EQ(e.result()->active_blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(e.result()->occupancy_fraction, 1.0);
  EXPECT_EQ(e.result()->limiter, OccupancyLimiter::warps);
}

TEST(OccupancyExplorer, WithoutTheCalculatorTheErrorSaysSo) {
  if (occupancy_available()) {
    GTEST_SKIP() << "this build has cuda_occupancy.h; the unavailable path cannot be reached";
  }
  const OccupancyExplorer e(spec("h100-sxm"));
  EXPECT_FALSE(e.result());
  EXPECT_NE(e.error().find("cuda_occupancy.h"), std::string::npos) << e.error();
  EXPECT_TRUE(e.by_block_size().empty());
}

TEST(OccupancyExplorer, BlockSizeIsClampedToOneThroughTheLimit) {
  OccupancyExplorer e(spec("h100-sxm"));
  EXPECT_EQ(e.max_block_size(), 1024);
  e.set_block_size(5000);
  EXPECT_EQ(e.block_size(), 1024);
  e.set_block_size(0);
  EXPECT_EQ(e.block_size(), 1);
  e.set_block_size(-7);
  EXPECT_EQ(e.block_size(), 1);
  e.set_block_size(96);
  EXPECT_EQ(e.block_size(), 96);
}

TEST(OccupancyExplorer, DynamicSharedMemoryIsClampedToTheOptInLimit) {
  OccupancyExplorer e(spec("h100-sxm"));
  EXPECT_EQ(e.max_dynamic_shared_bytes(), 227 * kKiB);
  e.set_dynamic_shared_bytes(1'000'000'000);
  EXPECT_EQ(e.dynamic_shared_bytes(), 227 * kKiB);
}

TEST(OccupancyExplorer, SwitchingSpecClampsDynamicSharedMemoryToTheNewLimit) {
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_block_size(512);
  e.set_dynamic_shared_bytes(200 * kKiB);
  EXPECT_EQ(e.dynamic_shared_bytes(), 200 * kKiB);  // fits H100's 227 KB opt-in
  e.set_spec(spec("t4"));
  EXPECT_EQ(e.spec().key, "t4");
  EXPECT_EQ(e.max_dynamic_shared_bytes(), 64 * kKiB);
  EXPECT_EQ(e.dynamic_shared_bytes(), 64 * kKiB);  // T4: 64 KB per block
  EXPECT_EQ(e.block_size(), 512);                  // within T4's 1024: kept
  SKIP_WITHOUT_OCCUPANCY();
  ASSERT_TRUE(e.result()) << e.error();
  EXPECT_EQ(e.result()->dynamic_shared_bytes, 64 * kKiB);
  EXPECT_EQ(e.result()->active_blocks_per_sm, 1);  // one 64 KB block fills T4's 64 KB SM
}

TEST(OccupancyExplorer, SwitchingSpecClampsABlockSizeAboveTheNewLimit) {
  GpuSpec small = spec("t4");
  small.key = "small";
  small.max_threads_per_block = 512;  // a made-up limit: every database GPU allows 1024
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_block_size(1024);
  e.set_spec(small);
  EXPECT_EQ(e.max_block_size(), 512);
  EXPECT_EQ(e.block_size(), 512);
}

TEST(OccupancyExplorer, SetRegistersClampsAndSwitchesToTypedInFigures) {
  OccupancyExplorer e(spec("h100-sxm"));
  if (!e.kernels().empty()) {
    ASSERT_TRUE(e.select_kernel(preferred_kernel(e))) << e.note();
    ASSERT_TRUE(e.selected_kernel());
  }
  e.set_registers(64);
  EXPECT_EQ(e.registers(), 64);
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_EQ(e.figures_origin(), "typed in");
  e.set_registers(300);
  EXPECT_EQ(e.registers(), 255);
  e.set_registers(0);
  EXPECT_EQ(e.registers(), 1);
}

TEST(OccupancyExplorer, SelectKernelLoadsTheTableFiguresForTheSpec) {
  OccupancyExplorer e(spec("h100-sxm"));
  SKIP_WITHOUT_KERNEL_TABLE(e);
  const std::size_t index = preferred_kernel(e);
  const std::string name = e.kernels()[index];
  const std::optional<KernelTableEntry> entry = find_kernel(name, 9, 0);
  if (!entry) {
    GTEST_SKIP() << "the kernel table has no sm_90 (or older) figures for " << name;
  }
  e.set_registers(200);  // typed-in numbers the selection must replace
  ASSERT_TRUE(e.select_kernel(index)) << e.note();
  EXPECT_EQ(e.selected_kernel(), index);
  EXPECT_EQ(e.registers(), std::max(1, entry->registers));
  EXPECT_EQ(e.static_shared_bytes(), entry->static_shared_bytes);
  EXPECT_EQ(e.figures_origin(),
            "ptxas, sm_" + std::to_string(entry->sm) + " (" + std::string(entry->source) + ")");
  EXPECT_TRUE(e.note().empty());
}

TEST(OccupancyExplorer, SelectKernelOutOfRangeChangesNothing) {
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_registers(40);
  EXPECT_FALSE(e.select_kernel(e.kernels().size()));
  EXPECT_FALSE(e.select_kernel(static_cast<std::size_t>(-1)));
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_EQ(e.registers(), 40);
  EXPECT_EQ(e.figures_origin(), "typed in");
}

TEST(OccupancyExplorer, SwitchingSpecRereadsTheKernelsFiguresForTheNewArchitecture) {
  OccupancyExplorer e(spec("h100-sxm"));
  SKIP_WITHOUT_KERNEL_TABLE(e);
  const std::size_t index = preferred_kernel(e);
  const std::string name = e.kernels()[index];
  const std::optional<KernelTableEntry> on_t4 = find_kernel(name, 7, 5);
  if (!find_kernel(name, 9, 0)) {
    GTEST_SKIP() << "the kernel table has no sm_90 (or older) figures for " << name;
  }
  ASSERT_TRUE(e.select_kernel(index)) << e.note();
  e.set_spec(spec("t4"));
  if (on_t4) {
    EXPECT_EQ(e.selected_kernel(), index);
    EXPECT_EQ(e.registers(), std::max(1, on_t4->registers));
    EXPECT_EQ(e.figures_origin(),
              "ptxas, sm_" + std::to_string(on_t4->sm) + " (" + std::string(on_t4->source) + ")");
    EXPECT_TRUE(e.note().empty());
  } else {
    // Only newer architectures were built: the numbers stay, as typed-in figures, with a note.
    EXPECT_FALSE(e.selected_kernel());
    EXPECT_EQ(e.figures_origin(), "typed in");
    EXPECT_NE(e.note().find("sm_75"), std::string::npos) << e.note();
  }
}

TEST(OccupancyExplorer, AnArchitectureOlderThanTheTableGetsANoteAndTypedInFigures) {
  GpuSpec maxwell = spec("t4");  // the table starts at sm_75: CC 5.0 has no figures
  maxwell.key = "maxwell";
  maxwell.cc_major = 5;
  maxwell.cc_minor = 0;
  OccupancyExplorer e(spec("h100-sxm"));
  SKIP_WITHOUT_KERNEL_TABLE(e);
  const std::size_t index = preferred_kernel(e);
  const std::string name = e.kernels()[index];
  if (find_kernel(name, 5, 0)) {
    GTEST_SKIP() << "this build's kernel table has sm_50 (or older) figures for " << name;
  }
  ASSERT_TRUE(e.select_kernel(index)) << e.note();
  const int registers = e.registers();

  e.set_spec(maxwell);  // re-reading finds nothing: the numbers stay, now as typed-in figures
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_EQ(e.figures_origin(), "typed in");
  EXPECT_EQ(e.registers(), registers);
  EXPECT_NE(e.note().find("sm_50"), std::string::npos) << e.note();
  EXPECT_NE(e.note().find(name), std::string::npos) << e.note();

  EXPECT_FALSE(e.select_kernel(index));  // and selecting it there fails with the same note
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_NE(e.note().find("sm_50"), std::string::npos) << e.note();
}

TEST(OccupancyExplorer, SelectCustomKeepsTheNumbers) {
  OccupancyExplorer e(spec("h100-sxm"));
  SKIP_WITHOUT_KERNEL_TABLE(e);
  if (!e.select_kernel(preferred_kernel(e))) {
    GTEST_SKIP() << e.note();
  }
  const int registers = e.registers();
  const std::uint64_t shared = e.static_shared_bytes();
  e.select_custom();
  EXPECT_FALSE(e.selected_kernel());
  EXPECT_EQ(e.figures_origin(), "typed in");
  EXPECT_EQ(e.registers(), registers);
  EXPECT_EQ(e.static_shared_bytes(), shared);
}

TEST(OccupancyExplorer, BlockSizeSweepHasOnePointPerWarpAndAgreesWithTheResult) {
  SKIP_WITHOUT_OCCUPANCY();
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_registers(64);
  e.set_dynamic_shared_bytes(16 * kKiB);
  e.set_block_size(256);
  const auto& sweep = e.by_block_size();
  ASSERT_EQ(sweep.size(), 32u);  // 32, 64, ..., 1024
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    EXPECT_EQ(sweep[i].x, static_cast<int>(32 * (i + 1)));
  }
  const auto at =
      std::find_if(sweep.begin(), sweep.end(), [](const OccupancyPoint& p) { return p.x == 256; });
  ASSERT_NE(at, sweep.end());
  ASSERT_TRUE(at->occupancy) << at->error;
  ASSERT_TRUE(e.result()) << e.error();
  expect_same(*at->occupancy, *e.result());
  EXPECT_EQ(e.result()->dynamic_shared_bytes, 16 * kKiB);
}

TEST(OccupancyExplorer, RegisterAndSharedMemorySweepsCoverTheirRanges) {
  SKIP_WITHOUT_OCCUPANCY();
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_block_size(128);
  e.set_registers(48);
  const auto& by_registers = e.by_registers();
  ASSERT_EQ(by_registers.size(), 255u);
  EXPECT_EQ(by_registers.front().x, 1);
  EXPECT_EQ(by_registers.back().x, 255);
  ASSERT_TRUE(by_registers[47].occupancy);  // 48 registers: the current point
  expect_same(*by_registers[47].occupancy, *e.result());

  const auto& by_shared = e.by_shared_memory();
  ASSERT_EQ(by_shared.size(), 228u);  // 0, 1 KiB, ..., 227 KiB
  EXPECT_EQ(by_shared.front().x, 0);
  EXPECT_EQ(by_shared.back().x, static_cast<int>(227 * kKiB));
  ASSERT_TRUE(by_shared.front().occupancy);
  expect_same(*by_shared.front().occupancy, *e.result());  // dynamic shared memory is 0
}

TEST(OccupancyExplorer, AConfigurationThatCannotLaunchGivesAnErrorAndNoResult) {
  SKIP_WITHOUT_OCCUPANCY();
  OccupancyExplorer e(spec("h100-sxm"));
  e.set_block_size(1024);
  e.set_registers(255);  // 1024 x 255 registers: far above the 64K a block may use
  EXPECT_FALSE(e.result());
  EXPECT_FALSE(e.error().empty());
  EXPECT_NE(e.error().find("registers"), std::string::npos) << e.error();
  EXPECT_EQ(e.error().find('\n'), std::string::npos);  // one line
  // The sweeps still show where it can launch: small blocks at 255 registers.
  ASSERT_FALSE(e.by_block_size().empty());
  EXPECT_TRUE(e.by_block_size().front().occupancy);
  EXPECT_FALSE(e.by_block_size().back().occupancy);
  EXPECT_FALSE(e.by_block_size().back().error.empty());

  e.set_registers(32);  // fixing the input clears the error
  EXPECT_TRUE(e.result());
  EXPECT_TRUE(e.error().empty());
}

}  // namespace
}  // namespace gpulab::viewer
