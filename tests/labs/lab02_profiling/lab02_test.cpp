// Lab 02 autograder: the profile of the five attention components (order, names, times, costs,
// rates, shares, bottleneck), its agreement with an end-to-end forward pass timed separately, the
// NVTX ranges it opens (read back with gpulab::RangeRecorder), the output it leaves behind (the
// profile must run the real computation), and the table it prints.
//
// Expectations come from the framework and kernels/attention, never from the lab's own code:
// component names and costs from kernels::component_name / component_cost, the forward time from
// gpulab::measure around kernels::attention_forward, the output from kernels::attention_reference
// (a double-accumulated CPU reference) and the table from the printf formats in lab02.hpp.
//
// Tolerances:
// - derived quantities (rates, shares, the total) are a division or a sum of doubles: 1e-9
//   relative separates rounding (1e-16) from any formula mistake (1e-3 and up);
// - the output follows the numeric policy (gpulab/core/numeric.hpp, docs/grading.md): y is
//   poisoned with NaN before the profile runs, compared with the CPU reference for two input
//   seeds, under the fp32 tolerance of the attention forward (kernels::forward_tolerance in
//   kernels/attention: the five components' tolerances summed along the chain);
// - the sum of the component times against the end-to-end forward: 15%, of medians, against the
//   forward timed both before and after the profile, with three attempts: on a shared machine
//   the load can change between two measurements, while a profile that times the wrong thing
//   misses every attempt.
//
// Problem sizes are tiny on sim (the CPU simulation costs ~100 ns per thread); the comparison with
// the end-to-end forward runs at the report's default size on cuda, where a launch (a few
// microseconds) is small next to each kernel.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/core/ranges.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "graded_test.hpp"
#include "lab02.hpp"
#include "numeric_check.hpp"
#include "sanitize.hpp"
#include "test_device.hpp"

#if !GPULAB_BACKEND_CUDA
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

using gpulab::testing::all_close;
using gpulab::testing::poison_async;

namespace kernels = gpulab::kernels;
using gpulab::lab02::ComponentTiming;
using gpulab::lab02::format_profile;
using gpulab::lab02::Profile;
using gpulab::lab02::profile_attention;
using kernels::AttentionConfig;

constexpr double kRelTol = 1e-9;
constexpr double kForwardTol = 0.15;

// B = 1, S = 32, D = 32, H = 2: a few milliseconds per component on sim.
constexpr AttentionConfig kSmall{1, 32, 32, 2, false};

std::string describe(const AttentionConfig& c) {
  std::ostringstream text;
  text << "{batch " << c.batch << ", seq_len " << c.seq_len << ", d_model " << c.d_model
       << ", heads " << c.heads << (c.causal ? ", causal}" : "}");
  return text.str();
}

// A few samples, quickly: the tests check what is measured, not how precisely.
gpulab::BenchOptions quick_options() {
  gpulab::BenchOptions options;
  options.warmup_runs = 1;
  options.min_samples = 3;
  options.min_time_ms = 0;
  options.target_rel_noise = 1.0;
  options.time_limit_ms = 20000;
  return options;
}

// One run per component: enough to compute the output.
gpulab::BenchOptions single_run_options() {
  gpulab::BenchOptions options = quick_options();
  options.warmup_runs = 0;
  options.min_samples = 1;
  options.max_samples = 1;
  return options;
}

// Inputs uploaded, every intermediate and the output poisoned (0xff bytes: NaN), so an element
// the profile did not compute cannot pass.
struct Problem {
  explicit Problem(const AttentionConfig& c, unsigned seed = 2)
      : config(c), inputs(kernels::make_attention_inputs(c, seed)), buffers(c) {
    kernels::upload(inputs, buffers);
    // On the stream the profile runs on: it does not wait for the legacy default stream.
    poison_async(stream, buffers.qkv, buffers.scores, buffers.probs, buffers.attn, buffers.y);
  }

  [[nodiscard]] Profile profile(const gpulab::BenchOptions& options = quick_options()) {
    return profile_attention(config, buffers, stream, options);
  }

  AttentionConfig config;
  kernels::AttentionInputs inputs;
  kernels::AttentionBuffers buffers;
  gpulab::Stream stream;
};

