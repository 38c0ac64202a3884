// Tests of live runs: the LiveRunner's worker thread (progress, cancel, failures, results handed
// over in order) with plans made of plain functions, and the real experiments (experiments.hpp)
// run quickly on this process's backend, checked for the results the panels read.
#include "gpulab/viewer/live.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/device_info.hpp"
#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif
#include "gpulab/core/specs.hpp"
#include "gpulab/viewer/experiments.hpp"
#include "test_device.hpp"

namespace gpulab::viewer {
namespace {

using namespace std::chrono_literals;

Result named(std::string name) {
  return Result{std::move(name), {}, {Metric{"time_ms", 1.0, Provenance::measured, "", ""}}};
}

// A plan of `steps` steps; step i returns one result named "step<i>".
RunPlan counting_plan(int steps, std::chrono::milliseconds each = 0ms) {
  RunPlan plan{"counting", {}};
  for (int i = 0; i < steps; ++i) {
    plan.steps.push_back(RunStep{"step " + std::to_string(i), [i, each](std::stop_token) {
                                   std::this_thread::sleep_for(each);
                                   return std::vector<Result>{named("step" + std::to_string(i))};
                                 }});
  }
  return plan;
}

TEST(LiveRunner, StartsIdleAndNamesEveryState) {
  const LiveRunner runner;
  EXPECT_EQ(runner.status().state, RunState::idle);
  EXPECT_EQ(to_string(RunState::idle), "idle");
  EXPECT_EQ(to_string(RunState::running), "running");
  EXPECT_EQ(to_string(RunState::finished), "finished");
  EXPECT_EQ(to_string(RunState::cancelled), "cancelled");
  EXPECT_EQ(to_string(RunState::failed), "failed");
}

TEST(LiveRunner, RunsEveryStepInOrderAndHandsOverEachResultOnce) {
  LiveRunner runner;
  ASSERT_TRUE(runner.start(counting_plan(5)));
  runner.wait();
  const RunStatus status = runner.status();
  EXPECT_EQ(status.state, RunState::finished);
  EXPECT_EQ(status.plan, "counting");
  EXPECT_EQ(status.done, 5U);
  EXPECT_EQ(status.total, 5U);
  EXPECT_TRUE(status.current.empty());
  const std::vector<Result> results = runner.take_results();
  ASSERT_EQ(results.size(), 5U);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].name, "step" + std::to_string(i));
  }
  EXPECT_TRUE(runner.take_results().empty());
}

TEST(LiveRunner, ResultsArriveWhileTheRunGoesOn) {
  // The second step waits until the first step's result has been taken: it can only finish if
  // results stream out before the run ends.
  std::atomic<bool> taken = false;
  RunPlan plan{"streaming", {}};
  plan.steps.push_back(
      RunStep{"first", [](std::stop_token) { return std::vector<Result>{named("first")}; }});
  plan.steps.push_back(RunStep{"second", [&taken](std::stop_token) {
                                 const auto deadline = std::chrono::steady_clock::now() + 10s;
                                 while (!taken && std::chrono::steady_clock::now() < deadline) {
                                   std::this_thread::sleep_for(1ms);
                                 }
                                 if (!taken) {
                                   throw std::runtime_error("the first result never streamed");
                                 }
                                 return std::vector<Result>{named("second")};
                               }});
  LiveRunner runner;
  ASSERT_TRUE(runner.start(std::move(plan)));
  std::vector<Result> first;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (first.empty() && std::chrono::steady_clock::now() < deadline) {
    first = runner.take_results();
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].name, "first");
  EXPECT_EQ(runner.status().state, RunState::running);
  taken = true;
  runner.wait();
  EXPECT_EQ(runner.status().state, RunState::finished);
  const std::vector<Result> rest = runner.take_results();
  ASSERT_EQ(rest.size(), 1U);
  EXPECT_EQ(rest[0].name, "second");
}

