// `gpulab run lab04`: one attention layer at every optimization level, through your
// optimize_attention. Instructor-owned.
//   1  the configuration, and every level's output checked against the CPU reference before it
//      is timed (its first run at the full size; all levels first at a shorter sequence when the
//      full one would keep the CPU busy);
//   2  the level table: time (measured on a GPU; on sim the modeled clock, from counted traffic),
//      speed-up over level 0, the device memory the level held, its DRAM bytes (counted on sim,
//      analytic on a GPU) and its bottleneck on the roofline (lab 03);
//   3  memory against sequence length: the buffers each level needs, from 256 to 16384 tokens,
//      and the fitted growth exponent.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/numeric.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/labkit/lab_main.hpp"
#include "gpulab/labkit/modeled_bound.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "lab04.hpp"

#if !GPULAB_BACKEND_CUDA
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

namespace kernels = gpulab::kernels;
namespace lab04 = gpulab::lab04;
using gpulab::Align;
using gpulab::format_bytes;
using gpulab::format_fixed;
using gpulab::Metric;
using gpulab::Table;
using gpulab::labkit::LabContext;
using kernels::AttentionConfig;

constexpr int kLevels = 5;
constexpr const char* kLevelNames[kLevels] = {"unfused", "fused softmax", "cuBLAS", "flash",
                                              "flash, tensor cores"};

// Command-line overrides; 0 = the backend's default.
int g_seq_len = 0;
int g_d_model = 0;
int g_heads = 0;
bool g_causal = false;

// Above this many FLOPs the double-precision CPU reference takes more than a second or two.
constexpr double kReferenceFlopLimit = 2e9;
constexpr unsigned kSeed = 2;

