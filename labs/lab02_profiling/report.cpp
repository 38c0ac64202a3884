// `gpulab run lab02`: one attention layer profiled component by component with your
// profile_attention and printed with your format_profile, next to the roofline model of the same
// components on the context's GPU (--spec). Instructor-owned.
//   1  the configuration, and the forward pass checked against the CPU reference before anything
//      is timed (at a reduced sequence length when the full one would keep the CPU busy too long);
//   2  your profile table, then the output it left in y against the verified forward output, and
//      the end-to-end forward timed separately next to the sum of the components;
//   3  the model: each component at its FP32 roof on the spec, its modeled share, what bounds it,
//      and measured / modeled;
//   4  the Nsight Systems commands that show the same ranges on a timeline.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/labkit/lab_main.hpp"
#include "gpulab/labkit/modeled_bound.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "lab02.hpp"

namespace {

namespace kernels = gpulab::kernels;
namespace lab02 = gpulab::lab02;
using gpulab::Align;
using gpulab::format_fixed;
using gpulab::Metric;
using gpulab::Table;
using gpulab::labkit::LabContext;
using kernels::AttentionConfig;

// Command-line overrides; 0 = the backend's default.
int g_batch = 0;
int g_seq_len = 0;
int g_d_model = 0;
int g_heads = 0;
bool g_causal = false;

// Above this many FLOPs the double-precision CPU reference takes more than a second or two, so
// the check runs at a shorter sequence length of the same width instead (same kernels, same
// tiles along d_model and head_dim).
constexpr double kReferenceFlopLimit = 2e9;

// How close the sum of the component times and the end-to-end forward should be: the
// autograder's tolerance (tests/labs/lab02_profiling).
constexpr double kAgreement = 0.15;

AttentionConfig chosen_config(const LabContext& ctx) {
  AttentionConfig config;
  if (ctx.on_sim()) {  // the CPU simulation costs ~100 ns per thread: a small layer
    config =
        ctx.quick ? AttentionConfig{1, 64, 64, 2, false} : AttentionConfig{1, 128, 128, 4, false};
  } else {
    config = ctx.quick ? AttentionConfig{1, 512, 512, 8, false}
                       : AttentionConfig{1, 1024, 1024, 16, false};
  }
  config.batch = g_batch > 0 ? g_batch : config.batch;
  config.seq_len = g_seq_len > 0 ? g_seq_len : config.seq_len;
  config.d_model = g_d_model > 0 ? g_d_model : config.d_model;
  config.heads = g_heads > 0 ? g_heads : config.heads;
  config.causal = g_causal;
  config.validate();
  return config;
}

std::string describe(const AttentionConfig& c) {
  return "batch " + std::to_string(c.batch) + ", seq_len " + std::to_string(c.seq_len) +
         ", d_model " + std::to_string(c.d_model) + ", heads " + std::to_string(c.heads) +
         " (head_dim " + std::to_string(c.head_dim()) + "), " +
         (c.causal ? "causal" : "not causal");
}

std::map<std::string, std::string> params_of(const AttentionConfig& c) {
  return {{"batch", std::to_string(c.batch)},
          {"seq_len", std::to_string(c.seq_len)},
          {"d_model", std::to_string(c.d_model)},
          {"heads", std::to_string(c.heads)},
          {"causal", c.causal ? "true" : "false"}};
}

gpulab::BenchOptions bench_options(const LabContext& ctx) {
  gpulab::BenchOptions options;
  if (ctx.on_sim()) {  // CPU simulation: a few long samples show the shape
    options.warmup_runs = 1;
    options.min_samples = ctx.quick ? 3 : 5;
    options.min_time_ms = 0;
    options.target_rel_noise = 0.05;
    options.time_limit_ms = ctx.quick ? 1000 : 3000;
  } else if (ctx.quick) {
    options.min_time_ms = 10;
    options.time_limit_ms = 500;
  }
  return options;
}

// A config whose CPU reference stays under kReferenceFlopLimit: the config itself when it does,
// otherwise batch 1 and the sequence halved until it does.
AttentionConfig reference_config(const AttentionConfig& config) {
  if (kernels::forward_cost(config).flops <= kReferenceFlopLimit) {
    return config;
  }
  AttentionConfig reduced = config;
  reduced.batch = 1;
  while (reduced.seq_len > 1 && kernels::forward_cost(reduced).flops > kReferenceFlopLimit) {
    reduced.seq_len = std::max(1, reduced.seq_len / 2);
  }
  return reduced;
}

// The tolerance rule of the attention tests (tests/kernels/attention_test.cpp): fp32 error grows
// like sqrt(k) for a k-term sum, summed along the chain of five components, relative to
// |expected| + rms(expected).
double chain_rtol(const AttentionConfig& c) {
  const auto rtol = [](int k) { return 1e-5 * std::sqrt(static_cast<double>(k)); };
  return rtol(c.d_model) + rtol(c.head_dim()) + 2 * rtol(c.seq_len) + rtol(c.d_model);
}

// The largest error as a fraction of its tolerance (<= 1 passes); throws naming the first element
// beyond it.
double compare(const std::vector<float>& expected, const std::vector<float>& got, double rtol,
               const std::string& what) {
  if (expected.size() != got.size()) {
    throw std::runtime_error(what + ": expected " + std::to_string(expected.size()) +
                             " elements, got " + std::to_string(got.size()));
  }
  double squares = 0;
  for (const float e : expected) {
    squares += double(e) * double(e);
  }
  const double floor = expected.empty() ? 0.0 : std::sqrt(squares / double(expected.size()));
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double tolerance = rtol * (std::fabs(double(expected[i])) + floor);
    const double error = std::fabs(double(got[i]) - double(expected[i]));
    if (!(error <= tolerance)) {  // NaN fails: the poison of an element nobody wrote
      throw std::runtime_error(what + " at index " + std::to_string(i) + ": expected " +
                               std::to_string(expected[i]) + ", got " + std::to_string(got[i]) +
                               ", tolerance " + std::to_string(tolerance));
    }
    worst = std::max(worst, tolerance > 0 ? error / tolerance : 0.0);
  }
  return worst;
}

