// Lab 01 autograder: the statistics against hand-worked values and the framework, the timing
// function against kernels of known duration (gpulab/kernels/spin.hpp) and the
// framework harness.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/results.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/spin.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/stream.hpp"
#include "graded_test.hpp"
#include "lab01.hpp"
#include "test_device.hpp"

namespace {

using gpulab::lab01::achieved_gflop_s;
using gpulab::lab01::effective_bandwidth_gb_s;
using gpulab::lab01::fraction_of_peak;
using gpulab::lab01::summarize_samples;
using gpulab::lab01::time_kernel;
using gpulab::lab01::TimingOptions;

// Statistics are exact up to rounding: 1e-9 relative, reported with expected/got/tolerance.
void expect_close(const char* what, double expected, double got, double rtol = 1e-9) {
  const double tolerance = rtol * std::max(1.0, std::abs(expected));
  EXPECT_LE(std::abs(got - expected), tolerance)
      << what << ": expected " << expected << ", got " << got << " (tolerance " << tolerance << ")";
}

std::string listing(const std::vector<double>& samples) {
  std::ostringstream text;
  for (std::size_t i = 0; i < samples.size() && i < 20; ++i) {
    text << (i ? ", " : "") << samples[i];
  }
  if (samples.size() > 20) {
    text << ", ... (" << samples.size() << " samples)";
  }
  return text.str();
}

double wall_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Options that take a few samples quickly; each test changes what it checks. A correct
// time_kernel meets them within a few samples, far inside the time limit; one that never meets
// its stopping rule costs each test that limit.
TimingOptions quick_options() {
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_samples = 5;
  options.min_time_ms = 0;
  options.target_rel_noise = 1.0;
  options.time_limit_ms = 3000;
  return options;
}

#if GPULAB_BACKEND_SIM
// What the code under test gave `stream` while `work` ran, as the sim records it (docs/sim.md,
// "Streams"): a GPU timeline's view, the same on every machine.
std::vector<gpulab::sim::StreamEntry> stream_record(cudaStream_t stream,
                                                    const std::function<void()>& work) {
  gpulab::sim::set_stream_recording(true);
  work();
  gpulab::sim::set_stream_recording(false);
  return gpulab::sim::stream_entries(stream);
}

std::string describe(const std::vector<gpulab::sim::StreamEntry>& entries, std::size_t from = 0) {
  std::string listed;
  for (std::size_t i = from; i < entries.size() && i < from + 8; ++i) {
    listed += (i == from ? "" : ", ") + gpulab::sim::describe(entries[i]);
  }
  return listed.empty() ? "none" : listed + (entries.size() > from + 8 ? ", ..." : "");
}
#endif

// One time_kernel call and whether its samples are the launches' times: each sample one launch
// between two events recorded on the stream, the host waiting for the second before going on.
// On sim the stream's record says so, whatever the machine's load; only then do the sample
// values say something about the launches, and the tests judge them. (Timed any other way, a
// sample is the host's time, which depends on the load: EachSampleMatchesItsLaunchsKnownDuration
// and LaunchesOnTheGivenStreamAndLeavesItIdle grade that lesson, the other tests their own.) On a
// GPU the values are judged always.
struct TimedRun {
  std::vector<double> samples;
  std::string not_event_timed;  ///< empty when the samples are event times; else what was seen
#if GPULAB_BACKEND_SIM
  std::vector<gpulab::sim::StreamEntry> entries;  ///< what the stream was given
#endif
  [[nodiscard]] bool event_timed() const {
    return not_event_timed.empty();
  }
};

TimedRun timed_run(const gpulab::Stream& stream, const gpulab::lab01::Launch& launch,
                   const TimingOptions& options) {
  TimedRun run;
#if GPULAB_BACKEND_SIM
  run.entries = stream_record(stream, [&] { run.samples = time_kernel(launch, stream, options); });
  using gpulab::sim::StreamOp;
  std::size_t timed = 0;  // event record, launch, event record, host wait, in a row
  for (std::size_t i = 0; i + 3 < run.entries.size(); ++i) {
    if (run.entries[i].op == StreamOp::event_record && run.entries[i + 1].op == StreamOp::kernel &&
        run.entries[i + 2].op == StreamOp::event_record &&
        run.entries[i + 3].op == StreamOp::host_wait) {
      ++timed;
    }
  }
  if (timed < run.samples.size()) {
    run.not_event_timed =
        std::to_string(run.samples.size()) + " samples, but " + std::to_string(timed) +
        " launches between two CUDA events recorded on the stream, waited for: the samples are "
        "not the launches' times (the stream was given: " +
        describe(run.entries) + ")";
  }
#else
  run.samples = time_kernel(launch, stream, options);
#endif
  return run;
}

// ----------------------------------------------------------------------------------------------
// summarize_samples: 30 points

GPULAB_GRADED_TEST(
    Lab01Summary, CountMinMaxAndMean, 5, "summarize_samples",
    "count, min, max and mean of four samples, the caller's samples left as they were") {
  std::vector<double> samples{4.0, 1.0, 3.0, 2.0};
  const std::vector<double> before = samples;
  const gpulab::Summary s = summarize_samples(samples);
  if (samples != before) {
    ADD_FAILURE() << "summarize_samples changed the caller's samples: it takes them as const "
                     "(sort a copy)";
  }
  EXPECT_EQ(s.count, 4u) << "count of {4, 1, 3, 2}";
  expect_close("min of {4, 1, 3, 2}", 1.0, s.min_ms);
  expect_close("max of {4, 1, 3, 2}", 4.0, s.max_ms);
  expect_close("mean of {4, 1, 3, 2}", 2.5, s.mean_ms);
}

GPULAB_GRADED_TEST(Lab01Summary, MedianOfOddAndEvenCounts, 5, "summarize_samples",
                   "the median of an odd count (the middle sample) and of an even count (the mean "
                   "of the two middle ones)") {
  const std::vector<double> odd{5.0, 1.0, 9.0};
  const std::vector<double> even{7.0, 1.0, 3.0, 100.0};
  expect_close("median of {5, 1, 9}", 5.0, summarize_samples(odd).median_ms);
  expect_close("median of {7, 1, 3, 100} (mean of the middle two)", 5.0,
               summarize_samples(even).median_ms);
}

GPULAB_GRADED_TEST(
    Lab01Summary, SampleStddevAndRelativeNoise, 5, "summarize_samples",
    "the sample standard deviation (n - 1) and relative noise = stddev / mean (0 at mean 0)") {
  // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, squared deviations sum to 32, sample variance 32 / 7.
  const std::vector<double> samples{2, 4, 4, 4, 5, 5, 7, 9};
  const gpulab::Summary s = summarize_samples(samples);
  expect_close("sample stddev (n - 1) of {2, 4, 4, 4, 5, 5, 7, 9}", std::sqrt(32.0 / 7.0),
               s.stddev_ms);
  expect_close("relative noise (stddev / mean)", std::sqrt(32.0 / 7.0) / 5.0, s.rel_noise);
  const std::vector<double> one{3.0};
  expect_close("stddev of a single sample", 0.0, summarize_samples(one).stddev_ms);
  const std::vector<double> zeros{0.0, 0.0, 0.0};
  expect_close("relative noise of samples whose mean is 0 (0 by the contract)", 0.0,
               summarize_samples(zeros).rel_noise);
}

GPULAB_GRADED_TEST(Lab01Summary, PercentilesInterpolateLinearly, 5, "summarize_samples",
                   "p10 and p90 by linear interpolation at q * (n - 1) of the sorted samples") {
  // 11 samples 0..10: position q * 10, so p10 = 1 and p90 = 9 exactly.
  std::vector<double> eleven;
  for (int i = 10; i >= 0; --i) {
    eleven.push_back(i);
  }
  const gpulab::Summary s = summarize_samples(eleven);
  expect_close("p10 of 0..10", 1.0, s.p10_ms);
  expect_close("p90 of 0..10", 9.0, s.p90_ms);
  // {10, 20, 30, 40}: p10 at position 0.3 -> 10 + 0.3 * 10 = 13; p90 at 2.7 -> 30 + 0.7 * 10 = 37.
  const std::vector<double> four{40, 10, 30, 20};
  const gpulab::Summary t = summarize_samples(four);
  expect_close("p10 of {10, 20, 30, 40}", 13.0, t.p10_ms);
  expect_close("p90 of {10, 20, 30, 40}", 37.0, t.p90_ms);
}

GPULAB_GRADED_TEST(Lab01Summary, MatchesTheFrameworkOnRandomSamples, 5, "summarize_samples",
                   "every field against the framework's own statistics on random samples") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    std::lognormal_distribution<double> dist(0.0, 0.3);
    std::vector<double> samples(17 + trial * 40);
    for (double& x : samples) {
      x = dist(rng);
    }
    const gpulab::Summary want = gpulab::summarize(samples);
    const gpulab::Summary got = summarize_samples(samples);
    SCOPED_TRACE("random samples: " + listing(samples));
    EXPECT_EQ(got.count, want.count);
    expect_close("min", want.min_ms, got.min_ms);
    expect_close("max", want.max_ms, got.max_ms);
    expect_close("mean", want.mean_ms, got.mean_ms);
    expect_close("median", want.median_ms, got.median_ms);
    expect_close("stddev", want.stddev_ms, got.stddev_ms);
    expect_close("rel_noise", want.rel_noise, got.rel_noise);
    expect_close("p10", want.p10_ms, got.p10_ms);
    expect_close("p90", want.p90_ms, got.p90_ms);
  }
}