::testing::AssertionResult close(const std::string& what, double expected, double got,
                                 double rtol = kRelTol) {
  const double tolerance = rtol * std::max(1.0, std::abs(expected));
  if (std::abs(got - expected) <= tolerance) {  // NaN fails
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << ": expected " << expected << ", got " << got
                                       << " (tolerance " << tolerance << ")";
}

std::string listing(const Profile& profile) {
  std::ostringstream text;
  text << profile.components.size() << " components:";
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    text << (i ? "," : "") << " [" << i << "] \"" << profile.components[i].name << "\" "
         << profile.components[i].time_ms << " ms";
  }
  return text.str();
}

// The profile leaves the forward output in y (poisoned with NaN before it runs): compare it
// with the CPU reference, for two input seeds, so an output right for one input by accident
// (or a constant) does not pass.
void expect_output_matches_reference(const AttentionConfig& config) {
  SCOPED_TRACE("config " + describe(config));
  const gpulab::testing::SanitizeOnSim sanitize;
  for (const unsigned seed : {7u, 8u}) {
    Problem problem(config, seed);
    static_cast<void>(problem.profile(single_run_options()));
    const std::vector<float> expected = kernels::attention_reference(config, problem.inputs);
    EXPECT_TRUE(all_close(expected, problem.buffers.y.to_vector(),
                          kernels::forward_tolerance(config, gpulab::rms(expected)),
                          "y of " + describe(config) + ", input seed " + std::to_string(seed),
                          kernels::output_shape(config)))
        << "y is poisoned with NaN before the profile runs: a NaN left in it means the profile "
           "did not run every component, in order, on these buffers";
    const std::pair<const char*, const std::vector<float>*> inputs[] = {
        {"x", &problem.inputs.x},
        {"w_qkv", &problem.inputs.w_qkv},
        {"w_out", &problem.inputs.w_out}};
    const kernels::AttentionBuffers& b = problem.buffers;
    const std::vector<float> after[] = {b.x.to_vector(), b.w_qkv.to_vector(), b.w_out.to_vector()};
    for (std::size_t i = 0; i < std::size(inputs); ++i) {
      if (after[i] != *inputs[i].second) {
        ADD_FAILURE() << "the profile changed its input " << inputs[i].first << " (input seed "
                      << seed << "): the inputs must be left as they were";
      }
    }
  }
}

// ----------------------------------------------------------------------------------------------
// The profile: 50 points

GPULAB_GRADED_TEST(Lab02Profile, FiveComponentsInOrderWithTheirNames, 10, "profile_attention",
                   "five components (QKV projection, scores, softmax, weighted sum, output "
                   "projection) in forward order with their names") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
  const Profile profile = problem.profile();
  const auto components = kernels::all_components();
  ASSERT_EQ(profile.components.size(), components.size())
      << "expected one entry per component (" << components.size() << "), got " << listing(profile);
  for (std::size_t i = 0; i < components.size(); ++i) {
    EXPECT_EQ(profile.components[i].name, std::string(kernels::component_name(components[i])))
        << "component " << i << ": expected the name kernels::component_name gives, in execution "
        << "order";
  }
}

GPULAB_GRADED_TEST(Lab02Profile, TimesArePositiveAndTakenOnTheGivenStream, 5, "profile_attention",
                   "every component time positive, measured on the stream given") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
#if !GPULAB_BACKEND_CUDA
  // What a GPU's timeline would show, as the sim records it (docs/sim.md, "Streams"): every
  // component's kernels launched on the stream given. Work on a stream of the profile's own is
  // not ordered with the caller's work on theirs. (Events on the given stream around the call
  // cannot tell: a profile that waits for its own stream leaves the host, and so the next event,
  // after that work, on a GPU and on the modeled clock alike.)
  std::vector<std::vector<std::string>> component_kernels;
  for (const kernels::Component component : kernels::all_components()) {
    gpulab::sim::set_stream_recording(true);
    kernels::run_component(component, problem.config, problem.buffers, problem.stream);
    gpulab::sim::set_stream_recording(false);
    std::vector<std::string>& names = component_kernels.emplace_back();
    for (const gpulab::sim::StreamEntry& entry : gpulab::sim::stream_entries(problem.stream)) {
      if (entry.op == gpulab::sim::StreamOp::kernel) {
        names.push_back(entry.kernel);
      }
    }
  }
  problem.stream.synchronize();
  gpulab::sim::set_stream_recording(true);
  const Profile profile = problem.profile();
  gpulab::sim::set_stream_recording(false);
  std::multiset<std::string> launched;
  for (const gpulab::sim::StreamEntry& entry : gpulab::sim::stream_entries(problem.stream)) {
    if (entry.op == gpulab::sim::StreamOp::kernel) {
      launched.insert(entry.kernel);
    }
  }
  const auto components = kernels::all_components();
  for (std::size_t i = 0; i < components.size(); ++i) {
    for (const std::string& name : component_kernels[i]) {
      EXPECT_TRUE(launched.contains(name))
          << "the component " << kernels::component_name(components[i]) << " (kernel " << name
          << ") was never launched on the stream given to profile_attention: time the "
             "components on that stream, not on one of your own";
    }
  }
