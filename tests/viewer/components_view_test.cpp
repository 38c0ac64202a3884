// Tests of the Components panel's views (components_view.cpp): the bottleneck from measured or
// modeled times, shapes, and lab 02 and lab 03 output on sim.
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
// components_views
// ---------------------------------------------------------------------------------------------

TEST(ComponentsViews, BottleneckIsTheLargestMeasuredTimeEvenWhenTheModelDisagrees) {
  const ResultsFile f =
      file_of("cuda", {component("QKV Projection", 2.0, 0.5), component("Softmax", 5.0, 0.1),
                       component("Output Projection", 3.0, 0.2)});
  const std::vector<ComponentsView> views = components_views(f);
  ASSERT_EQ(views.size(), 1u);
  const ComponentsView& v = views[0];
  EXPECT_EQ(v.shape, "seq_len=64");
  ASSERT_EQ(v.rows.size(), 3u);
  EXPECT_EQ(v.rows[0].name, "QKV Projection");  // file order
  EXPECT_EQ(v.bottleneck, 1u);
  EXPECT_FALSE(v.bottleneck_is_modeled);
  EXPECT_FALSE(v.cpu_times);
  EXPECT_EQ(v.modeled_spec, "H100 SXM");
  expect_close(*v.rows[1].measured_share, 0.5, "measured share");  // 5 / (2 + 5 + 3)
  expect_close(*v.rows[0].modeled_share, 0.625, "modeled share");  // 0.5 / 0.8
}

TEST(ComponentsViews, EachComponentsModeledBoundKeepsTheShapeOneView) {
  // Lab 02 on the modeled clock names each component's time-model bound (param model_bound): a
  // property of the component, as bound is, not of the shape.
  Result a = component("QKV Projection", 2.0, 0.5);
  a.params["model_bound"] = "L1/shared";
  Result b = component("Softmax", 5.0, 0.1);
  b.params["model_bound"] = "DRAM bandwidth";
  const std::vector<ComponentsView> views = components_views(file_of("sim", {a, b}));
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].rows.size(), 2u);
  EXPECT_EQ(views[0].shape, "seq_len=64");
}

TEST(ComponentsViews, BottleneckFallsBackToModeledTimesWhenNothingIsMeasured) {
  const ResultsFile f =
      file_of("sim", {component("A", std::nullopt, 1.0), component("B", std::nullopt, 3.0),
                      component("C", std::nullopt, 3.0)});
  const std::vector<ComponentsView> views = components_views(f);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].bottleneck, 1u);  // B and C tie: the first
  EXPECT_TRUE(views[0].bottleneck_is_modeled);
  EXPECT_TRUE(views[0].cpu_times);
  EXPECT_FALSE(views[0].rows[0].measured_share);
}

TEST(ComponentsViews, OnTheModeledClockTheBottleneckIsTheTimedOne) {
  // The sim's modeled clock times GPU-like: its ranking is the one to show, labelled so. On the
  // host clock the same file's ranking is the CPU's, and the modeled one is shown instead.
  ResultsFile f = file_of("sim", {component("A", 2.0, 3.0), component("B", 5.0, 1.0)});
  f.context.clock = gpulab::TimingClock::modeled;
  std::vector<ComponentsView> views = components_views(f);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].bottleneck, 1u);
  EXPECT_FALSE(views[0].bottleneck_is_modeled);
  EXPECT_FALSE(views[0].cpu_times);
  f.context.clock = gpulab::TimingClock::host;
  views = components_views(f);
  EXPECT_EQ(views[0].bottleneck, 0u);
  EXPECT_TRUE(views[0].bottleneck_is_modeled);
  EXPECT_TRUE(views[0].cpu_times);
}

TEST(ComponentsViews, ModeledClockTimesOfSchemaThreeAreTheRunsTimes) {
  // Since results schema 3 a modeled-clock time says so itself (provenance modeled_clock): it is
  // still the run's time, ranked and labelled as schema 2's "measured" ones were.
  ResultsFile f = file_of("sim", {component("A", 2.0, 3.0), component("B", 5.0, 1.0)});
  f.context.clock = gpulab::TimingClock::modeled;
  for (Result& r : f.results) {
    r.metrics[0] =
        Metric::timed("time_ms", *r.metrics[0].value, gpulab::TimingClock::modeled, "H100 SXM");
    ASSERT_EQ(r.metrics[0].provenance, gpulab::Provenance::modeled_clock);
  }
  const std::vector<ComponentsView> views = components_views(f);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].bottleneck, 1u);
  EXPECT_FALSE(views[0].bottleneck_is_modeled);
  EXPECT_FALSE(views[0].cpu_times);
}

TEST(ComponentsViews, ResultsDifferingOnlyInComponentAndBoundFormOneShape) {
  Result a = component("A", 1.0, std::nullopt, {{"seq_len", "64"}, {"batch", "1"}});
  a.params["bound"] = "memory-bound";
  Result b = component("B", 1.0, std::nullopt, {{"seq_len", "64"}, {"batch", "1"}});
  b.params["bound"] = "compute-bound";
  const Result c = component("A", 1.0, std::nullopt, {{"seq_len", "128"}, {"batch", "1"}});
  const std::vector<ComponentsView> views = components_views(file_of("cuda", {a, b, c}));
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].shape, "batch=1, seq_len=64");  // file order of first appearance
  EXPECT_EQ(views[1].shape, "batch=1, seq_len=128");
  ASSERT_EQ(views[0].rows.size(), 2u);
  EXPECT_EQ(views[0].rows[0].bound, "memory-bound");
  EXPECT_EQ(views[0].rows[1].bound, "compute-bound");
}

