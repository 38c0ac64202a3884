#include "gpulab/labkit/lab_main.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/lab.hpp"
#include "gpulab/core/memory_history.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace gpulab::labkit {

std::string LabContext::measured_label() const {
  return timing_label(clock, spec.name);
}

std::string LabContext::modeled_label() const {
  return "modeled (" + spec.name + ")";
}

Metric LabContext::timed(std::string name, double value) const {
  return Metric::timed(std::move(name), value, clock, spec.name);
}

std::string LabContext::rerun(const std::string& args) const {
  return "gpulab run " + lab + (variant == "student" ? " --student" : "") +
         (args.empty() ? "" : " -- " + args);
}

namespace {

void print_header(const LabContext& context) {
  std::ostream& out = *context.out;
  out << "gpulab " << context.lab << ": " << context.title << "\n";
  const bool solution = context.variant == "solution";
  out << "code:    " << (solution ? "solutions/ (the instructor's solution)" : "labs/ (your code)")
      << "\n";
  out << "backend: " << context.backend << " (" << context.device << ")\n";
  switch (context.clock) {
    case TimingClock::gpu:
      out << "timings: GPU time from CUDA events.";
      break;
    case TimingClock::modeled:
      out << "timings: the sim's modeled clock: CUDA events read a " << context.spec.name
          << " clock that advances by each kernel's time modeled from its counted memory "
             "traffic and instructions (docs/sim.md, section 10). Deterministic, GPU-like, NOT "
             "measured. A "
             "launch takes the same time every run, so the harness stops at two equal samples.";
      break;
    case TimingClock::host:
      out << "timings: CPU time of the simulation, NOT GPU time (GPULAB_SIM_CLOCK=host, or a "
             "build that cannot count memory traffic).";
      break;
  }
  out << " Roofline columns show the time on " << context.spec.name
      << " from the work each step declares.\n";
  out << "\n";
}

}  // namespace

int lab_main(int argc, char** argv, const LabInfo& info, const AddOptions& add_options,
             const Report& report) {
  const std::string lab = info.lab;
  CLI::App app{"gpulab " + lab + ": " + info.title + " (the lab's report)", "gpulab run " + lab};
  std::string spec_name;
  std::string json_path;
  std::string history_path;
  bool quick = false;
  app.add_option("--spec", spec_name,
                 "GPU the modeled numbers are for (see `gpulab specs`); on sim also the GPU "
                 "simulated. Default: the detected GPU, on sim H100 SXM or GPULAB_SIM_SPEC");
  app.add_option("--json", json_path, "Also save the results to this JSON file");
  app.add_flag("--quick", quick, "Smaller problems and fewer samples (tests, CI)");
  app.add_option("--memory-history", history_path,
                 "Record every device allocation and free of the run (on a GPU: the framework's "
                 "own) and save them to this JSON file, also when the run fails; open it with "
                 "gpulab view");
  if (add_options) {
    add_options(app);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpulab %s: error: %s (see --help)\n", lab.c_str(), e.what());
    return kUsage;
  }

  LabContext context;
  std::uint64_t capacity_bytes = 0;
  bool recording = false;
  // The history of a run that failed is the one most worth reading: it is saved either way.
  const auto save_history = [&]() -> bool {
    if (!recording) {
      return true;
    }
    stop_memory_history();
    try {
      save_memory_history(history_path,
                          capture_memory_history(context.results.context, capacity_bytes));
      std::cout << "memory history saved to " << history_path << "\n";
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpulab %s: error: %s\n", lab.c_str(), e.what());
      return false;
    }
  };
  context.lab = lab;
  context.title = info.title;
  context.variant = info.variant;
  context.backend = backend_name();
  context.quick = quick;
  context.out = &std::cout;
  try {
    const DeviceContext resolved = resolve_device_context(spec_name);
    context.device = resolved.device.name;
    context.spec = resolved.spec;
    context.clock = resolved.clock;
    context.results.context = make_context(context.backend, context.device, context.spec.name);
    context.results.context.clock = context.clock;
    capacity_bytes = resolved.device.global_memory_bytes;
    print_header(context);
    if (!history_path.empty()) {
      start_memory_history();
      recording = true;
    }
    report(context);
    if (!json_path.empty()) {
      save_results(json_path, context.results);
      std::cout << "\nresults saved to " << json_path << "\n";
    }
    return save_history() ? 0 : 1;
  } catch (const UsageError& e) {  // --spec names no GPU
    std::fprintf(stderr, "gpulab %s: error: %s\n", lab.c_str(), e.what());
    return kUsage;
  } catch (const NotImplemented& e) {
    std::cout.flush();
    std::fprintf(stderr, "gpulab %s\n", e.what());  // "lab01: summarize_samples is not ..."
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "gpulab %s: error: %s\n", lab.c_str(), e.what());
  }
  (void)save_history();
  return 1;
}

}  // namespace gpulab::labkit