#else
  // On a GPU: two events on the given stream around the call see at least one run of each
  // component (a weaker check: a profile that waits for a stream of its own passes it).
  gpulab::Event before;
  gpulab::Event after;
  before.record(problem.stream);
  const Profile profile = problem.profile();
  after.record(problem.stream);
  after.synchronize();
  const double on_stream_ms = static_cast<double>(gpulab::Event::elapsed_ms(before, after));
  double sum = 0;
  for (const ComponentTiming& component : profile.components) {
    sum += component.time_ms;
  }
  EXPECT_GE(on_stream_ms, 0.9 * sum)
      << "the stream given to profile_attention advanced " << on_stream_ms
      << " ms while it ran, less than one run of each component (" << sum
      << " ms): time the components on that stream, not on one of your own";
#endif
  ASSERT_EQ(profile.components.size(), 5u) << listing(profile);
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    const double t = profile.components[i].time_ms;
    EXPECT_TRUE(std::isfinite(t) && t > 0)
        << "component " << i << " (" << profile.components[i].name
        << "): expected a positive, finite time_ms, got " << t;
  }
}

GPULAB_GRADED_TEST(Lab02Profile, EachComponentMatchesItsOwnMeasurement, 5, "profile_attention",
                   "each component's time matches that component timed on its own") {
  GPULAB_REQUIRE_DEVICE();
  // Each component timed on its own with the framework's harness, after the profile (the buffers
  // then hold every component's input): a time split from one forward pass, or taken of the
  // wrong component, misses. The modeled clock repeats itself exactly: one attempt decides. A
  // measured clock varies (on a GPU other processes share, by more than the tolerance now and
  // then): three attempts, and a profile that times the wrong thing misses in every one.
  const gpulab::TimingClock clock = gpulab::event_clock();
  // The sim's host clock (CPU time of the simulation, in a build that cannot count) is noisier
  // still: a wide tolerance there, which catches only gross mistakes.
  const double tolerance = clock == gpulab::TimingClock::modeled ? 0.01
                           : clock == gpulab::TimingClock::gpu   ? 0.25
                                                                 : 0.5;
  const int attempts_allowed = clock == gpulab::TimingClock::modeled ? 1 : 3;
#if GPULAB_BACKEND_CUDA
  // The report's size: each component runs long enough that a launch and the timer's resolution
  // (microseconds) are small next to it, and the components' times differ widely.
  const AttentionConfig config{1, 1024, 1024, 16, false};
#else
  const AttentionConfig config = kSmall;
#endif
  Problem problem(config);
  const auto components = kernels::all_components();
  std::ostringstream attempts;
  for (int attempt = 1; attempt <= attempts_allowed; ++attempt) {
    const Profile profile = problem.profile();
    ASSERT_EQ(profile.components.size(), components.size()) << listing(profile);
    std::ostringstream misses;
    for (std::size_t i = 0; i < components.size(); ++i) {
      const double own =
          gpulab::measure(
              [&](cudaStream_t s) {
                kernels::run_component(components[i], problem.config, problem.buffers, s);
              },
              problem.stream, quick_options())
              .summary.median_ms;
      const double got = profile.components[i].time_ms;
      if (!(std::abs(got - own) <= tolerance * own)) {
        misses << "\n    component " << i << " (" << kernels::component_name(components[i])
               << "): the profile says " << got << " ms, the component timed on its own takes "
               << own << " ms";
      }
    }
    if (misses.str().empty()) {
      return;
    }
    attempts << "\n  attempt " << attempt << ":" << misses.str() << "\n    " << listing(profile);
  }
  ADD_FAILURE() << "each component's time must be that component's own, as gpulab::measure "
                << "times it alone on the same stream (tolerance " << tolerance * 100 << "%, "
                << describe(config) << "):" << attempts.str();
}

