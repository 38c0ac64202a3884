// `gpulab profile [LAB|PROGRAM] [--solution|--student] [--backend cuda|sim] [--kernel REGEX]
// [--spec NAME] [--metrics LIST] [--launches] [--source] [--json FILE] [-- ARGS]`: runs a lab's
// report (or any project program) and prints, per kernel, what its launches did to memory
// (counters.hpp, under Nsight Compute's metric names) and the time modeled from those figures
// (traffic_model.hpp), like `ncu --print-summary per-kernel`; with --source, also per line of each
// kernel's code (source_view.hpp), like Nsight Compute's Source page. On sim the figures are
// counted (GPULAB_SIM_COUNTERS, GPULAB_SIM_COUNTERS_BY_LINE); on a GPU with Nsight Compute on
// PATH, `ncu --metrics <the same names> --csv` measures them.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "build_config.hpp"
#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/rules.hpp"
#include "gpulab/core/source_view.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/traffic_model.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/workspace.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace gpulab::cli {
namespace {

struct Options {
  std::string target;
  bool solution = false;
  bool student = false;
  std::string kernel = ".*";
  std::string spec;
  std::string metrics;
  bool launches = false;
  bool source = false;
  std::string cache_control = "all";
  std::string json;
  std::string backend;  // "" = cuda when a GPU and ncu are there, else sim
  bool list_metrics = false;
  std::vector<std::string> extra;
};

// Where the figures come from: "cuda" (Nsight Compute on the GPU) or "sim" (counted).
std::string choose_profile_backend(const Options& options, bool have_ncu) {
  if (options.source) {
    if (options.backend == "cuda") {
      throw UsageError(
          "--source counts by line on the sim backend only; on a GPU, Nsight Compute's Source "
          "page shows measured figures per line (docs/profiling/nsight.md)");
    }
    return "sim";
  }
  if (!options.backend.empty()) {
    if (options.backend == "cuda" && !have_ncu) {
      throw std::runtime_error(
          "--backend cuda needs Nsight Compute: no ncu on PATH (it comes with the CUDA toolkit, "
          "in its bin/ folder)");
    }
    return options.backend;
  }
  if (!have_ncu) {
    return "sim";
  }
  if (options.target.find('/') != std::string::npos) {
    return options.target.ends_with(".cuda") ? "cuda" : "sim";
  }
  return choose_backend(build_manifest(), "", cuda_devices());
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) {
      items.push_back(item);
    }
  }
  return items;
}

// One kernel's launches, summed.
struct KernelSummary {
  std::string kernel;
  std::size_t launches = 0;
  std::vector<CountedLaunch> counted;  // --source: its launches, for the rules
  std::vector<Finding> findings;       // --source: the rules' problems of its launches
  MemoryCounters counters;
  std::vector<SourceLineCounters> lines;  // --source: the launches' figures per line, summed
  double modeled_s = 0;
  std::map<ModelBound, double> time_by_bound;
  std::string assumptions;
};

