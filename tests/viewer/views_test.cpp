// Unit tests of the results panels' views (gpulab/viewer/views.hpp): histograms, the benchmark,
// components, roofline, sweep, levels and class (class_view.hpp) views, from hand-made results
// with hand-computed expectations and from real lab output (tests/viewer/data/lab0N_sim.json,
// written by `gpulab run all --quick --json` on the sim backend), plus odd files that must not
// crash.
#include "gpulab/viewer/views.hpp"
#include "gpulab/viewer/class_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>
#include "test_specs.hpp"

namespace gpulab::viewer {
namespace {

const std::string kData = GPULAB_VIEWER_TEST_DATA_DIR;

// Every expectation below is a few multiplications and divisions of exact inputs.
constexpr double kRel = 1e-12;

void expect_close(double got, double expected, const char* what) {
  EXPECT_LE(std::abs(got - expected), std::abs(expected) * kRel + 1e-300)
      << what << ": expected " << expected << ", got " << got;
}

using gpulab::testing::spec;

Metric measured(std::string name, double value) {
  return Metric::measured(std::move(name), value);
}

Metric modeled(std::string name, double value, std::string spec_name = "H100 SXM") {
  return Metric::modeled(std::move(name), value, std::move(spec_name));
}

Metric unavailable(std::string name, std::string reason) {
  return Metric::unavailable(std::move(name), std::move(reason));
}

Result result(std::string name, std::map<std::string, std::string> params,
              std::vector<Metric> metrics) {
  Result r;
  r.name = std::move(name);
  r.params = std::move(params);
  r.metrics = std::move(metrics);
  return r;
}

ResultsFile file_of(std::string backend, std::vector<Result> results,
                    std::string spec_name = "H100 SXM") {
  ResultsFile f;
  f.context.gpulab_version = "0.1.0";
  f.context.clock = backend == "sim" ? gpulab::TimingClock::host : gpulab::TimingClock::gpu;
  f.context.backend = std::move(backend);
  f.context.spec = std::move(spec_name);
  f.context.date = "2026-11-22T10:15:00Z";
  f.results = std::move(results);
  return f;
}

ResultsFile load(const std::string& name) {
  return load_results(kData + "/" + name);
}

// An attention component with its work and times, as lab02 writes it.
Result component(std::string name, std::optional<double> measured_ms,
                 std::optional<double> modeled_ms,
                 std::map<std::string, std::string> shape = {{"seq_len", "64"}}) {
  Result r;
  r.name = "attention_component";
  r.params = std::move(shape);
  r.params["component"] = std::move(name);
  if (measured_ms) {
    r.metrics.push_back(measured("time_ms", *measured_ms));
  }
  if (modeled_ms) {
    r.metrics.push_back(modeled("time_ms", *modeled_ms));
  }
  return r;
}

const ComponentsView* view_with_shape(const std::vector<ComponentsView>& views,
                                      const std::string& shape) {
  for (const ComponentsView& v : views) {
    if (v.shape == shape) {
      return &v;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// spec_of
// ---------------------------------------------------------------------------------------------

TEST(SpecOf, UsesTheFilesSpecWhenTheDatabaseKnowsIt) {
  const ResultsFile f = file_of("cuda", {}, "A100 80GB SXM");
  EXPECT_EQ(spec_of(f, spec("t4")).key, "a100-sxm-80gb");
}

TEST(SpecOf, FallsBackForAnEmptyOrUnknownSpec) {
  EXPECT_EQ(spec_of(file_of("cuda", {}, ""), spec("t4")).key, "t4");
  EXPECT_EQ(spec_of(file_of("cuda", {}, "Imaginary Accelerator"), spec("t4")).key, "t4");
}

// ---------------------------------------------------------------------------------------------
// make_histogram
// ---------------------------------------------------------------------------------------------

TEST(Histogram, CountsSamplesInEqualBinsWithTheMaximumInTheLastBin) {
  const std::vector<double> samples{1, 2, 2, 3};
  const Histogram h = make_histogram(samples, 2);
  EXPECT_DOUBLE_EQ(h.min_ms, 1);
  EXPECT_DOUBLE_EQ(h.bin_width_ms, 1);
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{1, 3}));  // [1,2) holds 1; [2,3] holds 2, 2, 3
}

TEST(Histogram, FourBinsSplitEvenlySpreadSamples) {
  const std::vector<double> samples{0, 1, 2, 3, 4, 5, 6, 7, 8};
  const Histogram h = make_histogram(samples, 4);
  EXPECT_DOUBLE_EQ(h.bin_width_ms, 2);
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{2, 2, 2, 3}));
}

TEST(Histogram, NoSamplesGiveNoBins) {
  EXPECT_TRUE(make_histogram({}, 10).counts.empty());
}

TEST(Histogram, EqualSamplesGiveOneNarrowBinCentredOnTheValue) {
  const std::vector<double> samples{5, 5, 5};
  const Histogram h = make_histogram(samples, 10);
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{3}));
  EXPECT_DOUBLE_EQ(h.bin_width_ms, 0.005);  // |5| x 1e-3
  EXPECT_DOUBLE_EQ(h.min_ms + h.bin_width_ms / 2, 5);

  const std::vector<double> zeros{0, 0};
  const Histogram z = make_histogram(zeros, 3);
  EXPECT_DOUBLE_EQ(z.bin_width_ms, 1e-9);  // the floor for a value of 0
  EXPECT_EQ(z.counts, (std::vector<std::size_t>{2}));
}

