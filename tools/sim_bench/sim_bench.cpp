// gpulab-sim-bench: how fast the sim backend runs two of the project's real kernels, against the
// same work done by plain C++ loops. scripts/bench-sim-vs-numba runs it next to numba's CUDA
// simulator (tools/sim_bench/numba_peer.py) and writes the comparison to docs/results/.
//
//   vector add      gpulab::kernels::vector_add, 256 threads per block, one element per thread
//   block sums      gpulab::kernels::block_sums_shared: 256 threads per block sum their 256
//                   elements in shared memory, a tree with a __syncthreads between steps
//
// With --ladders it prints instead each level of the kernel catalog's transpose at the
// published sizes, counted on sim, with its modeled effective bandwidth next to published
// measurements: NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++" (Parallel Forall blog,
// 2013) on several specs, and an H100 measurement (yencal, 2025) on H100; and whether the
// ladder's order is the same (docs/results/model-ladders-*.md); then the reduction ladder of
// "Optimizing Parallel Reduction in CUDA" on the simulated spec, and whether it keeps its
// published order (docs/results/reduction-ladder-*.md); then the GEMM ladder (naive, tiled,
// register-blocked) at 2048^3 on several specs against a published worklog's order
// (docs/results/gemm-ladder-*.md). About 4 minutes on a 2-core machine, most of it the GEMM's
// naive and tiled levels; each level's name goes to stderr as it starts.
//
// With --counting-cost it measures instead what memory counting costs (docs/sim.md): vector add
// at --elements floats (2^20 by default there) and the 16 x 16 tiled GEMM at 512^3, each timed with
// counting off and on, and the ratio of the medians.
//
// With --lab04 it times instead lab 04's report (the solution's program, built next to this one)
// at three sizes: what a student waits for the lab's main output on sim.
//
// With --fidelity FILE... it runs instead every catalog level a GPU measured (the corpus,
// docs/results/fidelity-corpus.json, or results files of `gpulab bench` on the cuda backend) on
// sim at the same op, level, size, block size and spec, and prints its time on the modeled clock
// beside the measured one: the error, the worst ratio and whether each ladder keeps its order
// (fidelity_run.cpp, gpulab/core/fidelity.hpp). These are modeled times, not CPU times; the levels
// are not verified here (the catalog's tests verify every level). --add-to-corpus CORPUS FILE...
// adds the times of GPU results files to the corpus.
//
// Every number is CPU wall-clock time of the simulation (std::chrono::steady_clock) around one
// launch and its cudaDeviceSynchronize: what running CUDA C++ on the CPU costs, never GPU time.
// Each configuration is verified against the CPU reference before it is timed; one warm-up run is
// not timed (the first launch starts the sim's worker threads); then runs repeat until 0.5 s of
// samples or 20 samples, whichever comes first, and the median and minimum are reported.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "fidelity_run.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/device_info.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/common.hpp"
#include "gpulab/kernels/gemm.hpp"
#include "gpulab/kernels/reduction.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "gpulab/sim/runtime.hpp"
#include "ladders.hpp"
#include "rules_check.hpp"

namespace {

using gpulab::kFailure;
using gpulab::kSuccess;
using gpulab::kernels::random_floats;
using gpulab::sim_bench::run_ladders;
using gpulab::sim_bench::usage_error;
using gpulab::sim_bench::VerificationError;

constexpr std::size_t kDefaultElements = 16384;  // 2^14
constexpr double kMinSampleSeconds = 0.5;        // stop sampling after this much timed work...
constexpr std::size_t kMaxSamples = 20;          // ...or after this many samples
constexpr int kJsonSchemaVersion = 1;

// Tolerances. a + b is one float rounding on every path, so the sum must match the reference to
// the last bit; the tolerance is kept explicit anyway. A 256-element tree sum in float has at most
// log2(256) = 8 roundings on any path: |error| <= 8 * 2^-24 * sum |x| ~ 4.8e-7 * sum |x| against
// the double reference; 1e-6 * sum |x| leaves a factor of two.
constexpr float kAddAbsTolerance = 0.0f;
constexpr double kTreeSumRelTolerance = 1e-6;  // times the sum of |x| over the block

// Keeps the compiler from dropping or merging the plain loops: the asm statement claims to read
// `pointer` and to touch all memory, so every store before it must happen and every load after it
// must be redone (google/benchmark's DoNotOptimize and ClobberMemory in one).
void escape(const void* pointer) {
  asm volatile("" : : "g"(pointer) : "memory");
}

// ------------------------------------------------------------------------------------------------
// The plain C++ versions of the two kernels' work.
// ------------------------------------------------------------------------------------------------

void plain_vector_add(std::span<const float> a, std::span<const float> b, std::span<float> c) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i] = a[i] + b[i];
  }
}