AttentionConfig chosen_config(const LabContext& ctx) {
  AttentionConfig config;
  if (ctx.on_sim()) {
    // The smallest layer whose levels order on the modeled clock as on a GPU (1 over 0, 3 over 1,
    // 4 over 3): 8 heads of 512 tokens give the fused level 256 blocks of 4 warps for the modeled
    // H100's 132 SMs. With 4 heads its 128 blocks leave each scheduler one warp, which waits on its
    // own dependent instructions (docs/sim.md, section 10), and level 1 comes out slower than
    // level 0. About 20 s of simulation on a 2-core machine.
    config =
        ctx.quick ? AttentionConfig{1, 64, 64, 1, false} : AttentionConfig{1, 512, 256, 8, false};
  } else {
    config = ctx.quick ? AttentionConfig{1, 1024, 512, 8, false}
                       : AttentionConfig{1, 4096, 1024, 16, false};
  }
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

std::map<std::string, std::string> params_of(const AttentionConfig& c, int level) {
  return {{"seq_len", std::to_string(c.seq_len)}, {"d_model", std::to_string(c.d_model)},
          {"heads", std::to_string(c.heads)},     {"causal", c.causal ? "true" : "false"},
          {"level", std::to_string(level)},       {"level_name", kLevelNames[level]}};
}

gpulab::BenchOptions bench_options(const LabContext& ctx) {
  gpulab::BenchOptions options;
  if (ctx.on_sim()) {  // the modeled clock gives the same time every run: a few samples
    options.warmup_runs = 1;
    options.min_samples = 3;
    options.min_time_ms = 0;
    options.time_limit_ms = ctx.quick ? 2000 : 10000;
  } else if (ctx.quick) {
    options.min_time_ms = 10;
    options.time_limit_ms = 500;
  }
  return options;
}

// Whether level `level` can run `config` (level 4 tiles the head dimension by 16).
bool runs(int level, const AttentionConfig& config) {
  const int dh = config.head_dim();
  return level == 0 || level == 2 || (dh <= lab04::kMaxHeadDim && (level != 4 || dh % 16 == 0));
}

// The analytic DRAM bytes of a level, each tensor read or written once in its precision
// (fp32 4 bytes, fp16 2): the projections of every level, plus
//   L0      the three core components (kernels::component_cost): S x S scores and probs each
//           written and read
//   L1, L2  Q and K read, the scores written and read once, V read, attn written
//   L3      Q, K, V read and attn written once
//   L4      the FP16 conversion (qkv read in FP32, written in FP16), then Q, K, V read in FP16
//           and attn written in FP32
gpulab::OpCost level_cost(const AttentionConfig& c, int level) {
  const gpulab::OpCost whole = kernels::forward_cost(c);
  const double projections =
      kernels::component_cost(c, kernels::Component::qkv_projection).bytes +
      kernels::component_cost(c, kernels::Component::output_projection).bytes;
  const double bsd = double(c.batch) * c.seq_len * c.d_model;
  const double s2 = double(c.batch) * c.heads * c.seq_len * c.seq_len;
  double bytes = whole.bytes;
  if (level == 1 || level == 2) {
    bytes = projections + 4 * (2 * bsd + s2) + 4 * (s2 + 2 * bsd);
  } else if (level == 3) {
    bytes = projections + 4 * 4 * bsd;
  } else if (level == 4) {
    bytes = projections + (4 + 2) * 3 * bsd + 2 * 3 * bsd + 4 * bsd;
  }
  return {whole.flops, bytes};
}

// One level at `config`: its output (checked by the caller), time, memory and DRAM bytes.
struct LevelRun {
  int level = 0;
  std::vector<float> y;
  gpulab::Summary time;
  double memory_bytes = 0;  // device memory held while it ran, buffers included
  double dram_bytes = -1;   // counted on sim; -1 where nothing counted
  // On sim, the time model's bound of the level's launch it gives the most time, and that kernel.
  std::string model_bound;
  std::string longest_kernel;
};

// The CPU reference's output, when the levels are checked at the full size.
struct Reference {
  std::vector<float> y;
  double scale = 0;  // its RMS
};

// Throws when `y`, level `level`'s output at `config`, is not `expected`'s.
void check_level(const AttentionConfig& config, int level, const Reference& expected,
                 const std::vector<float>& y) {
  const gpulab::CloseResult comparison =
      gpulab::compare_close(expected.y, y, kernels::level_tolerance(config, level, expected.scale));
  if (!comparison.ok) {
    throw std::runtime_error("level " + std::to_string(level) + " (" + kLevelNames[level] +
                             ") does not match the CPU reference: " + comparison.message);
  }
}

// Runs level `level` at `config` and times it; with `expected`, its output is checked first.
LevelRun run_level(const LabContext& ctx, int level, const AttentionConfig& config,
                   const kernels::AttentionInputs& inputs, const Reference* expected,
                   gpulab::Stream& stream) {
  LevelRun run;
  run.level = level;
  GPULAB_CHECK(cudaDeviceSynchronize());
#if GPULAB_BACKEND_CUDA
  std::size_t free_before = 0;
  std::size_t total = 0;
  GPULAB_CHECK(cudaMemGetInfo(&free_before, &total));
#else
  gpulab::reset_peak_memory_stats();  // on sim every cudaMalloc is accounted
  const std::size_t before = gpulab::memory_stats().allocated_bytes;
#endif
  kernels::AttentionBuffers buffers(config, kernels::attention_workspace(level));
  kernels::upload(inputs, buffers);
  buffers.y.fill_bytes(0xff);  // NaN: an output nobody wrote cannot pass
  const auto run_once = [&] {
    lab04::optimize_attention(config, buffers, level, stream);
    stream.synchronize();
  };
  gpulab::BenchOptions options = bench_options(ctx);
#if GPULAB_BACKEND_CUDA
  run_once();
  std::size_t free_after = 0;
  GPULAB_CHECK(cudaMemGetInfo(&free_after, &total));
  run.memory_bytes = std::max(static_cast<double>(buffers.bytes()),
                              static_cast<double>(free_before) - static_cast<double>(free_after));
#else
  // The run that gives the output is counted from an empty L2: its DRAM bytes.
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2(stream));
  if (const auto longest = gpulab::labkit::longest_modeled_launch(run_once, ctx.spec)) {
    run.dram_bytes = longest->dram_bytes;
    run.model_bound = longest->bound;
    run.longest_kernel = longest->kernel;
  }
  // That run was the samples' warm-up (the same launch on the same buffers): the sim has no
  // module load or clocks to settle, and its modeled L2 is now warm.
  options.warmup_runs = 0;
  run.memory_bytes = static_cast<double>(gpulab::memory_stats().peak_allocated_bytes - before);
#endif
  run.y = buffers.y.to_vector();
  if (expected != nullptr) {
    check_level(config, level, *expected, run.y);  // before it is timed
  }
  run.time =
      gpulab::measure([&](cudaStream_t s) { lab04::optimize_attention(config, buffers, level, s); },
                      stream, options)
          .summary;
  return run;
}