TEST(Histogram, BinsBelowOneAreReadAsOne) {
  const std::vector<double> samples{1, 2, 3};
  EXPECT_EQ(make_histogram(samples, 0).counts, (std::vector<std::size_t>{3}));
  EXPECT_EQ(make_histogram(samples, -5).counts, (std::vector<std::size_t>{3}));
}

TEST(Histogram, NonFiniteSamplesAreLeftOut) {
  const std::vector<double> samples{1, std::nan(""), 3, HUGE_VAL};
  const Histogram h = make_histogram(samples, 2);
  EXPECT_DOUBLE_EQ(h.min_ms, 1);
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{1, 1}));
}

TEST(Histogram, SamplesSpanningTheDoubleRangeStayFinite) {
  const std::vector<double> samples{-1.7e308, 1.7e308};
  const Histogram h = make_histogram(samples, 2);
  EXPECT_TRUE(std::isfinite(h.bin_width_ms));
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{1, 1}));
}

// ---------------------------------------------------------------------------------------------
// benchmark_view
// ---------------------------------------------------------------------------------------------

TEST(BenchmarkView, TwoSizesGiveSortedPointsWithModeledBandwidthFromBytes) {
  Result big =
      result("vector_add", {{"n", "2048"}},
             {measured("bytes", 24576), modeled("time_ms", 0.008), measured("time_ms", 0.5),
              measured("bandwidth_gb_s", 0.049152), measured("rel_noise_percent", 1.5)});
  big.samples_ms = {0.4, 0.5, 0.6};
  Result small =
      result("vector_add", {{"n", "1024"}},
             {measured("bytes", 12288), modeled("time_ms", 0.004), measured("time_ms", 0.25)});
  const ResultsFile f = file_of("cuda", {big, small});

  const BenchmarkView v = benchmark_view(f, spec("t4"));
  ASSERT_EQ(v.points.size(), 2u);
  EXPECT_TRUE(v.empty_reason.empty());
  EXPECT_FALSE(v.cpu_times);
  EXPECT_EQ(v.kernel, "vector_add");

  const BenchmarkPoint& p0 = v.points[0];  // sorted by n: 1024 first
  EXPECT_DOUBLE_EQ(p0.n, 1024);
  EXPECT_DOUBLE_EQ(p0.bytes, 12288);
  EXPECT_EQ(p0.modeled_ms, 0.004);
  EXPECT_EQ(p0.measured_ms, 0.25);
  ASSERT_TRUE(p0.modeled_gb_s);
  expect_close(*p0.modeled_gb_s, 12288 / 0.004e-3 / 1e9, "modeled GB/s");  // 3.072 GB/s
  // No bandwidth metric: bytes / measured time.
  ASSERT_TRUE(p0.measured_gb_s);
  expect_close(*p0.measured_gb_s, 12288 / 0.25e-3 / 1e9, "measured GB/s");
  EXPECT_FALSE(p0.rel_noise_percent);
  EXPECT_TRUE(p0.unavailable.empty());
  EXPECT_TRUE(p0.samples_ms.empty());
  EXPECT_FALSE(p0.summary);

  const BenchmarkPoint& p1 = v.points[1];
  EXPECT_DOUBLE_EQ(p1.n, 2048);
  EXPECT_EQ(p1.measured_gb_s, 0.049152);  // the file's metric
  EXPECT_EQ(p1.rel_noise_percent, 1.5);
  EXPECT_EQ(p1.samples_ms, (std::vector<double>{0.4, 0.5, 0.6}));
  ASSERT_TRUE(p1.summary);
  EXPECT_EQ(p1.summary->count, 3u);
  EXPECT_DOUBLE_EQ(p1.summary->median_ms, 0.5);
}