GPULAB_GRADED_TEST(Lab01Summary, RejectsEmptyAndInvalidSamples, 5, "summarize_samples",
                   "std::invalid_argument for no samples and for a negative, NaN or infinite one") {
  const std::vector<double> valid{1.0, 2.0};
  EXPECT_NO_THROW(static_cast<void>(summarize_samples(valid)))
      << "summarize_samples must accept the valid samples {1, 2}";
  const std::vector<std::vector<double>> invalid{
      {}, {1.0, -0.5}, {1.0, std::nan("")}, {1.0, std::numeric_limits<double>::infinity()}};
  const char* names[] = {"no samples", "a negative sample", "a NaN sample", "an infinite sample"};
  for (std::size_t i = 0; i < invalid.size(); ++i) {
    EXPECT_THROW(static_cast<void>(summarize_samples(invalid[i])), std::invalid_argument)
        << "summarize_samples must throw std::invalid_argument for " << names[i];
  }
}

// ----------------------------------------------------------------------------------------------
// Throughput: 15 points

GPULAB_GRADED_TEST(Lab01Throughput, BandwidthInDecimalGigabytesPerSecond, 5,
                   "effective_bandwidth_gb_s", "bytes / time in decimal GB/s (1 GB = 10^9 bytes)") {
  // 12e9 bytes in 4 ms = 3e12 B/s = 3000 GB/s (decimal: 1 GB = 1e9 bytes, not 2^30).
  expect_close("effective_bandwidth_gb_s(12e9 bytes, 4 ms)", 3000.0,
               effective_bandwidth_gb_s(12e9, 4.0));
  expect_close("effective_bandwidth_gb_s(3 * 4 * 2^20 bytes, 0.01 ms)",
               3.0 * 4 * 1048576 / 1e-5 / 1e9, effective_bandwidth_gb_s(3.0 * 4 * 1048576, 0.01));
}

