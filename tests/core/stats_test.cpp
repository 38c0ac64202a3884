// Unit tests of stats.hpp: quantiles, the summary of timing samples, throughput in decimal units
// and the comparison of two measurements. Expected values are worked by hand in the comments.
#include "gpulab/core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every expected value below is a short sum or product of exact decimals: they agree with the
// library to rounding, so a relative tolerance of 1e-12 (with a 1e-15 floor for zeros) is ample.
constexpr double kRelTolerance = 1e-12;
constexpr double kAbsFloor = 1e-15;

void expect_close(const char* what, double got, double expected) {
  const double tolerance = std::abs(expected) * kRelTolerance + kAbsFloor;
  EXPECT_LE(std::abs(got - expected), tolerance)
      << what << ": expected " << expected << ", got " << got << ", tolerance " << tolerance;
}

// A Summary with only the fields compare() reads.
Summary summary_of(double median_ms, double p10_ms, double p90_ms, double rel_noise) {
  Summary s;
  s.count = 10;
  s.median_ms = median_ms;
  s.p10_ms = p10_ms;
  s.p90_ms = p90_ms;
  s.rel_noise = rel_noise;
  return s;
}

// ---------------------------------------------------------------------------------------------
// quantile
// ---------------------------------------------------------------------------------------------

TEST(Quantile, EndpointsAreMinimumAndMaximumOfUnsortedSamples) {
  const std::vector<double> samples = {30, 10, 40, 20};
  expect_close("q=0", quantile(samples, 0.0), 10);
  expect_close("q=1", quantile(samples, 1.0), 40);
}

TEST(Quantile, InterpolatesLinearlyBetweenTheTwoClosestRanks) {
  // Sorted: 10 20 30 40; position q * (n - 1) = 3q.
  const std::vector<double> samples = {30, 10, 40, 20};
  expect_close("q=0.5 (position 1.5)", quantile(samples, 0.5), 25);
  expect_close("q=0.25 (position 0.75)", quantile(samples, 0.25), 17.5);
  expect_close("q=0.9 (position 2.7)", quantile(samples, 0.9), 37);
  expect_close("q=1/3 (position 1, an exact rank)", quantile(samples, 1.0 / 3.0), 20);
}

TEST(Quantile, OfOneSampleIsThatSampleForEveryQ) {
  const std::vector<double> samples = {7.5};
  for (const double q : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    expect_close(("q=" + std::to_string(q)).c_str(), quantile(samples, q), 7.5);
  }
}

TEST(Quantile, DoesNotReorderTheCallersSamples) {
  const std::vector<double> samples = {3, 1, 2};
  (void)quantile(samples, 0.5);
  EXPECT_EQ(samples, (std::vector<double>{3, 1, 2}));
}

