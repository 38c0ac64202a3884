// gpulab-bench.<backend>: `gpulab bench`'s program, one per backend. For one op of the kernel
// catalog (gpulab/kernels/catalog.hpp) it verifies every chosen level against the
// CPU reference, then times it with the benchmark harness (gpulab::measure), and prints a table:
// time, effective bandwidth and FLOP rate from the op's own work, the fraction of the roofline that
// work allows on the spec, and the speed-up over the first level timed. A level whose output is
// wrong is never timed. On sim, times come from the modeled clock (kernels modeled from their
// counted memory traffic on the spec, labelled so); on a GPU, from CUDA events.
//
//   gpulab-bench.<backend> [OP] [--level N] [--block N] [--size N] [--spec NAME] [--json FILE]
//                          [--quick]
//
// Without OP it lists the ops and their levels. Exit status: 0, 1 when a level failed its
// verification or the run failed, 2 on bad arguments.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/stream.hpp"

namespace {

namespace kernels = gpulab::kernels;

using gpulab::kFailure;
using gpulab::kSuccess;
using gpulab::kUsage;

struct Options {
  std::string op;
  std::optional<int> level;
  std::optional<unsigned> block;
  std::optional<std::size_t> size;
  std::string spec;
  std::string json;
  bool quick = false;
};

void list_ops(std::ostream& out) {
  out << "gpulab bench OP: the ops of the kernel catalog "
         "(gpulab/kernels/catalog.hpp) and their levels\n";
  for (const kernels::Op& op : kernels::catalog()) {
    out << "\n" << op.name << ": " << op.summary << "\n";
    out << "  size: " << op.size_means << " (default " << op.default_size << ", on sim "
        << op.sim_size << ")"
        << (op.default_block != 0
                ? "; --block: threads per block (default " + std::to_string(op.default_block) + ")"
                : std::string("; the levels fix their block shape"))
        << "\n";
    for (const kernels::OpLevel& level : op.levels) {
      out << "  level " << level.number << "  " << level.name << ": " << level.teaches << "\n";
    }
  }
}

// The harness's options: on the modeled clock every sample is the same, so a few do, and the
// launch that verified the level (the same launch on the same buffers, just before) is the only
// warm-up the modeled L2 needs.
gpulab::BenchOptions bench_options(gpulab::TimingClock clock, bool quick) {
  gpulab::BenchOptions options;
  if (clock == gpulab::TimingClock::modeled || quick) {
    options.warmup_runs = clock == gpulab::TimingClock::modeled ? 0 : 1;
    options.min_samples = 3;
    options.min_time_ms = 0;
  }
  return options;
}

int bench(const Options& options) {
  const kernels::Op* op = kernels::find_op(options.op);
  if (op == nullptr) {
    std::cerr << "gpulab bench: error: no op \"" << options.op << "\"; the catalog has "
              << kernels::op_names() << " (`gpulab bench` lists them)\n";
    return kUsage;
  }
  std::vector<std::size_t> indices;
  try {
    if (options.level) {
      indices.push_back(op->level_index(*options.level));
    } else {
      for (std::size_t i = 0; i < op->levels.size(); ++i) {
        indices.push_back(i);
      }
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "gpulab bench: error: " << e.what() << "\n";
    return kUsage;
  }
  if (options.block && op->default_block == 0) {
    std::cerr << "gpulab bench: error: " << op->name
              << "'s levels fix their own block shape; --block applies to ops whose levels take "
                 "one (see `gpulab bench`)\n";
    return kUsage;
  }
  if (options.block && (*options.block == 0 || *options.block > 1024)) {
    std::cerr << "gpulab bench: error: --block must be 1 to 1024 threads, not " << *options.block
              << "\n";
    return kUsage;
  }

  gpulab::DeviceContext context;
  try {
    context = gpulab::resolve_device_context(options.spec);
  } catch (const gpulab::UsageError& e) {
    std::cerr << "gpulab bench: error: " << e.what() << "\n";
    return kUsage;
  } catch (const std::runtime_error& e) {
    std::cerr << "gpulab bench: error: " << e.what() << "\n";
    return kFailure;
  }
  const std::string& backend = context.backend;
  const gpulab::DeviceInfo& device = context.device;
  const gpulab::GpuSpec& spec = context.spec;
  const gpulab::TimingClock clock = context.clock;
  const unsigned block = options.block.value_or(op->default_block);
  const std::size_t size =
      options.size.value_or(backend == "sim" ? op->sim_size : op->default_size);

  std::unique_ptr<kernels::OpProblem> problem;
  try {
    problem = op->make_problem(size);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gpulab bench: error: " << e.what() << "\n";
    return kUsage;
  }
  const gpulab::OpCost cost = problem->cost();
  const gpulab::Roofline roof = gpulab::make_roofline(spec, gpulab::Precision::fp32);
  const std::string time_label = gpulab::timing_label(clock, spec.name);

  std::cout << "gpulab bench " << op->name << ": " << op->summary << "\n";
  std::cout << "problem: " << problem->describe() << " (size " << size << ": " << op->size_means
            << "); its work: " << gpulab::format_fixed(cost.flops / 1e9, 3) << " GFLOP, "
            << gpulab::format_bytes(cost.bytes) << " read and written at least\n";
  if (block != 0) {
    std::cout << "block:   " << block << " threads\n";
  }
  std::cout << "backend: " << backend << " (" << device.name << "); times: " << time_label;
  if (clock == gpulab::TimingClock::host) {
    std::cout << ", CPU time of the simulation, NOT GPU time";
  }
  std::cout << "\nroofline: " << spec.name << ", fp32; each level is verified against the CPU "
            << "reference before it is timed\n\n";

  gpulab::ResultsFile results{gpulab::make_context(backend, device.name, spec.name), {}};
  results.context.clock = clock;
  gpulab::Table table({{"level", "", gpulab::Align::right},
                       {"name", "", gpulab::Align::left},
                       {"time", "ms"},
                       {"noise", "%"},
                       {"bandwidth", "GB/s"},
                       {"rate", "GFLOP/s"},
                       {"of roofline", "%"},
                       {"speed-up", "x"}});
  std::optional<double> first_ms;
  int failures = 0;
  int repeated = 0;  // levels whose sampling stopped at two equal samples
  gpulab::Stream stream;
  // Off a terminal every level's line is printed (no quiet time): one level can take minutes.
  gpulab::ProgressBar progress("gpulab bench " + std::string(op->name), indices.size(), stderr,
                               gpulab::is_terminal(stderr), std::chrono::milliseconds(0));
  for (const std::size_t index : indices) {
    const kernels::OpLevel& level = op->levels[index];
    progress.doing("level " + std::to_string(level.number) + " (" + std::string(level.name) +
                   "), size " + std::to_string(size) + ": verify, then time");
    try {
      problem->verify(index, stream, block);
    } catch (const std::runtime_error& e) {
      ++failures;
      std::cerr << "gpulab bench: WRONG, not timed: " << e.what() << "\n";
      table.add_row(
          {std::to_string(level.number), std::string(level.name), "WRONG", "", "", "", "", ""});
      progress.advance();
      continue;
    }
    const gpulab::Measurement m =
        gpulab::measure([&](cudaStream_t s) { problem->launch(index, s, block); }, stream,
                        bench_options(clock, options.quick));
    repeated += m.stop == gpulab::StopReason::repeated ? 1 : 0;
    const double ms = m.summary.median_ms;
    const double seconds = ms / 1e3;
    if (!first_ms) {
      first_ms = ms;
    }
    const double roofline_ms = roof.modeled_time_ms(cost);
    table.add_row({std::to_string(level.number), std::string(level.name),
                   gpulab::format_fixed(ms, 4), gpulab::format_fixed(m.summary.rel_noise * 100, 1),
                   gpulab::format_fixed(cost.bytes / seconds / 1e9, 1),
                   cost.flops > 0 ? gpulab::format_fixed(cost.flops / seconds / 1e9, 1) : "-",
                   gpulab::format_fixed(100 * roofline_ms / ms, 1),
                   gpulab::format_fixed(*first_ms / ms, 2)});
    gpulab::Result result{gpulab::result_kind::kernel_bench,
                          {{"op", std::string(op->name)},
                           {"level", std::to_string(level.number)},
                           {"level_name", std::string(level.name)},
                           {"size", std::to_string(size)},
                           {"block_size", std::to_string(block)},
                           {"problem", problem->describe()}},
                          {},
                          m.samples_ms};
    result.metrics.push_back(gpulab::Metric::timed("time_ms", ms, clock, spec.name));
    result.metrics.push_back(
        gpulab::Metric::timed("bandwidth_gb_s", cost.bytes / seconds / 1e9, clock, spec.name));
    result.metrics.push_back(gpulab::Metric::modeled("time_ms", roofline_ms, spec.name));
    results.results.push_back(std::move(result));
    progress.advance();
  }
  progress.finish();
  std::cout << table;
  std::cout << "\nbandwidth and rate: the op's own work (" << gpulab::format_bytes(cost.bytes)
            << ", " << gpulab::format_fixed(cost.flops / 1e9, 3)
            << " GFLOP) over the time; of roofline: the time that work needs at " << spec.name
            << "'s peaks over the time; speed-up: over the first level timed.\n";
  if (repeated > 0) {
    std::cout << "samples: the modeled clock gives a launch the same time every run, so "
              << (repeated == static_cast<int>(indices.size()) ? "each level" : "some levels")
              << " stopped at two equal samples after the launch that verified it.\n";
  }
  if (!options.json.empty()) {
    gpulab::save_results(options.json, results);
    std::cout << "results saved to " << options.json << "\n";
  }
  if (failures > 0) {
    std::cerr << "gpulab bench: " << failures << " level(s) gave a wrong result\n";
    return kFailure;
  }
  return kSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Verify, then time every level of one op of the kernel catalog.", "gpulab bench"};
  Options options;
  int level = 0;
  unsigned block = 0;
  std::size_t size = 0;
  app.add_option("OP", options.op, "The op (without it: list the ops and their levels)");
  CLI::Option* level_option =
      app.add_option("--level", level, "Only this level (default: every level)");
  CLI::Option* block_option = app.add_option(
      "--block", block, "Threads per block, for ops whose levels take one (e.g. vector_add)");
  CLI::Option* size_option = app.add_option(
      "--size", size, "Problem size (what it means depends on the op; `gpulab bench` lists it)");
  app.add_option("--spec", options.spec,
                 "GPU of the roofline and, on sim, the GPU simulated (see `gpulab specs`)");
  app.add_option("--json", options.json, "Also save the results to this JSON file");
  app.add_flag("--quick", options.quick, "Fewer samples");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpulab bench: error: %s (see --help)\n", e.what());
    return kUsage;
  }
  if (level_option->count() > 0) {
    options.level = level;
  }
  if (block_option->count() > 0) {
    options.block = block;
  }
  if (size_option->count() > 0) {
    options.size = size;
  }
  if (options.op.empty()) {
    list_ops(std::cout);
    return kSuccess;
  }
  try {
    return bench(options);
  } catch (const std::exception& e) {
    std::cerr << "gpulab bench: error: " << e.what() << "\n";
    return kFailure;
  }
}