GPULAB_GRADED_TEST(Lab01Throughput, FlopRateAndFractionOfPeak, 5,
                   "achieved_gflop_s fraction_of_peak",
                   "GFLOP/s from FLOP and ms, and achieved / peak") {
  // 2 * 4096^3 FLOP in 2.5 ms.
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  expect_close("achieved_gflop_s(2 * 4096^3, 2.5 ms)", flops / 2.5e-3 / 1e9,
               achieved_gflop_s(flops, 2.5));
  expect_close("fraction_of_peak(2680, 3350)", 0.8, fraction_of_peak(2680.0, 3350.0));
}

GPULAB_GRADED_TEST(Lab01Throughput, RejectsNonPositiveTimeAndPeak, 5,
                   "effective_bandwidth_gb_s achieved_gflop_s fraction_of_peak",
                   "std::invalid_argument for a time or a peak that is not positive") {
  EXPECT_NO_THROW(static_cast<void>(effective_bandwidth_gb_s(1.0, 1.0)))
      << "effective_bandwidth_gb_s must accept 1 byte in 1 ms";
  EXPECT_THROW(static_cast<void>(effective_bandwidth_gb_s(1e6, 0.0)), std::invalid_argument)
      << "effective_bandwidth_gb_s: a time of 0 ms gives no bandwidth";
  EXPECT_THROW(static_cast<void>(effective_bandwidth_gb_s(1e6, -1.0)), std::invalid_argument)
      << "effective_bandwidth_gb_s: a negative time gives no bandwidth";
  EXPECT_THROW(static_cast<void>(achieved_gflop_s(1e6, 0.0)), std::invalid_argument)
      << "achieved_gflop_s: a time of 0 ms gives no rate";
  EXPECT_THROW(static_cast<void>(fraction_of_peak(1.0, 0.0)), std::invalid_argument)
      << "fraction_of_peak: a peak of 0 has no fraction";
}