// The kernel's tree, in the kernel's order: stride 128, 64, ..., 1, each step adding element
// t + stride into t. The same float additions in the same order, so the same bits.
void plain_block_sums(std::span<const float> in, std::span<float> partials) {
  constexpr std::size_t kBlock = gpulab::kernels::kReduceBlock;
  float partial[kBlock];
  for (std::size_t block = 0; block < partials.size(); ++block) {
    for (std::size_t t = 0; t < kBlock; ++t) {
      const std::size_t i = block * kBlock + t;
      partial[t] = i < in.size() ? in[i] : 0.0f;
    }
    for (std::size_t stride = kBlock / 2; stride > 0; stride /= 2) {
      for (std::size_t t = 0; t < stride; ++t) {
        partial[t] += partial[t + stride];
      }
    }
    partials[block] = partial[0];
  }
}

// ------------------------------------------------------------------------------------------------
// Verification
// ------------------------------------------------------------------------------------------------

void verify_add(std::span<const float> expected, std::span<const float> got, const char* what) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const float tolerance = kAddAbsTolerance;
    if (!(std::fabs(got[i] - expected[i]) <= tolerance)) {  // NaN (unwritten) fails
      throw VerificationError(std::string(what) + ": index " + std::to_string(i) + ": expected " +
                              std::to_string(expected[i]) + ", got " + std::to_string(got[i]) +
                              ", tolerance " + std::to_string(tolerance));
    }
  }
}

// Per block: the double-precision sum and the sum of |x|, which scales the tolerance.
struct BlockReference {
  std::vector<double> sums;
  std::vector<double> abs_sums;
};

BlockReference block_reference(std::span<const float> in) {
  constexpr std::size_t kBlock = gpulab::kernels::kReduceBlock;
  const std::size_t blocks = gpulab::kernels::ceil_div(in.size(), kBlock);
  BlockReference reference{std::vector<double>(blocks), std::vector<double>(blocks)};
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t begin = block * kBlock;
    const auto run = in.subspan(begin, std::min(kBlock, in.size() - begin));
    reference.sums[block] = gpulab::kernels::reduce_sum_reference(run);
    for (const float x : run) {
      reference.abs_sums[block] += std::fabs(static_cast<double>(x));
    }
  }
  return reference;
}

