// `gpulab run lab01`: vector add timed with your time_kernel across sizes, and the three classic
// timing mistakes next to the correct measurement. Instructor-owned.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/labkit/lab_main.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/stream.hpp"
#include "lab01.hpp"

namespace {

using gpulab::Metric;
using gpulab::labkit::LabContext;
namespace lab01 = gpulab::lab01;

int g_max_log2 = 0;  // --max-log2; 0 = the backend's default

// Three vectors of n floats on the device with known inputs; verify() checks the output against
// the CPU reference before anything is timed.
using gpulab::kernels::VectorAddProblem;

std::string log2_label(std::size_t n) {
  return "2^" + std::to_string(static_cast<int>(std::lround(std::log2(static_cast<double>(n)))));
}

// What limits vector add at this size on the spec, by the time model's terms for a launch repeated
// back to back: its launch overhead, or moving the working set through L2 (when it fits there,
// where the repeats keep it) or from DRAM, whichever takes longer.
std::string regime(double bytes, const gpulab::GpuSpec& spec) {
  const bool resident = bytes <= static_cast<double>(spec.l2_bytes) && spec.l2_bandwidth_gb_s > 0;
  const double bytes_per_us =
      (resident ? spec.l2_bandwidth_gb_s : spec.dram_bandwidth_gb_s) * 1e3;  // GB/s = 1e3 B/us
  if (bytes / bytes_per_us < spec.launch_overhead_us) {
    return "launch-bound";
  }
  return resident ? "L2-resident" : "DRAM-bound";
}

lab01::TimingOptions sweep_options(const LabContext& context) {
  lab01::TimingOptions options;
  if (context.on_sim()) {  // CPU simulation: fewer, longer samples are enough to show the shape
    options.min_samples = context.quick ? 3 : 5;
    options.min_time_ms = 0;
    options.target_rel_noise = 0.05;
    options.time_limit_ms = context.quick ? 500 : 2000;
  } else if (context.quick) {
    options.time_limit_ms = 500;
  }
  return options;
}

void size_sweep(LabContext& context, cudaStream_t stream) {
  std::ostream& out = *context.out;
  const gpulab::Roofline roof = gpulab::make_roofline(context.spec);
  // On sim the sweep reaches the first DRAM-bound size (2^24, about 5 s of simulation).
  const int default_max = context.on_sim() ? (context.quick ? 18 : 24) : (context.quick ? 24 : 28);
  const int max_log2 = g_max_log2 > 0 ? g_max_log2 : default_max;
  out << "Vector add c = a + b (12 bytes and 1 FLOP per element), timed with your time_kernel\n";
  gpulab::Table table({{"n", "", gpulab::Align::left},
                       {"working set", "MB"},
                       {"regime on " + context.spec.name, "", gpulab::Align::left},
                       {"median", "ms"},
                       {"noise", "%"},
                       {"samples", ""},
                       {"bandwidth", "GB/s"},
                       {"of DRAM peak", "%"},
                       {"modeled on " + context.spec.name, "ms"}});
  const lab01::TimingOptions options = sweep_options(context);
  std::vector<std::string> skipped;
  // Progress in units of 2^16 elements: a size's time grows with its elements.
  std::size_t units = 0;
  for (int log2 = 16; log2 <= max_log2; log2 += 2) {
    units += std::size_t{1} << (log2 - 16);
  }
  gpulab::ProgressBar progress("vector add sizes", units);
  for (int log2 = 16; log2 <= 28; log2 += 2) {
    const std::size_t n = std::size_t{1} << log2;
    const double bytes = 12.0 * static_cast<double>(n);
    const double modeled_ms = roof.modeled_time_ms({static_cast<double>(n), bytes});
    gpulab::Result result{gpulab::result_kind::vector_add, {{"n", std::to_string(n)}}, {}};
    result.metrics.push_back(Metric::measured("bytes", bytes));
    result.metrics.push_back(Metric::modeled("time_ms", modeled_ms, context.spec.name));
    const std::string modeled_text = gpulab::format_fixed(modeled_ms, modeled_ms < 0.01 ? 5 : 4);
    if (log2 > max_log2) {
      skipped.push_back(log2_label(n));
      table.add_row({log2_label(n), gpulab::format_fixed(bytes / 1e6, 1),
                     regime(bytes, context.spec), "not run", "", "", "", "", modeled_text});
      result.metrics.push_back(
          Metric::unavailable("time_ms", "above --max-log2 " + std::to_string(max_log2)));
      context.results.results.push_back(std::move(result));
      continue;
    }
    progress.doing("n = " + log2_label(n) + " (" + gpulab::format_bytes(bytes) +
                   "): verify, then time_kernel");
    VectorAddProblem problem(n);
    problem.verify(stream);
    const std::vector<double> samples =
        lab01::time_kernel([&](cudaStream_t s) { problem.launch(s); }, stream, options);
    const gpulab::Summary summary = lab01::summarize_samples(samples);
    const double gb_s = lab01::effective_bandwidth_gb_s(bytes, summary.median_ms);
    const double of_peak = lab01::fraction_of_peak(gb_s, context.spec.dram_bandwidth_gb_s);
    table.add_row({log2_label(n), gpulab::format_fixed(bytes / 1e6, 1), regime(bytes, context.spec),
                   gpulab::format_fixed(summary.median_ms, 4),
                   gpulab::format_fixed(summary.rel_noise * 100, 1), std::to_string(summary.count),
                   gpulab::format_fixed(gb_s, 1), gpulab::format_fixed(of_peak * 100, 1),
                   modeled_text});
    result.metrics.push_back(context.timed("time_ms", summary.median_ms));
    result.metrics.push_back(context.timed("rel_noise_percent", summary.rel_noise * 100));
    result.metrics.push_back(context.timed("bandwidth_gb_s", gb_s));
    // The samples themselves, for the viewer's histogram. Only valid times: a time_kernel that
    // returns nonsense must not cost the rest of the saved report.
    if (std::all_of(samples.begin(), samples.end(),
                    [](double ms) { return std::isfinite(ms) && ms >= 0; })) {
      result.samples_ms = samples;
    }
    context.results.results.push_back(std::move(result));
    progress.advance(n >> 16);
  }
  progress.finish();
  out << table;
  if (!skipped.empty()) {
    out << "Not run: " << skipped.front() << " to " << skipped.back() << " (above 2^" << max_log2
        << (context.on_sim() ? "; the CPU simulation takes tens of nanoseconds per element" : "")
        << "; `" << context.rerun("--max-log2 28") << "` runs them).\n";
  }
  if (context.clock == gpulab::TimingClock::host) {
    out << "With the sim's host clock the bandwidth column is CPU time of the simulation: compare "
           "the shape, not the numbers. On a GPU the small sizes are launch-bound, the middle "
           "ones fit in L2, the large ones stream from DRAM near the peak.\n";
  } else if (context.clock == gpulab::TimingClock::modeled) {
    out << "On sim the times come from the modeled clock (" << context.spec.name
        << " modeled from the counted memory traffic and instructions, not measured): "
           "deterministic, so the noise "
           "is 0 and the minimum samples end each size, unless simulating them takes the time "
           "limit of wall time first (the largest sizes: fewer samples, as the table shows). The "
           "small sizes pay the launch, the large ones approach the DRAM peak.\n";
  }
  out << "\n";
}

double host_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void pitfalls(LabContext& context, cudaStream_t stream, VectorAddProblem& problem,
              double first_launch_ms) {
  std::ostream& out = *context.out;
  const std::size_t n = problem.size();
  lab01::TimingOptions options = sweep_options(context);
  options.min_samples = 30;
  const std::vector<double> samples =
      lab01::time_kernel([&](cudaStream_t s) { problem.launch(s); }, stream, options);
  const gpulab::Summary correct = lab01::summarize_samples(samples);

  // 1. A host timer around the launch alone measures how long enqueuing takes, not the kernel.
  const auto start = std::chrono::steady_clock::now();
  problem.launch(stream);
  const double no_sync_ms = host_ms_since(start);
  GPULAB_CHECK(cudaStreamSynchronize(stream));

  // 3. One sample: anywhere between the fastest and the slowest of the distribution.
  const double one_sample_ms = samples.front();

  out << "Timing pitfalls (vector add, n = " << log2_label(n) << "), each next to the correct "
      << "measurement (median of " << correct.count
      << " event-timed samples after warm-up: " << gpulab::format_fixed(correct.median_ms, 4)
      << " ms)\n";
  gpulab::Table table({{"pitfall", "", gpulab::Align::left},
                       {"reported", "ms"},
                       {"correct", "ms"},
                       {"error", "x"},
                       {"why", "", gpulab::Align::left}});
  auto ratio = [&](double reported) {
    return gpulab::format_fixed(reported / correct.median_ms, 2);
  };
  table.add_row({"no synchronization", gpulab::format_fixed(no_sync_ms, 4),
                 gpulab::format_fixed(correct.median_ms, 4), ratio(no_sync_ms),
                 "host timer stops when the launch is queued, before the kernel runs"});
  table.add_row({"no warm-up", gpulab::format_fixed(first_launch_ms, 4),
                 gpulab::format_fixed(correct.median_ms, 4), ratio(first_launch_ms),
                 "the first launch also loads the module and touches cold memory"});
  table.add_row({"too few samples (1)", gpulab::format_fixed(one_sample_ms, 4),
                 gpulab::format_fixed(correct.median_ms, 4), ratio(one_sample_ms),
                 "one draw from a spread of p10 " + gpulab::format_fixed(correct.p10_ms, 4) +
                     " to p90 " + gpulab::format_fixed(correct.p90_ms, 4) + " ms"});
  out << table;
  if (context.clock == gpulab::TimingClock::modeled) {
    out << "On the modeled clock the first launch and a single sample equal the median: the model "
           "has no module loading, cold TLBs, clock changes or noise, which is what makes them "
           "wrong on a GPU. The no-synchronization row reads the host's clock: how long the sim "
           "took to queue the launch, CPU time that has nothing to do with the kernel (on a GPU "
           "a few microseconds, often less than the kernel).\n";
  }
  out << "\n";
  // The no-synchronization row reads the host's clock on every backend: measured.
  for (const auto& [name, time] :
       {std::pair{"no_sync", Metric::measured("time_ms", no_sync_ms)},
        std::pair{"no_warmup", context.timed("time_ms", first_launch_ms)},
        std::pair{"one_sample", context.timed("time_ms", one_sample_ms)},
        std::pair{"correct", context.timed("time_ms", correct.median_ms)}}) {
    context.results.results.push_back({gpulab::result_kind::timing_pitfall,
                                       {{"method", name}, {"n", std::to_string(n)}},
                                       {time}});
  }
}

void report(LabContext& context) {
  gpulab::Stream stream;
  VectorAddProblem pitfall_problem(std::size_t{1} << (context.on_sim() ? 18 : 22));
  // The very first launch of the kernel in this process: what a benchmark without warm-up reports.
  const double first_ms = gpulab::event_timed_ms(stream, [&] { pitfall_problem.launch(stream); });
  pitfall_problem.verify(stream);
  size_sweep(context, stream);
  pitfalls(context, stream, pitfall_problem, first_ms);
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::labkit::lab_main(
      argc, argv, GPULAB_LAB_INFO,
      [](CLI::App& app) {
        app.add_option("--max-log2", g_max_log2,
                       "Largest vector size to run, as a power of two (16..28; default 28 on "
                       "cuda, 24 on sim)")
            ->check(CLI::Range(16, 28));
      },
      report);
}
