// Unit tests of bench.hpp, on both backends: measure() against a kernel of known duration (the
// spin kernel), its warm-up and stopping rules, cold L2, errors from the launch, and the L2
// flusher. Every test that launches needs a device and skips without one; on sim it always runs
// (there the samples are CPU time of the simulation, which still covers the spin).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/spin.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/stream.hpp"
#include "test_device.hpp"

namespace {

using gpulab::BenchOptions;
using gpulab::Measurement;
using gpulab::StopReason;
using gpulab::Stream;

// An event-timed sample of a kernel that spins for `ms` covers at least the spin. The 5% slack
// is for the timers: cudaEventElapsedTime resolves about 0.5 us, and sim's clock64 is the host
// clock scaled by the device clock rate (rounded to kHz).
constexpr double kSpinSlack = 0.95;

__global__ void empty_kernel() {}

// Options for a short, quick measurement: one warm-up, then exactly `samples` samples unless a
// test changes the stopping rule.
BenchOptions quick(int samples) {
  BenchOptions o;
  o.warmup_runs = 1;
  o.min_samples = samples;
  o.max_samples = samples;
  o.min_time_ms = 0;
  o.target_rel_noise = 1e9;  // any noise converges
  o.time_limit_ms = 10000;
  return o;
}

// Options under which sampling never converges: min_time_ms is out of reach.
BenchOptions never_converging() {
  BenchOptions o = quick(1);
  o.max_samples = 10000;
  o.min_time_ms = 1e12;
  return o;
}

// ---------------------------------------------------------------------------------------------
// Options and names
// ---------------------------------------------------------------------------------------------

TEST(BenchOptions, DefaultsAreValid) {
  EXPECT_NO_THROW(BenchOptions{}.validate());
}

TEST(BenchOptions, ValidateNamesTheFieldOutOfRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* field;
    BenchOptions options;
  };
  auto with = [](auto change) {
    BenchOptions o;
    change(o);
    return o;
  };
  const Case cases[] = {
      {"warmup_runs", with([](BenchOptions& o) { o.warmup_runs = -1; })},
      {"min_samples", with([](BenchOptions& o) { o.min_samples = 0; })},
      {"max_samples", with([](BenchOptions& o) { o.max_samples = o.min_samples - 1; })},
      {"min_time_ms", with([](BenchOptions& o) { o.min_time_ms = -1; })},
      {"min_time_ms", with([=](BenchOptions& o) { o.min_time_ms = nan; })},
      {"min_time_ms", with([=](BenchOptions& o) { o.min_time_ms = inf; })},
      {"target_rel_noise", with([](BenchOptions& o) { o.target_rel_noise = -0.01; })},
      {"target_rel_noise", with([=](BenchOptions& o) { o.target_rel_noise = nan; })},
      {"time_limit_ms", with([](BenchOptions& o) { o.time_limit_ms = 0; })},
      {"time_limit_ms", with([=](BenchOptions& o) { o.time_limit_ms = inf; })},
  };
  for (const Case& c : cases) {
    try {
      c.options.validate();
      ADD_FAILURE() << "a bad " << c.field << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos)
          << "expected the message to name " << c.field << ", got: " << e.what();
    }
  }
}

TEST(BenchOptions, EdgeValuesAreValid) {
  BenchOptions o;
  o.warmup_runs = 0;
  o.min_samples = 1;
  o.max_samples = 1;
  o.min_time_ms = 0;
  o.target_rel_noise = 0;
  EXPECT_NO_THROW(o.validate());
}

TEST(StopReason, Names) {
  EXPECT_EQ(gpulab::to_string(StopReason::converged), "converged");
  EXPECT_EQ(gpulab::to_string(StopReason::max_samples), "max_samples");
  EXPECT_EQ(gpulab::to_string(StopReason::time_limit), "time_limit");
  EXPECT_EQ(gpulab::to_string(StopReason::repeated), "repeated");
}

TEST(Measure, BadOptionsThrowBeforeAnythingIsLaunched) {
  // No device needed: the options are checked before any CUDA call.
  int launches = 0;
  BenchOptions bad;
  bad.min_samples = 0;
  EXPECT_THROW((void)gpulab::measure([&](cudaStream_t) { ++launches; }, nullptr, bad),
               std::invalid_argument);
  EXPECT_EQ(launches, 0);
}

// ---------------------------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------------------------

