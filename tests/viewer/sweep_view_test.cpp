// Tests of the Block-size sweep panel's views (sweep_view.cpp): one view per kernel and problem,
// sorted by block size, with the fastest measured point.
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

// ---------------------------------------------------------------------------------------------
// sweep_views
// ---------------------------------------------------------------------------------------------

Result sweep_point(const char* kernel, const char* block, std::optional<double> measured_ms,
                   double occupancy, const char* n = "1048576") {
  Result r = result("block_size_sweep",
                    {{"kernel", kernel}, {"block_size", block}, {"n", n}, {"limiter", "warps"}},
                    {modeled("time_ms", 0.01), modeled("occupancy_percent", occupancy)});
  if (measured_ms) {
    r.metrics.push_back(measured("time_ms", *measured_ms));
  }
  return r;
}

TEST(SweepViews, PointsAreSortedByBlockSizeWithTheFastestMeasuredOne) {
  const ResultsFile f = file_of("cuda", {sweep_point("vector_add_kernel", "256", 0.9, 100),
                                         sweep_point("vector_add_kernel", "32", 2.0, 50),
                                         sweep_point("vector_add_kernel", "1024", 1.1, 100),
                                         sweep_point("vector_add_kernel", "128", 0.7, 100)});
  const std::vector<SweepView> views = sweep_views(f);
  ASSERT_EQ(views.size(), 1u);
  const SweepView& v = views[0];
  EXPECT_EQ(v.kernel, "vector_add_kernel");
  EXPECT_EQ(v.problem, "n=1048576");
  EXPECT_EQ(v.modeled_spec, "H100 SXM");
  EXPECT_FALSE(v.cpu_times);
  ASSERT_EQ(v.points.size(), 4u);
  EXPECT_EQ(v.points[0].block_size, 32);
  EXPECT_EQ(v.points[1].block_size, 128);
  EXPECT_EQ(v.points[2].block_size, 256);
  EXPECT_EQ(v.points[3].block_size, 1024);
  EXPECT_EQ(v.points[0].occupancy_percent, 50);
  EXPECT_EQ(v.points[0].limiter, "warps");
  EXPECT_EQ(v.points[0].modeled_ms, 0.01);
  EXPECT_EQ(v.fastest_measured, 1u);  // 128 threads, 0.7 ms
}

TEST(SweepViews, OneViewPerKernelAndProblem) {
  const ResultsFile f =
      file_of("sim", {sweep_point("a", "64", 1.0, 100), sweep_point("b", "64", 1.0, 100),
                      sweep_point("a", "64", 1.0, 100, "4096"), sweep_point("a", "128", 1.0, 100)});
  const std::vector<SweepView> views = sweep_views(f);
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[0].kernel, "a");
  EXPECT_EQ(views[0].problem, "n=1048576");
  EXPECT_EQ(views[0].points.size(), 2u);
  EXPECT_EQ(views[1].kernel, "b");
  EXPECT_EQ(views[2].problem, "n=4096");
  EXPECT_TRUE(views[0].cpu_times);
}

TEST(SweepViews, UnusableBlockSizesAndDuplicatesAreSkipped) {
  const ResultsFile f =
      file_of("cuda", {sweep_point("k", "abc", 1.0, 100), sweep_point("k", "0", 1.0, 100),
                       sweep_point("k", "64", std::nullopt, 100), sweep_point("k", "64", 0.5, 100),
                       sweep_point("k", "96", 0.0, 100)});
  const std::vector<SweepView> views = sweep_views(f);
  ASSERT_EQ(views.size(), 1u);
  ASSERT_EQ(views[0].points.size(), 2u);  // 64 (the first one) and 96
  EXPECT_FALSE(views[0].points[0].measured_ms);
  EXPECT_FALSE(views[0].points[1].measured_ms);  // a zero time is not a time
  EXPECT_FALSE(views[0].fastest_measured);
}

TEST(SweepViews, FilesWithoutUsableSweepsGiveNoViews) {
  EXPECT_TRUE(sweep_views(load("lab01_sim.json")).empty());
  EXPECT_TRUE(sweep_views(load("views_odd.json")).empty());  // no kernel / no numeric block size
}

}  // namespace
}  // namespace gpulab::viewer