TEST(BenchmarkView, PeakComesFromTheFilesSpecWithItsOrigin) {
  const ResultsFile f = file_of("cuda", {}, "H100 SXM");
  const BenchmarkView v = benchmark_view(f, spec("t4"));
  EXPECT_DOUBLE_EQ(v.peak_gb_s, 3350);
  EXPECT_EQ(v.peak_label, "H100 SXM peak 3350 GB/s (datasheet)");

  const BenchmarkView fallback = benchmark_view(file_of("cuda", {}, ""), spec("t4"));
  EXPECT_DOUBLE_EQ(fallback.peak_gb_s, 320);
  EXPECT_EQ(fallback.peak_label, "T4 peak 320 GB/s (datasheet)");

  GpuSpec estimated = spec("t4");
  estimated.name = "Imaginary X1";
  estimated.origin = SpecOrigin::estimated;
  estimated.dram_bandwidth_gb_s = 1234.5;
  EXPECT_EQ(benchmark_view(file_of("cuda", {}, ""), estimated).peak_label,
            "Imaginary X1 peak 1234.5 GB/s (estimated)");
}

TEST(BenchmarkView, Lab01OnSimHasMeasuredSmallSizesAndUnavailableLargeOnesWithTheReason) {
  const ResultsFile f = load("lab01_sim.json");
  const BenchmarkView v = benchmark_view(f, spec("t4"));
  EXPECT_TRUE(v.cpu_times);
  EXPECT_EQ(v.peak_label, "H100 SXM peak 3350 GB/s (datasheet)");  // the file's spec
  ASSERT_EQ(v.points.size(), 7u);  // timing_pitfall results are not benchmark points
  EXPECT_TRUE(std::is_sorted(v.points.begin(), v.points.end(),
                             [](const auto& a, const auto& b) { return a.n < b.n; }));
  EXPECT_DOUBLE_EQ(v.points.front().n, 65536);
  EXPECT_DOUBLE_EQ(v.points.back().n, 268435456);
  for (const BenchmarkPoint& p : v.points) {
    EXPECT_TRUE(p.modeled_ms.has_value()) << p.n;
    ASSERT_TRUE(p.modeled_gb_s.has_value()) << p.n;
    // vector_add's modeled time is bytes / 3350 GB/s, so the modeled bandwidth is the peak.
    EXPECT_NEAR(*p.modeled_gb_s, 3350, 3350 * 1e-9) << p.n;
    EXPECT_DOUBLE_EQ(p.bytes, p.n * 12) << p.n;  // two loads and a store of 4-byte floats
    if (p.n <= 262144) {
      EXPECT_TRUE(p.measured_ms.has_value()) << p.n;
      EXPECT_TRUE(p.measured_gb_s.has_value()) << p.n;
      EXPECT_TRUE(p.rel_noise_percent.has_value()) << p.n;
      EXPECT_TRUE(p.unavailable.empty()) << p.n;
    } else {
      EXPECT_FALSE(p.measured_ms.has_value()) << p.n;
      EXPECT_FALSE(p.measured_gb_s.has_value()) << p.n;
      EXPECT_EQ(p.unavailable, "above --max-log2 18") << p.n;
    }
  }
}

TEST(BenchmarkView, AnUnavailableMeasuredTimeCarriesItsReason) {
  const Result r = result("vector_add", {{"n", "1048576"}},
                          {measured("bytes", 12582912), modeled("time_ms", 0.00375609),
                           unavailable("time_ms", "above --max-log2 18")});
  const BenchmarkView v = benchmark_view(file_of("sim", {r}), spec("t4"));
  ASSERT_EQ(v.points.size(), 1u);
  EXPECT_TRUE(v.cpu_times);
  EXPECT_FALSE(v.points[0].measured_ms);
  EXPECT_EQ(v.points[0].unavailable, "above --max-log2 18");
  EXPECT_TRUE(v.points[0].modeled_gb_s);
}

TEST(BenchmarkView, AFileWithoutVectorAddSaysSo) {
  const BenchmarkView v = benchmark_view(load("lab02_sim.json"), spec("t4"));
  EXPECT_TRUE(v.points.empty());
  EXPECT_EQ(v.empty_reason, "no vector_add results in this file");
}

TEST(BenchmarkView, OddResultsAreSkippedOrShownWithoutTheirMissingNumbers) {
  const ResultsFile f = load("views_odd.json");  // n "abc", no n, zero time, no metrics
  const BenchmarkView v = benchmark_view(f, spec("t4"));
  EXPECT_EQ(v.peak_label, "T4 peak 320 GB/s (datasheet)");  // "no such GPU": the fallback
  ASSERT_EQ(v.points.size(), 2u);

  const BenchmarkPoint& empty = v.points[0];
  EXPECT_DOUBLE_EQ(empty.n, 1024);
  EXPECT_DOUBLE_EQ(empty.bytes, 0);
  EXPECT_FALSE(empty.measured_ms);
  EXPECT_FALSE(empty.modeled_gb_s);
  EXPECT_EQ(empty.unavailable, "no measured time in the file");

  const BenchmarkPoint& zero = v.points[1];
  EXPECT_DOUBLE_EQ(zero.n, 4096);
  EXPECT_DOUBLE_EQ(zero.bytes, 49152);
  EXPECT_FALSE(zero.measured_ms);  // a zero time would be an infinite bandwidth
  EXPECT_FALSE(zero.measured_gb_s);
  EXPECT_EQ(zero.unavailable, "the measured time is not positive");
}