TEST(Measure, EverySampleCoversTheSpinTime) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  const double spin_ms = 2.0;
  const Measurement m = gpulab::measure(
      [&](cudaStream_t s) { gpulab::kernels::spin_kernel(spin_ms, s); }, stream, quick(4));
  ASSERT_EQ(m.samples_ms.size(), 4u);
  for (std::size_t i = 0; i < m.samples_ms.size(); ++i) {
    EXPECT_GE(m.samples_ms[i], kSpinSlack * spin_ms)
        << "sample " << i << ": expected >= " << spin_ms << " ms (tolerance " << (1 - kSpinSlack)
        << " relative), got " << m.samples_ms[i] << " ms";
  }
  EXPECT_GE(m.wall_ms, std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0))
      << "the wall-clock time includes every sample";
}

TEST(Measure, SummaryIsTheSummaryOfTheSamples) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  const Measurement m = gpulab::measure(
      [](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, stream, quick(5));
  const gpulab::Summary expected = gpulab::summarize(m.samples_ms);
  EXPECT_EQ(m.summary.count, m.samples_ms.size());
  EXPECT_EQ(m.summary.min_ms, expected.min_ms);
  EXPECT_EQ(m.summary.median_ms, expected.median_ms);
  EXPECT_EQ(m.summary.max_ms, expected.max_ms);
  EXPECT_EQ(m.summary.rel_noise, expected.rel_noise);
}

TEST(Measure, LaunchesOnTheGivenStream) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  int wrong_stream = 0;
  (void)gpulab::measure(
      [&](cudaStream_t s) {
        wrong_stream += s != stream.get() ? 1 : 0;
        gpulab::kernels::spin_kernel(0.1, s);
      },
      stream, quick(3));
  EXPECT_EQ(wrong_stream, 0);
}

TEST(Measure, WarmupRunsAreLaunchedButNotTimed) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  for (const int warmup : {0, 4}) {
    SCOPED_TRACE("warmup_runs " + std::to_string(warmup));
    int launches = 0;
    BenchOptions o = quick(3);
    o.warmup_runs = warmup;
    const Measurement m = gpulab::measure(
        [&](cudaStream_t s) {
          ++launches;
          gpulab::kernels::spin_kernel(1.0, s);
        },
        stream, o);
    EXPECT_EQ(m.warmup_runs, warmup);
    EXPECT_EQ(m.samples_ms.size(), 3u);
    EXPECT_EQ(launches, warmup + 3) << "expected one launch per warm-up run and per sample";
  }
}

TEST(Measure, StopsConvergedOnceMinSamplesAreQuietEnough) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = quick(3);
  o.max_samples = 1000;
  const Measurement m =
      gpulab::measure([](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, stream, o);
  EXPECT_EQ(m.stop, StopReason::converged) << gpulab::to_string(m.stop);
  EXPECT_EQ(m.samples_ms.size(), 3u) << "converged at the first sample that met every condition";
}

TEST(Measure, ConvergenceWaitsForMinTimeOfSamples) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = quick(1);
  o.max_samples = 1000;
  o.min_time_ms = 6;
  const Measurement m =
      gpulab::measure([](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, stream, o);
  ASSERT_EQ(m.stop, StopReason::converged) << gpulab::to_string(m.stop);
  ASSERT_FALSE(m.samples_ms.empty());
  const double total = std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0);
  EXPECT_GE(total, o.min_time_ms) << "stopped before min_time_ms of samples";
  EXPECT_LT(total - m.samples_ms.back(), o.min_time_ms) << "kept sampling after min_time_ms";
}

TEST(Measure, StopsAtMaxSamplesWhenItCannotConverge) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = never_converging();
  o.min_samples = 2;
  o.max_samples = 4;
  const Measurement m =
      gpulab::measure([](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, stream, o);
  EXPECT_EQ(m.stop, StopReason::max_samples) << gpulab::to_string(m.stop);
  EXPECT_EQ(m.samples_ms.size(), 4u);
}

TEST(Measure, StopsAtTheTimeLimit) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = never_converging();
  o.time_limit_ms = 30;
  const double spin_ms = 2.0;
  const Measurement m =
      gpulab::measure([&](cudaStream_t s) { gpulab::kernels::spin_kernel(spin_ms, s); }, stream, o);
  EXPECT_EQ(m.stop, StopReason::time_limit) << gpulab::to_string(m.stop);
  EXPECT_GE(m.samples_ms.size(), 1u);
  EXPECT_GE(m.wall_ms, o.time_limit_ms);
  // At most 30 ms / 2 ms samples fit (plus the one that crossed the limit).
  EXPECT_LE(m.samples_ms.size(), 16u);
}