// ----------------------------------------------------------------------------------------------
// time_kernel: 55 points

GPULAB_GRADED_TEST(Lab01Timing, EachSampleMatchesItsLaunchsKnownDuration, 10, "time_kernel",
                   "sample i is the time of launch i (spin kernels of known, different lengths): "
                   "timed with CUDA events, in launch order") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  // Every launch spins for its own duration, drawn from a fixed seed between 1 and 4 ms, so
  // sample i must match launch warmup_runs + i, from below (it waited for the kernel) and from
  // above (it timed nothing else): a sample copied, reused or timed around other work fails.
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> between(1.0, 4.0);
  std::vector<double> durations_ms;
  auto launch = [&](cudaStream_t s) {
    durations_ms.push_back(between(rng));
    gpulab::kernels::spin_kernel(durations_ms.back(), s);
  };
  const TimingOptions options = quick_options();
  const TimedRun run = timed_run(stream, launch, options);
  const std::vector<double>& samples = run.samples;
  ASSERT_TRUE(run.event_timed()) << run.not_event_timed;
  ASSERT_GE(samples.size(), 5u) << "min_samples is 5";
  const auto warmups = static_cast<std::size_t>(options.warmup_runs);
  ASSERT_EQ(durations_ms.size(), warmups + samples.size())
      << "expected warmup_runs (" << options.warmup_runs << ") + one launch per sample ("
      << samples.size() << ") launches";
  // Every sample at least its launch's spin: it waited for the kernel. On the sim's modeled clock
  // a sample is exact to 1% (the modeled launch overhead), so each is bounded from above too. A
  // GPU adds a few microseconds of launch and event resolution, and a kernel of another process
  // sharing the GPU may stretch a few samples: there the median ratio is bounded instead.
  const gpulab::TimingClock clock = gpulab::event_clock();
  const double unbounded = std::numeric_limits<double>::infinity();
  std::vector<double> ratios;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double want = durations_ms[warmups + i];
    const double high = clock == gpulab::TimingClock::modeled ? 1.01 * want + 0.02 : unbounded;
    if (!(samples[i] >= 0.95 * want && samples[i] <= high)) {
      ADD_FAILURE() << "sample " << i << " times a launch that spins " << want << " ms: expected "
                    << 0.95 * want
                    << (high < unbounded ? " to " + std::to_string(high) : " or more")
                    << " ms, got " << samples[i] << " ms (all: " << listing(samples) << ")";
    }
    ratios.push_back(samples[i] / want);
  }
  std::sort(ratios.begin(), ratios.end());
  const double median_ratio = ratios[ratios.size() / 2];
  // On the sim's host clock (CPU time of the simulation) as loose as a sample of 3 times the
  // spin plus 10 ms: 13 times the shortest spin (1 ms).
  const double most = clock == gpulab::TimingClock::host ? 13 : 1.1;
  EXPECT_LE(median_ratio, most) << "the median of sample / spin time is " << median_ratio
                                << ", expected at most " << most
                                << ": the samples timed more than their launches (all: "
                                << listing(samples) << ")";
}

GPULAB_GRADED_TEST(
    Lab01Timing, WarmupRunsAreNotTimed, 10, "time_kernel",
    "the warm-up launches run first, each waited for, and none of them is a sample") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  int calls = 0;
  // The first three launches are slow (50 ms), as a first launch that loads a module would be.
  constexpr double kSlowMs = 50.0;
  auto launch = [&](cudaStream_t s) {
    gpulab::kernels::spin_kernel(calls < 3 ? kSlowMs : 2.0, s);
    ++calls;
  };
  TimingOptions options = quick_options();
  options.warmup_runs = 3;
  const TimedRun run = timed_run(stream, launch, options);
  const std::vector<double>& samples = run.samples;