GPULAB_GRADED_TEST(Lab02Profile, SumMatchesAnEndToEndForwardTimedSeparately, 10,
                   "profile_attention",
                   "the components add up to the whole forward pass timed end to end") {
  GPULAB_REQUIRE_DEVICE();
  // How many times the whole comparison may be tried: a measured clock gets three attempts
  // (below); the modeled clock gives the same times every run, so one attempt decides.
  int attempts_allowed = 3;
#if GPULAB_BACKEND_CUDA
  // The report's default size: each kernel runs long enough that a launch (a few microseconds,
  // paid once per sample) is small next to it.
  const AttentionConfig config{1, 1024, 1024, 16, false};
  gpulab::BenchOptions options = quick_options();
  options.min_samples = 10;
#else
  AttentionConfig config = kSmall;
  gpulab::BenchOptions options = quick_options();
  if (gpulab::sim::clock_mode() == gpulab::sim::ClockMode::modeled) {
    attempts_allowed = 1;
  } else {
    // CPU time of the simulation (a build that cannot count): twice the small size, so the
    // fixed cost each sample pays (handing the launch to the simulator's worker, as a GPU sample
    // pays a launch) is a few percent of 20 ms of forward pass; and one simulator thread. With
    // several, every kernel waits for its slowest helper thread, and on a loaded machine a helper
    // that loses its CPU stretches a sample by a scheduler slice (~4 ms): noise of the machine,
    // not of the profile. Set before the first launch starts the pool (ctest runs each test case
    // in a process of its own); an explicit GPULAB_SIM_WORKERS is kept.
    config = AttentionConfig{1, 64, 64, 2, false};
    options.min_samples = 7;
    if (std::getenv("GPULAB_SIM_WORKERS") == nullptr) {
      gpulab::sim::set_worker_count(1);
    }
  }
#endif
  Problem problem(config);
  auto forward_ms = [&] {
    return gpulab::measure(
               [&](cudaStream_t s) { kernels::attention_forward(config, problem.buffers, s); },
               problem.stream, options)
        .summary.median_ms;
  };
  // The forward is timed before and after the profile, so a change of load on a shared machine
  // between the two measurements cannot decide the test. A profile that times the wrong thing (the
  // sum of the samples, the host side of the launch only, the warm-up too) misses every time.
  std::ostringstream attempts;
  for (int attempt = 1; attempt <= attempts_allowed; ++attempt) {
    const double before = forward_ms();
    const Profile profile = problem.profile(options);
    const double after = forward_ms();
    ASSERT_EQ(profile.components.size(), 5u) << listing(profile);
    double sum = 0;
    for (const ComponentTiming& c : profile.components) {
      sum += c.time_ms;
    }
    const double low = (1 - kForwardTol) * std::min(before, after);
    const double high = (1 + kForwardTol) * std::max(before, after);
    if (sum >= low && sum <= high) {
      return;
    }
    attempts << "\n  attempt " << attempt << ": sum of the component times " << sum
             << " ms; end-to-end forward " << before << " ms before the profile and " << after
             << " ms after it, so expected " << low << " to " << high << " ms. "
             << listing(profile);
  }
  ADD_FAILURE() << "the component times must add up to an end-to-end forward pass of "
                << describe(config) << " timed separately with gpulab::measure (median of "
                << options.min_samples << " or more samples), tolerance " << kForwardTol * 100
                << "%:" << attempts.str();
}