TEST(LiveRunner, RefusesASecondRunWhileOneIsInProgress) {
  LiveRunner runner;
  ASSERT_TRUE(runner.start(counting_plan(3, 50ms)));
  EXPECT_FALSE(runner.start(counting_plan(1)));
  runner.wait();
  EXPECT_EQ(runner.status().plan, "counting");
  EXPECT_EQ(runner.take_results().size(), 3U);
  // Once it has ended, the next run starts.
  ASSERT_TRUE(runner.start(counting_plan(2)));
  runner.wait();
  EXPECT_EQ(runner.status().done, 2U);
  EXPECT_EQ(runner.take_results().size(), 2U);
}

TEST(LiveRunner, CancelStopsAfterTheStepInProgress) {
  LiveRunner runner;
  ASSERT_TRUE(runner.start(counting_plan(200, 10ms)));
  std::this_thread::sleep_for(30ms);
  runner.cancel();
  runner.wait();
  const RunStatus status = runner.status();
  EXPECT_EQ(status.state, RunState::cancelled);
  EXPECT_LT(status.done, 200U);
  // Every step that finished handed its result over; the step the stop arrived in kept its
  // result too, but does not count as done.
  const std::size_t results = runner.take_results().size();
  EXPECT_GE(results, status.done);
  EXPECT_LE(results, status.done + 1);
}

TEST(LiveRunner, AStepThatSeesTheStopDoesNotCountAsDone) {
  RunPlan plan{"stoppable", {}};
  plan.steps.push_back(RunStep{"waits for cancel", [](std::stop_token stop) {
                                 while (!stop.stop_requested()) {
                                   std::this_thread::sleep_for(1ms);
                                 }
                                 return std::vector<Result>{named("partial")};
                               }});
  LiveRunner runner;
  ASSERT_TRUE(runner.start(std::move(plan)));
  std::this_thread::sleep_for(10ms);
  runner.cancel();
  runner.wait();
  EXPECT_EQ(runner.status().state, RunState::cancelled);
  EXPECT_EQ(runner.status().done, 0U);
  EXPECT_EQ(runner.take_results().size(), 1U);  // what it returned is still kept
}

TEST(LiveRunner, AThrowingStepFailsTheRunWithItsLabelAndMessage) {
  RunPlan plan = counting_plan(1);
  plan.steps.push_back(RunStep{"bad step", [](std::stop_token) -> std::vector<Result> {
                                 throw std::runtime_error("kernel gave a wrong result at 7");
                               }});
  plan.steps.push_back(counting_plan(1).steps.front());
  LiveRunner runner;
  ASSERT_TRUE(runner.start(std::move(plan)));
  runner.wait();
  const RunStatus status = runner.status();
  EXPECT_EQ(status.state, RunState::failed);
  EXPECT_EQ(status.error, "bad step: kernel gave a wrong result at 7");
  EXPECT_EQ(status.done, 1U);
  EXPECT_EQ(runner.take_results().size(), 1U);  // the step after the failure never ran
}