void verify_block_sums(const BlockReference& expected, std::span<const float> got,
                       const char* what) {
  for (std::size_t b = 0; b < expected.sums.size(); ++b) {
    const double tolerance = kTreeSumRelTolerance * expected.abs_sums[b];
    const double value = static_cast<double>(got[b]);
    if (!(std::fabs(value - expected.sums[b]) <= tolerance)) {  // NaN (unwritten) fails
      throw VerificationError(std::string(what) + ": block " + std::to_string(b) + ": expected " +
                              std::to_string(expected.sums[b]) + ", got " + std::to_string(value) +
                              ", tolerance " + std::to_string(tolerance));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Timing
// ------------------------------------------------------------------------------------------------

/// The samples of one configuration, in milliseconds.
struct Timing {
  std::vector<double> samples_ms;

  [[nodiscard]] double median_ms() const {
    std::vector<double> sorted = samples_ms;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }
  [[nodiscard]] double min_ms() const {
    return *std::min_element(samples_ms.begin(), samples_ms.end());
  }
};

/// Runs `work` once untimed, then times single runs until kMinSampleSeconds of samples or
/// kMaxSamples samples. `work` must include whatever waits for the result (cudaDeviceSynchronize).
template <class Work>
Timing time_runs(Work work) {
  using Clock = std::chrono::steady_clock;
  work();  // warm-up, not timed
  Timing timing;
  double total_s = 0.0;
  while (total_s < kMinSampleSeconds && timing.samples_ms.size() < kMaxSamples) {
    const Clock::time_point start = Clock::now();
    work();
    const Clock::time_point stop = Clock::now();
    const double seconds = std::chrono::duration<double>(stop - start).count();
    timing.samples_ms.push_back(seconds * 1e3);
    total_s += seconds;
  }
  return timing;
}

/// One timed row of the report.
struct Row {
  std::string kernel;          ///< "vector_add" or "block_sums_shared"
  std::string implementation;  ///< "sim" or "plain_cpp_loop"
  Timing timing;
};

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%F", &local);
  return text;
}

// ------------------------------------------------------------------------------------------------
// The benchmark
// ------------------------------------------------------------------------------------------------

std::vector<Row> run_benchmark(std::size_t n) {
  using gpulab::DeviceBuffer;
  const std::size_t blocks = gpulab::kernels::ceil_div(n, gpulab::kernels::kReduceBlock);

  const std::vector<float> a = random_floats(n, 1);
  const std::vector<float> b = random_floats(n, 2);
  std::vector<float> sum_expected(n);
  gpulab::kernels::vector_add_reference(a, b, sum_expected);
  const BlockReference partials_expected = block_reference(a);

  // Allocation and copies happen here, outside every timed region.
  DeviceBuffer<float> d_a(n);
  DeviceBuffer<float> d_b(n);
  DeviceBuffer<float> d_c(n);
  DeviceBuffer<float> d_partials(blocks);
  d_a.copy_from(a);
  d_b.copy_from(b);

  std::vector<Row> rows;

  // Vector add on sim: verify (output poisoned first, so an unwritten element fails), then time.
  const auto sim_add = [&] {
    gpulab::kernels::vector_add(d_a.data(), d_b.data(), d_c.data(), n);
    GPULAB_CHECK(cudaDeviceSynchronize());
  };
  d_c.fill_bytes(0xff);
  sim_add();
  verify_add(sum_expected, d_c.to_vector(), "vector_add on sim");
  rows.push_back({"vector_add", "sim", time_runs(sim_add)});

  // Vector add as a plain loop.
  std::vector<float> c(n);
  const auto loop_add = [&] {
    escape(a.data());
    escape(b.data());
    plain_vector_add(a, b, c);
    escape(c.data());
  };
  std::fill(c.begin(), c.end(), std::nanf(""));
  loop_add();
  verify_add(sum_expected, c, "vector_add as a plain C++ loop");
  rows.push_back({"vector_add", "plain_cpp_loop", time_runs(loop_add)});

  // Block sums on sim.
  const auto sim_sums = [&] {
    gpulab::kernels::block_sums_shared(d_a.data(), d_partials.data(), n);
    GPULAB_CHECK(cudaDeviceSynchronize());
  };
  d_partials.fill_bytes(0xff);
  sim_sums();
  const std::vector<float> sim_partials = d_partials.to_vector();
  verify_block_sums(partials_expected, sim_partials, "block_sums_shared on sim");
  rows.push_back({"block_sums_shared", "sim", time_runs(sim_sums)});

  // Block sums as a plain loop. Same additions in the same order as the kernel, so the results
  // must be the same bits: a check that the loop really does the kernel's work.
  std::vector<float> partials(blocks);
  const auto loop_sums = [&] {
    escape(a.data());
    plain_block_sums(a, partials);
    escape(partials.data());
  };
  std::fill(partials.begin(), partials.end(), std::nanf(""));
  loop_sums();
  verify_block_sums(partials_expected, partials, "block sums as a plain C++ loop");
  if (!std::equal(partials.begin(), partials.end(), sim_partials.begin())) {
    throw VerificationError(
        "block sums as a plain C++ loop: the partial sums differ from the kernel's although both "
        "add in the same tree order");
  }
  rows.push_back({"block_sums_shared", "plain_cpp_loop", time_runs(loop_sums)});
  return rows;
}

// ------------------------------------------------------------------------------------------------
// The cost of memory counting
// ------------------------------------------------------------------------------------------------

constexpr int kGemmSize = 512;
constexpr double kCountingCostLimit = 20.0;  // the bound: counting on at most 20x off

void verify_gemm(std::span<const float> expected, std::span<const float> got, int k) {
  // Each output is a k-term float dot product against a double reference: |error| <= k * 2^-24
  // * sum |a b|; with |a|, |b| <= 1, sum |a b| <= k, so k^2 * 6e-8 bounds it (0.016 at k = 512).
  const double tolerance = static_cast<double>(k) * k * 6e-8;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!(std::fabs(static_cast<double>(got[i]) - static_cast<double>(expected[i])) <= tolerance)) {
      throw VerificationError("gemm_tiled: index " + std::to_string(i) + ": expected " +
                              std::to_string(expected[i]) + ", got " + std::to_string(got[i]) +
                              ", tolerance " + std::to_string(tolerance));
    }
  }
}

