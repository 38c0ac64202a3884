#include "gpulab/viewer/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/numeric.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"

#if GPULAB_BACKEND_SIM
#include "gpulab/core/traffic_model.hpp"
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab::viewer {
namespace {

bool on_sim() {
  return std::string_view(backend_name()) == "sim";
}

// How long to sample one configuration. The CPU simulation is about a thousand times slower than
// a GPU, so it gets fewer, longer samples: enough for a histogram, not a publication.
BenchOptions bench_options(bool quick) {
  BenchOptions options;
  if (on_sim()) {
    options.warmup_runs = 1;
    options.min_samples = 5;
    options.max_samples = quick ? 20 : 60;
    options.min_time_ms = quick ? 5 : 20;
    options.time_limit_ms = quick ? 300 : 1000;
  } else {
    options.max_samples = quick ? 200 : 2000;
    options.time_limit_ms = quick ? 300 : 2000;
  }
  return options;
}

using kernels::VectorAddProblem;

// ---------------------------------------------------------------------------------------------
// bandwidth: vector_add across sizes
// ---------------------------------------------------------------------------------------------

RunPlan bandwidth_plan(const ExperimentOptions& options, const GpuSpec& spec) {
  // From launch-bound through L2-resident to DRAM-bound on a GPU; on sim the range stops where a
  // configuration would take seconds.
  const int first = on_sim() ? 10 : 16;
  const int last = on_sim() ? (options.quick ? 14 : 18) : (options.quick ? 22 : 28);
  RunPlan plan{"bandwidth sweep (vector_add)", {}};
  const Roofline roof = make_roofline(spec, Precision::fp32);
  for (int log2 = first; log2 <= last; log2 += 2) {
    const std::size_t n = std::size_t{1} << log2;
    plan.steps.push_back(RunStep{
        "vector_add n=2^" + std::to_string(log2),
        [n, roof, spec, quick = options.quick](std::stop_token) {
          const double bytes = 12.0 * static_cast<double>(n);  // read a and b, write c
          const double flops = static_cast<double>(n);
          Stream stream;
          VectorAddProblem problem(n);
          problem.verify(stream, 256);
          const Measurement m = measure([&](cudaStream_t s) { problem.launch(s, 256); }, stream,
                                        bench_options(quick));
          const double modeled_ms = roof.modeled_time_ms({flops, bytes});
          Result result{result_kind::vector_add, {{"n", std::to_string(n)}}, {}};
          result.metrics = {
              Metric::measured("bytes", bytes),
              Metric::timed("time_ms", m.summary.median_ms, event_clock(), spec.name),
              Metric::modeled("time_ms", modeled_ms, spec.name),
              Metric::timed("rel_noise_percent", m.summary.rel_noise * 100, event_clock(),
                            spec.name),
              Metric::timed("bandwidth_gb_s", bandwidth_gb_s(bytes, m.summary.median_ms),
                            event_clock(), spec.name),
              Metric::modeled("bandwidth_gb_s", bandwidth_gb_s(bytes, modeled_ms), spec.name)};
          result.samples_ms = m.samples_ms;
          return std::vector<Result>{std::move(result)};
        }});
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// components: the five attention components of one shape
// ---------------------------------------------------------------------------------------------

std::map<std::string, std::string> shape_params(const kernels::AttentionConfig& config) {
  return {{"batch", std::to_string(config.batch)},
          {"seq_len", std::to_string(config.seq_len)},
          {"d_model", std::to_string(config.d_model)},
          {"heads", std::to_string(config.heads)},
          {"causal", config.causal ? "true" : "false"}};
}

// The largest attention layer the components run takes: its CPU reference (double accumulation,
// a few GFLOP/s) checks every run first, and the sim runs each kernel about a thousand times
// slower than a GPU. Both keep a run to seconds.
constexpr double kMaxComponentsFlopCuda = 2e10;
constexpr double kMaxComponentsFlopSim = 2e8;

RunPlan components_plan(const ExperimentOptions& options, const GpuSpec& spec) {
  const kernels::AttentionConfig config = options.attention;
  config.validate();
  const double flops = kernels::forward_cost(config).flops;
  const double limit = on_sim() ? kMaxComponentsFlopSim : kMaxComponentsFlopCuda;
  if (flops > limit) {
    throw std::invalid_argument("this attention shape is " + format_fixed(flops / 1e9, 2) +
                                " GFLOP per forward pass; the live run takes up to " +
                                format_fixed(limit / 1e9, 2) + " GFLOP on the " +
                                std::string(backend_name()) +
                                " backend (its CPU reference checks every run): pick a "
                                "smaller seq_len, d_model or batch");
  }
  // Built by the first step (verification) and used by the five timing steps after it.
  struct State {
    std::unique_ptr<kernels::AttentionBuffers> buffers;
    std::unique_ptr<Stream> stream;
  };
  auto state = std::make_shared<State>();
  RunPlan plan{"attention components", {}};
  plan.steps.push_back(RunStep{
      "verify the forward pass", [config, state](std::stop_token) {
        const kernels::AttentionInputs inputs = kernels::make_attention_inputs(config, 1234);
        state->stream = std::make_unique<Stream>();
        state->buffers =
            std::make_unique<kernels::AttentionBuffers>(config, kernels::attention_workspace(0));
        kernels::upload(inputs, *state->buffers);
        // On the forward pass's stream, which does not wait for the legacy default stream a
        // plain fill_bytes would use.
        state->buffers->y.fill_bytes_async(0xff, *state->stream);
        kernels::attention_forward(config, *state->buffers, *state->stream);
        state->stream->synchronize();
        const std::vector<float> expected = kernels::attention_reference(config, inputs);
        const std::vector<float> got = state->buffers->y.to_vector();
        const CloseResult check =
            compare_close(expected, got, kernels::forward_tolerance(config, rms(expected)));
        if (!check.ok) {
          throw std::runtime_error("attention forward is wrong: " + check.message);
        }
        return std::vector<Result>{};
      }});
  const Roofline roof = make_roofline(spec, Precision::fp32);
  for (const kernels::Component component : kernels::all_components()) {
    const std::string name(kernels::component_name(component));
    plan.steps.push_back(RunStep{
        name, [config, component, name, state, roof, spec, quick = options.quick](std::stop_token) {
          const OpCost cost = kernels::component_cost(config, component);
          const Measurement m = measure(
              [&](cudaStream_t s) {
                kernels::run_component(component, config, *state->buffers, s);
              },
              *state->stream, bench_options(quick));
          std::map<std::string, std::string> params = shape_params(config);
          params["component"] = name;
          params["bound"] = std::string(to_string(roof.bound(cost)));
          Result result{result_kind::attention_component, std::move(params), {}};
          result.metrics = {
              Metric::timed("time_ms", m.summary.median_ms, event_clock(), spec.name),
              Metric::modeled("time_ms", roof.modeled_time_ms(cost), spec.name),
              Metric::measured("flop", cost.flops), Metric::measured("bytes", cost.bytes),
              Metric::measured("intensity_flop_per_byte", cost.intensity_flop_per_byte())};
          result.samples_ms = m.samples_ms;
          return std::vector<Result>{std::move(result)};
        }});
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// sweep: one kernel across block sizes
// ---------------------------------------------------------------------------------------------

// The kernels the sweep runs: the first kernel of every level of the catalog's ops whose levels
// take a block size (gpulab/kernels/catalog.hpp), in catalog order.
const std::vector<std::string_view>& sweep_kernel_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const kernels::Op& op : kernels::catalog()) {
      if (op.default_block == 0) {
        continue;
      }
      for (const kernels::OpLevel& level : op.levels) {
        out.push_back(level.kernels.front().name);
      }
    }
    return out;
  }();
  return names;
}

// The occupancy of the kernel at a block size on the spec, from the build's kernel table; the
// reason instead when it cannot be computed.
struct SweepOccupancy {
  std::optional<Occupancy> occupancy;
  std::string reason;
  int sm = 0;  // architecture of the figures, e.g. 90; the closest older one the build has
};

SweepOccupancy occupancy_at(const GpuSpec& spec, std::string_view kernel, int block_size,
                            std::uint64_t dynamic_shared_bytes) {
  const std::optional<KernelTableEntry> entry = find_kernel(kernel, spec.cc_major, spec.cc_minor);
  if (!entry) {
    const std::string_view status = kernel_table_status();
    return {std::nullopt, status.empty() ? "no figures for " + std::string(kernel) + " on CC " +
                                               spec.compute_capability() + " in this build"
                                         : std::string(status)};
  }
  try {
    return {compute_occupancy(spec, resources_of(*entry), block_size, dynamic_shared_bytes), "",
            entry->sm};
  } catch (const std::exception& e) {
    return {std::nullopt, e.what(), entry->sm};
  }
}

// The time modeled on `spec` from one launch's counted memory traffic (sim with counting, from a
// cold L2 as Nsight Compute measures): unlike the roofline it follows the block size, through
// occupancy (latency hiding) and the last wave. Empty on cuda and where the build cannot count.
template <class Launch>
std::optional<double> counted_model_ms(const Launch& launch, const GpuSpec& spec) {
#if GPULAB_BACKEND_SIM
  if (!sim::counting_available()) {
    return std::nullopt;
  }
  Stream stream;
  const std::vector<CountedLaunch> launches = sim::count_launches([&] {
    GPULAB_CHECK(sim::reset_modeled_l2(stream));
    launch(stream.get());
  });
  if (launches.size() != 1) {
    return std::nullopt;
  }
  return model_launch(launches.front(), spec).time_s * 1e3;
#else
  (void)launch;
  (void)spec;
  return std::nullopt;
#endif
}

RunPlan sweep_plan(const ExperimentOptions& options, const GpuSpec& spec) {
  const std::vector<std::string_view>& known = sweep_kernel_names();
  if (std::find(known.begin(), known.end(), options.sweep_kernel) == known.end()) {
    std::string names;
    for (const std::string_view name : known) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    throw std::invalid_argument("the block-size sweep cannot run " + options.sweep_kernel +
                                "; it runs " + names);
  }
  const kernels::KernelLevel where = kernels::find_kernel_level(options.sweep_kernel);
  const kernels::Op& op = *where.op;
  const std::size_t index = where.index;
  const std::uint64_t dynamic_shared = op.levels[index].dynamic_shared_bytes();
  const std::size_t n = std::size_t{1} << (on_sim() ? (options.quick ? 16 : 20) : 24);
  // Every multiple of 32 on a GPU; powers of two on sim, where each point takes a while.
  std::vector<int> block_sizes;
  for (int threads = 32; threads <= spec.max_threads_per_block;
       threads = on_sim() ? threads * 2 : threads + 32) {
    block_sizes.push_back(threads);
  }
  // Made by the first step, on the worker thread, and shared by the rest.
  auto problem = std::make_shared<std::unique_ptr<kernels::OpProblem>>();
  RunPlan plan{"block-size sweep (" + options.sweep_kernel + ")", {}};
  const Roofline roof = make_roofline(spec, Precision::fp32);
  for (const int threads : block_sizes) {
    plan.steps.push_back(
        RunStep{options.sweep_kernel + " " + std::to_string(threads) + " threads",
                [n, threads, problem, roof, spec, &op, index, dynamic_shared,
                 kernel = options.sweep_kernel, quick = options.quick](std::stop_token) {
                  if (!*problem) {
                    *problem = op.make_problem(n);
                  }
                  kernels::OpProblem& p = **problem;
                  const auto block = static_cast<unsigned>(threads);
                  Stream stream;
                  p.verify(index, stream, block);
                  const Measurement m = measure([&](cudaStream_t s) { p.launch(index, s, block); },
                                                stream, bench_options(quick));
                  Result result{result_kind::block_size_sweep,
                                {{"kernel", kernel},
                                 {"block_size", std::to_string(threads)},
                                 {"n", std::to_string(n)}},
                                {}};
                  result.metrics.push_back(
                      Metric::timed("time_ms", m.summary.median_ms, event_clock(), spec.name));
                  // On sim, the time modeled from the counted traffic, which the block size moves;
                  // else the roofline time, which it does not (the block size shows as occupancy
                  // and, on a GPU, as measured time).
                  const std::optional<double> counted =
                      counted_model_ms([&](cudaStream_t s) { p.launch(index, s, block); }, spec);
                  result.metrics.push_back(Metric::modeled(
                      "time_ms", counted.value_or(roof.modeled_time_ms(p.cost())), spec.name));
                  const SweepOccupancy occ = occupancy_at(spec, kernel, threads, dynamic_shared);
                  if (occ.occupancy) {
                    result.metrics.push_back(Metric::modeled(
                        "occupancy_percent", occ.occupancy->occupancy_fraction * 100, spec.name));
                    result.metrics.push_back(Metric::modeled(
                        "active_blocks", occ.occupancy->active_blocks_per_sm, spec.name));
                    result.params["limiter"] = std::string(to_string(occ.occupancy->limiter));
                    // Which ptxas figures: for a GPU newer than every built architecture, an
                    // estimate.
                    result.params["figures"] = "sm_" + std::to_string(occ.sm);
                  } else {
                    result.metrics.push_back(Metric::unavailable("occupancy_percent", occ.reason));
                  }
                  result.samples_ms = m.samples_ms;
                  return std::vector<Result>{std::move(result)};
                }});
  }
  return plan;
}

}  // namespace

std::string_view to_string(Experiment experiment) noexcept {
  switch (experiment) {
    case Experiment::bandwidth:
      return "bandwidth";
    case Experiment::components:
      return "components";
    case Experiment::sweep:
      return "sweep";
  }
  return "unknown";
}

std::span<const std::string_view> sweep_kernels() {
  return sweep_kernel_names();
}

RunPlan make_plan(Experiment experiment, const ExperimentOptions& options, const GpuSpec& spec) {
  switch (experiment) {
    case Experiment::bandwidth:
      return bandwidth_plan(options, spec);
    case Experiment::components:
      return components_plan(options, spec);
    case Experiment::sweep:
      return sweep_plan(options, spec);
  }
  throw std::invalid_argument("unknown experiment");
}

}  // namespace gpulab::viewer
