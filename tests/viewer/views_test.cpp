// Tests of the benchmark view and what the views share (views.cpp): the spec a file was measured
// on, histograms of samples and the Benchmark panel's points, from hand-made results with
// hand-computed expectations and from real lab output (tests/viewer/data/lab0N_sim.json, written
// by `gpulab run all --quick --json` on the sim backend), plus odd files that must not crash.
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

TEST(BenchmarkViewReview, EachSizeCarriesTheHistogramOfItsSamples) {
  Result r = result("vector_add", {{"n", "1024"}}, {measured("time_ms", 2.0)});
  r.samples_ms = {1.0, 2.0, 2.0, 3.0};
  const BenchmarkView view = benchmark_view(file_of("cuda", {r}), spec("h100-sxm"));
  ASSERT_EQ(view.points.size(), 1U);
  const Histogram expected = make_histogram(r.samples_ms, kHistogramBins);
  EXPECT_EQ(view.points[0].histogram.counts, expected.counts);
  EXPECT_EQ(view.points[0].histogram.counts.size(), static_cast<std::size_t>(kHistogramBins));
}

}  // namespace
}  // namespace gpulab::viewer