// Section 1's line that says which levels matched the CPU reference, and at which size.
void print_checked(std::ostream& out, const AttentionConfig& config,
                   const AttentionConfig& checked) {
  out << "verified against the CPU reference";
  if (checked.seq_len != config.seq_len) {
    out << " at seq_len " << checked.seq_len << " (the full size would take the double-precision "
        << "reference too long; the same kernels run at both sizes)";
  }
  out << ":";
  for (int level = 0; level < kLevels; ++level) {
    if (runs(level, checked)) {
      out << " level " << level << " ok;";
    }
  }
  out << "\n";
}

Reference reference_of(const AttentionConfig& config, const kernels::AttentionInputs& inputs) {
  Reference expected{kernels::attention_reference(config, inputs)};
  expected.scale = gpulab::rms(expected.y);
  return expected;
}

// 1 at a shorter sequence: every level's y against the CPU reference at `checked`.
void verify(const AttentionConfig& checked, gpulab::Stream& stream) {
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(checked, kSeed);
  const Reference expected = reference_of(checked, inputs);
  for (int level = 0; level < kLevels; ++level) {
    if (!runs(level, checked)) {
      continue;
    }
    kernels::AttentionBuffers buffers(checked, kernels::attention_workspace(level));
    kernels::upload(inputs, buffers);
    buffers.y.fill_bytes(0xff);
    lab04::optimize_attention(checked, buffers, level, stream);
    stream.synchronize();
    check_level(checked, level, expected, buffers.y.to_vector());
  }
}

// The levels that run at `config`, each checked against `expected` (when given) before it is
// timed.
std::vector<LevelRun> run_levels(const LabContext& ctx, const AttentionConfig& config,
                                 const kernels::AttentionInputs& inputs, const Reference* expected,
                                 gpulab::Stream& stream) {
  std::vector<LevelRun> runs_done;
  gpulab::ProgressBar progress("lab04 levels", kLevels);
  for (int level = 0; level < kLevels; ++level) {
    if (runs(level, config)) {
      progress.doing("level " + std::to_string(level) + " (" + kLevelNames[level] + "), seq_len " +
                     std::to_string(config.seq_len) + ", " + std::to_string(config.heads) +
                     " heads: run" + (expected != nullptr ? ", check" : "") + ", count, time");
      runs_done.push_back(run_level(ctx, level, config, inputs, expected, stream));
    }
    progress.advance();
  }
  progress.finish();
  return runs_done;
}