// On `stream`, the stream the kernels then run on: a gpulab::Stream does not wait for the legacy
// default stream, so a plain fill_bytes could land after (and over) their output.
void poison(kernels::AttentionBuffers& buffers, cudaStream_t stream) {
  for (gpulab::DeviceBuffer<float>* buffer :
       {&buffers.qkv, &buffers.scores, &buffers.probs, &buffers.attn, &buffers.y}) {
    buffer->fill_bytes_async(0xff, stream);  // NaN everywhere: an element nobody writes cannot pass
  }
}

// The forward output of `buffers` (inputs uploaded), computed from poisoned intermediates.
std::vector<float> forward_output(const AttentionConfig& config, kernels::AttentionBuffers& buffers,
                                  cudaStream_t stream) {
  poison(buffers, stream);
  kernels::attention_forward(config, buffers, stream);
  GPULAB_CHECK(cudaStreamSynchronize(stream));
  return buffers.y.to_vector();
}

constexpr unsigned kSeed = 2;

// 1: the kernels against the CPU reference, before anything is timed.
void verify(const AttentionConfig& config, const AttentionConfig& checked, std::ostream& out,
            cudaStream_t stream) {
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(checked, kSeed);
  kernels::AttentionBuffers buffers(checked, kernels::attention_workspace(0));
  kernels::upload(inputs, buffers);
  const std::vector<float> got = forward_output(checked, buffers, stream);
  const double worst = compare(kernels::attention_reference(checked, inputs), got,
                               chain_rtol(checked), "the forward pass against the CPU reference");
  if (checked.seq_len == config.seq_len && checked.batch == config.batch) {
    out << "verified: the forward output matches the CPU reference (" << got.size()
        << " elements; largest error " << format_fixed(worst * 100, 1) << "% of its tolerance)\n";
  } else {
    out << "verified: the forward output matches the CPU reference at batch 1, seq_len "
        << checked.seq_len << " (" << got.size() << " elements; largest error "
        << format_fixed(worst * 100, 1) << "% of its tolerance). The full size is not checked on "
        << "the CPU: its " << format_fixed(kernels::forward_cost(config).flops / 1e9, 1)
        << " GFLOP would take the double-precision reference too long; the same kernels run at "
        << "both sizes.\n";
  }
}