std::vector<Row> run_counting_cost(std::size_t n) {
  using gpulab::DeviceBuffer;
  // A build without counting (-DGPULAB_SIM_COUNTING=OFF) times the "off" rows only: compared
  // with a counting build's, they give what the callbacks cost when counting is off.
  const bool can_count = gpulab::sim::counting_available();
  if (!can_count) {
    std::printf("counting on: not timed, %s\n\n",
                gpulab::sim::counting_unavailable_reason().c_str());
  }
  std::vector<Row> rows;
  const auto timed_both_ways = [&](const std::string& kernel, const auto& work) {
    rows.push_back({kernel, "counting_off", time_runs(work)});
    if (!can_count) {
      return;
    }
    const gpulab::sim::ScopedCounting on;
    rows.push_back({kernel, "counting_on", time_runs(work)});
    gpulab::sim::clear_counted_launches();
  };

  const std::vector<float> a = random_floats(n, 1);
  const std::vector<float> b = random_floats(n, 2);
  std::vector<float> sum_expected(n);
  gpulab::kernels::vector_add_reference(a, b, sum_expected);
  DeviceBuffer<float> d_a(n);
  DeviceBuffer<float> d_b(n);
  DeviceBuffer<float> d_c(n);
  d_a.copy_from(a);
  d_b.copy_from(b);
  const auto add = [&] {
    gpulab::kernels::vector_add(d_a.data(), d_b.data(), d_c.data(), n);
    GPULAB_CHECK(cudaDeviceSynchronize());
  };
  d_c.fill_bytes(0xff);
  add();
  verify_add(sum_expected, d_c.to_vector(), "vector_add on sim");
  timed_both_ways("vector_add", add);

  const auto size = static_cast<std::size_t>(kGemmSize) * kGemmSize;
  const std::vector<float> ma = random_floats(size, 3);
  const std::vector<float> mb = random_floats(size, 4);
  std::vector<float> mc_expected(size);
  gpulab::kernels::gemm_reference(ma, mb, mc_expected, kGemmSize, kGemmSize, kGemmSize);
  DeviceBuffer<float> d_ma(size);
  DeviceBuffer<float> d_mb(size);
  DeviceBuffer<float> d_mc(size);
  d_ma.copy_from(ma);
  d_mb.copy_from(mb);
  const auto gemm = [&] {
    gpulab::kernels::gemm_tiled(d_ma.data(), d_mb.data(), d_mc.data(), kGemmSize, kGemmSize,
                                kGemmSize);
    GPULAB_CHECK(cudaDeviceSynchronize());
  };
  d_mc.fill_bytes(0xff);
  gemm();
  verify_gemm(mc_expected, d_mc.to_vector(), kGemmSize);
  timed_both_ways("gemm_tiled_512", gemm);
  return rows;
}