TEST(Measure, ATimeLimitShorterThanTheWarmupStillTakesOneSample) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = never_converging();
  o.warmup_runs = 20;
  o.time_limit_ms = 5;
  int launches = 0;
  const Measurement m = gpulab::measure(
      [&](cudaStream_t s) {
        ++launches;
        gpulab::kernels::spin_kernel(2.0, s);
      },
      stream, o);
  EXPECT_EQ(m.stop, StopReason::time_limit) << gpulab::to_string(m.stop);
  EXPECT_EQ(m.samples_ms.size(), 1u);
  EXPECT_LT(m.warmup_runs, 20) << "the time limit counts the warm-up";
  EXPECT_EQ(launches, m.warmup_runs + 1) << "warmup_runs reports the warm-up runs actually done";
}

// ---------------------------------------------------------------------------------------------
// Cold L2
// ---------------------------------------------------------------------------------------------

TEST(Measure, ColdL2FlushesOncePerSampleAndNotForWarmup) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  BenchOptions o = quick(3);
  o.warmup_runs = 2;
  o.cold_l2 = true;
  const std::uint64_t before = gpulab::l2_flush_count();
  const Measurement m =
      gpulab::measure([](cudaStream_t s) { gpulab::kernels::spin_kernel(1.0, s); }, stream, o);
  EXPECT_EQ(gpulab::l2_flush_count() - before, m.samples_ms.size());
}

TEST(Measure, ColdL2FlushIsOutsideTheTimedSample) {
  GPULAB_REQUIRE_DEVICE();
#if defined(GPULAB_BACKEND_SIM)
  // On sim the modeled clock where the build can count: every sample is exact, so the comparison
  // below needs no slack for the machine's load (the host clock's samples of a 0.2 ms spin reach
  // milliseconds on a busy machine).
  const gpulab::testing::ModeledClock modeled;
  const double slack_ms = modeled.ok() ? 0.0 : 0.05;
#else
  const double slack_ms = 0.05;
#endif
  Stream stream;
  gpulab::flush_l2(stream);  // the first flush creates the flusher and touches its pages
  stream.synchronize();
  // The fastest of a few flushes: about 0.03 ms on an H100 (100 MB at 3 TB/s), a few ms on sim.
  // On sim a sample that included the flush would stand out; on a GPU the flush is too short
  // for this test to see it.
  double flush_ms = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    gpulab::Event start;
    gpulab::Event stop;
    start.record(stream);
    gpulab::flush_l2(stream);
    stop.record(stream);
    stop.synchronize();
    flush_ms = std::min(flush_ms, static_cast<double>(gpulab::Event::elapsed_ms(start, stop)));
  }
  ASSERT_GT(flush_ms, 0.0) << "a flush that takes no time cannot be told apart";
  const double spin_ms = 0.2;
  BenchOptions o = quick(5);
  o.cold_l2 = true;
  const Measurement m =
      gpulab::measure([&](cudaStream_t s) { gpulab::kernels::spin_kernel(spin_ms, s); }, stream, o);
  // The fastest sample: a busy machine only makes samples slower, never faster.
  const double limit_ms = spin_ms + 0.5 * flush_ms + slack_ms;
  EXPECT_LT(m.summary.min_ms, limit_ms)
      << "expected the fastest sample near " << spin_ms << " ms (one flush takes " << flush_ms
      << " ms; tolerance up to " << limit_ms << " ms), got " << m.summary.min_ms << " ms";
}

TEST(Measure, OnTheModeledClockTwoEqualSamplesEndIt) {
#if defined(GPULAB_BACKEND_SIM)
  GPULAB_REQUIRE_DEVICE();
  const gpulab::testing::ModeledClock modeled;
  if (!modeled.ok()) {
    GTEST_SKIP() << "this build cannot run the modeled clock";
  }
  Stream stream;
  BenchOptions o = quick(10);  // ten samples asked for, and a minimum time never reached
  o.min_time_ms = 1e9;
  const Measurement m =
      gpulab::measure([&](cudaStream_t s) { gpulab::kernels::spin_kernel(0.05, s); }, stream, o);
  EXPECT_EQ(m.stop, StopReason::repeated) << gpulab::to_string(m.stop);
  ASSERT_EQ(m.samples_ms.size(), 2u);
  EXPECT_NEAR(m.samples_ms[0], m.samples_ms[1], 1e-6 * m.samples_ms[0]);
  EXPECT_EQ(m.warmup_runs, 1);
#else
  GTEST_SKIP() << "the rule is the sim's modeled clock's; a GPU's samples vary";
#endif
}