// 2: the level table.
void level_table(LabContext& ctx, const AttentionConfig& config,
                 const std::vector<LevelRun>& runs_done) {
  std::ostream& out = *ctx.out;
  const LevelRun& baseline = runs_done.front();
  const double scale = gpulab::rms(baseline.y);
  const bool counted = baseline.dram_bytes >= 0;
  out << "2. The levels, " << describe(config) << "; times: " << ctx.measured_label()
      << ", medians\n";
  std::vector<gpulab::Column> columns = {
      {"level", "", Align::left},
      {"time", "ms"},
      {"speed-up", "x L0"},
      {"device memory", "", Align::right},
      {counted ? "DRAM (counted)" : "DRAM (analytic)", "", Align::right},
      {"bound on " + ctx.spec.name, "", Align::left}};
  if (counted) {
    columns.push_back({"modeled bound", "", Align::left});
  }
  Table table(columns);
  for (const LevelRun& run : runs_done) {
    if (run.level != 0) {  // the timed levels agree with level 0, already checked against the CPU
      const gpulab::CloseResult comparison =
          gpulab::compare_close(baseline.y, run.y,
                                kernels::level_tolerance(config, run.level, scale) +
                                    kernels::level_tolerance(config, 0, scale));
      if (!comparison.ok) {
        throw std::runtime_error("level " + std::to_string(run.level) +
                                 " disagrees with level 0 at the full size: " + comparison.message);
      }
    }
    const gpulab::OpCost cost = level_cost(config, run.level);
    const double dram = counted ? run.dram_bytes : cost.bytes;
    const gpulab::Roofline roof = gpulab::make_roofline(
        ctx.spec, run.level == 4 ? gpulab::Precision::fp16 : gpulab::Precision::fp32);
    const std::string bound(gpulab::to_string(roof.bound({cost.flops, dram})));
    std::vector<std::string> row = {std::to_string(run.level) + " " + kLevelNames[run.level],
                                    format_fixed(run.time.median_ms, 4),
                                    format_fixed(baseline.time.median_ms / run.time.median_ms, 2),
                                    format_bytes(run.memory_bytes),
                                    format_bytes(dram),
                                    bound};
    gpulab::Result result{gpulab::result_kind::attention_level, params_of(config, run.level), {}};
    result.params["bound"] = bound;
    if (counted) {
      row.push_back(run.model_bound);
      result.params["model_bound"] = run.model_bound;
      result.params["longest_kernel"] = run.longest_kernel;
    }
    table.add_row(row);
    result.metrics = {ctx.timed("time_ms", run.time.median_ms),
                      ctx.timed("speedup_ratio", baseline.time.median_ms / run.time.median_ms),
                      Metric::measured("memory_bytes", run.memory_bytes),
                      counted ? Metric{"dram_bytes", dram, gpulab::Provenance::counted, {}, {}}
                              : Metric::modeled("dram_bytes", dram, ctx.spec.name)};
    ctx.results.results.push_back(std::move(result));
  }
  out << table;
  if (ctx.clock == gpulab::TimingClock::modeled) {
    out << "On sim, time is the modeled clock: each kernel's time modeled on " << ctx.spec.name
        << " from the memory traffic and instructions it was counted making (docs/sim.md, "
           "section 10): FP32 arithmetic at the FP32 pipes' rate, level 4's tensor-core FLOPs at "
           "the tensor cores' peak. The instructions counted are the source's operations, not "
           "nvcc's machine code: compare the levels with each other, not with a GPU's times.\n";
  } else if (ctx.clock == gpulab::TimingClock::host) {
    out << "These times are CPU time of the simulation, not a GPU's: compare the DRAM and memory "
           "columns, or run with the modeled clock.\n";
  }
  out << "The bound is lab 03's roofline placement of the level's FLOPs (FP16 tensor cores for "
         "level 4, FP32 otherwise) and DRAM bytes.";
  if (counted) {
    out << " The modeled bound is the time model's largest term (docs/sim.md, section 10) for the "
           "level's kernel it gives the most time:";
    for (const LevelRun& run : runs_done) {
      out << (run.level == runs_done.front().level ? " " : ", ") << run.level << " "
          << run.longest_kernel;
    }
    out << ".";
  }
  out << "\n\n";
}

