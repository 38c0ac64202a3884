#include "gpulab/viewer/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <utility>

#include "gpulab/core/console.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace gpulab::viewer {
namespace {

// Text from a results file goes straight onto the screen: replace control characters (a
// newline would break a table row) and cap the length so one field cannot push the table off the
// window. Valid UTF-8 is kept; the loader has already rejected invalid UTF-8.
std::string displayable(std::string_view text, std::size_t max_bytes = 200) {
  std::string out;
  for (const char c : text.substr(0, max_bytes)) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  if (text.size() > max_bytes) {
    // Do not leave half a UTF-8 sequence at the cut.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
      out.pop_back();
    }
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80) != 0) {
      out.pop_back();
    }
    out += "...";
  }
  return out;
}

std::string gb_text(std::uint64_t bytes) {
  return format_fixed(static_cast<double>(bytes) / 1e9, 1);
}

std::string mb_text(std::uint64_t bytes) {
  return format_fixed(static_cast<double>(bytes) / 1e6, 1);
}

// A tensor peak of 0 means the GPU has no tensor path for that precision (TF32/BF16 before
// Ampere), not a throughput of zero.
SpecRow tflops_row(std::string property, double value, const std::string& origin) {
  if (value <= 0) {
    return {std::move(property), "-", "not supported", origin};
  }
  return {std::move(property), format_fixed(value, 1), "TFLOP/s", origin};
}

// The device a live run's results are about: the live runs use this process's backend (device 0
// on cuda, the simulated GPU on sim), whatever query the model was built from.
std::string live_device_name(const DeviceQuery& devices, const GpuSpec& simulated) {
  if (std::string_view(backend_name()) == "sim") {
    return "gpulab sim (" + simulated.name + ")";
  }
  return devices.usable() ? devices.devices.front().name : "no CUDA device";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------------

Model::Model(DeviceQuery devices, std::string sim_spec_env)
    : devices_(std::move(devices)), explorer_(default_spec()) {
  // The simulated GPU, chosen by the sim runtime's rule (choose_sim_spec), so the viewer names
  // the same GPU a sim run would model.
  simulated_spec_ = default_spec();
  simulated_origin_ = "default";
  bool env_valid = false;
  if (!sim_spec_env.empty()) {
    if (auto choice = choose_sim_spec(sim_spec_env); choice.spec) {
      simulated_spec_ = std::move(*choice.spec);
      simulated_origin_ = "GPULAB_SIM_SPEC=" + displayable(sim_spec_env, 60);
      env_valid = true;
    } else {
      notes_.push_back("GPULAB_SIM_SPEC names an unknown GPU '" + displayable(sim_spec_env, 60) +
                       "' (see `gpulab specs`); using " + simulated_spec_.name);
    }
  }

  // A real device's spec (on the cuda backend) comes first. On the sim backend the "device" is
  // the simulated one, so its spec is simulated_spec_ rather than a lookup of its made-up name.
  const bool real_device = devices_.backend != "sim" && devices_.usable();
  std::optional<GpuSpec> device_spec;
  if (real_device) {
    device_spec = spec_for_device(devices_.devices.front());
  }

  const std::span<const GpuSpec> database = all_specs();
  if (device_spec && device_spec->origin == SpecOrigin::estimated) {
    specs_.push_back(*device_spec);  // not in the database: offer the estimate as its own entry
  }
  specs_.insert(specs_.end(), database.begin(), database.end());
  if (specs_.empty()) {
    specs_.push_back(default_spec());  // an empty database still leaves something to show
  }

  const auto index_of = [this](const GpuSpec& wanted) {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].key == wanted.key && specs_[i].name == wanted.name) {
        return i;
      }
    }
    return std::size_t{0};
  };
  if (device_spec) {
    selected_ = index_of(*device_spec);
    choice_ = SpecChoice::detected_device;
  } else {
    selected_ = index_of(simulated_spec_);
    choice_ = env_valid ? SpecChoice::sim_spec_env : SpecChoice::fallback;
  }
  explorer_.set_spec(selected_spec());
  live_.context = make_context(backend_name(), live_device_name(devices_, simulated_spec_),
                               selected_spec().name);
  rebuild_views();
}