TEST(Quantile, RejectsEmptySamplesAndQOutsideZeroToOne) {
  const std::vector<double> samples = {1, 2, 3};
  EXPECT_THROW((void)quantile(std::vector<double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW((void)quantile(samples, -0.01), std::invalid_argument);
  EXPECT_THROW((void)quantile(samples, 1.01), std::invalid_argument);
  EXPECT_THROW((void)quantile(samples, kNaN), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// summarize
// ---------------------------------------------------------------------------------------------

TEST(Summarize, OddCountHandWorked) {
  // Sorted 1 2 3 4 5: mean 3; squared deviations 4+1+0+1+4 = 10; sample variance 10/4 = 2.5.
  const std::vector<double> samples = {4, 1, 3, 2, 5};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 5u);
  expect_close("min_ms", s.min_ms, 1);
  expect_close("max_ms", s.max_ms, 5);
  expect_close("mean_ms", s.mean_ms, 3);
  expect_close("median_ms (middle sample)", s.median_ms, 3);
  expect_close("stddev_ms (n - 1)", s.stddev_ms, std::sqrt(2.5));
  expect_close("rel_noise", s.rel_noise, std::sqrt(2.5) / 3);
  expect_close("p10_ms (position 0.4)", s.p10_ms, 1.4);
  expect_close("p90_ms (position 3.6)", s.p90_ms, 4.6);
}

TEST(Summarize, EvenCountMedianIsTheMeanOfTheTwoMiddleSamples) {
  // Sorted 1 2 3 10: mean 4; squared deviations 9+4+1+36 = 50; sample variance 50/3.
  const std::vector<double> samples = {10, 2, 1, 3};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 4u);
  expect_close("min_ms", s.min_ms, 1);
  expect_close("max_ms", s.max_ms, 10);
  expect_close("mean_ms", s.mean_ms, 4);
  expect_close("median_ms (position 1.5)", s.median_ms, 2.5);
  expect_close("stddev_ms (n - 1)", s.stddev_ms, std::sqrt(50.0 / 3.0));
  expect_close("rel_noise", s.rel_noise, std::sqrt(50.0 / 3.0) / 4);
  expect_close("p10_ms (position 0.3)", s.p10_ms, 1.3);
  expect_close("p90_ms (position 2.7)", s.p90_ms, 7.9);
}

TEST(Summarize, StddevUsesNMinusOneNotN) {
  // Two samples 1 and 3: population stddev 1, sample stddev sqrt(2).
  const std::vector<double> samples = {1, 3};
  expect_close("stddev_ms", summarize(samples).stddev_ms, std::sqrt(2.0));
}

TEST(Summarize, SingleSampleHasZeroSpreadAndEveryStatisticEqualToIt) {
  const std::vector<double> samples = {2.5};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 1u);
  expect_close("min_ms", s.min_ms, 2.5);
  expect_close("max_ms", s.max_ms, 2.5);
  expect_close("mean_ms", s.mean_ms, 2.5);
  expect_close("median_ms", s.median_ms, 2.5);
  expect_close("p10_ms", s.p10_ms, 2.5);
  expect_close("p90_ms", s.p90_ms, 2.5);
  EXPECT_EQ(s.stddev_ms, 0.0) << "expected 0 for n = 1 (no spread to estimate), got "
                              << s.stddev_ms;
  EXPECT_EQ(s.rel_noise, 0.0) << "expected 0, got " << s.rel_noise;
}

TEST(Summarize, AllZeroSamplesAreValidAndHaveZeroRelativeNoiseNotNaN) {
  const std::vector<double> samples = {0, 0, 0};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.mean_ms, 0.0);
  EXPECT_EQ(s.rel_noise, 0.0) << "stddev / mean with mean 0 must not be NaN; got " << s.rel_noise;
}

TEST(Summarize, RejectsEmptyNegativeAndNonFiniteSamples) {
  EXPECT_THROW((void)summarize(std::vector<double>{}), std::invalid_argument);
  for (const double bad : {-1.0, -1e-9, kNaN, kInf, -kInf}) {
    const std::vector<double> samples = {1.0, bad, 2.0};
    EXPECT_THROW((void)summarize(samples), std::invalid_argument) << "sample " << bad;
  }
}