GPULAB_GRADED_TEST(Lab02Profile, CostsAreTheAnalyticFormulas, 10, "profile_attention",
                   "each component's FLOP and bytes are the analytic formulas of its op") {
  GPULAB_REQUIRE_DEVICE();
  for (const AttentionConfig& config : {kSmall, AttentionConfig{2, 19, 24, 3, true}}) {
    SCOPED_TRACE("config " + describe(config));
    Problem problem(config);
    const Profile profile = problem.profile(single_run_options());
    const auto components = kernels::all_components();
    ASSERT_EQ(profile.components.size(), components.size()) << listing(profile);
    for (std::size_t i = 0; i < components.size(); ++i) {
      const gpulab::OpCost want = kernels::component_cost(config, components[i]);
      const gpulab::OpCost got = profile.components[i].cost;
      EXPECT_EQ(got.flops, want.flops)
          << "component " << i << " (" << kernels::component_name(components[i])
          << ") flops: expected kernels::component_cost's " << want.flops << ", got " << got.flops;
      EXPECT_EQ(got.bytes, want.bytes)
          << "component " << i << " (" << kernels::component_name(components[i])
          << ") bytes: expected kernels::component_cost's " << want.bytes << ", got " << got.bytes;
    }
  }
}

GPULAB_GRADED_TEST(Lab02Profile, RatesFollowFromCostAndTime, 5, "profile_attention",
                   "GFLOP/s and GB/s of each component follow from its cost and time") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
  const Profile profile = problem.profile();
  ASSERT_EQ(profile.components.size(), 5u) << listing(profile);
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    const ComponentTiming& c = profile.components[i];
    SCOPED_TRACE("component " + std::to_string(i) + " (" + c.name + "), time_ms " +
                 std::to_string(c.time_ms));
    // Decimal units: flops / (time_ms / 1e3) / 1e9 = flops / time_ms / 1e6.
    const gpulab::OpCost cost = kernels::component_cost(kSmall, kernels::all_components()[i]);
    EXPECT_TRUE(
        close("gflop_s (flops / time, decimal GFLOP/s)", cost.flops / c.time_ms / 1e6, c.gflop_s));
    EXPECT_TRUE(close("gb_s (bytes / time, decimal GB/s)", cost.bytes / c.time_ms / 1e6, c.gb_s));
  }
}

GPULAB_GRADED_TEST(
    Lab02Profile, SharesSumToOneAndTheBottleneckIsTheSlowest, 5, "profile_attention",
    "the shares of the total sum to one and the bottleneck is the slowest component") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
  const Profile profile = problem.profile();
  ASSERT_EQ(profile.components.size(), 5u) << listing(profile);
  double sum_ms = 0;
  double sum_share = 0;
  std::size_t slowest = 0;
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    sum_ms += profile.components[i].time_ms;
    sum_share += profile.components[i].share;
    if (profile.components[i].time_ms > profile.components[slowest].time_ms) {
      slowest = i;
    }
  }
  EXPECT_TRUE(close("total_ms (the sum of the component times)", sum_ms, profile.total_ms));
  EXPECT_TRUE(close("the sum of the shares", 1.0, sum_share));
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    EXPECT_TRUE(close("share of component " + std::to_string(i) + " (time_ms / total_ms)",
                      profile.components[i].time_ms / sum_ms, profile.components[i].share));
  }
  EXPECT_EQ(profile.bottleneck, slowest)
      << "bottleneck: expected the index of the largest time_ms (" << slowest << "), got "
      << profile.bottleneck << ". " << listing(profile);
}

// ----------------------------------------------------------------------------------------------
// NVTX ranges: 15 points

// The recorded ranges named after a component, in opening order.
std::vector<gpulab::RecordedRange> component_ranges(const gpulab::RangeRecorder& recorder) {
  std::vector<gpulab::RecordedRange> found;
  for (const gpulab::RecordedRange& range : recorder.ranges()) {
    for (const kernels::Component c : kernels::all_components()) {
      if (range.name == kernels::component_name(c)) {
        found.push_back(range);
      }
    }
  }
  return found;
}

std::string listing(const std::vector<gpulab::RecordedRange>& ranges) {
  std::ostringstream text;
  text << ranges.size() << " ranges:";
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    text << (i ? "," : "") << " \"" << ranges[i].name << "\" (depth " << ranges[i].depth << ", "
         << ranges[i].start_ms << " to " << ranges[i].end_ms << " ms)";
  }
  return text.str();
}