TEST(Measure, OnOtherClocksEqualSamplesDoNotEndIt) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  // An empty kernel on the host clock (or a GPU) may well give equal samples: only the stopping
  // rule asked for ends the sampling.
#if defined(GPULAB_BACKEND_SIM)
  const auto previous = gpulab::sim::clock_mode();
  ASSERT_TRUE(gpulab::sim::set_clock_mode(gpulab::sim::ClockMode::host));
#endif
  const Measurement m =
      gpulab::measure([&](cudaStream_t s) { empty_kernel<<<1, 1, 0, s>>>(); }, stream, quick(4));
#if defined(GPULAB_BACKEND_SIM)
  gpulab::sim::set_clock_mode(previous);
#endif
  EXPECT_EQ(m.stop, StopReason::converged) << gpulab::to_string(m.stop);
  EXPECT_EQ(m.samples_ms.size(), 4u);
}

TEST(Measure, WarmL2DoesNotFlush) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  const std::uint64_t before = gpulab::l2_flush_count();
  (void)gpulab::measure([](cudaStream_t s) { gpulab::kernels::spin_kernel(0.5, s); }, stream,
                        quick(3));
  EXPECT_EQ(gpulab::l2_flush_count(), before);
}

// ---------------------------------------------------------------------------------------------
// Errors from the launch
// ---------------------------------------------------------------------------------------------

struct LaunchFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(Measure, AThrowingLaunchPropagatesAndLeavesTheStreamIdle) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  // Call 1 is the warm-up; call 2 is the first sample: it enqueues a 20 ms spin and throws with
  // the spin still running, so only the harness's synchronization can leave the stream idle.
  for (const int throwing_call : {1, 2}) {
    SCOPED_TRACE("throwing on call " + std::to_string(throwing_call));
    int calls = 0;
    auto launch = [&](cudaStream_t s) {
      gpulab::kernels::spin_kernel(++calls == throwing_call ? 20.0 : 0.1, s);
      if (calls == throwing_call) {
        throw LaunchFailed("launch failed on purpose");
      }
    };
    EXPECT_THROW((void)gpulab::measure(launch, stream, quick(3)), LaunchFailed);
    EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess) << "work was still queued on the stream";
  }
}

TEST(Measure, ACudaErrorFromTheLaunchPropagates) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  auto launch = [](cudaStream_t s) {
    empty_kernel<<<1, 2048, 0, s>>>();  // over the 1024 threads a block may have
    GPULAB_CHECK_LAUNCH();
  };
  try {
    (void)gpulab::measure(launch, stream, quick(1));
    FAIL() << "a launch with 2048 threads per block was measured";
  } catch (const gpulab::CudaError& e) {
    EXPECT_EQ(e.code(), gpulab::testing::kImpossibleLaunchError) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the launch error must not stay pending";
}

// ---------------------------------------------------------------------------------------------
// L2 flusher
// ---------------------------------------------------------------------------------------------

TEST(L2Flusher, DefaultSizeIsTwiceTheDevicesL2) {
  GPULAB_REQUIRE_DEVICE();
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  int l2_bytes = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), cudaSuccess);
  ASSERT_GT(l2_bytes, 0);
  const gpulab::L2Flusher flusher;
  EXPECT_EQ(flusher.bytes(), 2 * static_cast<std::size_t>(l2_bytes));
}

TEST(L2Flusher, AnExplicitSizeIsUsed) {
  GPULAB_REQUIRE_DEVICE();
  const gpulab::L2Flusher flusher(4096);
  EXPECT_EQ(flusher.bytes(), 4096u);
}

TEST(L2Flusher, FlushIsEnqueuedOnTheStreamAndCompletes) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  gpulab::L2Flusher flusher(1 << 20);
  // Behind a 20 ms spin the flush cannot have run yet: it was enqueued, not done synchronously.
  gpulab::kernels::spin_kernel(20.0, stream);
  EXPECT_NO_THROW(flusher.flush(stream));
  EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady);
  EXPECT_NO_THROW(stream.synchronize());
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
}

TEST(L2Flusher, FlushL2CountsEachFlush) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  const std::uint64_t before = gpulab::l2_flush_count();
  gpulab::flush_l2(stream);
  gpulab::flush_l2(stream);
  stream.synchronize();
  EXPECT_EQ(gpulab::l2_flush_count() - before, 2u);
}

}  // namespace