TEST(Summarize, ErrorNamesTheIndexOfTheBadSample) {
  const std::vector<double> samples = {1.0, 2.0, -3.0};
  try {
    (void)summarize(samples);
    FAIL() << "a negative sample was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 2"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Throughput
// ---------------------------------------------------------------------------------------------

TEST(Throughput, BandwidthIsInDecimalGigabytesPerSecond) {
  expect_close("1e9 bytes in 1 ms", bandwidth_gb_s(1e9, 1.0), 1000);
  expect_close("12e6 bytes in 0.5 ms", bandwidth_gb_s(12e6, 0.5), 24);
  // 2^30 bytes (1 GiB) in one second is 1.073741824 GB/s, not 1: decimal units throughout.
  expect_close("1 GiB in 1 s", bandwidth_gb_s(1073741824.0, 1000.0), 1.073741824);
  expect_close("0 bytes", bandwidth_gb_s(0, 1.0), 0);
}

TEST(Throughput, FlopRateIsInDecimalGigaflopsPerSecond) {
  expect_close("2e12 FLOP in 1 s", flop_rate_gflop_s(2e12, 1000.0), 2000);
  expect_close("1e6 FLOP in 1 us", flop_rate_gflop_s(1e6, 1e-3), 1000);
  expect_close("0 FLOP", flop_rate_gflop_s(0, 2.0), 0);
}

TEST(Throughput, RejectsNonPositiveOrNonFiniteTimeAndNegativeOrNonFiniteWork) {
  for (const double time_ms : {0.0, -1.0, kNaN, kInf}) {
    EXPECT_THROW((void)bandwidth_gb_s(1e6, time_ms), std::invalid_argument) << time_ms << " ms";
    EXPECT_THROW((void)flop_rate_gflop_s(1e6, time_ms), std::invalid_argument) << time_ms << " ms";
  }
  for (const double work : {-1.0, kNaN, kInf}) {
    EXPECT_THROW((void)bandwidth_gb_s(work, 1.0), std::invalid_argument) << work << " bytes";
    EXPECT_THROW((void)flop_rate_gflop_s(work, 1.0), std::invalid_argument) << work << " FLOP";
  }
}

TEST(Throughput, FractionOfPeakIsAchievedOverPeakAndMayExceedOne) {
  expect_close("500 of 1000", fraction_of_peak(500, 1000), 0.5);
  expect_close("1500 of 1000", fraction_of_peak(1500, 1000), 1.5);
  expect_close("0 of 1000", fraction_of_peak(0, 1000), 0);
}

TEST(Throughput, FractionOfPeakRejectsNonPositiveOrNonFinitePeak) {
  for (const double peak : {0.0, -1.0, kNaN, kInf}) {
    EXPECT_THROW((void)fraction_of_peak(1.0, peak), std::invalid_argument) << "peak " << peak;
  }
}

// ---------------------------------------------------------------------------------------------
// growth_exponent
// ---------------------------------------------------------------------------------------------

TEST(GrowthExponent, IsTheExactPowerOfAPowerLaw) {
  const std::vector<double> x = {256, 512, 1024, 2048};
  for (const double power : {0.0, 1.0, 2.0, 0.5}) {
    std::vector<double> y;
    for (const double v : x) {
      y.push_back(3 * std::pow(v, power));
    }
    expect_close("power", growth_exponent(x, y), power);
  }
}

TEST(GrowthExponent, IsTheLeastSquaresSlopeOnLogLogAxes) {
  // log2 x = 0, 1, 2; log2 y = 0, 1, 3: slope = sum(dx * dy) / sum(dx^2) with dx = -1, 0, 1 and
  // dy = -4/3, -1/3, 5/3: (4/3 + 5/3) / 2 = 1.5.
  expect_close("1.5", growth_exponent(std::vector<double>{1, 2, 4}, std::vector<double>{1, 2, 8}),
               1.5);
  // A constant term flattens the curve: a + b*x^2 between 1 and 2.
  const double bent = growth_exponent(std::vector<double>{1, 10, 100, 1000},
                                      std::vector<double>{1e6 + 1, 1e6 + 100, 1e6 + 1e4, 2e6});
  EXPECT_GT(bent, 0);
  EXPECT_LT(bent, 0.2);
}

TEST(GrowthExponent, RejectsTooFewPointsMismatchedSizesBadValuesAndOneX) {
  const std::vector<double> two = {1, 2};
  EXPECT_THROW((void)growth_exponent(std::vector<double>{1}, std::vector<double>{1}),
               std::invalid_argument);
  EXPECT_THROW((void)growth_exponent(two, std::vector<double>{1, 2, 3}), std::invalid_argument);
  for (const double bad : {0.0, -1.0, kNaN, kInf}) {
    EXPECT_THROW((void)growth_exponent(two, std::vector<double>{1, bad}), std::invalid_argument)
        << "y " << bad;
    EXPECT_THROW((void)growth_exponent(std::vector<double>{bad, 2}, two), std::invalid_argument)
        << "x " << bad;
  }
  EXPECT_THROW((void)growth_exponent(std::vector<double>{4, 4}, two), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------------

TEST(Compare, SameWhenMediansAndNoiseAreWithinTheThreshold) {
  const Summary baseline = summary_of(10.0, 9.9, 10.1, 0.01);
  const Summary candidate = summary_of(10.1, 10.0, 10.2, 0.015);
  const ComparisonResult r = compare(baseline, candidate, 0.02);
  EXPECT_EQ(r.verdict, Comparison::same) << to_string(r.verdict);
  expect_close("ratio", r.ratio, 1.01);
  expect_close("noise (the larger of the two)", r.noise, 0.015);
}

TEST(Compare, AtExactlyTheThresholdIsSameAndJustBeyondIsNot) {
  // 5 / 4 - 1 = 0.25 and 3 / 4 - 1 = -0.25 exactly in binary floating point.
  const Summary baseline = summary_of(4.0, 3.9, 4.1, 0.01);
  const Summary slower = summary_of(5.0, 4.9, 5.1, 0.01);
  const Summary faster = summary_of(3.0, 2.9, 3.1, 0.01);
  EXPECT_EQ(compare(baseline, slower, 0.25).verdict, Comparison::same);
  EXPECT_EQ(compare(baseline, faster, 0.25).verdict, Comparison::same);
  const double just_below = std::nextafter(0.25, 0.0);
  EXPECT_EQ(compare(baseline, slower, just_below).verdict, Comparison::slower);
  EXPECT_EQ(compare(baseline, faster, just_below).verdict, Comparison::faster);
}

TEST(Compare, NoiseAtTheThresholdIsSameAndAboveItIsAmbiguous) {
  const Summary baseline = summary_of(10.0, 9.0, 11.0, 0.25);
  const Summary candidate = summary_of(10.0, 9.0, 11.0, 0.01);
  EXPECT_EQ(compare(baseline, candidate, 0.25).verdict, Comparison::same);
  const ComparisonResult r = compare(baseline, candidate, std::nextafter(0.25, 0.0));
  EXPECT_EQ(r.verdict, Comparison::ambiguous) << to_string(r.verdict);
  expect_close("noise", r.noise, 0.25);
}

TEST(Compare, NoiseIsTheLargerRelativeNoiseWhicheverSideItIsOn) {
  const Summary quiet = summary_of(10.0, 9.9, 10.1, 0.01);
  const Summary noisy = summary_of(10.0, 9.0, 11.0, 0.2);
  expect_close("noisy baseline", compare(noisy, quiet).noise, 0.2);
  expect_close("noisy candidate", compare(quiet, noisy).noise, 0.2);
  EXPECT_EQ(compare(quiet, noisy).verdict, Comparison::ambiguous);
}

TEST(Compare, FasterWhenBeyondTheThresholdAndTheMiddle80PercentDoNotOverlap) {
  const Summary baseline = summary_of(10.0, 9.5, 10.5, 0.03);
  const Summary candidate = summary_of(8.0, 7.8, 8.2, 0.03);
  const ComparisonResult r = compare(baseline, candidate);
  EXPECT_EQ(r.verdict, Comparison::faster) << to_string(r.verdict);
  expect_close("ratio", r.ratio, 0.8);
  expect_close("noise", r.noise, 0.03);
}

TEST(Compare, SlowerWhenBeyondTheThresholdAndTheMiddle80PercentDoNotOverlap) {
  const Summary baseline = summary_of(8.0, 7.8, 8.2, 0.03);
  const Summary candidate = summary_of(10.0, 9.5, 10.5, 0.03);
  const ComparisonResult r = compare(baseline, candidate);
  EXPECT_EQ(r.verdict, Comparison::slower) << to_string(r.verdict);
  expect_close("ratio", r.ratio, 1.25);
}

TEST(Compare, AmbiguousWhenBeyondTheThresholdButTheSampleSetsOverlap) {
  const Summary baseline = summary_of(10.0, 8.0, 12.0, 0.1);
  const Summary slower = summary_of(11.0, 9.0, 13.0, 0.1);
  const Summary faster = summary_of(9.0, 7.0, 11.0, 0.1);
  EXPECT_EQ(compare(baseline, slower).verdict, Comparison::ambiguous);
  EXPECT_EQ(compare(baseline, faster).verdict, Comparison::ambiguous);
}

TEST(Compare, TouchingPercentilesCountAsOverlapping) {
  // "one's p90 below the other's p10": equal is not below.
  const Summary baseline = summary_of(10.0, 9.0, 11.0, 0.01);
  const Summary faster_touching = summary_of(8.0, 7.0, 9.0, 0.01);
  const Summary slower_touching = summary_of(12.0, 11.0, 13.0, 0.01);
  EXPECT_EQ(compare(baseline, faster_touching).verdict, Comparison::ambiguous);
  EXPECT_EQ(compare(baseline, slower_touching).verdict, Comparison::ambiguous);
}

TEST(Compare, ASummaryComparedWithItselfIsSameWithRatioOne) {
  const std::vector<double> samples = {10.0, 10.1, 9.9, 10.0, 10.05};
  const Summary s = summarize(samples);
  const ComparisonResult r = compare(s, s);
  EXPECT_EQ(r.verdict, Comparison::same) << to_string(r.verdict) << ", noise " << r.noise;
  EXPECT_EQ(r.ratio, 1.0);
}

TEST(Compare, RejectsNonPositiveThresholdAndNonPositiveMedians) {
  const Summary ok = summary_of(1.0, 0.9, 1.1, 0.01);
  for (const double threshold : {0.0, -0.02, kNaN}) {
    EXPECT_THROW((void)compare(ok, ok, threshold), std::invalid_argument) << threshold;
  }
  const Summary zero = summary_of(0.0, 0.0, 0.0, 0.0);
  EXPECT_THROW((void)compare(zero, ok), std::invalid_argument);
  EXPECT_THROW((void)compare(ok, zero), std::invalid_argument);
}

TEST(Compare, VerdictsHaveUpperCaseNames) {
  EXPECT_EQ(to_string(Comparison::same), "SAME");
  EXPECT_EQ(to_string(Comparison::faster), "FASTER");
  EXPECT_EQ(to_string(Comparison::slower), "SLOWER");
  EXPECT_EQ(to_string(Comparison::ambiguous), "AMBIGUOUS");
}

}  // namespace
}  // namespace gpulab