// On the modeled clock, the time model's bound of each component's longest kernel, in the order
// of kernels::all_components(); empty on other clocks.
std::vector<std::string> modeled_bounds(LabContext& ctx, const AttentionConfig& config,
                                        kernels::AttentionBuffers& buffers,
                                        gpulab::Stream& stream) {
  std::vector<std::string> bounds;
  if (ctx.clock != gpulab::TimingClock::modeled) {
    return bounds;
  }
  for (const kernels::Component c : kernels::all_components()) {
    const auto longest = gpulab::labkit::longest_modeled_launch(
        [&] {
          kernels::run_component(c, config, buffers, stream);
          stream.synchronize();
        },
        ctx.spec);
    bounds.push_back(longest ? longest->bound : "");
  }
  return bounds;
}

// 3: each component at its roof next to its measured time, and on the modeled clock the time
// model's bound of each (model_bounds).
void model_table(LabContext& ctx, const AttentionConfig& config, const lab02::Profile& profile,
                 const std::vector<std::string>& model_bounds) {
  std::ostream& out = *ctx.out;
  const gpulab::Roofline roof = gpulab::make_roofline(ctx.spec);
  const auto components = kernels::all_components();
  std::vector<double> modeled_ms;
  double modeled_total = 0;
  for (const kernels::Component c : components) {
    modeled_ms.push_back(roof.modeled_time_ms(kernels::component_cost(config, c)));
    modeled_total += modeled_ms.back();
  }
  out << "3. The roofline model of the same components on " << ctx.spec.name << " (FP32, "
      << format_fixed(roof.peak_flop_s / 1e12, 1) << " TFLOP/s, "
      << format_fixed(roof.bandwidth_bytes_s / 1e9, 0) << " GB/s, ridge "
      << format_fixed(roof.ridge_flop_per_byte(), 1) << " FLOP/B): each at its roof\n";
  std::vector<gpulab::Column> columns = {
      {"component", "", Align::left}, {ctx.measured_label(), "ms"}, {ctx.modeled_label(), "us"},
      {"modeled share", "%"},         {"intensity", "FLOP/B"},      {"bound", "", Align::left},
      {"timed / modeled", "x"}};
  if (!model_bounds.empty()) {
    columns.push_back({"modeled bound", "", Align::left});
  }
  Table table(columns);
  std::size_t modeled_bottleneck = 0;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const gpulab::OpCost cost = kernels::component_cost(config, components[i]);
    const lab02::ComponentTiming& timing = profile.components.at(i);
    const double share = modeled_ms[i] / modeled_total;
    const std::string bound(gpulab::to_string(roof.bound(cost)));
    if (modeled_ms[i] > modeled_ms[modeled_bottleneck]) {
      modeled_bottleneck = i;
    }
    std::vector<std::string> row = {timing.name,
                                    format_fixed(timing.time_ms, 4),
                                    format_fixed(modeled_ms[i] * 1e3, 2),
                                    format_fixed(share * 100, 1),
                                    format_fixed(cost.intensity_flop_per_byte(), 2),
                                    bound,
                                    format_fixed(timing.time_ms / modeled_ms[i], 1)};
    gpulab::Result result{gpulab::result_kind::attention_component, params_of(config), {}};
    result.params["component"] = timing.name;
    result.params["bound"] = bound;
    if (!model_bounds.empty()) {
      row.push_back(model_bounds[i]);
      result.params["model_bound"] = model_bounds[i];
    }
    table.add_row(std::move(row));
    result.metrics = {ctx.timed("time_ms", timing.time_ms),
                      Metric::modeled("time_ms", modeled_ms[i], ctx.spec.name),
                      ctx.timed("share_fraction", timing.share),
                      Metric::modeled("share_fraction", share, ctx.spec.name),
                      Metric::measured("flop", cost.flops),
                      Metric::measured("bytes", cost.bytes),
                      Metric::measured("intensity_flop_per_byte", cost.intensity_flop_per_byte()),
                      ctx.timed("gflop_s", timing.gflop_s),
                      ctx.timed("bandwidth_gb_s", timing.gb_s)};
    ctx.results.results.push_back(std::move(result));
  }
  std::vector<std::string> total = {"Total",
                                    format_fixed(profile.total_ms, 4),
                                    format_fixed(modeled_total * 1e3, 2),
                                    "100.0",
                                    "",
                                    "",
                                    format_fixed(profile.total_ms / modeled_total, 1)};
  if (!model_bounds.empty()) {
    total.emplace_back();
  }
  table.add_row(std::move(total));
  out << table;
  out << "Modeled bottleneck on " << ctx.spec.name << ": "
      << profile.components.at(modeled_bottleneck).name << " ("
      << format_fixed(modeled_ms[modeled_bottleneck] / modeled_total * 100, 1) << "%, "
      << gpulab::to_string(
             roof.bound(kernels::component_cost(config, components[modeled_bottleneck])))
      << ").\n";
  constexpr double kLaunchMs = 0.005;  // a launch costs a few microseconds on a GPU
  if (*std::max_element(modeled_ms.begin(), modeled_ms.end()) < kLaunchMs) {
    out << "Every modeled time here is below the few microseconds a launch costs: on a GPU this "
           "size is launch-bound, which the roofline ignores. The cuda default (--seq-len 1024 "
           "--d-model 1024 --heads 16) shows the model's picture.\n";
  }
  if (ctx.clock == gpulab::TimingClock::host) {
    out << "With the host clock, timed / modeled divides CPU time of the simulation by GPU time: "
           "it is how much slower the simulation is, not how efficient the kernels are, and the "
           "timed shares follow what the simulator spends per simulated thread and barrier, not "
           "FLOPs or bytes. The modeled column is what to read for a GPU; run on one to "
           "compare.\n";
  } else if (ctx.clock == gpulab::TimingClock::modeled) {
    out << "On sim the timed column comes from the modeled clock: each kernel's time modeled "
           "from the memory traffic its threads were counted making, plus a launch cost "
           "(docs/sim.md, section 10). timed / modeled is how far each component is from its "
           "roof by that model, and the Bottleneck line of your profile follows it, not the "
           "simulator's CPU time. The modeled bound is the time model's largest term for the "
           "component's longest kernel: what its threads were counted doing, where bound places "
           "its declared FLOPs and bytes. `gpulab profile lab02` shows the counts behind it; a "
           "GPU measures it.\n";
  } else {
    out << "measured / modeled is how far each kernel is from its roof (1.0 = at the roof). "
           "These are the unfused baseline kernels: 16 x 16 tiles on the FP32 CUDA cores, every "
           "intermediate through DRAM.\n";
  }
  out << "\n";
}