GPULAB_GRADED_TEST(Lab02Ranges, OneRangePerComponentInOrder, 10, "profile_attention",
                   "one profiling range per component, named after it, in forward order") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
  const gpulab::RangeRecorder recorder;
  static_cast<void>(problem.profile());
  const std::vector<gpulab::RecordedRange> all = recorder.ranges();
  const std::vector<gpulab::RecordedRange> ranges = component_ranges(recorder);
  const auto components = kernels::all_components();
  ASSERT_EQ(ranges.size(), components.size())
      << "expected exactly one gpulab::ScopedRange per component, named after it; recorded "
      << listing(all);
  for (std::size_t i = 0; i < components.size(); ++i) {
    EXPECT_EQ(ranges[i].name, std::string(kernels::component_name(components[i])))
        << "range " << i << " in opening order; recorded " << listing(all);
    EXPECT_EQ(ranges[i].depth, ranges[0].depth)
        << "range " << i << " (" << ranges[i].name
        << "): the component ranges must sit side by side, not inside one another; recorded "
        << listing(all);
    if (i + 1 < components.size()) {
      EXPECT_LE(ranges[i].end_ms, ranges[i + 1].start_ms)
          << "range " << i << " (" << ranges[i].name << ") must close before range " << i + 1
          << " (" << ranges[i + 1].name << ") opens; recorded " << listing(all);
    }
  }
}

GPULAB_GRADED_TEST(Lab02Ranges, EachMeasurementRunsInsideItsRange, 5, "profile_attention",
                   "each component's work runs inside its own range") {
  GPULAB_REQUIRE_DEVICE();
  Problem problem(kSmall);
  const gpulab::RangeRecorder recorder;
  const Profile profile = problem.profile();
  const std::vector<gpulab::RecordedRange> ranges = component_ranges(recorder);
  ASSERT_EQ(ranges.size(), 5u) << "recorded " << listing(recorder.ranges());
  ASSERT_EQ(profile.components.size(), 5u) << listing(profile);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    // The range holds the warm-up and every sample, each at least about the median long: a range
    // closed before the measurement (or opened after it) is far shorter than one sample.
    const double held_ms = ranges[i].end_ms - ranges[i].start_ms;
    EXPECT_GE(held_ms, profile.components[i].time_ms)
        << "range \"" << ranges[i].name << "\" was open " << held_ms
        << " ms, shorter than one sample of its component (time_ms "
        << profile.components[i].time_ms << "): measure the component inside its range";
  }
}

// ----------------------------------------------------------------------------------------------
// The profile runs the real computation: 15 points. y is poisoned first; after the profile it
// must hold the forward output.

GPULAB_GRADED_TEST(
    Lab02Output, MatchesTheCpuReference, 5, "profile_attention",
    "the profiled forward pass writes the CPU reference's output, the inputs left as they were") {
  GPULAB_REQUIRE_DEVICE();
  expect_output_matches_reference(kSmall);
}

GPULAB_GRADED_TEST(Lab02Output, MatchesTheCpuReferenceWhenCausal, 5, "profile_attention",
                   "the same with a causal mask") {
  GPULAB_REQUIRE_DEVICE();
  expect_output_matches_reference({1, 32, 32, 2, true});
}

GPULAB_GRADED_TEST(Lab02Output, MatchesTheCpuReferenceAtSizesThatAreNotMultiplesOf16, 5,
                   "profile_attention",
                   "the same at sequence lengths and head sizes that are not multiples of 16") {
  GPULAB_REQUIRE_DEVICE();
  expect_output_matches_reference({2, 19, 24, 3, true});  // head_dim 8, partial 16 x 16 tiles
}

// ----------------------------------------------------------------------------------------------
// The table: 15 points

// A profile made by hand: every number known, one of them wider than its column.
Profile hand_made_profile() {
  Profile p;
  const double times[] = {0.0512, 0.0213, 0.1502, 0.0207, 0.0177};
  const double gb_s[] = {148.0, 2315.25, 12345.6, 812.5, 96.04};
  double total = 0;
  for (const double t : times) {
    total += t;
  }
  for (std::size_t i = 0; i < 5; ++i) {
    ComponentTiming c;
    c.name = std::string(kernels::component_name(kernels::all_components()[i]));
    c.time_ms = times[i];
    c.cost = {1e6 * static_cast<double>(i + 1), 2.5e5 * static_cast<double>(i + 3)};
    c.gflop_s = c.cost.flops / times[i] / 1e6;
    c.gb_s = gb_s[i];
    c.share = times[i] / total;
    p.components.push_back(c);
  }
  p.total_ms = total;
  p.bottleneck = 2;
  return p;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::string printf_string(const char* name, double time_ms, double percent, double gflop_s,
                          double gb_s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %8.4f %9.1f%% %9.1f %6.1f", name, time_ms, percent,
                gflop_s, gb_s);
  return line;
}