TEST(BenchmarkView, OnlyUnusableSizesGiveAnEmptyViewWithTheReason) {
  const ResultsFile f =
      file_of("cuda", {result("vector_add", {{"n", "abc"}}, {measured("time_ms", 1)}),
                       result("vector_add", {{"n", "-4"}}, {measured("time_ms", 1)}),
                       result("vector_add", {{"n", "12x"}}, {measured("time_ms", 1)})});
  const BenchmarkView v = benchmark_view(f, spec("t4"));
  EXPECT_TRUE(v.points.empty());
  EXPECT_EQ(v.empty_reason, "no vector_add result has a positive number as param n");
}

TEST(BenchmarkView, SamplesThatCannotBeSummarizedKeepTheSamplesWithoutStatistics) {
  Result r = result("vector_add", {{"n", "1024"}}, {measured("time_ms", 1)});
  r.samples_ms = {1.0, -2.0};  // a negative time: summarize() throws
  const BenchmarkView v = benchmark_view(file_of("cuda", {r}), spec("t4"));
  ASSERT_EQ(v.points.size(), 1u);
  EXPECT_EQ(v.points[0].samples_ms.size(), 2u);
  EXPECT_FALSE(v.points[0].summary);
}

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

// ---------------------------------------------------------------------------------------------
// roofline_view
// ---------------------------------------------------------------------------------------------

// An op of 1 GFLOP moving 100 MB (intensity 10 FLOP/byte), measured at 0.1 ms.
Result ten_flop_per_byte_op() {
  return result("attention_component", {{"component", "Score Computation"}, {"seq_len", "64"}},
                {measured("flop", 1e9), measured("bytes", 1e8), measured("time_ms", 0.1),
                 modeled("time_ms", 1e8 / 3350e9 * 1e3)});
}

