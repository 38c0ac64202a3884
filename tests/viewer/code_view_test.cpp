// Tests of the Source panel's views (code_view.cpp): a profile's kernels counted by line, hottest
// line first, with the rules' problems, largest modeled gain first.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpulab/viewer/views.hpp"
#include "views_support.hpp"

namespace gpulab::viewer {
namespace {

using namespace views_test;  // the views tests' helpers (views_support.hpp)

TEST(CodeViews, AProfileBySourceLineGivesEachKernelsLinesHottestFirstAndItsProblems) {
  // profile_source_sim.json: gpulab profile ./build/default/bin/gpulab-bench.sim --source --json
  // FILE -- transpose --size 1024 --quick (sim, H100 SXM).
  const std::vector<CodeView> views = code_views(load("profile_source_sim.json"));
  ASSERT_EQ(views.size(), 4u);
  const CodeView& naive = views[1];
  EXPECT_EQ(naive.kernel, "transpose_naive_kernel");
  ASSERT_EQ(naive.lines.size(), 2u);
  // The column store first: 32 sectors per request, 28 beyond the 128 bytes asked for.
  const CodeLine& store = naive.lines[0];
  EXPECT_EQ(store.where, "transpose.cu:49");
  EXPECT_EQ(store.code.rfind("out[", 0), 0u) << store.code;
  EXPECT_EQ(store.store_sectors_per_request, 32.0);
  EXPECT_FALSE(store.load_sectors_per_request);
  EXPECT_FALSE(store.shared_wavefronts);  // no shared access on the line: no figure
  ASSERT_TRUE(store.requests && store.excess_sectors);
  EXPECT_EQ(*store.excess_sectors, 28 * *store.requests);
  EXPECT_GT(store.l1_share_percent, naive.lines[1].l1_share_percent);
  EXPECT_NEAR(store.l1_share_percent + naive.lines[1].l1_share_percent, 100.0, 1e-9);
  ASSERT_EQ(naive.problems.size(), 1u);
  EXPECT_EQ(naive.problems[0].where, "transpose.cu:49");
  EXPECT_EQ(naive.problems[0].problem, "uncoalesced");
  ASSERT_TRUE(naive.problems[0].speedup);
  EXPECT_GT(*naive.problems[0].speedup, 1.05);
  EXPECT_EQ(naive.problems[0].spec, "H100 SXM");
  // The coalesced level's tile: its column read's bank conflicts.
  EXPECT_EQ(views[2].kernel, "transpose_coalesced_kernel");
  ASSERT_FALSE(views[2].problems.empty());
  EXPECT_EQ(views[2].problems[0].problem, "bank conflicts");
  ASSERT_TRUE(views[2].lines[0].bank_conflicts);
  EXPECT_GT(*views[2].lines[0].bank_conflicts, 0);
  EXPECT_TRUE(views[3].problems.empty());  // conflict-free
  // Files without lines give none.
  EXPECT_TRUE(code_views(load("profile_sim.json")).empty());
}

TEST(CodeViews, OddResultsGiveWhatTheyHave) {
  Result hot{"counted_line", {{"kernel", "k"}, {"file", "/a/k.cu"}, {"line", "9"}}, {}};
  hot.metrics.push_back({"l1_share_percent", 250.0, Provenance::counted, "", ""});
  Result cold{"counted_line", {{"kernel", "k"}, {"file", ""}, {"line", "0"}, {"code", "x"}}, {}};
  cold.metrics.push_back({"requests_count", 4.0, Provenance::counted, "", ""});
  Result no_kernel{"counted_line", {{"file", "/a/k.cu"}, {"line", "3"}}, {}};
  Result finding{"finding", {{"kernel", "k"}, {"problem", "tail effect"}, {"line", "x"}}, {}};
  Result ranked{"finding", {{"kernel", "k"}, {"problem", "uncoalesced"}}, {}};
  ranked.metrics.push_back(Metric::modeled("speedup_ratio", 3.0, "H100 SXM"));
  const std::vector<CodeView> views =
      code_views(file_of("sim", {cold, hot, no_kernel, finding, ranked}));
  ASSERT_EQ(views.size(), 1u);
  ASSERT_EQ(views[0].lines.size(), 2u);
  EXPECT_EQ(views[0].lines[0].where, "k.cu:9");
  EXPECT_EQ(views[0].lines[0].l1_share_percent, 100.0);  // clamped
  EXPECT_EQ(views[0].lines[0].code, "");
  EXPECT_EQ(views[0].lines[1].where, "the kernel");  // no file or line
  EXPECT_EQ(views[0].lines[1].requests, 4.0);
  ASSERT_EQ(views[0].problems.size(), 2u);
  EXPECT_EQ(views[0].problems[0].problem, "uncoalesced");  // the one with a gain first
  EXPECT_EQ(views[0].problems[1].where, "the kernel");
  EXPECT_FALSE(views[0].problems[1].speedup);
}

}  // namespace
}  // namespace gpulab::viewer