void print_counting_cost(const std::vector<Row>& rows) {
  gpulab::Table table({{"kernel", "", gpulab::Align::left},
                       {"counting", "", gpulab::Align::left},
                       {"median", "ms", gpulab::Align::right},
                       {"min", "ms", gpulab::Align::right},
                       {"samples", "", gpulab::Align::right}});
  for (const Row& row : rows) {
    table.add_row({row.kernel, row.implementation == "counting_on" ? "on" : "off",
                   gpulab::format_fixed(row.timing.median_ms(), 3),
                   gpulab::format_fixed(row.timing.min_ms(), 3),
                   std::to_string(row.timing.samples_ms.size())});
  }
  std::cout << table;
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    if (rows[i + 1].implementation != "counting_on") {
      break;  // a build without counting
    }
    const double ratio = rows[i + 1].timing.median_ms() / rows[i].timing.median_ms();
    std::printf("%s: counting on is %.1fx counting off (medians; limit %.0fx: %s)\n",
                rows[i].kernel.c_str(), ratio, kCountingCostLimit,
                ratio <= kCountingCostLimit ? "PASS" : "FAIL");
  }
}

void print_table(const std::vector<Row>& rows, std::size_t n) {
  gpulab::Table table({{"kernel", "", gpulab::Align::left},
                       {"implementation", "", gpulab::Align::left},
                       {"median", "ms", gpulab::Align::right},
                       {"min", "ms", gpulab::Align::right},
                       {"per element", "ns", gpulab::Align::right},
                       {"samples", "", gpulab::Align::right}});
  for (const Row& row : rows) {
    const double median_ms = row.timing.median_ms();
    table.add_row({row.kernel, row.implementation, gpulab::format_fixed(median_ms, 4),
                   gpulab::format_fixed(row.timing.min_ms(), 4),
                   gpulab::format_fixed(median_ms * 1e6 / static_cast<double>(n), 2),
                   std::to_string(row.timing.samples_ms.size())});
  }
  std::cout << table;
  for (const char* kernel : {"vector_add", "block_sums_shared"}) {
    double sim_ms = std::numeric_limits<double>::quiet_NaN();
    double loop_ms = std::numeric_limits<double>::quiet_NaN();
    for (const Row& row : rows) {
      if (row.kernel == kernel && row.implementation == "sim") {
        sim_ms = row.timing.median_ms();
      } else if (row.kernel == kernel) {
        loop_ms = row.timing.median_ms();
      }
    }
    std::printf("%s: sim is %.0fx the plain C++ loop's time (medians)\n", kernel, sim_ms / loop_ms);
  }
}

// Where the worker count comes from, for the report.
std::string workers_source() {
  const char* text = std::getenv("GPULAB_SIM_WORKERS");
  return text != nullptr ? std::string("GPULAB_SIM_WORKERS=") + text
                         : std::string("GPULAB_SIM_WORKERS unset: one per hardware thread");
}

nlohmann::json to_json(const std::vector<Row>& rows, std::size_t n, bool counting_cost) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const Row& row : rows) {
    benchmarks.push_back({{"kernel", row.kernel},
                          {"implementation", row.implementation},
                          {"verified", true},
                          {"median_time_ms", row.timing.median_ms()},
                          {"min_time_ms", row.timing.min_ms()},
                          {"samples", row.timing.samples_ms.size()},
                          {"sample_times_ms", row.timing.samples_ms}});
  }
  return {{"context",
           {{"schema", "gpulab-sim-bench"},
            {"schema_version", kJsonSchemaVersion},
            {"gpulab_version", std::string(gpulab::version())},
            {"git_revision", std::string(gpulab::git_revision())},
            {"backend", "sim"},
            {"timing",
             "CPU wall-clock time of the simulation (std::chrono::steady_clock) per launch "
             "including cudaDeviceSynchronize; not GPU time"},
            {"date", today()},
            {"elements", n},
            {"mode", counting_cost ? "counting_cost" : "sim_vs_loop"},
            {"block_threads", gpulab::kernels::kReduceBlock},
            {"sim_workers", gpulab::sim::worker_count()},
            {"sim_workers_source", workers_source()},
            {"hardware_threads", std::thread::hardware_concurrency()},
            {"warmup_runs", 1},
            {"min_sample_seconds", kMinSampleSeconds},
            {"max_samples", kMaxSamples}}},
          {"benchmarks", benchmarks}};
}