TEST(LiveRunner, DestroyingARunnerMidRunStopsIt) {
  std::atomic<int> started = 0;
  {
    LiveRunner runner;
    RunPlan plan{"long", {}};
    for (int i = 0; i < 1000; ++i) {
      plan.steps.push_back(RunStep{"step", [&started](std::stop_token) {
                                     ++started;
                                     std::this_thread::sleep_for(5ms);
                                     return std::vector<Result>{};
                                   }});
    }
    ASSERT_TRUE(runner.start(std::move(plan)));
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_LT(started.load(), 1000);
}

TEST(LiveRunner, ElapsedTimeGrowsWhileRunningAndStopsAtTheEnd) {
  LiveRunner runner;
  ASSERT_TRUE(runner.start(counting_plan(2, 20ms)));
  runner.wait();
  const double elapsed = runner.status().elapsed_s;
  EXPECT_GE(elapsed, 0.035);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(runner.status().elapsed_s, elapsed);
}

// --- the real experiments ------------------------------------------------------------------------

std::vector<Result> run_quick(Experiment experiment, ExperimentOptions options = {}) {
  options.quick = true;
  LiveRunner runner;
  EXPECT_TRUE(runner.start(make_plan(experiment, options, default_spec())));
  runner.wait();
  EXPECT_EQ(runner.status().state, RunState::finished) << runner.status().error;
  return runner.take_results();
}

const Metric* metric(const Result& result, const std::string& name, Provenance provenance) {
  for (const Metric& m : result.metrics) {
    if (m.name == name && m.provenance == provenance) {
      return &m;
    }
  }
  return nullptr;
}

TEST(ViewerExperiments, NamesAndSweepKernels) {
  EXPECT_EQ(to_string(Experiment::bandwidth), "bandwidth");
  EXPECT_EQ(to_string(Experiment::components), "components");
  EXPECT_EQ(to_string(Experiment::sweep), "sweep");
  ASSERT_EQ(sweep_kernels().size(), 3U);
  EXPECT_EQ(sweep_kernels()[0], "vector_add_kernel");
  EXPECT_EQ(sweep_kernels()[1], "histogram_global_kernel");
  EXPECT_EQ(sweep_kernels()[2], "histogram_shared_kernel");
}

TEST(ViewerExperiments, BadOptionsAreRefusedBeforeAnythingRuns) {
  ExperimentOptions options;
  options.sweep_kernel = "no_such_kernel";
  EXPECT_THROW((void)make_plan(Experiment::sweep, options, default_spec()), std::invalid_argument);
  options = {};
  options.attention.heads = 3;  // 128 is not a multiple of 3
  EXPECT_THROW((void)make_plan(Experiment::components, options, default_spec()),
               std::invalid_argument);
}

TEST(ViewerExperiments, BandwidthGivesOneVerifiedTimedSizePerStep) {
  GPULAB_REQUIRE_DEVICE();
  const std::vector<Result> results = run_quick(Experiment::bandwidth);
  ASSERT_GE(results.size(), 3U);
  std::set<std::string> sizes;
  for (const Result& r : results) {
    EXPECT_EQ(r.name, "vector_add");
    sizes.insert(r.params.at("n"));
    const Metric* bytes = metric(r, "bytes", Provenance::measured);
    const Metric* time = metric(r, "time_ms", Provenance::measured);
    const Metric* model = metric(r, "time_ms", Provenance::modeled);
    const Metric* bw = metric(r, "bandwidth_gb_s", Provenance::measured);
    ASSERT_TRUE(bytes && time && model && bw);
    EXPECT_EQ(*bytes->value, 12.0 * std::stod(r.params.at("n")));
    EXPECT_GT(*time->value, 0);
    EXPECT_NEAR(*bw->value, *bytes->value / (*time->value * 1e6), *bw->value * 1e-9);
    EXPECT_EQ(model->spec, default_spec().name);
    ASSERT_FALSE(r.samples_ms.empty());
    EXPECT_GE(r.samples_ms.size(), 5U);  // the harness's minimum on every backend
  }
  EXPECT_EQ(sizes.size(), results.size());
}

TEST(ViewerExperiments, ComponentsGivesTheFiveComponentsWithCostsAndBothTimes) {
  GPULAB_REQUIRE_DEVICE();
  ExperimentOptions options;
  options.attention = kernels::AttentionConfig{1, 64, 64, 2, true};
  const std::vector<Result> results = run_quick(Experiment::components, options);
  ASSERT_EQ(results.size(), 5U);
  const char* names[] = {"QKV Projection", "Score Computation", "Softmax", "Weighted Sum",
                         "Output Projection"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    EXPECT_EQ(r.name, "attention_component");
    EXPECT_EQ(r.params.at("component"), names[i]);
    EXPECT_EQ(r.params.at("seq_len"), "64");
    EXPECT_EQ(r.params.at("causal"), "true");
    const OpCost cost = kernels::component_cost(options.attention, kernels::all_components()[i]);
    ASSERT_TRUE(metric(r, "flop", Provenance::measured));
    EXPECT_EQ(*metric(r, "flop", Provenance::measured)->value, cost.flops);
    EXPECT_EQ(*metric(r, "bytes", Provenance::measured)->value, cost.bytes);
    ASSERT_TRUE(metric(r, "time_ms", Provenance::measured));
    ASSERT_TRUE(metric(r, "time_ms", Provenance::modeled));
    EXPECT_EQ(*metric(r, "time_ms", Provenance::modeled)->value,
              make_roofline(default_spec()).modeled_time_ms(cost));
  }
}

class ViewerSweep : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ViewerSweep, GivesVerifiedTimeAndOccupancyPerBlockSize) {
  GPULAB_REQUIRE_DEVICE();
  ExperimentOptions options;
  options.sweep_kernel = std::string(GetParam());
  const std::vector<Result> results = run_quick(Experiment::sweep, options);
  ASSERT_GE(results.size(), 6U);  // 32 .. 1024 threads
  int previous = 0;
  for (const Result& r : results) {
    EXPECT_EQ(r.name, "block_size_sweep");
    EXPECT_EQ(r.params.at("kernel"), GetParam());
    const int threads = std::stoi(r.params.at("block_size"));
    EXPECT_GT(threads, previous);
    EXPECT_EQ(threads % 32, 0);
    previous = threads;
    ASSERT_TRUE(metric(r, "time_ms", Provenance::measured));
    ASSERT_TRUE(metric(r, "time_ms", Provenance::modeled));
    const Metric* occupancy = metric(r, "occupancy_percent", Provenance::modeled);
    const Metric* missing = metric(r, "occupancy_percent", Provenance::unavailable);
    ASSERT_TRUE(occupancy != nullptr || missing != nullptr);
    if (occupancy != nullptr) {
      EXPECT_GT(*occupancy->value, 0);
      EXPECT_LE(*occupancy->value, 100);
      EXPECT_FALSE(r.params.at("limiter").empty());
      EXPECT_EQ(r.params.at("figures"), "sm_90");  // H100 SXM, CC 9.0: the sm_90 build
    } else {
      EXPECT_FALSE(missing->reason.empty());
    }
  }
  EXPECT_EQ(previous, 1024);
}