#if GPULAB_BACKEND_SIM
  // Each warm-up launch waited for before the next launch: the host waited for the stream.
  const std::vector<gpulab::sim::StreamEntry>& entries = run.entries;
  int kernels = 0;
  bool waited = true;
  for (std::size_t i = 0; i < entries.size() && kernels <= options.warmup_runs; ++i) {
    if (entries[i].op == gpulab::sim::StreamOp::host_wait) {
      waited = true;
    } else if (entries[i].op == gpulab::sim::StreamOp::kernel) {
      if (!waited) {
        ADD_FAILURE() << "warm-up launch " << kernels << " of " << options.warmup_runs
                      << " was not waited for: the host enqueued the next launch while it could "
                         "still run (the lesson: wait for each warm-up launch, e.g. "
                         "cudaStreamSynchronize, before the next). The stream was given: "
                      << describe(entries);
        break;
      }
      waited = false;
      ++kernels;
    }
  }
#endif
  ASSERT_GE(samples.size(), 5u) << "min_samples is 5";
  EXPECT_EQ(calls, 3 + static_cast<int>(samples.size()))
      << "expected warmup_runs (3) + one launch per sample (" << samples.size() << ") launches";
  // Whether a warm-up was timed shows only in event times: other samples fail the test.
  ASSERT_TRUE(run.event_timed()) << run.not_event_timed;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_LT(samples[i], 0.95 * kSlowMs)
        << "sample " << i << " is " << samples[i] << " ms: the " << kSlowMs
        << " ms warm-up launches must not be timed (samples: " << listing(samples) << ")";
  }
}

GPULAB_GRADED_TEST(
    Lab01Timing, LaunchesOnTheGivenStreamAndLeavesItIdle, 5, "time_kernel",
    "every launch and event on the stream given, and nothing left running on it at return") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  int wrong_stream = 0;
  auto launch = [&](cudaStream_t s) {
    if (s != stream.get()) {
      ++wrong_stream;
    }
    gpulab::kernels::spin_kernel(1.0, s);
  };
  const TimedRun run = timed_run(stream, launch, quick_options());
  const std::vector<double>& samples = run.samples;
  EXPECT_FALSE(samples.empty());
  EXPECT_EQ(wrong_stream, 0) << "launches that were not given the stream passed to time_kernel";
#if GPULAB_BACKEND_SIM
  // What a GPU's timeline would show: the events of every sample recorded on the stream the
  // launch ran on, and the host waiting for the stream's last operation before it returned.
  // Events on another stream, or a host clock, time something else; on a GPU the other tests'
  // times show it, on the sim this record does, the same under any load.
  const std::vector<gpulab::sim::StreamEntry>& entries = run.entries;
  EXPECT_TRUE(!entries.empty() && entries.back().op == gpulab::sim::StreamOp::host_wait)
      << "time_kernel returned without waiting for the stream's last operation: work was still "
         "running on it (the stream was given: "
      << describe(entries) << ")";
  const auto records = std::count_if(entries.begin(), entries.end(), [](const auto& entry) {
    return entry.op == gpulab::sim::StreamOp::event_record;
  });
  if (static_cast<std::size_t>(records) < 2 * samples.size()) {
    ADD_FAILURE() << samples.size() << " samples, but " << records
                  << " CUDA events recorded on the stream they were taken on: each sample is one "
                     "launch between two events recorded on that stream (the stream was given: "
                  << describe(entries) << ")";
  }
#else
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess)
      << "work was still running on the stream when time_kernel returned";
#endif
}

GPULAB_GRADED_TEST(Lab01Timing, TakesAtLeastMinSamplesAndMinTime, 5, "time_kernel",
                   "at least min_samples samples, summing to at least min_time_ms") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  TimingOptions options = quick_options();
  options.min_samples = 4;
  options.min_time_ms = 30;
  const TimedRun run = timed_run(
      stream, [](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, options);
  double total = 0;
  for (const double x : run.samples) {
    total += x;
  }
  EXPECT_GE(run.samples.size(), 4u) << "min_samples is 4";
  // The time sampled is the sum of event times: other samples fail the test.
  ASSERT_TRUE(run.event_timed()) << run.not_event_timed;
  EXPECT_GE(total, 30.0) << "min_time_ms is 30: the samples sum to " << total << " ms ("
                         << run.samples.size() << " samples)";
}