// --lab04: the wall-clock time of lab 04's report at three sizes, each run once.
int run_lab04_report_times() {
  const std::filesystem::path self = gpulab::executable_path();
  const std::filesystem::path program = self.parent_path() / "gpulab.lab04.solution.run.sim";
  if (!std::filesystem::exists(program)) {
    std::fprintf(stderr,
                 "gpulab-sim-bench: error: %s is not built (cmake --build --preset default "
                 "--target gpulab.lab04.solution.run.sim)\n",
                 program.c_str());
    return kFailure;
  }
  struct Size {
    int seq_len;
    int d_model;
    int heads;
  };
  // The old sim default, the default, and a longer sequence.
  const Size sizes[] = {{256, 128, 2}, {512, 128, 4}, {1024, 128, 2}};
  std::printf(
      "lab 04's report (solution), sim backend: wall-clock time of the whole program, one run "
      "each\n\n");
  gpulab::Table table({{"seq_len", "", gpulab::Align::right},
                       {"d_model", "", gpulab::Align::right},
                       {"heads", "", gpulab::Align::right},
                       {"time", "s"}});
  for (const Size& size : sizes) {
    const std::string command = "'" + program.string() + "' --seq-len " +
                                std::to_string(size.seq_len) + " --d-model " +
                                std::to_string(size.d_model) + " --heads " +
                                std::to_string(size.heads) + " >/dev/null 2>&1";
    const auto begin = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (status != 0) {
      std::fprintf(stderr, "gpulab-sim-bench: error: %s failed (status %d)\n", command.c_str(),
                   status);
      return kFailure;
    }
    table.add_row({std::to_string(size.seq_len), std::to_string(size.d_model),
                   std::to_string(size.heads), gpulab::format_fixed(seconds, 1)});
  }
  std::cout << table;
  return kSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpulab-sim-bench: times the sim backend running gpulab's vector_add and "
      "block_sums_shared kernels, and plain C++ loops doing the same work. All times are CPU "
      "wall-clock times of the simulation, not GPU times.",
      "gpulab-sim-bench"};
  std::size_t n = 0;
  std::string json_path;
  bool counting_cost = false;
  bool ladders = false;
  bool rules = false;
  bool lab04 = false;
  gpulab::sim_bench::FidelityOptions fidelity;
  std::string corpus;
  app.add_option("--elements", n,
                 "Floats per kernel (default 16384 = 2^14; 2^20 with --counting-cost)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 28));
  app.add_flag("--counting-cost", counting_cost,
               "Time vector add and a 512^3 tiled GEMM with memory counting off and on instead");
  app.add_flag("--ladders", ladders,
               "Model the transpose, reduction and GEMM ladders from their counted traffic "
               "against published figures instead");
  app.add_flag("--rules", rules,
               "Check the rules' predicted speed-ups (gpulab profile --source) against the real "
               "fixes of the catalog's ladders instead (exit 1 when one is off by more than 2x or "
               "names the wrong line)");
  app.add_flag("--lab04", lab04,
               "Time lab 04's report (the solution's program) at three sizes instead");
  app.add_option("--fidelity", fidelity.files,
                 "Run the catalog levels these files measured on a GPU (the corpus, "
                 "docs/results/fidelity-corpus.json, or `gpulab bench` results files) on sim, at "
                 "the same op, level, size and spec, and compare the modeled clock with the "
                 "measurements instead; levels whose problem or kernel changed since are named, "
                 "not compared")
      ->check(CLI::ExistingFile);
  app.add_option("--skip", fidelity.skip,
                 "With --fidelity: ops to leave out (e.g. gemm: slow on sim)")
      ->delimiter(',');
  app.add_option("--max-error", fidelity.max_error_pct,
                 "With --fidelity: fail (exit 1) when the mean absolute error over every GPU is "
                 "above this many percent")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-ratio", fidelity.max_ratio,
                 "With --fidelity: fail (exit 1) when a kernel is off by more than this factor")
      ->check(CLI::Range(1.0, 1e9));
  app.add_flag("--require-order", fidelity.require_order,
               "With --fidelity: fail (exit 1) when a ladder loses its measured order");
  app.add_option("--add-to-corpus", corpus,
                 "Add the times of the `gpulab bench` results files given after it (measured on a "
                 "GPU) to this corpus file instead");
  // A run of one GPU's measurements, started by --fidelity for each GPU of its files.
  app.add_option("--fidelity-spec", fidelity.spec)->group("");
  app.add_option("--fidelity-points", fidelity.points_file)->group("");
  std::vector<std::string> corpus_files;
  app.add_option("files", corpus_files, "With --add-to-corpus: the results files to add")
      ->check(CLI::ExistingFile);
  app.add_option("--json", json_path, "Also write the numbers to this JSON file");
  app.footer(
      "Each configuration is verified against the CPU reference, warmed up once, then timed per "
      "launch (with cudaDeviceSynchronize) until 0.5 s of samples or 20 samples. "
      "scripts/bench-sim-vs-numba compares it with numba's CUDA simulator. Exit codes: 0 "
      "success, 1 failure (a wrong result or a CUDA error), 2 bad arguments.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }

  if (n == 0) {
    n = counting_cost ? std::size_t{1} << 20 : kDefaultElements;
  }
  if (lab04) {
    return run_lab04_report_times();
  }
  if (!corpus.empty()) {
    if (corpus_files.empty()) {
      return usage_error("--add-to-corpus needs the results files to add");
    }
    return gpulab::sim_bench::add_to_corpus(corpus, corpus_files);
  }
  if (!corpus_files.empty()) {
    return usage_error("results files are given only with --add-to-corpus");
  }
  if (!fidelity.files.empty()) {
    try {
      return gpulab::sim_bench::run_fidelity(fidelity);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpulab-sim-bench: error: %s\n", e.what());
      return kFailure;
    }
  }
  if (rules) {
    try {
      return gpulab::sim_bench::run_rules_check();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpulab-sim-bench: error: %s\n", e.what());
      return kFailure;
    }
  }
  if (ladders) {
    try {
      run_ladders();
      return kSuccess;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpulab-sim-bench: error: %s\n", e.what());
      return kFailure;
    }
  }
  try {
    std::printf("%s, sim backend, %u worker threads (%s; %u hardware threads)\n",
                gpulab::version_string().c_str(), gpulab::sim::worker_count(),
                workers_source().c_str(), std::thread::hardware_concurrency());
    std::printf(
        "%zu floats, 256 threads per block. Times are CPU wall-clock times of the simulation per "
        "launch + cudaDeviceSynchronize, not GPU times.\n\n",
        n);
    const std::vector<Row> rows = counting_cost ? run_counting_cost(n) : run_benchmark(n);
    if (counting_cost) {
      print_counting_cost(rows);
    } else {
      print_table(rows, n);
    }
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << to_json(rows, n, counting_cost).dump(2) << '\n';
      if (!out) {
        std::fprintf(stderr, "gpulab-sim-bench: error: cannot write %s\n", json_path.c_str());
        return kFailure;
      }
    }
    return kSuccess;
  } catch (const VerificationError& e) {
    std::fprintf(stderr, "gpulab-sim-bench: wrong result, not timed: %s\n", e.what());
    return kFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab-sim-bench: error: %s\n", e.what());
    return kFailure;
  }
}