TEST(ViewerSweepModel, OnSimTheModeledTimeFollowsTheBlockSize) {
#if GPULAB_BACKEND_SIM
  if (!sim::counting_available()) {
    GTEST_SKIP() << sim::counting_unavailable_reason();
  }
  // vector add at 2^20 (the sim's full sweep), modeled on H200 SXM from counted traffic: 32
  // threads per block fit only 32 blocks = 32 warps per SM (occupancy 50%), which keep half the
  // bytes in flight that 256 threads do: 32 warps x 2 loads x 128 B x 132 SMs / 303 ns = 3.57
  // TB/s, below the H200's 4.8 TB/s, so DRAM latency shows (Little's law); the roofline time
  // would be the same for both. The 12.6 MB take 3.5 us instead of 2.6 us, beside the 3 us of
  // launch overhead both pay. (On H100 SXM, 3.35 TB/s, those bytes in flight reach the peak.)
  ExperimentOptions options;
  options.sweep_kernel = "vector_add_kernel";
  const RunPlan plan = make_plan(Experiment::sweep, options, *find_spec("h200-sxm"));
  ASSERT_GE(plan.steps.size(), 4U);
  const auto modeled_ms = [&](std::size_t step, const char* threads) {
    const std::vector<Result> results = plan.steps.at(step).run(std::stop_token{});
    EXPECT_EQ(results.at(0).params.at("block_size"), threads);
    return *metric(results.at(0), "time_ms", Provenance::modeled)->value;
  };
  const double small = modeled_ms(0, "32");
  const double usual = modeled_ms(3, "256");
  EXPECT_GT(small, 1.1 * usual) << small << " ms against " << usual << " ms";
#else
  GTEST_SKIP() << "the counted-traffic model is the sim's";
#endif
}

INSTANTIATE_TEST_SUITE_P(EverySweepKernel, ViewerSweep, ::testing::ValuesIn(sweep_kernels()),
                         [](const ::testing::TestParamInfo<std::string_view>& kernel) {
                           return std::string(kernel.param);
                         });

}  // namespace
}  // namespace gpulab::viewer
