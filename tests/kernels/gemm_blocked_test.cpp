// The register-blocked GEMM kernels (kernels/gemm) against the closed form that models them
// (gpulab/core/gemm_model.hpp, the sim's cuBLAS model): on sim, every tiling's counted launch has
// the closed form's memory requests, sectors, wavefronts, multiply-adds, barriers and critical
// path, and its values are the reference's. Sim only: the counts are the sim's.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/gemm_model.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/numeric.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/gemm.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/sim/runtime.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {
namespace {

struct Case {
  std::size_t tiling;
  GemmShape shape;
};

std::string describe(const Case& c) {
  return kGemmTilings[c.tiling].describe() + ", " + std::to_string(c.shape.m) + " x " +
         std::to_string(c.shape.n) + " x " + std::to_string(c.shape.k) + ", batch " +
         std::to_string(c.shape.batch);
}

// Runs the case's kernel once on sim, counted, and checks C against the CPU reference.
CountedLaunch run_counted(const Case& c) {
  const auto [m, n, k, batch, reads_c] = c.shape;
  EXPECT_FALSE(reads_c);  // the catalog's kernels overwrite C
  const std::size_t a_size = std::size_t(m * k);
  const std::size_t b_size = std::size_t(k * n);
  const std::size_t c_size = std::size_t(m * n);
  const std::vector<float> a = random_floats(a_size * batch, 11);
  const std::vector<float> b = random_floats(b_size * batch, 12);
  DeviceBuffer<float> da(a.size());
  DeviceBuffer<float> db(b.size());
  DeviceBuffer<float> dc(c_size * batch);
  da.copy_from(a);
  db.copy_from(b);
  GPULAB_CHECK(sim::reset_modeled_l2());  // the copies left A and B in L2; the model starts cold
  const std::vector<CountedLaunch> launches = sim::count_launches([&] {
    gemm_register_blocked(da.data(), db.data(), dc.data(), int(m), int(n), int(k), nullptr,
                          c.tiling, int(batch));
  });
  const std::vector<float> got = dc.to_vector();
  for (std::int64_t i = 0; i < batch; ++i) {
    std::vector<float> expected(c_size);
    gemm_reference(std::span(a).subspan(i * a_size, a_size),
                   std::span(b).subspan(i * b_size, b_size), expected, int(m), int(n), int(k));
    require_close(describe(c) + ", product " + std::to_string(i), expected,
                  std::span(got).subspan(i * c_size, c_size),
                  scaled(tolerance_for(DType::fp32, int(k)), rms(expected)));
  }
  EXPECT_EQ(launches.size(), 1u);
  return launches.empty() ? CountedLaunch{} : launches.front();
}

TEST(GemmModel, TheClosedFormIsWhatTheSimCountsForEveryTiling) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  // Whole tiles (M and N multiples of the tile, K and N of 8): the closed form is exact there.
  std::vector<Case> cases;
  for (std::size_t t = 0; t < std::size(kGemmTilings); ++t) {
    const auto bm = kGemmTilings[t].block_m;
    const auto bn = kGemmTilings[t].block_n;
    cases.push_back({t, {bm, bn, 8, 1}});
    cases.push_back({t, {2 * bm, bn, 40, 1}});
    cases.push_back({t, {bm, 3 * bn, 24, 2}});
  }
  int l2_bytes = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  for (const Case& c : cases) {
    SCOPED_TRACE(describe(c));
    const CountedLaunch launch = run_counted(c);
    const MemoryCounters& got = launch.counters;
    const MemoryCounters want =
        gemm_tiling_counters(kGemmTilings[c.tiling], c.shape, std::uint64_t(l2_bytes));
    EXPECT_EQ(got.global_load, want.global_load);
    EXPECT_EQ(got.global_store, want.global_store);
    EXPECT_EQ(got.shared_load, want.shared_load);
    EXPECT_EQ(got.shared_store, want.shared_store);
    EXPECT_EQ(got.shared_load.bank_conflicts + got.shared_store.bank_conflicts, 0u);
    EXPECT_EQ(got.fp32_fma_instructions, want.fp32_fma_instructions);
    EXPECT_EQ(got.fp32_instructions, 0u);
    EXPECT_EQ(got.fp32_flop, want.fp32_flop);
    EXPECT_EQ(got.barrier_instructions, want.barrier_instructions);
    EXPECT_EQ(got.l2_sector_reads, want.l2_sector_reads);
    EXPECT_EQ(got.l2_sector_writes, want.l2_sector_writes);
    EXPECT_EQ(got.dram_bytes_read, want.dram_bytes_read);
    EXPECT_EQ(got.dram_bytes_written, want.dram_bytes_written);
    EXPECT_EQ(got.path_phases, want.path_phases);
    EXPECT_EQ(got.path_global_phases, want.path_global_phases);
    EXPECT_EQ(got.path_shared_phases, want.path_shared_phases);
    EXPECT_EQ(got.path_shared_requests, want.path_shared_requests);
    // The sim also counts the index arithmetic and branches the closed form leaves out.
    EXPECT_GE(got.path_arithmetic, want.path_arithmetic);
    const LaunchShape shape = gemm_tiling_launch(kGemmTilings[c.tiling], c.shape, std::nullopt);
    EXPECT_EQ(launch.kernel, kGemmTilings[c.tiling].kernel);
    EXPECT_EQ(launch.grid, shape.grid);
    EXPECT_EQ(launch.block, shape.block);
  }
}

TEST(GemmModel, EveryTilingHasItsKernelInTheTable) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
  }
  for (const GemmTiling& t : kGemmTilings) {
    const auto resources = table_resources(t.kernel, *find_spec("h100-sxm"));
    ASSERT_TRUE(resources.has_value()) << t.kernel;
    EXPECT_EQ(resources->static_shared_bytes, 4u * std::uint64_t(t.shared_floats())) << t.kernel;
    EXPECT_GE(resources->registers_per_thread, t.thread_m * t.thread_n) << t.kernel;
  }
}

}  // namespace
}  // namespace gpulab::kernels