GPULAB_GRADED_TEST(
    Lab01Timing, StopsOnceTheNoiseTargetIsReached, 5, "time_kernel",
    "sampling stops as soon as the minimums are met and the relative noise is at most the target") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  TimingOptions options = quick_options();
  options.min_samples = 5;
  options.target_rel_noise = 0.5;  // a spin kernel is far quieter than 50%
  options.time_limit_ms = 6000;    // past the 5 s this test allows
  const auto start = std::chrono::steady_clock::now();
  const TimedRun run = timed_run(
      stream, [](cudaStream_t s) { gpulab::kernels::spin_kernel(2.0, s); }, options);
  const std::vector<double>& samples = run.samples;
  const double wall = wall_ms_since(start);
  // The stopping rule is judged on the samples time_kernel returned, whatever they time: the
  // same verdict under any load.
  ASSERT_GE(samples.size(), 5u) << "min_samples is 5";
  // The first sample count at which the rule holds: at least min_samples, min_time_ms, and the
  // relative noise of the samples so far at most the target.
  std::size_t due = 0;
  double total = 0;
  double mean = 0;
  double squares = 0;  // Welford: the sum of squared deviations from the running mean
  for (std::size_t k = 1; k <= samples.size() && due == 0; ++k) {
    const double x = samples[k - 1];
    total += x;
    const double delta = x - mean;
    mean += delta / static_cast<double>(k);
    squares += delta * (x - mean);
    const double stddev = k > 1 ? std::sqrt(squares / static_cast<double>(k - 1)) : 0.0;
    const double noise = mean > 0 ? stddev / mean : 0.0;
    if (k >= 5 && total >= options.min_time_ms && noise <= options.target_rel_noise) {
      due = k;
    }
  }
  if (due != 0) {
    EXPECT_LE(samples.size(), due)
        << "the relative noise of the first " << due << " samples is at most the target (50%) "
        << "and the minimums are met there: sampling should stop at " << due << " samples, got "
        << samples.size() << " (samples: " << listing(samples) << ")";
  }
  if (due == 0) {  // the rule never held: only the time limit may have ended sampling
    EXPECT_GE(wall, 0.99 * options.time_limit_ms)
        << "time_kernel stopped after " << samples.size() << " samples and " << wall
        << " ms: before the noise target was met and before the time limit ("
        << options.time_limit_ms << " ms) (samples: " << listing(samples) << ")";
  }
  if (run.event_timed()) {  // a 2 ms spin's event times are quiet; a host clock's may not be
    EXPECT_LT(wall, 5000.0) << "time_kernel ran " << wall
                            << " ms although the noise target was met within a few samples";
  }
}

GPULAB_GRADED_TEST(Lab01Timing, StopsAtTheTimeLimit, 5, "time_kernel",
                   "a noise target never met ends sampling at time_limit_ms") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  TimingOptions options = quick_options();
  options.min_samples = 100000;  // never reached
  options.time_limit_ms = 300;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> samples =
      time_kernel([](cudaStream_t s) { gpulab::kernels::spin_kernel(2.0, s); }, stream, options);
  const double wall = wall_ms_since(start);
  EXPECT_GE(samples.size(), 10u) << "300 ms holds many 2 ms samples";
  EXPECT_GE(wall, 300.0) << "returned after " << wall << " ms, before the 300 ms time limit";
  EXPECT_LE(wall, 1500.0) << "returned after " << wall << " ms; the time limit was 300 ms";
}

GPULAB_GRADED_TEST(Lab01Timing, ColdL2FlushesBeforeEverySampleOutsideTheTiming, 10, "time_kernel",
                   "with cold_l2, one gpulab::flush_l2 before each sample, enqueued before its "
                   "start event (not timed)") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  // How long one flush takes here: a sample that includes it is at least that much longer.
  gpulab::flush_l2(stream);
  gpulab::Event start;
  gpulab::Event stop;
  start.record(stream);
  gpulab::flush_l2(stream);
  stop.record(stream);
  stop.synchronize();
  const double flush_ms = static_cast<double>(gpulab::Event::elapsed_ms(start, stop));

  constexpr double kSpinMs = 0.5;
  TimingOptions options = quick_options();
  options.cold_l2 = true;
  const std::uint64_t before = gpulab::l2_flush_count();
  const TimedRun run = timed_run(
      stream, [](cudaStream_t s) { gpulab::kernels::spin_kernel(kSpinMs, s); }, options);
  const std::vector<double>& samples = run.samples;
