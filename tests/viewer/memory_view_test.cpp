// Tests of the Memory traffic panel's views (memory_view.cpp): a profile's counted kernels, from
// requests to DRAM, on sim and on a GPU.
#include "gpulab/viewer/views.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "test_specs.hpp"
#include "views_support.hpp"

namespace gpulab::viewer {
namespace {

using namespace views_test;  // the views tests' helpers (views_support.hpp)

TEST(MemoryViews, AProfileFileGivesEachCountedKernelFromRequestsToDram) {
  // profile_sim.json: gpulab profile lab02 --solution --json FILE -- --quick (sim, H100 SXM).
  const std::vector<MemoryView> views = memory_views(load("profile_sim.json"));
  ASSERT_EQ(views.size(), 2u);
  const MemoryView& gemm = views[0];
  EXPECT_EQ(gemm.kernel, "batched_gemm_kernel");
  EXPECT_FALSE(gemm.launches.empty());
  ASSERT_TRUE(gemm.loads.requests && gemm.loads.sectors && gemm.loads.sectors_per_request);
  EXPECT_EQ(*gemm.loads.sectors, 4 * *gemm.loads.requests);  // coalesced float rows
  EXPECT_EQ(*gemm.loads.sectors_per_request, 4.0);
  ASSERT_TRUE(gemm.loads.dram_bytes && gemm.stores.dram_bytes && gemm.l2_hit_percent);
  EXPECT_GT(*gemm.loads.dram_bytes, 0);
  EXPECT_GT(*gemm.l2_hit_percent, 0);
  EXPECT_LT(*gemm.l2_hit_percent, 100);
  ASSERT_TRUE(gemm.shared_wavefronts && gemm.bank_conflicts && gemm.partial_store_sectors);
  EXPECT_GT(*gemm.shared_wavefronts, 0);
  ASSERT_TRUE(gemm.modeled_ms);
  EXPECT_EQ(gemm.modeled_spec, "H100 SXM");
  EXPECT_EQ(gemm.modeled_bound, "launch");  // --quick: 32 launches of a few microseconds each
  EXPECT_EQ(views[1].kernel, "softmax_rows_kernel");
  // Files without counted kernels give none; odd ones give what they have.
  EXPECT_TRUE(memory_views(load("lab02_sim.json")).empty());
  Result odd{"counted_kernel", {{"kernel", "k"}}, {}};
  odd.metrics.push_back({"dram__bytes_read.sum_bytes", 64.0, Provenance::counted, "", ""});
  odd.metrics.push_back({"dram__bytes_write.sum_bytes", 32.0, Provenance::measured, "", ""});
  const std::vector<MemoryView> partial = memory_views(file_of("sim", {odd}));
  ASSERT_EQ(partial.size(), 1u);
  EXPECT_EQ(partial[0].loads.dram_bytes, 64.0);
  EXPECT_EQ(partial[0].provenance, Provenance::counted);
  EXPECT_EQ(partial[0].modeled_bound, "");
  EXPECT_FALSE(partial[0].stores.dram_bytes);  // measured beside counted figures: never mixed in
  EXPECT_FALSE(partial[0].loads.requests);
}

TEST(MemoryViews, AGpuProfileGivesTheFiguresNsightComputeMeasured) {
  // gpulab profile --backend cuda writes ncu's figures as measured counted_kernel metrics.
  Result ncu{"counted_kernel", {{"kernel", "transpose_naive"}, {"launches", "1"}}, {}};
  ncu.metrics.push_back(
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1024.0, Provenance::measured, "", ""});
  ncu.metrics.push_back({"dram__bytes_read.sum_bytes", 4096.0, Provenance::measured, "", ""});
  const std::vector<MemoryView> views = memory_views(file_of("cuda", {ncu}));
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].provenance, Provenance::measured);
  EXPECT_EQ(views[0].loads.requests, 1024.0);
  EXPECT_EQ(views[0].loads.dram_bytes, 4096.0);
  EXPECT_FALSE(views[0].stores.requests);
  EXPECT_FALSE(views[0].modeled_ms);
}

}  // namespace
}  // namespace gpulab::viewer
