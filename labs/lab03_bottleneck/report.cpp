// Lab 03 report (`gpulab run lab03`): the roofline analysis of your bottleneck.cpp, for the GPU
// of the context (--spec):
//   1  op costs: FLOPs, bytes, intensity, ridge point, bound and roofline time of five ops, in
//      FP32 and at FP16 where the GPU has FP16 tensor cores;
//   2  attention profiles modeled at seq_len 512 to 8192 (d_model 1024, 16 heads, batch 1): the
//      time of every component, then the bottleneck, its share, bound and recommendation;
//   3  on cuda, a small attention layer measured component by component (verified against the
//      CPU reference first) and placed on the FP32 roofline; on sim timed with the modeled clock.
//      With the sim's host clock the times are CPU time of the simulation, which no GPU
//      roofline describes, so the report says so and stops.
// This file is the instructor's; the numbers come from the functions you implement.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
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
#include "gpulab/runtime/stream.hpp"
#include "lab03.hpp"

namespace {

namespace lab03 = gpulab::lab03;
namespace kernels = gpulab::kernels;
using gpulab::Align;
using gpulab::Column;
using gpulab::format_fixed;
using gpulab::Metric;
using gpulab::OpCost;
using gpulab::Precision;
using gpulab::Table;
using gpulab::labkit::LabContext;

// The attention layer of section 2 (the lab's checks use the same shape).
constexpr int kDModel = 1024;
constexpr int kHeads = 16;
constexpr int kSeqLens[] = {512, 1024, 2048, 4096, 8192};

// The precision of section 2, from --precision: the attention kernels store FP32, so FP32 (CUDA
// cores) or TF32 (tensor cores, FP32 storage) keep their byte counts right.
std::string g_attention_precision = "fp32";

std::string precision_label(Precision precision) {
  return std::string(gpulab::to_string(precision));
}

// ------------------------------------------------------------------------------------------------
// 1  Op costs on the roofline
// ------------------------------------------------------------------------------------------------

struct Op {
  std::string name;
  std::function<OpCost(Precision)> cost;
};

void op_table(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const std::vector<Op> ops = {
      {"GEMM 4096x4096x4096", [](Precision p) { return lab03::gemm_cost(4096, 4096, 4096, p); }},
      {"GEMM 4096x4096x64", [](Precision p) { return lab03::gemm_cost(4096, 4096, 64, p); }},
      {"softmax 4096x4096", [](Precision p) { return lab03::softmax_cost(4096, 4096, p); }},
      {"layernorm 4096x1024", [](Precision p) { return lab03::layernorm_cost(4096, 1024, p); }},
      {"vector add 2^26",
       [](Precision p) { return lab03::elementwise_cost(std::int64_t{1} << 26, 2, 1, p); }},
  };
  std::vector<Precision> precisions = {Precision::fp32};
  if (gpulab::peak_flop_s(ctx.spec, Precision::fp16) > 0) {
    precisions.push_back(Precision::fp16);
  }

  out << "1. Op costs, each op running at its roof: " << ctx.modeled_label() << "\n";
  for (const Precision precision : precisions) {
    const lab03::Roofline roof = lab03::roofline_for(ctx.spec, precision);
    const double ridge = lab03::ridge_point(roof);
    out << "\n"
        << precision_label(precision) << ": peak " << format_fixed(roof.peak_flop_s / 1e12, 1)
        << " TFLOP/s, bandwidth " << format_fixed(roof.bandwidth_bytes_s / 1e9, 0)
        << " GB/s, ridge point " << format_fixed(ridge, 2) << " FLOP/byte\n";
    Table table({{"op", "", Align::left},
                 {"work", "GFLOP"},
                 {"traffic", "MB"},
                 {"intensity", "FLOP/B"},
                 {"bound", "", Align::left},
                 {"attainable", "TFLOP/s"},
                 {"time", "us"}});
    for (const Op& op : ops) {
      const OpCost cost = op.cost(precision);
      const double time_ms = lab03::modeled_time_ms(cost, roof);
      // Placed at its own roof time: the placement says which roof that is.
      const lab03::Placement placement = lab03::place_on_roofline(cost, time_ms, roof);
      const std::string bound(lab03::to_string(placement.bound));
      table.add_row({op.name, format_fixed(cost.flops / 1e9, 3), format_fixed(cost.bytes / 1e6, 1),
                     format_fixed(placement.intensity_flop_per_byte, 2), bound,
                     format_fixed(placement.attainable_flop_s / 1e12, 2),
                     format_fixed(time_ms * 1e3, 1)});
      ctx.results.results.push_back(
          {gpulab::result_kind::op_cost,
           {{"op", op.name}, {"precision", precision_label(precision)}, {"bound", bound}},
           {Metric::modeled("work_gflop", cost.flops / 1e9, ctx.spec.name),
            Metric::modeled("bytes", cost.bytes, ctx.spec.name),
            Metric::modeled("intensity_flop_per_byte", placement.intensity_flop_per_byte,
                            ctx.spec.name),
            Metric::modeled("ridge_flop_per_byte", ridge, ctx.spec.name),
            Metric::modeled("attainable_tflop_s", placement.attainable_flop_s / 1e12,
                            ctx.spec.name),
            Metric::modeled("time_ms", time_ms, ctx.spec.name)}});
    }
    out << table;
  }
  if (precisions.size() > 1) {
    out << "At FP16 every op moves half the bytes. Only the GEMMs run on tensor cores; the other "
           "ops\nstay memory-bound, so for them only the halved bytes count.\n";
  }
  out << "\n";
}

// ------------------------------------------------------------------------------------------------
// 2  Modeled attention profiles
// ------------------------------------------------------------------------------------------------

lab03::OpKind kind_of(kernels::Component component) {
  return component == kernels::Component::softmax ? lab03::OpKind::softmax : lab03::OpKind::gemm;
}

void attention_profiles(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const Precision precision = gpulab::parse_precision(g_attention_precision).value();
  const lab03::Roofline roof = lab03::roofline_for(ctx.spec, precision);
  out << "2. Attention forward, unfused: d_model " << kDModel << ", " << kHeads
      << " heads, batch 1\n   " << ctx.modeled_label() << " at the " << precision_label(precision)
      << " roof; the kernels store FP32\n\n";

  // Component times per seq_len, then the bottleneck of each profile.
  std::vector<Column> columns = {{"component", "", Align::left}};
  for (const int seq_len : kSeqLens) {
    columns.push_back({"S=" + std::to_string(seq_len), "ms"});
  }
  Table times(columns);
  Table bottlenecks({{"seq_len", ""},
                     {"total", "ms"},
                     {"bottleneck", "", Align::left},
                     {"share", "%"},
                     {"bound", "", Align::left}});
  // ("Softmax, memory-bound", recommendation) in order of first appearance.
  std::vector<std::pair<std::string, std::string>> advice;
  std::string previous;  // the bottleneck at the previous seq_len
  int previous_seq_len = 0;
  std::vector<std::string> crossovers;

  std::vector<std::vector<std::string>> rows;
  for (const kernels::Component component : kernels::all_components()) {
    rows.push_back({std::string(kernels::component_name(component))});
  }
  for (const int seq_len : kSeqLens) {
    const kernels::AttentionConfig config{1, seq_len, kDModel, kHeads, false};
    std::vector<lab03::ComponentProfile> profile;
    double total_ms = 0;
    for (const kernels::Component component : kernels::all_components()) {
      const OpCost cost = kernels::component_cost(config, component);
      const double time_ms = lab03::modeled_time_ms(cost, roof);
      total_ms += time_ms;
      rows[profile.size()].push_back(format_fixed(time_ms, 3));
      profile.push_back(
          {std::string(kernels::component_name(component)), kind_of(component), time_ms, cost});
      ctx.results.results.push_back({gpulab::result_kind::attention_component,
                                     {{"seq_len", std::to_string(seq_len)},
                                      {"component", profile.back().name},
                                      {"precision", precision_label(precision)}},
                                     {Metric::modeled("time_ms", time_ms, ctx.spec.name)}});
    }
    const lab03::Bottleneck bottleneck = lab03::identify_bottleneck(profile, roof);
    const std::string bound(lab03::to_string(bottleneck.bound));
    bottlenecks.add_row({std::to_string(seq_len), format_fixed(total_ms, 3), bottleneck.name,
                         format_fixed(bottleneck.share * 100, 1), bound});
    const std::string which = bottleneck.name + ", " + bound;
    if (std::ranges::find(advice, which, &std::pair<std::string, std::string>::first) ==
        advice.end()) {
      advice.emplace_back(which, std::string(bottleneck.recommendation));
    }
    if (!previous.empty() && previous != bottleneck.name) {
      crossovers.push_back("from " + previous + " to " + bottleneck.name + " between S=" +
                           std::to_string(previous_seq_len) + " and S=" + std::to_string(seq_len));
    }
    previous = bottleneck.name;
    previous_seq_len = seq_len;
    ctx.results.results.push_back(
        {gpulab::result_kind::attention_bottleneck,
         {{"seq_len", std::to_string(seq_len)},
          {"precision", precision_label(precision)},
          {"component", bottleneck.name},
          {"bound", bound},
          {"recommendation", std::string(bottleneck.recommendation)}},
         {Metric::modeled("total_time_ms", total_ms, ctx.spec.name),
          Metric::modeled("share_percent", bottleneck.share * 100, ctx.spec.name)}});
  }
  for (std::vector<std::string>& row : rows) {
    times.add_row(std::move(row));
  }
  out << times << "\n" << bottlenecks << "\nWhat to do:\n";
  for (const auto& [which, recommendation] : advice) {
    out << "  " << which << ":\n    " << recommendation << "\n";
  }
  if (crossovers.empty()) {
    out << "\n" << previous << " is the bottleneck at every length on this roof.\n\n";
  } else {
    out << "\nThe bottleneck moves:";
    for (const std::string& crossover : crossovers) {
      out << "\n  " << crossover;
    }
    out << "\nThe projections grow with S, the S x S score and softmax matrices with S^2.\n\n";
  }
}

// ------------------------------------------------------------------------------------------------
// 3  A measured profile (cuda only)
// ------------------------------------------------------------------------------------------------

double rms(const std::vector<float>& values) {
  double sum = 0;
  for (const float value : values) {
    sum += static_cast<double>(value) * static_cast<double>(value);
  }
  return values.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(values.size()));
}