GPULAB_GRADED_TEST(Lab02Format, HeaderRowsInOrderAndTotal, 10, "format_profile",
                   "the table: its header, one row per component in order, and the total") {
  const Profile p = hand_made_profile();
  const std::string text = format_profile(p);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "every line ends in '\\n', the last one too";
  std::vector<std::string> want{"Component           Time (ms)    % Total   GFLOP/s   GB/s"};
  double flops = 0;
  double bytes = 0;
  for (const ComponentTiming& c : p.components) {
    want.push_back(printf_string(c.name.c_str(), c.time_ms, c.share * 100, c.gflop_s, c.gb_s));
    flops += c.cost.flops;
    bytes += c.cost.bytes;
  }
  want.push_back(printf_string("Total", p.total_ms, 100.0, flops / p.total_ms / 1e6,
                               bytes / p.total_ms / 1e6));
  const std::vector<std::string> got = lines_of(text);
  ASSERT_GE(got.size(), want.size())
      << "expected at least " << want.size() << " lines (header, 5 components, Total), got:\n"
      << text;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "line " << i << " of the table:\n" << text;
  }
}

GPULAB_GRADED_TEST(Lab02Format, BottleneckLineNamesTheSlowestWithItsShare, 5, "format_profile",
                   "the last line names the bottleneck and its share of the total") {
  Profile p = hand_made_profile();
  std::vector<std::string> got = lines_of(format_profile(p));
  ASSERT_EQ(got.size(), 8u) << "header, 5 components, Total, Bottleneck";
  char want[64];
  std::snprintf(want, sizeof want, "Bottleneck: Softmax (%.1f%%)", p.components[2].share * 100);
  EXPECT_EQ(got.back(), want) << "the last line, for bottleneck index 2";

  // The line follows the profile's bottleneck index and share: here the first component, at
  // exactly half of the total.
  p.bottleneck = 0;
  p.components[0].share = 0.5;
  got = lines_of(format_profile(p));
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got.back(), "Bottleneck: QKV Projection (50.0%)") << "the last line, bottleneck 0";
}

// ----------------------------------------------------------------------------------------------
// Bad input: 5 points

GPULAB_GRADED_TEST(Lab02Errors, RejectsAnEmptyProfileAndInvalidOptions, 5,
                   "format_profile profile_attention",
                   "std::invalid_argument for an empty or inconsistent profile and for invalid "
                   "options or shapes") {
  GPULAB_REQUIRE_DEVICE();
  EXPECT_NO_THROW(static_cast<void>(format_profile(hand_made_profile())))
      << "a valid profile formats without an exception";
  EXPECT_THROW(static_cast<void>(format_profile(Profile{})), std::invalid_argument)
      << "format_profile of a profile without components";
  Profile out_of_range = hand_made_profile();
  out_of_range.bottleneck = 5;
  EXPECT_THROW(static_cast<void>(format_profile(out_of_range)), std::invalid_argument)
      << "format_profile with bottleneck 5 of 5 components";
  Profile no_time = hand_made_profile();
  no_time.total_ms = 0;
  EXPECT_THROW(static_cast<void>(format_profile(no_time)), std::invalid_argument)
      << "format_profile with total_ms 0";

  Problem problem(kSmall);
  gpulab::BenchOptions no_samples = quick_options();
  no_samples.min_samples = 0;
  EXPECT_THROW(static_cast<void>(problem.profile(no_samples)), std::invalid_argument)
      << "profile_attention with BenchOptions::min_samples 0";
  const AttentionConfig uneven_heads{1, 32, 32, 3, false};  // 32 is not a multiple of 3
  EXPECT_THROW(static_cast<void>(profile_attention(uneven_heads, problem.buffers, problem.stream,
                                                   single_run_options())),
               std::invalid_argument)
      << "profile_attention with d_model 32 and 3 heads";
}

}  // namespace