std::string bound_of(const KernelSummary& summary) {
  const auto largest =
      std::max_element(summary.time_by_bound.begin(), summary.time_by_bound.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return largest == summary.time_by_bound.end() ? "" : std::string(to_string(largest->first));
}

// Results schema 2: one result per kernel, every figure of its launches summed (provenance
// "counted" on sim, "measured" when Nsight Compute measured them on a GPU), the time modeled from
// them and the model's term that bounds most of that time (param "bound").
ResultsFile profile_results(const std::vector<KernelSummary>& kernels, const std::string& spec,
                            const std::string& backend) {
  ResultsFile file;
  const bool sim = backend == "sim";
  file.context = make_context(backend, sim ? "gpulab sim (" + spec + ")" : "", spec);
  for (const KernelSummary& k : kernels) {
    Result result{
        result_kind::counted_kernel,
        {{"kernel", k.kernel}, {"launches", std::to_string(k.launches)}, {"bound", bound_of(k)}},
        counter_results_metrics(k.counters, sim ? Provenance::counted : Provenance::measured)};
    result.metrics.push_back(Metric::modeled("time_ms", k.modeled_s * 1e3, spec));
    file.results.push_back(std::move(result));
    // --source: the kernel's lines and its problems (the viewer's Source panel).
    for (const SourceViewLine& line : source_view(k.lines)) {
      file.results.push_back(source_line_result(k.kernel, line));
    }
    for (const Finding& f : k.findings) {
      file.results.push_back(finding_result(k.kernel, f, spec));
    }
  }
  return file;
}

std::string count_text(double value) {
  return format_fixed(value,
                      value == static_cast<double>(static_cast<std::uint64_t>(value)) ? 0 : 2);
}

// The kernel's source view: one row per line of its code that accessed memory, in file and line
// order, then its hottest lines.
void print_source_view(const KernelSummary& k, const std::string& spec_name) {
  std::cout << "\nSource of " << k.kernel << " (" << k.launches
            << (k.launches == 1 ? " launch" : " launches") << "), counted per line:\n";
  if (k.lines.empty()) {
    std::cout << "  no line of it accessed global or shared memory\n";
    return;
  }
  const std::vector<SourceViewLine> view = source_view(k.lines);
  const auto where = [](const SourceLineCounters& l) {
    if (l.file.empty()) {
      return std::string("(no line information)");
    }
    return std::filesystem::path(l.file).filename().string() + ":" + std::to_string(l.line);
  };
  // A figure where the line has what it is a figure of, else an empty cell.
  const auto when = [](bool has, const std::string& text) { return has ? text : std::string(); };
  Table table({{"line", "", Align::left},
               {"requests", "", Align::right},
               {"ld sect/req", "", Align::right},
               {"st sect/req", "", Align::right},
               {"excess sect", "", Align::right},
               {"shared wf", "", Align::right},
               {"conflicts", "", Align::right},
               {"L2 hit", "%", Align::right},
               {"DRAM read", "", Align::right},
               {"L1", "%", Align::right},
               {"code", "", Align::left}});
  for (const SourceViewLine& v : view) {
    const MemoryCounters& c = v.figures.counters;
    const std::uint64_t global =
        c.global_load.requests + c.global_store.requests + c.global_atomic.requests;
    const std::uint64_t shared =
        c.shared_load.requests + c.shared_store.requests + c.shared_atomic.requests;
    const std::uint64_t wavefronts =
        c.shared_load.wavefronts + c.shared_store.wavefronts + c.shared_atomic.wavefronts;
    const std::uint64_t conflicts = c.shared_load.bank_conflicts + c.shared_store.bank_conflicts +
                                    c.shared_atomic.bank_conflicts;
    std::string code = v.code;
    if (code.size() > 60) {
      code = code.substr(0, 57) + "...";
    }
    table.add_row(
        {where(v.figures), std::to_string(global + shared),
         when(c.global_load.requests > 0, format_fixed(c.sectors_per_load_request(), 2)),
         when(c.global_store.requests > 0, format_fixed(c.sectors_per_store_request(), 2)),
         when(global > 0, std::to_string(excess_sectors(c))),
         when(shared > 0, std::to_string(wavefronts)), when(shared > 0, std::to_string(conflicts)),
         when(global > 0, format_fixed(c.l2_hit_rate_pct(), 1)),
         when(global > 0, format_bytes(static_cast<double>(c.dram_bytes_read))),
         format_fixed(v.l1_share_pct, 1), code});
  }
  std::cout << table
            << "Hottest lines by their share of the kernel's L1 traffic (L1: a global "
               "sector 32 bytes, a shared-memory wavefront 128):";
  for (const SourceViewLine& v : hottest_lines(view, 3)) {
    std::cout << " " << where(v.figures) << " " << format_fixed(v.l1_share_pct, 1) << "%";
  }
  std::cout << "\n";
  if (k.findings.empty()) {
    std::cout << "No problem the rules know of would gain 5% or more here (modeled, " << spec_name
              << ").\n";
    return;
  }
  std::cout << "Problems, largest modeled gain first (" << spec_name << "):\n";
  for (const Finding& f : k.findings) {
    std::cout << "  " << (f.line == 0 ? std::string("the kernel") : where({f.file, f.line, {}}))
              << ": " << to_string(f.problem) << ": " << f.what << "; fixed, the kernel would be "
              << format_fixed(f.speedup, 2) << "x as fast (modeled)\n";
  }
}

int run(const Options& options) {
  if (options.list_metrics) {
    // Nsight Compute's names first (what --backend cuda measures), then the sim's own.
    const std::vector<std::string_view> measured = ncu_metric_names();
    for (const std::string_view name : measured) {
      std::cout << name << "\n";
    }
    for (const CounterMetric& m : counter_metrics(MemoryCounters{})) {
      if (std::find(measured.begin(), measured.end(), m.name) == measured.end()) {
        std::cout << m.name << "\n";
      }
    }
    return kSuccess;
  }
  if (options.target.empty()) {
    throw UsageError("profile needs a lab or a program (gpulab profile --help)");
  }
  std::regex kernel_filter;
  try {
    kernel_filter = std::regex(options.kernel, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("--kernel '" + options.kernel + "' is not a regular expression: " + e.what());
  }
  const std::vector<std::string> metrics = split_list(options.metrics);
  for (const std::string& name : metrics) {
    if (!is_counter_metric(name)) {
      std::string known;
      for (const CounterMetric& m : counter_metrics(MemoryCounters{})) {
        known += (known.empty() ? "" : ", ") + std::string(m.name);
      }
      throw UsageError("unknown metric '" + name + "'; known: " + known);
    }
  }
  std::optional<GpuSpec> chosen;
  if (!options.spec.empty()) {
    chosen = find_spec(options.spec);
    if (!chosen) {
      throw UsageError("unknown GPU '" + options.spec + "' (gpulab specs lists them)");
    }
  }
  const std::optional<std::filesystem::path> ncu = find_on_path("ncu");
  const std::string backend = choose_profile_backend(options, ncu.has_value());
  const std::filesystem::path program =
      target_program(options.target, options.solution, options.student, backend, "profile");
  const std::vector<std::string>& args = options.extra;
  if (backend == "sim" && !GPULAB_SIM_COUNTING_AVAILABLE) {
    throw std::runtime_error(
        "memory counting is not available in this build (" GPULAB_SIM_COUNTING_STATUS ")");
  }

  // The figures' file (sim: counted launches; cuda: ncu's CSV): fresh, in a private temporary
  // directory.
  int status = 0;
  std::vector<CountedLaunch> launches;
  {
    const PrivateTempFolder folder("gpulab-profile", "the counters");
    const std::filesystem::path& dir = folder.path();
    if (backend == "cuda") {
      const std::filesystem::path csv = dir / "ncu.csv";
      std::string names;
      for (const std::string_view name : ncu_metric_names()) {
        names += (names.empty() ? "" : ",") + std::string(name);
      }
      std::vector<std::string> ncu_args = {"--metrics",           names,        "--csv",
                                           "--print-units",       "base",       "--cache-control",
                                           options.cache_control, "--log-file", csv.string(),
                                           program.string()};
      ncu_args.insert(ncu_args.end(), args.begin(), args.end());
      std::cout << "gpulab profile: " << program.filename().string() << " under Nsight Compute ("
                << ncu->string() << ")\n"
                << std::flush;
      status = run_program(*ncu, ncu_args);
      if (const std::optional<std::string> text = read_file(csv)) {
        try {
          launches = parse_ncu_csv(*text);
        } catch (const std::exception& e) {
          throw std::runtime_error(std::string("reading what ncu wrote: ") + e.what());
        }
      }
      // The modeled times are for the GPU that was measured, unless --spec says otherwise.
      const CudaDevices devices = cuda_devices();
      if (const DeviceQuery query = devices ? devices() : DeviceQuery{}; query.usable()) {
        const std::string key = spec_for_device(query.devices.front()).key;
        for (CountedLaunch& launch : launches) {
          launch.spec = key;
        }
      }
    } else {
      // The program's sim settings, in its environment (this process's stays as it is).
      const std::filesystem::path file = dir / "counters.jsonl";
      std::vector<std::pair<std::string, std::string>> env = {
          {"GPULAB_SIM_COUNTERS", file.string()},
          {"GPULAB_SIM_CACHE_CONTROL", options.cache_control}};
      if (chosen) {
        env.emplace_back("GPULAB_SIM_SPEC", chosen->key);
      }
      if (options.source) {
        env.emplace_back("GPULAB_SIM_COUNTERS_BY_LINE", "1");
      }
      std::cout << "gpulab profile: " << program.filename().string()
                << " with memory counting on (sim backend)\n"
                << std::flush;
      status = run_program(program, args, env);
      if (std::filesystem::exists(file)) {
        launches = read_counted_launches(file);
      }
    }
  }  // the folder and its file are removed
  std::cout << "\n";
  if (status != 0) {
    std::cerr << "gpulab profile: " << program.filename().string() << " exited with status "
              << status << "; the launches it finished are below\n";
  }
  if (launches.empty()) {
    std::cerr << (backend == "cuda"
                      ? "gpulab profile: Nsight Compute profiled no kernel launch\n"
                      : "gpulab profile: no kernel launch was counted (is it a sim-backend "
                        "program?)\n");
    return kFailure;
  }

  // Group by kernel, in first-launch order.
  std::vector<KernelSummary> kernels;
  std::vector<std::string> seen;
  for (const CountedLaunch& launch : launches) {
    if (std::find(seen.begin(), seen.end(), launch.kernel) == seen.end()) {
      seen.push_back(launch.kernel);
    }
    if (!std::regex_search(launch.kernel, kernel_filter)) {
      continue;
    }
    const GpuSpec spec = chosen ? *chosen : find_spec(launch.spec).value_or(default_spec());
    const ModeledTime m = model_launch(launch, spec);
    auto it = std::find_if(kernels.begin(), kernels.end(),
                           [&](const KernelSummary& k) { return k.kernel == launch.kernel; });
    if (it == kernels.end()) {
      kernels.emplace_back();
      kernels.back().kernel = launch.kernel;
      it = std::prev(kernels.end());
    }
    it->launches += 1;
    it->counters += launch.counters;
    if (options.source) {
      add_source_lines(it->lines, launch.lines);
      it->counted.push_back(launch);
      if (chosen) {
        it->counted.back().spec = chosen->key;
      }
    }
    it->modeled_s += m.time_s;
    it->time_by_bound[m.bound] += m.time_s;
    if (it->assumptions.empty()) {
      it->assumptions = m.assumptions;
    }
    if (options.launches) {
      std::cout << "launch " << launch.launch_id << ": " << launch.kernel << " grid ("
                << launch.grid[0] << "," << launch.grid[1] << "," << launch.grid[2] << ") block ("
                << launch.block[0] << "," << launch.block[1] << "," << launch.block[2] << ") at "
                << launch.where << ": " << format_fixed(m.time_s * 1e6, 2) << " us modeled ("
                << spec.name << "), " << to_string(m.bound) << "\n";
    }
  }
  if (kernels.empty()) {
    std::string names;
    for (const std::string& name : seen) {
      names += (names.empty() ? "" : ", ") + name;
    }
    std::cerr << "gpulab: error: no counted launch matches --kernel '" << options.kernel
              << "'; kernels launched: " << names << "\n";
    return kUsage;
  }

  const std::string spec_name =
      chosen ? chosen->name : find_spec(launches.front().spec).value_or(default_spec()).name;
  if (backend == "cuda") {
    std::cout << "Measured by Nsight Compute on this GPU; time modeled (" << spec_name
              << ") from the measured figures.\n\n";
  } else {
    std::cout << "Counted on sim (exact for converged warps), time modeled (" << spec_name
              << ") from the counts; not measured.\n\n";
  }
  if (metrics.empty()) {
    Table table({{"kernel", "", Align::left},
                 {"launches", "", Align::right},
                 {"modeled", "us", Align::right},
                 {"bound", "", Align::left},
                 {"ld sectors/req", "", Align::right},
                 {"st sectors/req", "", Align::right},
                 {"shared wavefronts", "", Align::right},
                 {"bank conflicts", "", Align::right},
                 {"L2 hit", "%", Align::right},
                 {"DRAM read", "", Align::right},
                 {"DRAM write", "", Align::right}});
    for (const KernelSummary& k : kernels) {
      const MemoryCounters& c = k.counters;
      table.add_row({k.kernel, std::to_string(k.launches), format_fixed(k.modeled_s * 1e6, 2),
                     bound_of(k), format_fixed(c.sectors_per_load_request(), 2),
                     format_fixed(c.sectors_per_store_request(), 2),
                     std::to_string(c.shared_load.wavefronts + c.shared_store.wavefronts +
                                    c.shared_atomic.wavefronts),
                     std::to_string(c.shared_load.bank_conflicts + c.shared_store.bank_conflicts),
                     format_fixed(c.l2_hit_rate_pct(), 1),
                     format_bytes(static_cast<double>(c.dram_bytes_read)),
                     format_bytes(static_cast<double>(c.dram_bytes_written))});
    }
    std::cout << table;
  } else {
    Table table({{"kernel", "", Align::left},
                 {"metric", "", Align::left},
                 {"unit", "", Align::left},
                 {"value", "", Align::right}});
    for (const KernelSummary& k : kernels) {
      for (const CounterMetric& m : counter_metrics(k.counters)) {
        if (std::find(metrics.begin(), metrics.end(), m.name) != metrics.end()) {
          table.add_row({k.kernel, std::string(m.name), std::string(m.unit), count_text(m.value)});
        }
      }
    }
    std::cout << table;
  }
  for (const KernelSummary& k : kernels) {
    if (!k.assumptions.empty()) {
      std::cout << "  " << k.kernel << ": " << k.assumptions << "\n";
    }
  }
  if (options.source) {
    const GpuSpec spec =
        chosen ? *chosen : find_spec(launches.front().spec).value_or(default_spec());
    for (KernelSummary& k : kernels) {
      k.findings = find_problems(k.counted, spec);
      print_source_view(k, spec.name);
    }
  }
  std::cout << "\nSums over each kernel's launches. Metric names as in Nsight Compute (gpulab "
               "profile --metrics NAME,... prints any of them); docs/sim.md explains the counts "
               "and the model.\n";
  if (!options.json.empty()) {
    save_results(options.json, profile_results(kernels, spec_name, backend));
    std::cout << "results saved to " << options.json << "\n";
  }
  return status == 0 ? kSuccess : kFailure;
}

}  // namespace

Command add_profile_command(CLI::App& app, const std::vector<std::string>& program_args) {
  CLI::App* command = app.add_subcommand(
      "profile",
      "Runs a lab's report (or a sim-backend program) with memory counting on and prints, per "
      "kernel, its requests, sectors, shared-memory wavefronts, bank conflicts, L2 and DRAM "
      "traffic, and the GPU time modeled from them");
  auto options = std::make_shared<Options>();
  options->extra = program_args;
  command->add_option("target", options->target, "A lab (lab01, 02, ...) or a program's path");
  auto* solution = command->add_flag("--solution", options->solution, "The solution's code");
  auto* student = command->add_flag("--student", options->student, "The code in labs/");
  solution->excludes(student);
  command
      ->add_option("--backend", options->backend,
                   "sim: count on the simulator; cuda: measure with Nsight Compute (ncu) on the "
                   "GPU. Default: cuda when a GPU is usable and ncu is on PATH, else sim")
      ->check(CLI::IsMember({"cuda", "sim"}));
  command->add_option("--kernel", options->kernel,
                      "Only kernels whose name matches this regular expression");
  command->add_option("--spec", options->spec,
                      "The GPU to simulate and model (default: GPULAB_SIM_SPEC or H100 SXM)");
  command->add_option("--metrics", options->metrics,
                      "Comma-separated metric names to print instead of the summary table");
  command->add_flag("--launches", options->launches, "Also print one line per launch");
  command->add_flag("--source", options->source,
                    "Also print, per kernel, the figures counted on each line of its code and its "
                    "hottest lines, like Nsight Compute's Source page (counted on the sim backend, "
                    "which it implies)");
  command->add_flag("--list-metrics", options->list_metrics,
                    "Print the metric names profile reports, one per line, and exit: Nsight "
                    "Compute's (measured with --backend cuda) first, then the sim's own");
  command
      ->add_option("--cache-control", options->cache_control,
                   "all: empty the modeled L2 before each launch, as Nsight Compute does "
                   "(default); none: keep what earlier work left in it")
      ->check(CLI::IsMember({"all", "none"}));
  command->add_option("--json", options->json,
                      "Also save each kernel's counts and modeled time to this results file "
                      "(provenance \"counted\"; gpulab show and gpulab view read it)");
  command->footer(
      "Example: gpulab profile lab02 --kernel softmax --source\n"
      "Arguments after -- go to the program. Any sim program counts with "
      "GPULAB_SIM_COUNTERS=FILE set (docs/sim.md).");
  return {command, [options] { return run(*options); }};
}

}  // namespace gpulab::cli