#if GPULAB_BACKEND_SIM
  // Between each sample's two events only its launch: the flush (a memset on the stream) before
  // the start event. (Events recorded elsewhere are LaunchesOnTheGivenStreamAndLeavesItIdle's
  // lesson: then there is nothing here to check.) This is the lesson's check on sim, the same
  // under any load; on a GPU the samples' median shows a flush inside the timing.
  // A sample's interior: what lies between two event records with a launch among it (a
  // warm-up waited for with an event has no launch after its record).
  const std::vector<gpulab::sim::StreamEntry>& entries = run.entries;
  using gpulab::sim::StreamOp;
  std::size_t sample = 0;
  for (std::size_t opened = 0; opened < entries.size(); ++opened) {
    if (entries[opened].op != StreamOp::event_record) {
      continue;
    }
    std::size_t closed = opened + 1;
    while (closed < entries.size() && entries[closed].op != StreamOp::event_record) {
      ++closed;
    }
    const auto first = entries.begin() + static_cast<long>(opened) + 1;
    const auto last = entries.begin() + static_cast<long>(std::min(closed, entries.size()));
    if (closed == entries.size() ||
        std::none_of(first, last, [](const auto& e) { return e.op == StreamOp::kernel; })) {
      continue;  // not a sample
    }
    const auto other = std::find_if(first, last, [](const auto& e) {
      return e.op != StreamOp::kernel && e.op != StreamOp::host_wait;
    });
    if (other != last) {
      ADD_FAILURE() << "sample " << sample << ": a " << gpulab::sim::describe(*other)
                    << " (the L2 flush) was enqueued between the sample's start and stop events, "
                       "so it is timed with the kernel (the lesson: flush before recording the "
                       "start event). The stream was given: "
                    << describe(entries);
      break;
    }
    ++sample;
    opened = closed;  // the stop event does not start the next sample
  }
  (void)flush_ms;
#else
  const gpulab::Summary s = gpulab::summarize(samples);
  EXPECT_LT(s.median_ms, 3 * kSpinMs + 0.5 * flush_ms + 0.05)
      << "median sample " << s.median_ms << " ms for a " << kSpinMs << " ms kernel, a flush takes "
      << flush_ms << " ms: the flush must happen before the "
      << "start event, not inside the timed region";
#endif
  const std::uint64_t flushes = gpulab::l2_flush_count() - before;
  EXPECT_GE(flushes, samples.size()) << "cold_l2: expected a gpulab::flush_l2 before each of the "
                                     << samples.size() << " samples, counted " << flushes;
}

GPULAB_GRADED_TEST(
    Lab01Timing, AgreesWithTheFrameworkHarness, 5, "time_kernel",
    "the median of the samples within 20% of the framework harness on the same kernel") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  constexpr double kSpinMs = 2.0;
  auto launch = [](cudaStream_t s) { gpulab::kernels::spin_kernel(kSpinMs, s); };
  gpulab::BenchOptions reference;
  reference.min_samples = 15;
  reference.min_time_ms = 0;
  const gpulab::Measurement want = gpulab::measure(launch, stream, reference);
  TimingOptions options = quick_options();
  options.min_samples = 15;
  const TimedRun run = timed_run(stream, launch, options);
  ASSERT_FALSE(run.samples.empty());
  // A precondition that fails fails the test: samples that are not the times of event pairs on
  // the stream cannot agree with anything.
  ASSERT_TRUE(run.event_timed())
      << "the samples are not the elapsed times of event pairs recorded around the launches on "
         "the given stream, so they cannot be compared with the framework's harness";
  const gpulab::Summary got = gpulab::summarize(run.samples);
  EXPECT_NEAR(got.median_ms, want.summary.median_ms, 0.2 * want.summary.median_ms)
      << "median of time_kernel vs the framework's gpulab::measure on the same " << kSpinMs
      << " ms kernel (tolerance 20%)";
}

}  // namespace