void report(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const AttentionConfig config = chosen_config(ctx);
  gpulab::Stream stream;

  out << "1. Attention forward, FP32: " << describe(config) << "\n";
  const AttentionConfig checked = reference_config(config);
  verify(config, checked, out, stream);
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(config, kSeed);
  kernels::AttentionBuffers buffers(config, kernels::attention_workspace(0));
  kernels::upload(inputs, buffers);
  out << "device buffers: " << gpulab::format_bytes(static_cast<double>(buffers.bytes()))
      << "; forward pass: " << format_fixed(kernels::forward_cost(config).flops / 1e9, 3)
      << " GFLOP, " << format_fixed(kernels::forward_cost(config).bytes / 1e6, 1)
      << " MB of DRAM traffic (analytic)\n\n";
  const std::vector<float> forward_y = forward_output(config, buffers, stream);

  const gpulab::BenchOptions options = bench_options(ctx);
  poison(buffers, stream);  // the profile must compute y itself
  const lab02::Profile profile = lab02::profile_attention(config, buffers, stream, options);
  if (profile.components.size() != kernels::all_components().size()) {
    throw std::runtime_error(
        "profile_attention returned " + std::to_string(profile.components.size()) +
        " components; the forward pass has " + std::to_string(kernels::all_components().size()));
  }
  const double worst =
      compare(forward_y, buffers.y.to_vector(), chain_rtol(config),
              "the output profile_attention left in y against the verified forward pass (run "
              "every component, in order, on the buffers given)");

  out << "2. Your profile (profile_attention, printed by format_profile); times: "
      << ctx.measured_label() << ", medians\n";
  out << lab02::format_profile(profile);
  out << "The output the profile left in y matches the verified forward pass (largest error "
      << format_fixed(worst * 100, 1) << "% of its tolerance).\n";
  const gpulab::Measurement forward = gpulab::measure(
      [&](cudaStream_t s) { kernels::attention_forward(config, buffers, s); }, stream, options);
  const double forward_ms = forward.summary.median_ms;
  const double apart = profile.total_ms / forward_ms - 1;
  out << "End-to-end forward, timed separately: " << format_fixed(forward_ms, 4)
      << " ms (median of " << forward.summary.count << "); the components sum to "
      << format_fixed(profile.total_ms, 4) << " ms, " << format_fixed(std::fabs(apart) * 100, 1)
      << "% " << (apart >= 0 ? "more" : "less") << ".";
  if (std::fabs(apart) <= kAgreement) {
    out << " They agree within " << format_fixed(kAgreement * 100, 0)
        << "% (the autograder's tolerance): the profile timed the same work as the forward.\n\n";
  } else if (ctx.clock == gpulab::TimingClock::host) {
    out << " More than " << format_fixed(kAgreement * 100, 0)
        << "% apart: times of the CPU simulation move with the load of the machine (other "
           "processes take CPU time from its threads); run again on an idle machine.\n\n";
  } else {
    out << " More than " << format_fixed(kAgreement * 100, 0)
        << "% apart. Timed one by one, every component pays its own launch (a few "
           "microseconds), while back to back the next launch overlaps the running kernel: at "
           "small sizes that alone makes the sum larger (try a larger --seq-len). A sum much "
           "smaller than the forward means a sample did not cover its component's kernel.\n\n";
  }

  model_table(ctx, config, profile, modeled_bounds(ctx, config, buffers, stream));

  const gpulab::Roofline roof = gpulab::make_roofline(ctx.spec);
  gpulab::Result whole{gpulab::result_kind::attention_forward, params_of(config), {}};
  whole.params["bottleneck"] = profile.components.at(profile.bottleneck).name;
  whole.metrics = {ctx.timed("time_ms", forward_ms),
                   Metric::modeled("time_ms", roof.modeled_time_ms(kernels::forward_cost(config)),
                                   ctx.spec.name),
                   ctx.timed("components_time_ms", profile.total_ms),
                   Metric::measured("flop", kernels::forward_cost(config).flops),
                   Metric::measured("bytes", kernels::forward_cost(config).bytes)};
  ctx.results.results.push_back(std::move(whole));

  const std::string program = "gpulab.lab02." + ctx.variant + ".run.cuda";
  out << "4. The same five ranges on a timeline, in Nsight Systems (cuda backend, on a machine "
         "with an NVIDIA GPU):\n"
      << "   nsys profile --trace=cuda,nvtx -o lab02 ./build/default/bin/" << program << "\n"
      << "   nsys stats --report nvtx_sum lab02.nsys-rep\n"
      << "The first records a timeline with one NVTX range per component over its kernels; the "
         "second lists the ranges with their total and average time.";
  if (ctx.on_sim()) {
    out << " This run is the sim backend: no GPU timeline to record.";
  }
  out << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::labkit::lab_main(
      argc, argv, GPULAB_LAB_INFO,
      [](CLI::App& app) {
        app.add_option("--batch", g_batch, "Sequences per batch (default 1)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--seq-len", g_seq_len,
                       "Tokens per sequence (default 1024 on cuda, 128 on sim; --quick 512 / 64)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--d-model", g_d_model,
                       "Model width (default 1024 on cuda, 128 on sim; --quick 512 / 64)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--heads", g_heads,
                       "Attention heads; must divide --d-model (default 16 on cuda, 4 on sim; "
                       "--quick 8 / 2)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_flag("--causal", g_causal, "Mask future tokens (causal attention)");
      },
      report);
}