TEST(RooflineView, MeasuredPointOnH100Fp32MatchesHandComputedPercentOfRoof) {
  const ResultsFile f = file_of("cuda", {ten_flop_per_byte_op()});
  const std::vector<Source> sources{{"h100.json", &f, false}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_TRUE(v.roofline);
  EXPECT_TRUE(v.unavailable.empty());
  EXPECT_DOUBLE_EQ(v.roofline->peak_flop_s, 66.9e12);
  ASSERT_EQ(v.points.size(), 2u);
  EXPECT_TRUE(v.empty_reason.empty());

  const RooflinePoint& m = v.points[0];
  EXPECT_EQ(m.kind, Provenance::measured);
  EXPECT_EQ(m.label, "Score Computation (seq_len=64)");
  EXPECT_EQ(m.source, "h100.json");
  expect_close(m.intensity_flop_per_byte, 10, "intensity");
  expect_close(m.achieved_flop_s, 1e13, "achieved");  // 1e9 FLOP / 1e-4 s
  // Ridge of H100 SXM FP32: 66.9e12 / 3350e9 = 19.97 FLOP/byte; 10 is left of it, so the roof is
  // 10 x 3350 GB/s = 33.5 TFLOP/s and the op is memory-bound.
  expect_close(m.roof_flop_s, 33.5e12, "roof");
  expect_close(m.percent_of_roof, 100 * 1e13 / 33.5e12, "percent");  // 29.85%
  EXPECT_EQ(m.bound, Bound::memory);

  const RooflinePoint& modeled_point = v.points[1];
  EXPECT_EQ(modeled_point.kind, Provenance::modeled);
  EXPECT_NEAR(modeled_point.percent_of_roof, 100, 1e-9);  // modeled at the roof
}

TEST(RooflineView, MeasuredPointsOfSimSourcesAreLeftOutAndModeledOnesStay) {
  const ResultsFile f = file_of("sim", {ten_flop_per_byte_op()});
  const std::vector<Source> sources{{"live (sim)", &f, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_EQ(v.points.size(), 1u);
  EXPECT_EQ(v.points[0].kind, Provenance::modeled);
  EXPECT_EQ(v.points[0].source, "live (sim)");
}

TEST(RooflineView, OnlySimMeasuredTimesGiveAnEmptyViewThatSaysWhy) {
  Result r = result("op_cost", {{"op", "GEMM"}},
                    {measured("flop", 1e9), measured("bytes", 1e6), measured("time_ms", 5)});
  const ResultsFile f = file_of("sim", {r});
  const std::vector<Source> sources{{"live (sim)", &f, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("1 measured time(s) of sim runs left out"), std::string::npos)
      << v.empty_reason;
}

TEST(RooflineView, Lab02AndLab03OnSimPlaceModeledOpsAtFp32) {
  const ResultsFile lab02 = load("lab02_sim.json");
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab02", &lab02, true}, {"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  // lab02: five components with FLOPs and bytes (their measured CPU times left out); lab03: five
  // FP32 op_cost results. lab03's components have no FLOPs or bytes and are not placed.
  ASSERT_EQ(v.points.size(), 10u);
  std::size_t from_lab02 = 0;
  for (const RooflinePoint& p : v.points) {
    EXPECT_EQ(p.kind, Provenance::modeled) << p.label;
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;  // the labs model at the roof
    from_lab02 += p.source == "lab02" ? 1 : 0;
  }
  EXPECT_EQ(from_lab02, 5u);
  const auto has = [&](const std::string& label) {
    return std::any_of(v.points.begin(), v.points.end(),
                       [&](const RooflinePoint& p) { return p.label == label; });
  };
  EXPECT_TRUE(has("Softmax (seq_len=64)"));
  EXPECT_TRUE(has("GEMM 4096x4096x4096"));
  const auto gemm = std::find_if(v.points.begin(), v.points.end(), [](const RooflinePoint& p) {
    return p.label == "GEMM 4096x4096x4096";
  });
  EXPECT_EQ(gemm->bound, Bound::compute);
  expect_close(gemm->intensity_flop_per_byte, 137.438953472e9 / 201326592.0, "GEMM intensity");
}

TEST(RooflineView, Lab03AtFp16TensorPlacesItsFiveFp16Ops) {
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp16);
  ASSERT_TRUE(v.roofline);
  EXPECT_DOUBLE_EQ(v.roofline->peak_flop_s, 989.4e12);
  ASSERT_EQ(v.points.size(), 5u);
  for (const RooflinePoint& p : v.points) {
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;
  }
}

TEST(RooflineView, ModeledTimesOfAnotherSpecAreModeledAgainForTheShownSpec) {
  const ResultsFile lab03 = load("lab03_sim.json");  // modeled for H100 SXM
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("a100-sxm-80gb"), Precision::fp32);
  ASSERT_EQ(v.points.size(), 5u);
  for (const RooflinePoint& p : v.points) {
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;  // not 3350/2039 = 164% of the roof
  }
}

TEST(RooflineView, ComponentsWithoutFlopsAndBytesAreNotPlacedAndTheReasonSaysSo) {
  ResultsFile lab03 = load("lab03_sim.json");
  std::erase_if(lab03.results, [](const Result& r) { return r.name != "attention_component"; });
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("25 op(s) not placed: the file gives no FLOPs and bytes"),
            std::string::npos)
      << v.empty_reason;
}

TEST(RooflineView, ASpecWithoutThePrecisionHasNoRoofAndSaysWhy) {
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("t4"), Precision::bf16);
  EXPECT_FALSE(v.roofline);
  EXPECT_FALSE(v.unavailable.empty());
  EXPECT_TRUE(v.points.empty());
  EXPECT_FALSE(v.empty_reason.empty());
}

TEST(RooflineView, NoSourcesGiveAnEmptyViewWithAReason) {
  const RooflineView v = roofline_view({}, spec("h100-sxm"), Precision::fp32);
  ASSERT_TRUE(v.roofline);  // the roofs are drawn without points
  EXPECT_TRUE(v.points.empty());
  EXPECT_FALSE(v.empty_reason.empty());
}

TEST(RooflineView, OddOpsAreSkippedWithoutACrash) {
  // An unknown precision, zero bytes, and a zero time: nothing can be placed.
  const ResultsFile f = load("views_odd.json");
  const std::vector<Source> sources{{"odd", &f, false}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("no op at FP32"), std::string::npos) << v.empty_reason;
}

TEST(RooflineView, PrecisionParamIsReadInEitherSpelling) {
  const auto op = [](const char* precision) {
    return result("op_cost", {{"op", precision}, {"precision", precision}},
                  {modeled("work_gflop", 1), modeled("bytes", 1e6), modeled("time_ms", 1)});
  };
  const ResultsFile f = file_of("cuda", {op("fp16"), op("FP16 tensor"), op("FP32"), op("int8")});
  const std::vector<Source> sources{{"f", &f, false}};
  EXPECT_EQ(roofline_view(sources, spec("h100-sxm"), Precision::fp16).points.size(), 2u);
  EXPECT_EQ(roofline_view(sources, spec("h100-sxm"), Precision::fp32).points.size(), 1u);
}

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