Model Model::detect() {
  return Model(query_devices(), sim_spec_request());
}

bool Model::select_spec(std::size_t index) {
  if (index >= specs_.size()) {
    return false;
  }
  selected_ = index;
  choice_ = SpecChoice::user;
  explorer_.set_spec(selected_spec());
  rebuild_views();
  return true;
}

bool Model::select_spec(std::string_view name) {
  if (auto found = find_spec(name)) {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].origin == SpecOrigin::datasheet && specs_[i].key == found->key) {
        return select_spec(i);
      }
    }
  }
  // The estimated entry is not in the database; it is found by its display name.
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].origin == SpecOrigin::estimated && specs_[i].name == name) {
      return select_spec(i);
    }
  }
  return false;
}

const LoadedResults& Model::load_results(const std::filesystem::path& path) {
  LoadedResults entry;
  entry.path = path.string();
  try {
    // One read: a memory history file is a results file with a memory_history section, a
    // class summary one with a class_summary section.
    const nlohmann::json document = load_results_json(path);
    entry.file = results_from_json(document, entry.path);
    if (document.contains("memory_history")) {
      entry.history = memory_history_from_json(document, entry.path);
    }
    if (is_class_summary(document)) {
      entry.class_summary = class_summary_from_json(document, entry.path);
    }
    // Formatted once here rather than every frame: a file can hold thousands of metrics.
    entry.context = context_rows(entry.file->context);
    entry.metrics = metric_rows(*entry.file);
  } catch (const ResultsError& e) {
    entry.file.reset();  // a file whose history or summary is invalid is not half-loaded
    entry.history.reset();
    entry.class_summary.reset();
    entry.error = displayable(e.what(), 400);  // already names the file and the location
  } catch (const std::exception& e) {
    // Anything else (out of memory on a huge file, a filesystem error) is still one line in the
    // Results panel, never an exception in the draw loop.
    entry.file.reset();
    entry.history.reset();
    entry.class_summary.reset();
    entry.context.clear();
    entry.metrics.clear();
    entry.error = displayable(entry.path + ": " + e.what(), 400);
  }
  results_.push_back(std::move(entry));
  rebuild_views();
  return results_.back();
}

void Model::set_roofline_precision(Precision precision) {
  precision_ = precision;
  rebuild_views();
}

void Model::rebuild_views() {
  panel_data_ = PanelData{};
  live_entry_ = LoadedResults{};
  live_entry_.path = "live run (" + live_.context.backend + ")";
  if (!live_.results.empty()) {
    live_entry_.file = live_;
    live_entry_.context = context_rows(live_.context);
    live_entry_.metrics = metric_rows(live_);
  }
  std::vector<Source> sources;
  for (const LoadedResults& loaded : results_) {
    if (!loaded.ok()) {
      continue;
    }
    const ResultsContext& context = loaded.file->context;
    std::string label = std::filesystem::path(loaded.path).filename().string();
    if (!context.device.empty()) {
      label += ": " + context.device;
    }
    sources.push_back(Source{
        displayable(label, 80), &*loaded.file, context.clock == TimingClock::host,
        timing_label(context.clock, context.spec), loaded.history ? &*loaded.history : nullptr,
        loaded.class_summary ? &*loaded.class_summary : nullptr});
  }
  if (!live_.results.empty()) {
    sources.push_back(Source{"live (" + live_.context.backend + ")", &live_,
                             live_.context.clock == TimingClock::host,
                             timing_label(live_.context.clock, live_.context.spec)});
  }
  const GpuSpec& spec = selected_spec();
  for (const Source& source : sources) {
    panel_data_.sources.push_back(SourceViews{
        source, benchmark_view(*source.file, spec), components_views(*source.file),
        sweep_views(*source.file), memory_views(*source.file), code_views(*source.file),
        levels_views(*source.file),
        source.history != nullptr ? std::optional(memory_timeline_view(*source.history))
                                  : std::nullopt,
        source.class_summary != nullptr ? std::optional(class_view(*source.class_summary))
                                        : std::nullopt});
    panel_data_.sources.back().benchmark.cpu_times = source.cpu_times;
    panel_data_.sources.back().benchmark.measured_label = source.measured_label;
    for (ComponentsView& view : panel_data_.sources.back().components) {
      view.cpu_times = source.cpu_times;
      view.measured_label = source.measured_label;
    }
    for (SweepView& view : panel_data_.sources.back().sweeps) {
      view.cpu_times = source.cpu_times;
      view.measured_label = source.measured_label;
    }
    for (LevelsView& view : panel_data_.sources.back().levels) {
      view.measured_label = source.measured_label;
    }
  }
  panel_data_.roofline = roofline_view(sources, spec, precision_);
}