// 3: the buffers each level needs against the sequence length, and how fast they grow.
void memory_table(LabContext& ctx, const AttentionConfig& config) {
  std::ostream& out = *ctx.out;
  out << "3. Device memory each level needs against seq_len (d_model " << config.d_model << ", "
      << config.heads << " heads): its AttentionBuffers\n";
  const std::vector<double> lengths = {256, 1024, 4096, 16384};
  std::vector<gpulab::Column> columns = {{"seq_len", "", Align::right}};
  std::vector<std::vector<double>> bytes(kLevels);
  for (int level = 0; level < kLevels; ++level) {
    columns.push_back({"L" + std::to_string(level), "", Align::right});
    for (const double s : lengths) {
      AttentionConfig at = config;
      at.seq_len = static_cast<int>(s);
      bytes[level].push_back(static_cast<double>(
          kernels::AttentionBuffers::bytes_for(at, kernels::attention_workspace(level))));
      gpulab::Result result{gpulab::result_kind::attention_level_memory, params_of(at, level), {}};
      result.metrics = {Metric::modeled("memory_bytes", bytes[level].back(), ctx.spec.name)};
      ctx.results.results.push_back(std::move(result));
    }
  }
  Table table(columns);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    std::vector<std::string> row = {format_fixed(lengths[i], 0)};
    for (int level = 0; level < kLevels; ++level) {
      row.push_back(format_bytes(bytes[level][i]));
    }
    table.add_row(row);
  }
  std::vector<std::string> growth = {"exponent"};
  for (int level = 0; level < kLevels; ++level) {
    growth.push_back(format_fixed(gpulab::growth_exponent(lengths, bytes[level]), 2));
  }
  table.add_row(growth);
  out << table;
  out << "exponent: memory ~ seq_len^exponent, fitted over these lengths. Levels 0 to 2 hold "
         "S x S tensors (per head and sequence): 4x the memory for 2x the tokens. Flash "
         "attention (3, 4) holds only O(S x d_model): 2x for 2x.\n";
}

void report(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const AttentionConfig config = chosen_config(ctx);
  gpulab::Stream stream;
  out << "1. Attention forward at five optimization levels: " << describe(config) << "\n";
  AttentionConfig checked = config;
  while (checked.seq_len > 1 && kernels::forward_cost(checked).flops > kReferenceFlopLimit) {
    checked.seq_len = std::max(1, checked.seq_len / 2);
  }
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(config, kSeed);
  std::vector<LevelRun> runs_done;
  if (checked.seq_len == config.seq_len) {
    // Each level's first run at the full size is checked, before it is timed.
    const Reference expected = reference_of(config, inputs);
    runs_done = run_levels(ctx, config, inputs, &expected, stream);
  } else {
    verify(checked, stream);
    runs_done = run_levels(ctx, config, inputs, nullptr, stream);
  }
  print_checked(out, config, checked);
  if (!runs(4, config)) {
    out << "Level 4 is left out: head_dim " << config.head_dim()
        << " is not a multiple of 16 up to " << lab04::kMaxHeadDim << ".\n";
  }
  out << "\n";
  level_table(ctx, config, runs_done);
  memory_table(ctx, config);
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::labkit::lab_main(
      argc, argv, GPULAB_LAB_INFO,
      [](CLI::App& app) {
        app.add_option("--seq-len", g_seq_len,
                       "Tokens per sequence (default 4096 on cuda, 512 on sim; --quick 1024 / 64)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--d-model", g_d_model,
                       "Model width (default 1024 on cuda, 256 on sim; --quick 512 / 64)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_option("--heads", g_heads,
                       "Attention heads; must divide --d-model (default 16 on cuda, 8 on sim; "
                       "--quick 8 / 1)")
            ->check(CLI::Range(1, 1 << 20));
        app.add_flag("--causal", g_causal, "Mask future tokens (causal attention)");
      },
      report);
}