namespace gpulab::viewer {
namespace {

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

TEST(RooflineViewReview, AMeasuredPointIsJudgedAgainstItsOwnGpusRoof) {
  // 1e9 FLOP and 1e8 bytes (10 FLOP/byte) in 1 ms: 1 TFLOP/s achieved. On an A100 file the roof
  // at 10 FLOP/byte is min(FP32 peak, 10 x DRAM bandwidth) of the A100, whatever spec is drawn.
  Result r = result("op_cost", {{"op", "probe"}},
                    {measured("flop", 1e9), measured("bytes", 1e8), measured("time_ms", 1.0)});
  const ResultsFile a100 = file_of("cuda", {r}, "A100 80GB SXM");
  const GpuSpec own = spec("a100-sxm-80gb");
  const std::vector<Source> sources{{"a100.json", &a100, false}};
  const RooflineView view = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_EQ(view.points.size(), 1U);
  const double roof = std::min(own.fp32_tflop_s * 1e12, 10 * own.dram_bandwidth_gb_s * 1e9);
  expect_close(view.points[0].roof_flop_s, roof, "roof");
  expect_close(view.points[0].percent_of_roof, 100 * 1e12 / roof, "percent of roof");
  EXPECT_EQ(view.roofline->spec_name, "H100 SXM");
}

TEST(BenchmarkViewReview, EachSizeCarriesTheHistogramOfItsSamples) {
  Result r = result("vector_add", {{"n", "1024"}}, {measured("time_ms", 2.0)});
  r.samples_ms = {1.0, 2.0, 2.0, 3.0};
  const BenchmarkView view = benchmark_view(file_of("cuda", {r}), spec("h100-sxm"));
  ASSERT_EQ(view.points.size(), 1U);
  const Histogram expected = make_histogram(r.samples_ms, kHistogramBins);
  EXPECT_EQ(view.points[0].histogram.counts, expected.counts);
  EXPECT_EQ(view.points[0].histogram.counts.size(), static_cast<std::size_t>(kHistogramBins));
}

// ---------------------------------------------------------------------------------------------
// levels_views
// ---------------------------------------------------------------------------------------------

// An attention_level result as lab 04 writes it, at seq_len 256.
Result level_result(int level, std::string name, double time, double memory,
                    std::map<std::string, std::string> shape = {{"seq_len", "256"},
                                                                {"d_model", "128"}}) {
  shape["level"] = std::to_string(level);
  shape["level_name"] = std::move(name);
  shape["bound"] = "memory-bound";
  return result("attention_level", std::move(shape),
                {measured("time_ms", time), measured("memory_bytes", memory),
                 Metric{"dram_bytes", 1000.0 * (level + 1), Provenance::counted, {}, {}}});
}

// An attention_level_memory result: the buffers of `level` at `seq_len`.
Result level_memory(int level, int seq_len, double bytes, std::string d_model = "128") {
  return result("attention_level_memory",
                {{"seq_len", std::to_string(seq_len)},
                 {"d_model", std::move(d_model)},
                 {"level", std::to_string(level)},
                 {"level_name", "name"}},
                {modeled("memory_bytes", bytes)});
}

TEST(LevelsViews, RowsAreByLevelWithTheSpeedupOverLevelZeroAndTheFastest) {
  const std::vector<LevelsView> views = levels_views(
      file_of("cuda", {level_result(3, "flash", 2, 30), level_result(0, "unfused", 8, 90),
                       level_result(1, "fused softmax", 4, 60)}));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  EXPECT_EQ(v.shape, "d_model=128, seq_len=256");
  ASSERT_TRUE(v.seq_len);
  EXPECT_EQ(*v.seq_len, 256);
  ASSERT_EQ(v.rows.size(), 3U);
  EXPECT_EQ(v.rows[0].name, "L0 unfused");
  EXPECT_EQ(v.rows[1].name, "L1 fused softmax");
  EXPECT_EQ(v.rows[2].name, "L3 flash");
  expect_close(*v.rows[0].speedup, 1, "L0");
  expect_close(*v.rows[1].speedup, 2, "L1: 8 / 4");
  expect_close(*v.rows[2].speedup, 4, "L3: 8 / 2");
  EXPECT_EQ(v.fastest, 2U);
  EXPECT_EQ(*v.rows[2].memory_bytes, 30);
  EXPECT_EQ(*v.rows[2].dram_bytes, 4000);
  EXPECT_EQ(v.rows[2].dram_provenance, Provenance::counted);
  EXPECT_EQ(v.rows[2].bound, "memory-bound");
  EXPECT_FALSE(v.cpu_times);
  EXPECT_TRUE(v.memory.empty());
}

TEST(LevelsViews, WithoutLevelZeroThereIsNoSpeedupAndOnTheHostClockNoFastest) {
  const std::vector<LevelsView> views = levels_views(
      file_of("sim", {level_result(1, "fused softmax", 4, 60), level_result(3, "flash", 2, 30)}));
  ASSERT_EQ(views.size(), 1U);
  EXPECT_TRUE(views[0].cpu_times);
  EXPECT_FALSE(views[0].fastest) << "CPU time of the simulation ranks nothing on a GPU";
  for (const LevelRow& row : views[0].rows) {
    EXPECT_FALSE(row.speedup) << row.name;
    EXPECT_TRUE(row.time_ms) << row.name;
  }
}

TEST(LevelsViews, MemoryCurvesJoinTheShapeWithoutItsSeqLenSortedWithTheirExponent) {
  std::vector<Result> results = {level_result(0, "unfused", 8, 90),
                                 level_result(3, "flash", 2, 30)};
  // Level 0 holds 4 S^2 bytes, level 3 100 S: given out of order, with a length twice (the first
  // counts) and a family of another d_model (a view of its own).
  for (const int s : {1024, 256, 4096}) {
    results.push_back(level_memory(0, s, 4.0 * s * s));
    results.push_back(level_memory(3, s, 100.0 * s));
  }
  results.push_back(level_memory(3, 1024, 1));
  results.push_back(level_memory(3, 256, 7, "512"));
  results.push_back(level_memory(3, 512, 14, "512"));
  const std::vector<LevelsView> views = levels_views(file_of("cuda", std::move(results)));
  ASSERT_EQ(views.size(), 2U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.memory.size(), 2U);
  EXPECT_EQ(v.memory[0].level, 0);
  EXPECT_EQ(v.memory[0].seq_len, (std::vector<double>{256, 1024, 4096}));
  EXPECT_EQ(v.memory[0].bytes,
            (std::vector<double>{4.0 * 256 * 256, 4.0 * 1024 * 1024, 4.0 * 4096 * 4096}));
  EXPECT_EQ(v.memory[1].bytes, (std::vector<double>{25600, 102400, 409600}));
  EXPECT_EQ(v.memory[1].name, "L3 name");
  EXPECT_NEAR(*v.memory[0].exponent, 2, 1e-12);
  EXPECT_NEAR(*v.memory[1].exponent, 1, 1e-12);
  EXPECT_FALSE(v.memory[0].measured) << "computed from the shape";

  const LevelsView& other = views[1];
  EXPECT_EQ(other.shape, "d_model=512");
  EXPECT_TRUE(other.rows.empty());
  EXPECT_FALSE(other.seq_len);
  ASSERT_EQ(other.memory.size(), 1U);
  EXPECT_NEAR(*other.memory[0].exponent, 1, 1e-12);
}

TEST(LevelsViews, MemoryMeasuredAtEveryLengthMakesAMeasuredCurve) {
  // Lab 05 measures each level's memory at each length: no level rows, measured metrics.
  std::vector<Result> results;
  for (const int s : {128, 256}) {
    for (const int level : {0, 3}) {
      Result r = level_memory(level, s, 1);
      r.metrics = {measured("memory_bytes", level == 0 ? 8.0 * s * s : 400.0 * s)};
      results.push_back(std::move(r));
    }
  }
  results.push_back(level_memory(4, 128, 1000));  // computed: its curve is not measured
  results.push_back(level_memory(4, 256, 2000));
  const std::vector<LevelsView> views = levels_views(file_of("sim", std::move(results)));
  ASSERT_EQ(views.size(), 1U);
  ASSERT_EQ(views[0].memory.size(), 3U);
  EXPECT_TRUE(views[0].rows.empty());
  EXPECT_TRUE(views[0].memory[0].measured);
  EXPECT_TRUE(views[0].memory[1].measured);
  EXPECT_FALSE(views[0].memory[2].measured);
  EXPECT_NEAR(*views[0].memory[0].exponent, 2, 1e-12);
  EXPECT_NEAR(*views[0].memory[1].exponent, 1, 1e-12);
}

TEST(LevelsViews, OddResultsAreSkippedWithoutACrash) {
  Result no_level = level_result(1, "x", 1, 1);
  no_level.params.erase("level");
  Result bad_level = level_result(1, "x", 1, 1);
  bad_level.params["level"] = "one";
  Result negative = level_result(1, "x", 1, 1);
  negative.params["level"] = "-1";
  Result zero_time = level_result(2, "cuBLAS", 0, 0);
  Result bad_seq = level_memory(0, 256, 10);
  bad_seq.params["seq_len"] = "abc";
  const std::vector<LevelsView> views = levels_views(
      file_of("cuda", {no_level, bad_level, negative, zero_time, level_result(2, "second", 5, 5),
                       bad_seq, level_memory(0, 256, 0), level_memory(1, 256, 10)}));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.rows.size(), 1U) << "level 2 twice: the first counts";
  EXPECT_EQ(v.rows[0].name, "L2 cuBLAS");
  EXPECT_FALSE(v.rows[0].time_ms) << "a zero time is no time";
  EXPECT_FALSE(v.rows[0].memory_bytes);
  EXPECT_FALSE(v.fastest);
  ASSERT_EQ(v.memory.size(), 1U) << "zero bytes and an unreadable seq_len are left out";
  EXPECT_EQ(v.memory[0].level, 1);
  EXPECT_FALSE(v.memory[0].exponent) << "one length has no slope";

