#include "fidelity_run.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/fidelity.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/stream.hpp"
#include "gpulab/sim/runtime.hpp"

extern char** environ;

namespace gpulab::sim_bench {
namespace {

// Every measurement of `files` (corpora and `gpulab bench` results files of a GPU) but the ops
// in `skip`; std::invalid_argument or ResultsError naming the file for one it cannot read.
std::vector<CorpusEntry> load_measurements(const std::vector<std::string>& files,
                                           const std::vector<std::string>& skip) {
  std::vector<CorpusEntry> entries;
  for (const std::string& file : files) {
    const nlohmann::json doc = load_results_json(file);
    const std::vector<CorpusEntry> read = is_corpus(doc)
                                              ? corpus_from_json(doc, file)
                                              : corpus_entries(results_from_json(doc, file), file);
    for (const CorpusEntry& e : read) {
      if (std::find(skip.begin(), skip.end(), e.op) == skip.end()) {
        entries.push_back(e);
      }
    }
  }
  return entries;
}

// "attention level 0 at size 2048 (H200 SXM)".
std::string name_of(const CorpusEntry& e) {
  return e.op + " level " + std::to_string(e.level) + " at size " + std::to_string(e.size) +
         (e.block_size != 0 ? ", " + std::to_string(e.block_size) + " threads per block" : "") +
         " (" + e.spec + ")";
}

// Why `e` cannot be compared with today's catalog, or nullopt when it can; `problem` receives
// the problem at its size when it can.
std::optional<std::string> why_not_comparable(const CorpusEntry& e,
                                              std::unique_ptr<kernels::OpProblem>& problem) {
  if (!e.stale.empty()) {
    return "stale: " + e.stale;
  }
  const kernels::Op* op = kernels::find_op(e.op);
  if (op == nullptr) {
    return "the catalog has no op \"" + e.op + "\" any more";
  }
  if (op->find_level(e.level) == nullptr) {
    return "the catalog's " + e.op + " has no level " + std::to_string(e.level) + " any more";
  }
  try {
    problem = op->make_problem(e.size);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  if (problem->describe() != e.problem) {
    return "the problem changed: measured on \"" + e.problem + "\", the catalog's is now \"" +
           problem->describe() + "\"";
  }
  return std::nullopt;
}

nlohmann::json points_to_json(const std::vector<FidelityPoint>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const FidelityPoint& p : points) {
    out.push_back({{"ladder", p.ladder},
                   {"name", p.name},
                   {"measured_ms", p.measured_ms},
                   {"modeled_ms", p.modeled_ms},
                   {"sweep", p.sweep}});
  }
  return out;
}

std::vector<FidelityPoint> points_from_file(const std::string& file) {
  const std::optional<std::string> text = read_file(file);
  if (!text) {
    throw std::runtime_error("cannot read " + file);
  }
  std::vector<FidelityPoint> points;
  for (const nlohmann::json& p : parse_json(*text, file)) {
    points.push_back({p.at("ladder").get<std::string>(), p.at("name").get<std::string>(),
                      p.at("measured_ms").get<double>(), p.at("modeled_ms").get<double>(),
                      p.at("sweep").get<std::string>()});
  }
  return points;
}

// Prints the summary, and against the options' bounds when it has any; false when it breaks one.
bool print_summary(const std::vector<FidelityPoint>& points, std::size_t not_compared,
                   const FidelityOptions& bounds) {
  const FidelitySummary summary = summarize_fidelity(points);
  std::printf(
      "mean absolute error |modeled / measured - 1|: %.0f%% over %zu kernels; worst: %.2fx "
      "off (%s)%s\n",
      100 * summary.mean_abs_error, points.size(), summary.worst_ratio, summary.worst.c_str(),
      not_compared > 0 ? (" (" + std::to_string(not_compared) + " not compared)").c_str() : "");
  for (const LadderOrder& ladder : summary.ladders) {
    std::printf("%s: %s\n", ladder.ladder.c_str(),
                ladder.kept ? "the measured order kept"
                            : ("order NOT kept (" + ladder.first_swap + " swap)").c_str());
  }
  for (const LadderOrder& sweep : summary.sweeps) {
    std::printf("sweep of %s by block size: %s\n", sweep.ladder.c_str(),
                sweep.kept ? "the measured order kept"
                           : ("order NOT kept (" + sweep.first_swap + " swap)").c_str());
  }
  bool kept = true;
  const auto check = [&kept](bool ok, const std::string& what) {
    std::printf("bound: %s: %s\n", what.c_str(), ok ? "kept" : "BROKEN");
    kept = kept && ok;
  };
  if (bounds.max_error_pct >= 0) {
    check(100 * summary.mean_abs_error <= bounds.max_error_pct,
          "mean absolute error at most " + format_fixed(bounds.max_error_pct, 0) + "%");
  }
  if (bounds.max_ratio >= 0) {
    check(summary.worst_ratio <= bounds.max_ratio,
          "no kernel off by more than " + format_fixed(bounds.max_ratio, 2) + "x");
  }
  if (bounds.require_order) {
    check(std::all_of(summary.ladders.begin(), summary.ladders.end(),
                      [](const LadderOrder& l) { return l.kept; }),
          "every ladder in its measured order");
  }
  return kept;
}

bool has_bounds(const FidelityOptions& o) {
  return o.max_error_pct >= 0 || o.max_ratio >= 0 || o.require_order;
}

// The measurements of one GPU, on this process's sim device; `bounds` are checked unless it is a
// child run (a points file to write).
int run_one_spec(const std::vector<CorpusEntry>& entries, const std::string& spec_name,
                 const std::string& points_file, const FidelityOptions& bounds) {
  DeviceContext context;
  try {
    context = resolve_device_context(spec_name);
  } catch (const UsageError&) {
    return usage_error("the measurements name a GPU the spec database does not know (\"" +
                       spec_name + "\")");
  }
  if (context.clock != TimingClock::modeled) {
    std::fprintf(stderr, "gpulab-sim-bench: error: %s\n",
                 sim::counting_unavailable_reason().c_str());
    return kFailure;
  }
  std::printf("%s, sim backend; times: %s against %s measured on a GPU\n\n",
              version_string().c_str(), timing_label(context.clock, context.spec.name).c_str(),
              context.spec.name.c_str());
  Stream stream;
  // As `gpulab bench` on the modeled clock, with one warm-up launch where it has the verifying one.
  BenchOptions options;
  options.warmup_runs = 1;
  options.min_samples = 3;
  options.min_time_ms = 0;
  std::vector<FidelityPoint> points;
  std::vector<std::string> not_compared;
  Table table({{"op", "", Align::left},
               {"level", "", Align::left},
               {"size", "", Align::right},
               {"measured", "ms", Align::right},
               {"modeled", "ms", Align::right},
               {"modeled / measured", "", Align::right}});
  for (const CorpusEntry& e : entries) {
    if (e.spec != spec_name) {
      continue;
    }
    std::unique_ptr<kernels::OpProblem> problem;
    if (const std::optional<std::string> why = why_not_comparable(e, problem)) {
      not_compared.push_back(name_of(e) + ": " + *why);
      continue;
    }
    const kernels::Op& op = *kernels::find_op(e.op);
    const std::size_t index = op.level_index(e.level);
    const unsigned block = e.block_size != 0 ? e.block_size : op.default_block;
    std::fprintf(stderr, "gpulab-sim-bench: %s level %d at size %zu...\n", e.op.c_str(), e.level,
                 e.size);
    const Measurement run =
        measure([&](cudaStream_t s) { problem->launch(index, s, block); }, stream, options);
    // A point measured at a chosen block size: its level's ladder at that block size, and the
    // level's sweep of block sizes.
    const std::string threads =
        e.block_size != 0 ? ", " + std::to_string(e.block_size) + " threads a block" : "";
    const std::string level =
        std::to_string(e.level) + " (" + std::string(op.levels[index].name) + ")";
    const std::string op_size = e.op + " " + std::to_string(e.size);
    points.push_back({op_size + threads, level, e.measured_ms, run.summary.median_ms,
                      e.block_size != 0 ? op_size + " level " + std::to_string(e.level) : ""});
    table.add_row({e.op, level + threads, std::to_string(e.size), format_fixed(e.measured_ms, 4),
                   format_fixed(run.summary.median_ms, 4),
                   format_fixed(run.summary.median_ms / e.measured_ms, 3)});
  }
  if (!points.empty()) {
    std::cout << table << "\n";
  }
  if (!not_compared.empty()) {
    std::printf("not compared (a GPU must measure them again):\n");
    for (const std::string& line : not_compared) {
      std::printf("  %s\n", line.c_str());
    }
    std::printf("\n");
  }
  // A child run prints its GPU's summary; the parent checks the bounds over every GPU.
  const bool child = !points_file.empty();
  bool kept = true;
  if (points.empty()) {
    std::printf("no measurement of %s can be compared with today's catalog\n", spec_name.c_str());
    kept = child || !has_bounds(bounds);
  } else {
    kept = print_summary(points, not_compared.size(), child ? FidelityOptions{} : bounds);
  }
  if (child) {
    write_file_atomically(points_file, points_to_json(points).dump() + "\n");
  }
  return kept ? kSuccess : kFailure;
}

// Runs this program again for one GPU's measurements; its points, or nullopt when it failed.
std::optional<std::vector<FidelityPoint>> run_child(const FidelityOptions& options,
                                                    const std::string& spec,
                                                    const std::string& points_file) {
  std::vector<std::string> args = {"gpulab-sim-bench", "--fidelity"};
  args.insert(args.end(), options.files.begin(), options.files.end());
  for (const std::string& op : options.skip) {
    args.insert(args.end(), {"--skip", op});
  }
  args.insert(args.end(), {"--fidelity-spec", spec, "--fidelity-points", points_file});
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  const std::string self = gpulab::executable_path().string();
  if (const int error = posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ);
      error != 0) {
    throw std::runtime_error("cannot run gpulab-sim-bench again for " + spec + ": " +
                             std::strerror(error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kSuccess) {
    return std::nullopt;
  }
  return points_from_file(points_file);
}

}  // namespace

int run_fidelity(const FidelityOptions& options) {
  std::vector<CorpusEntry> entries;
  try {
    entries = load_measurements(options.files, options.skip);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  if (entries.empty()) {
    return usage_error("no `gpulab bench` times measured on a GPU in the files");
  }
  if (!options.spec.empty()) {
    return run_one_spec(entries, options.spec, options.points_file, options);
  }
  std::vector<std::string> specs;
  for (const CorpusEntry& e : entries) {
    if (std::find(specs.begin(), specs.end(), e.spec) == specs.end()) {
      specs.push_back(e.spec);
    }
  }
  if (specs.size() == 1) {
    return run_one_spec(entries, specs.front(), options.points_file, options);
  }
  // The sim simulates one spec per process: one run of this program per GPU, then the summary
  // over all of them.
  std::vector<FidelityPoint> all;
  const std::filesystem::path folder = std::filesystem::temp_directory_path();
  for (const std::string& spec : specs) {
    const std::string file =
        (folder / ("gpulab-fidelity-" + std::to_string(getpid()) + ".json")).string();
    std::printf("== %s ==\n", spec.c_str());
    const std::optional<std::vector<FidelityPoint>> points = run_child(options, spec, file);
    std::filesystem::remove(file);
    if (!points) {
      std::fprintf(stderr, "gpulab-sim-bench: error: the run for %s failed\n", spec.c_str());
      return kFailure;
    }
    for (FidelityPoint p : *points) {
      p.ladder = spec + " " + p.ladder;
      p.sweep = p.sweep.empty() ? "" : spec + " " + p.sweep;
      all.push_back(std::move(p));
    }
    std::printf("\n");
  }
  std::printf("== every GPU ==\n");
  if (all.empty()) {
    std::printf("no measurement can be compared with today's catalog\n");
    return has_bounds(options) ? kFailure : kSuccess;
  }
  return print_summary(all, entries.size() - all.size(), options) ? kSuccess : kFailure;
}

int add_to_corpus(const std::string& corpus, const std::vector<std::string>& files) {
  try {
    std::vector<CorpusEntry> entries;
    if (std::filesystem::exists(corpus)) {
      entries = corpus_from_json(load_results_json(corpus), corpus);
    }
    std::size_t added = 0;
    for (const std::string& file : files) {
      const std::vector<CorpusEntry> read = corpus_entries(load_results(file), file);
      added += read.size();
      entries = merge_corpus(std::move(entries), read);
    }
    save_corpus(corpus, entries);
    std::printf("%zu measurements added to %s (%zu in all)\n", added, corpus.c_str(),
                entries.size());
    return kSuccess;
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
}

}  // namespace gpulab::sim_bench