bool Model::start_run(std::string& error) {
  if (runner_.status().state == RunState::running) {
    error = "a run is in progress: wait for it or cancel it";
    return false;
  }
  RunPlan plan;
  try {
    plan = make_plan(selections_.experiment, selections_.options, selected_spec());
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  collect_results();  // results of the previous run still waiting belong before the drop below
  // A rerun replaces its earlier results rather than piling up beside them.
  const auto same_run = [this](const Result& result) {
    switch (selections_.experiment) {
      case Experiment::bandwidth:
        return result.name == result_kind::vector_add;
      case Experiment::components:
        return result.name == result_kind::attention_component;
      case Experiment::sweep: {
        const auto kernel = result.params.find("kernel");
        return result.name == result_kind::block_size_sweep && kernel != result.params.end() &&
               kernel->second == selections_.options.sweep_kernel;
      }
    }
    return false;
  };
  std::erase_if(live_.results, same_run);
  // The live source comes after every loaded file (rebuild_views): show it in the panel it fills.
  const auto live_index = static_cast<std::size_t>(std::count_if(
      results_.begin(), results_.end(), [](const LoadedResults& r) { return r.ok(); }));
  switch (selections_.experiment) {
    case Experiment::bandwidth:
      selections_.benchmark_source = live_index;
      selections_.benchmark_point = 0;
      break;
    case Experiment::components:
      selections_.components_source = live_index;
      selections_.components_shape = 0;
      break;
    case Experiment::sweep:
      selections_.sweep_source = live_index;
      selections_.sweep_index = 0;
      break;
  }
  live_.context.spec = selected_spec().name;
  live_.context.date = make_context("", "", "").date;
  rebuild_views();
  if (!runner_.start(std::move(plan))) {
    error = "a run is in progress: wait for it or cancel it";
    return false;
  }
  error.clear();
  return true;
}

void Model::queue_runs(std::vector<Experiment> experiments) {
  queue_.insert(queue_.end(), experiments.begin(), experiments.end());
  poll();
}

bool Model::runs_pending() const {
  return !queue_.empty() || runner_.status().state == RunState::running;
}

void Model::cancel_run() {
  queue_.clear();
  runner_.cancel();
}

bool Model::collect_results() {
  std::vector<Result> arrived = runner_.take_results();
  for (Result& result : arrived) {
    live_.results.push_back(std::move(result));
  }
  if (!arrived.empty()) {
    rebuild_views();
  }
  return !arrived.empty();
}

bool Model::poll() {
  const bool arrived = collect_results();
  const RunStatus status = runner_.status();
  // A run that failed or was cancelled ends the queue, once: runs queued after it still start.
  if (status.run != ended_run_ &&
      (status.state == RunState::failed || status.state == RunState::cancelled)) {
    ended_run_ = status.run;
    queue_.clear();
  } else if (status.state != RunState::running && !queue_.empty()) {
    selections_.experiment = queue_.front();
    queue_.erase(queue_.begin());
    if (std::string error; !start_run(error)) {
      run_errors_.push_back(std::string(to_string(selections_.experiment)) + ": " + error);
    }
  }
  return arrived;
}

void Model::wait_for_run() {
  do {
    runner_.wait();
    poll();
  } while (runs_pending());
}

bool Model::save_live(const std::filesystem::path& path, std::string& error) const {
  if (live_.results.empty()) {
    error = "nothing to save: the live run has no results yet";
    return false;
  }
  try {
    save_results(path, live_);
  } catch (const std::exception& e) {
    error = displayable(e.what(), 400);
    return false;
  }
  error.clear();
  return true;
}

// ---------------------------------------------------------------------------------------------
// Plain data for the panels
// ---------------------------------------------------------------------------------------------

DeviceSummary summarize_devices(const Model& model) {
  const DeviceQuery& query = model.devices();
  const bool sim = query.backend == "sim";
  DeviceSummary summary;
  summary.backend = query.backend;
  for (const DeviceInfo& d : query.devices) {
    summary.devices.push_back((sim ? "simulated device " : "device ") + std::to_string(d.index) +
                              ": " + displayable(d.name, 100) + " (CC " + d.compute_capability() +
                              ", " + std::to_string(d.sm_count) + " SMs, " +
                              gb_text(d.global_memory_bytes) + " GB)");
  }
  if (!query.usable()) {
    const std::string what = sim ? "no simulated device" : "no CUDA device";
    if (query.unavailable) {
      const DeviceUnavailable& why = *query.unavailable;
      summary.unavailable = what + ": ";
      if (!why.error_name.empty()) {
        summary.unavailable += why.error_name + " (" + std::to_string(why.error_code) + "): ";
      }
      summary.unavailable += why.reason;
    } else {
      summary.unavailable = what + " (the query gave no reason)";
    }
  }
  summary.simulation = "sim backend simulates " + model.simulated_spec().name + " (" +
                       model.simulated_spec_origin() +
                       "; choose another with GPULAB_SIM_SPEC=NAME before starting)";
  return summary;
}

std::string describe_choice(const Model& model) {
  const std::string why = model.devices().backend == "sim" ? "sim backend" : "no CUDA device";
  switch (model.choice()) {
    case SpecChoice::detected_device:
      return "the spec of device 0";
    case SpecChoice::sim_spec_env:
      return why + ": the GPU that GPULAB_SIM_SPEC names";
    case SpecChoice::fallback:
      return why + ": the default spec";
    case SpecChoice::user:
      return "chosen";
  }
  return "";
}

std::string spec_label(const GpuSpec& spec) {
  return spec.origin == SpecOrigin::estimated ? spec.name + " (estimated)" : spec.name;
}

SpecSheet spec_sheet(const GpuSpec& spec) {
  const bool estimated = spec.origin == SpecOrigin::estimated;
  SpecSheet sheet;
  sheet.title =
      spec.name + " (" + spec.key + "), " + spec.architecture + ", CC " + spec.compute_capability();
  sheet.estimated = estimated;
  sheet.origin = estimated ? "estimated from device properties" : "datasheet";
  sheet.source = spec.source;

  // For an estimate, throughput and bandwidth are computed from clocks and per-SM rates, while
  // counts and sizes are what the device itself reported: label the two differently.
  const std::string computed = estimated ? "estimated" : "datasheet";
  const std::string reported = estimated ? "device query" : "datasheet";

  sheet.peaks = {
      {"DRAM bandwidth", format_fixed(spec.dram_bandwidth_gb_s, 0), "GB/s", computed},
      tflops_row("FP32 (CUDA cores)", spec.fp32_tflop_s, computed),
      tflops_row("TF32 tensor, dense", spec.tf32_tensor_tflop_s, computed),
      tflops_row("FP16 tensor, dense, FP32 accumulate", spec.fp16_tensor_tflop_s, computed),
      tflops_row("BF16 tensor, dense, FP32 accumulate", spec.bf16_tensor_tflop_s, computed),
  };
  // The ridge point is where the roofline bends: kernels with fewer FLOP per DRAM byte than this
  // are memory-bound on this GPU. TFLOP/s * 1e3 / (GB/s) = FLOP/byte.
  if (spec.fp32_tflop_s > 0 && spec.dram_bandwidth_gb_s > 0) {
    sheet.peaks.push_back({"FP32 ridge point",
                           format_fixed(spec.fp32_tflop_s * 1e3 / spec.dram_bandwidth_gb_s, 1),
                           "FLOP/byte", "derived"});
  }
  sheet.peaks.insert(
      sheet.peaks.end(),
      {
          {"boost clock", format_fixed(spec.boost_clock_mhz, 0), "MHz", reported},
          {"SMs", std::to_string(spec.sm_count), "", reported},
          {"memory", gb_text(spec.memory_bytes), "GB", reported},
          {"memory bus", std::to_string(spec.memory_bus_width_bits), "bits", reported},
          {"L2 cache", mb_text(spec.l2_bytes), "MB", reported},
      });

  sheet.limits = {
      {"threads per SM", std::to_string(spec.max_threads_per_sm), "threads", reported},
      {"warps per SM", std::to_string(spec.max_warps_per_sm), "warps", reported},
      {"blocks per SM", std::to_string(spec.max_blocks_per_sm), "blocks", reported},
      {"registers per SM", std::to_string(spec.registers_per_sm), "32-bit registers", reported},
      {"registers per thread", std::to_string(spec.max_registers_per_thread), "registers",
       reported},
      {"shared memory per SM", std::to_string(spec.shared_memory_per_sm_bytes), "bytes", reported},
      {"shared memory per block (opt-in)", std::to_string(spec.shared_memory_per_block_optin_bytes),
       "bytes", reported},
      {"shared memory reserved per block",
       std::to_string(spec.reserved_shared_memory_per_block_bytes), "bytes", reported},
      {"threads per block", std::to_string(spec.max_threads_per_block), "threads", reported},
      {"warp size", std::to_string(spec.warp_size), "threads", reported},
  };
  return sheet;
}

std::vector<ContextRow> context_rows(const ResultsContext& context) {
  const auto or_unknown = [](const std::string& text) {
    return text.empty() ? std::string("unknown") : displayable(text);
  };
  return {
      {"backend", or_unknown(context.backend)},
      {"clock", timing_label(context.clock, context.spec)},
      {"device", or_unknown(context.device)},
      {"spec", or_unknown(context.spec)},
      {"date", or_unknown(context.date)},
      {"gpulab version", or_unknown(context.gpulab_version)},
      {"git revision", or_unknown(context.git_revision)},
      {"schema version", std::to_string(context.schema_version)},
  };
}

std::vector<MetricRow> metric_rows(const ResultsFile& file) {
  std::vector<MetricRow> rows;
  for (const Result& result : file.results) {
    std::string params;
    for (const auto& [key, value] : result.params) {
      params += (params.empty() ? "" : ", ") + key + "=" + value;
    }
    params = displayable(params);
    for (const Metric& metric : result.metrics) {
      MetricRow row;
      row.result = displayable(result.name, 80);
      row.params = params;
      const std::string_view stem = metric_stem(metric.name);
      // A bare unit ("bytes") has an empty stem: show the name itself.
      row.metric = displayable(stem.empty() ? std::string_view(metric.name) : stem, 80);
      row.unit = std::string(unit_label(metric.name));
      row.kind = metric.provenance;
      row.value = metric.value ? format_value(*metric.value) : "n/a";
      switch (metric.provenance) {
        case Provenance::measured:
          row.provenance = "measured";
          break;
        case Provenance::modeled:
          row.provenance = "modeled (" + displayable(metric.spec, 60) + ")";
          break;
        case Provenance::modeled_clock:
          row.provenance = timing_label(TimingClock::modeled, displayable(metric.spec, 60));
          break;
        case Provenance::unavailable:
          row.provenance = "unavailable";
          row.reason = displayable(metric.reason);
          break;
        case Provenance::counted:
          row.provenance = "counted (sim)";
          break;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string format_value(double value) {
  if (!std::isfinite(value)) {
    return format_fixed(value, 0);  // "n/a", "inf" or "-inf"
  }
  const double magnitude = std::fabs(value);
  if (value == std::round(value) && magnitude < 1e15) {
    return format_fixed(value, 0);
  }
  // Four significant digits: 3 - floor(log10 |v|) decimals, at most 9 for tiny values.
  const int decimals = magnitude == 0 ? 0 : static_cast<int>(3 - std::floor(std::log10(magnitude)));
  return format_fixed(value, decimals < 0 ? 0 : (decimals > 9 ? 9 : decimals));
}

}  // namespace gpulab::viewer