  EXPECT_TRUE(levels_views(load("lab02_sim.json")).empty());
}

TEST(LevelsViews, Lab04OnSimHasFiveLevelsOnTheModeledClockAndLinearFlashMemory) {
  // lab04_sim.json: `gpulab run lab04 --quick --json FILE` on sim (modeled clock, H100 SXM).
  const std::vector<LevelsView> views = levels_views(load("lab04_sim.json"));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.rows.size(), 5U);
  EXPECT_FALSE(v.cpu_times);
  EXPECT_TRUE(v.fastest);
  for (const LevelRow& row : v.rows) {
    EXPECT_TRUE(row.time_ms && row.speedup && row.memory_bytes && row.dram_bytes) << row.name;
    EXPECT_EQ(row.dram_provenance, Provenance::counted) << row.name;
    // Each level's modeled bound and kernel differ, and it stays one shape.
    EXPECT_FALSE(row.model_bound.empty()) << row.name;
    EXPECT_FALSE(row.longest_kernel.empty()) << row.name;
  }
  EXPECT_EQ(v.rows[2].longest_kernel.rfind("cublasSgemm as ", 0), 0U) << v.rows[2].longest_kernel;
  EXPECT_LT(*v.rows[3].memory_bytes, *v.rows[0].memory_bytes) << "flash holds no S x S tensor";
  ASSERT_EQ(v.memory.size(), 5U);
  for (const LevelMemoryCurve& curve : v.memory) {
    ASSERT_TRUE(curve.exponent) << curve.name;
    if (curve.level <= 2) {
      EXPECT_GT(*curve.exponent, 1.5) << curve.name;
    } else {
      EXPECT_LT(*curve.exponent, 1.15) << curve.name;
    }
  }
}