TEST(ComponentsViews, Lab02OnSimIsOneShapeWithMeasuredAndModeledTimesAndWork) {
  const std::vector<ComponentsView> views = components_views(load("lab02_sim.json"));
  ASSERT_EQ(views.size(), 1u);
  const ComponentsView& v = views[0];
  EXPECT_EQ(v.shape, "batch=1, causal=false, d_model=64, heads=2, seq_len=64");
  EXPECT_TRUE(v.cpu_times);
  EXPECT_EQ(v.modeled_spec, "H100 SXM");
  ASSERT_EQ(v.rows.size(), 5u);
  const std::vector<std::string> order{"QKV Projection", "Score Computation", "Softmax",
                                       "Weighted Sum", "Output Projection"};
  double measured_shares = 0;
  double modeled_shares = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    const ComponentRow& row = v.rows[i];
    EXPECT_EQ(row.name, order[i]);
    EXPECT_TRUE(row.measured_ms && row.modeled_ms && row.flop && row.bytes) << row.name;
    EXPECT_EQ(row.bound, "memory-bound");
    measured_shares += row.measured_share.value_or(0);
    modeled_shares += row.modeled_share.value_or(0);
  }
  EXPECT_NEAR(measured_shares, 1, 1e-12);
  EXPECT_NEAR(modeled_shares, 1, 1e-12);
  EXPECT_DOUBLE_EQ(*v.rows[0].flop, 1572864);
  EXPECT_DOUBLE_EQ(*v.rows[0].bytes, 114688);
  // Softmax has the largest measured time in this file (3.45 ms of CPU time), but the file is
  // from sim: the bottleneck is the modeled one, QKV Projection (3.42e-5 ms on H100 SXM).
  EXPECT_EQ(v.bottleneck, 0u);
  EXPECT_TRUE(v.bottleneck_is_modeled);
}

TEST(ComponentsViews, Lab03GivesFiveModeledShapesWithTheBottleneckMoving) {
  const std::vector<ComponentsView> views = components_views(load("lab03_sim.json"));
  ASSERT_EQ(views.size(), 5u);  // seq_len 512, 1024, 2048, 4096, 8192
  for (const ComponentsView& v : views) {
    ASSERT_EQ(v.rows.size(), 5u) << v.shape;
    EXPECT_TRUE(v.bottleneck_is_modeled) << v.shape;
    for (const ComponentRow& row : v.rows) {
      EXPECT_FALSE(row.measured_ms) << v.shape;
      EXPECT_TRUE(row.modeled_ms) << v.shape;
      EXPECT_FALSE(row.flop) << v.shape;
    }
  }
  const ComponentsView* s512 = view_with_shape(views, "precision=FP32, seq_len=512");
  const ComponentsView* s4096 = view_with_shape(views, "precision=FP32, seq_len=4096");
  ASSERT_NE(s512, nullptr);
  ASSERT_NE(s4096, nullptr);
  EXPECT_EQ(s512->rows[*s512->bottleneck].name, "QKV Projection");
  EXPECT_EQ(s4096->rows[*s4096->bottleneck].name, "Softmax");
}

TEST(ComponentsViews, FilesWithoutComponentsGiveNoViews) {
  EXPECT_TRUE(components_views(load("lab01_sim.json")).empty());
  EXPECT_TRUE(components_views(file_of("cuda", {})).empty());
}

TEST(ComponentsViews, OddComponentsAreSkippedAndZeroTimesAreNotTimes) {
  // Softmax with time 0, a second Softmax (duplicate: the first counts), one without component.
  const std::vector<ComponentsView> views = components_views(load("views_odd.json"));
  ASSERT_EQ(views.size(), 1u);
  ASSERT_EQ(views[0].rows.size(), 1u);
  EXPECT_EQ(views[0].rows[0].name, "Softmax");
  EXPECT_FALSE(views[0].rows[0].measured_ms);
  EXPECT_FALSE(views[0].rows[0].measured_share);
  EXPECT_FALSE(views[0].bottleneck);
}

TEST(ComponentsViewsReview, OnSimTheBottleneckComesFromTheModeledTimes) {
  // Measured (CPU) says Softmax; modeled (GPU) says QKV Projection: on sim the GPU's answer wins.
  const std::vector<Result> rows = {component("QKV Projection", 1.0, 0.5),
                                    component("Softmax", 3.0, 0.1)};
  const std::vector<ComponentsView> sim = components_views(file_of("sim", rows));
  ASSERT_EQ(sim.size(), 1U);
  ASSERT_TRUE(sim[0].bottleneck.has_value());
  EXPECT_EQ(*sim[0].bottleneck, 0U);
  EXPECT_TRUE(sim[0].bottleneck_is_modeled);
  const std::vector<ComponentsView> gpu = components_views(file_of("cuda", rows));
  ASSERT_EQ(gpu.size(), 1U);
  EXPECT_EQ(*gpu[0].bottleneck, 1U);
  EXPECT_FALSE(gpu[0].bottleneck_is_modeled);
}

}  // namespace
}  // namespace gpulab::viewer