// Verify before timing: y against the CPU reference, with the tolerance of the kernels' tests
// (1e-5 * sqrt(k) per component, summed over the chain, relative to |y| + rms(y)).
void verify(const kernels::AttentionConfig& config, const kernels::AttentionInputs& inputs,
            const std::vector<float>& got) {
  const std::vector<float> expected = kernels::attention_reference(config, inputs);
  double relative = 0;
  for (const int k :
       {config.d_model, config.head_dim(), config.seq_len, config.seq_len, config.d_model}) {
    relative += 1e-5 * std::sqrt(static_cast<double>(k));
  }
  const double floor = rms(expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double want = static_cast<double>(expected[i]);
    const double tolerance = relative * (std::fabs(want) + floor);
    if (!(std::fabs(static_cast<double>(got[i]) - want) <= tolerance)) {
      throw std::runtime_error("attention output differs from the CPU reference at index " +
                               std::to_string(i) + ": expected " + std::to_string(want) + ", got " +
                               std::to_string(got[i]) + ", tolerance " + std::to_string(tolerance) +
                               "; not timing a wrong result");
    }
  }
}

void measured_profile(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  if (ctx.clock == gpulab::TimingClock::host) {
    out << "3. Measured profile: skipped. CPU time of the simulation (the sim's host clock) "
           "cannot be placed\n   on a GPU roofline, so only the modeled analysis above is "
           "shown.\n";
    return;
  }
  // On sim (the modeled clock) the small layer: the CPU simulates every thread.
  const kernels::AttentionConfig config = ctx.quick || ctx.on_sim()
                                              ? kernels::AttentionConfig{1, 128, 128, 4, false}
                                              : kernels::AttentionConfig{1, 512, 512, 8, false};
  const lab03::Roofline roof = lab03::roofline_for(ctx.spec, Precision::fp32);
  out << "3. Measured attention profile, seq_len " << config.seq_len << ", d_model "
      << config.d_model << ", " << config.heads << " heads\n   " << ctx.measured_label()
      << ", placed on the " << ctx.spec.name << " FP32 roof (the kernels use CUDA cores)\n\n";

  kernels::AttentionBuffers buffers(config, kernels::attention_workspace(0));
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(config, 3);
  kernels::upload(inputs, buffers);
  gpulab::Stream stream;
  kernels::attention_forward(config, buffers, stream);
  stream.synchronize();
  verify(config, inputs, buffers.y.to_vector());

  gpulab::BenchOptions options;
  if (ctx.on_sim()) {  // the modeled clock has no noise: a few samples, no minimum time
    options.warmup_runs = 1;
    options.min_samples = 3;
    options.min_time_ms = 0;
  } else if (ctx.quick) {
    options.min_samples = 5;
    options.min_time_ms = 5;
    options.time_limit_ms = 500;
  }
  std::vector<lab03::ComponentProfile> profile;
  std::vector<std::string> model_bounds;  // on the modeled clock: the time model's bound of each
  for (const kernels::Component component : kernels::all_components()) {
    const auto run = [&](cudaStream_t s) { kernels::run_component(component, config, buffers, s); };
    const gpulab::Measurement m = gpulab::measure(run, stream, options);
    profile.push_back({std::string(kernels::component_name(component)), kind_of(component),
                       m.summary.median_ms, kernels::component_cost(config, component)});
    if (ctx.clock == gpulab::TimingClock::modeled) {
      const auto longest = gpulab::labkit::longest_modeled_launch(
          [&] {
            run(stream);
            stream.synchronize();
          },
          ctx.spec);
      model_bounds.push_back(longest ? longest->bound : "");
    }
  }

  std::vector<gpulab::Column> columns = {{"component", "", Align::left},
                                         {ctx.measured_label(), "us"},
                                         {"roof time", "us"},
                                         {"achieved", "GFLOP/s"},
                                         {"of roof", "%"},
                                         {"bound", "", Align::left}};
  if (!model_bounds.empty()) {
    columns.push_back({"modeled bound", "", Align::left});
  }
  Table table(columns);
  for (std::size_t i = 0; i < profile.size(); ++i) {
    const lab03::ComponentProfile& component = profile[i];
    const lab03::Placement placement =
        lab03::place_on_roofline(component.cost, component.time_ms, roof);
    const double roof_ms = lab03::modeled_time_ms(component.cost, roof);
    std::vector<std::string> row = {component.name,
                                    format_fixed(component.time_ms * 1e3, 2),
                                    format_fixed(roof_ms * 1e3, 2),
                                    format_fixed(placement.achieved_flop_s / 1e9, 1),
                                    format_fixed(placement.fraction_of_roof * 100, 1),
                                    std::string(lab03::to_string(placement.bound))};
    gpulab::Result result{"measured_component",
                          {{"seq_len", std::to_string(config.seq_len)},
                           {"d_model", std::to_string(config.d_model)},
                           {"heads", std::to_string(config.heads)},
                           {"component", component.name}},
                          {ctx.timed("time_ms", component.time_ms),
                           Metric::modeled("time_ms", roof_ms, ctx.spec.name),
                           ctx.timed("achieved_gflop_s", placement.achieved_flop_s / 1e9),
                           ctx.timed("roof_percent", placement.fraction_of_roof * 100)}};
    if (!model_bounds.empty()) {
      row.push_back(model_bounds[i]);
      result.params["model_bound"] = model_bounds[i];
    }
    table.add_row(std::move(row));
    ctx.results.results.push_back(std::move(result));
  }
  const lab03::Bottleneck bottleneck = lab03::identify_bottleneck(profile, roof);
  out << table;
  if (!model_bounds.empty()) {
    out << "bound: where your place_on_roofline puts the component's declared FLOPs and bytes; "
           "modeled bound: the term of the sim's time model (docs/sim.md) that sets its longest "
           "kernel's time, from what its threads were counted doing. `gpulab profile lab03` "
           "shows the counts behind it.\n";
  }
  out << "\nBottleneck: " << bottleneck.name << ", " << format_fixed(bottleneck.share * 100, 1)
      << "% of the time, " << lab03::to_string(bottleneck.bound) << ".\nWhat to do:\n  "
      << bottleneck.recommendation << "\n";
}

void add_options(CLI::App& app) {
  app.add_option("--precision", g_attention_precision,
                 "Roof of the attention profiles: fp32 (CUDA cores) or tf32 (tensor cores); the "
                 "kernels store FP32 either way")
      ->check(CLI::IsMember({"fp32", "tf32"}, CLI::ignore_case));
}

void report(LabContext& ctx) {
  op_table(ctx);
  attention_profiles(ctx);
  measured_profile(ctx);
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::labkit::lab_main(argc, argv, GPULAB_LAB_INFO, add_options, report);
}