gpulab::ClassSummary two_labs() {
  gpulab::ClassSummary s;
  s.context.backend = "cuda";
  s.students = 5;
  s.graded = 4;
  s.labs = {{"lab01", {1, 0, 0, 0, 0, 0, 0, 0, 1, 2}}, {"lab04", {0, 0, 0, 0, 0, 0, 0, 0, 4, 0}}};
  s.failed_most = {{"lab04 Lab04Traffic.FlashReadsQkvAndWritesOOnce", 3}};
  return s;
}

TEST(ClassViews, BandsLabsAndTheTestsFailedMostAsTheSummaryHasThem) {
  const ClassView view = class_view(two_labs());
  EXPECT_EQ(view.heading,
            "4 of 5 submissions graded (cuda backend); 1 not graded (gpulab grade --roster lists "
            "them and grades them when run again)");
  ASSERT_EQ(view.bands.size(), 10u);
  EXPECT_EQ(view.bands.front(), "0-9%");
  EXPECT_EQ(view.bands[4], "40-49%");
  EXPECT_EQ(view.bands.back(), "90-100%");
  EXPECT_TRUE(view.empty_reason.empty());
  ASSERT_EQ(view.labs.size(), 2u);
  EXPECT_EQ(view.labs[0].students, (std::vector<double>{1, 0, 0, 0, 0, 0, 0, 0, 1, 2}));
  EXPECT_EQ(view.labs[0].summary, "lab01: 2 of 4 at 90% or more, 1 below 10%");
  EXPECT_EQ(view.labs[1].tooltips[8], "lab04, 80-89% of the points: 4 students");
  EXPECT_EQ(view.labs[0].tooltips[0], "lab01, 0-9% of the points: 1 student");
  ASSERT_EQ(view.failed.size(), 1u);
  EXPECT_EQ(view.failed[0].students, 3u);
  EXPECT_DOUBLE_EQ(view.failed[0].fraction, 0.75);
  EXPECT_EQ(view.failed[0].share, "3 of 4 (75%)");
}

TEST(ClassViews, AClassWithNothingGradedSaysSo) {
  gpulab::ClassSummary s = two_labs();
  s.graded = 0;
  s.labs = {{"lab01", {}}};
  s.failed_most.clear();
  const ClassView view = class_view(s);
  EXPECT_EQ(view.empty_reason, "no submission graded yet");
  EXPECT_NE(view.heading.find("0 of 5 submissions graded"), std::string::npos) << view.heading;
  EXPECT_NE(view.heading.find("5 not graded"), std::string::npos) << view.heading;
  EXPECT_TRUE(view.failed.empty());
}

}  // namespace
}  // namespace gpulab::viewer
