// The viewer's model: everything the panels show, as plain data, with no GUI code.
//
// The viewer is split the way Tracy splits its profiler: a data library (this model) and one
// file per panel that only draws it. Panels never query devices or parse files; they read the
// model and, for user input (picking a spec), call one of its functions. Because nothing here
// includes ImGui or GLFW, the model is unit-tested without a window (tests/viewer/model_test.cpp)
// and every "no data" case (no device, no results, a broken file) is a plain value a test checks.
//
// Functions that format data for a panel return strings with their units split out, so the panel
// only lays them out; errors are kept as one-line messages and never thrown to the draw loop.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/device_info.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/viewer/class_view.hpp"
#include "gpulab/viewer/experiments.hpp"
#include "gpulab/viewer/explorer.hpp"
#include "gpulab/viewer/live.hpp"
#include "gpulab/viewer/memory_timeline.hpp"
#include "gpulab/viewer/views.hpp"

namespace gpulab::viewer {

class Model;

/// Why the selected spec is the one shown.
enum class SpecChoice {
  detected_device,  ///< the spec of the detected CUDA device (datasheet, or estimated)
  sim_spec_env,     ///< no real device; GPULAB_SIM_SPEC names the simulated GPU
  fallback,         ///< no device and no (valid) GPULAB_SIM_SPEC: default_spec()
  user,             ///< picked with --spec or in the viewer
};

// ---------------------------------------------------------------------------------------------
// Plain data for the panels.
// ---------------------------------------------------------------------------------------------

/// What the device section says: the devices, or why there are none, and what sim simulates.
struct DeviceSummary {
  std::string backend;               ///< "cuda" or "sim": the backend the viewer was built with
  std::vector<std::string> devices;  ///< one line per device, e.g. "device 0: NVIDIA H100 ..."
  std::string unavailable;           ///< why there is no device; empty when devices is not
  std::string simulation;            ///< "sim backend simulates H100 SXM (default; ...)"
};

/// Summarizes the model's device query for the device panel.
[[nodiscard]] DeviceSummary summarize_devices(const Model& model);

/// Why the selected spec is shown, for a person: "the spec of device 0", "chosen", ...
[[nodiscard]] std::string describe_choice(const Model& model);

/// One row of a spec table.
struct SpecRow {
  std::string property;  ///< e.g. "DRAM bandwidth"
  std::string value;     ///< formatted number, or "-" when the GPU does not support it
  std::string unit;      ///< e.g. "GB/s"; empty for a plain count
  std::string origin;    ///< "datasheet", "estimated", "device query" or "derived"
};

/// A spec laid out for display.
struct SpecSheet {
  std::string title;            ///< "H100 SXM (h100-sxm), Hopper, CC 9.0"
  bool estimated = false;       ///< true when the spec is an estimate, not a datasheet
  std::string origin;           ///< "datasheet" or "estimated from device properties"
  std::string source;           ///< where the numbers come from (GpuSpec::source)
  std::vector<SpecRow> peaks;   ///< throughput, bandwidth, memory, clocks
  std::vector<SpecRow> limits;  ///< per-SM and per-block limits (what occupancy uses)
};

/// Lays a spec out as rows with units; "-" marks a precision the GPU has no tensor cores for.
[[nodiscard]] SpecSheet spec_sheet(const GpuSpec& spec);

/// Label for a spec in a list: "H100 SXM", or "RTX 5000 (estimated)".
[[nodiscard]] std::string spec_label(const GpuSpec& spec);

/// One "field: value" line of a results file's context.
struct ContextRow {
  std::string field;  ///< e.g. "backend"
  std::string value;  ///< e.g. "sim"; "unknown" for an empty optional field
};

/// The context of a results file as rows.
[[nodiscard]] std::vector<ContextRow> context_rows(const ResultsContext& context);

/// One metric of one result, formatted for a table.
struct MetricRow {
  std::string result;      ///< result name, e.g. "vector_add"
  std::string params;      ///< "level=1, n=1048576"; empty when none
  std::string metric;      ///< name without its unit, e.g. "bandwidth"
  std::string value;       ///< formatted number; "n/a" when unavailable
  std::string unit;        ///< e.g. "GB/s"
  std::string provenance;  ///< "measured", "modeled (H100 SXM)" or "unavailable"
  std::string reason;      ///< why an unavailable metric has no value; empty otherwise
  Provenance kind = Provenance::measured;  ///< for colouring
};

/// Every metric of every result of a file, in file order.
[[nodiscard]] std::vector<MetricRow> metric_rows(const ResultsFile& file);

/// A number with about four significant digits and no exponent: 0.00376 -> "0.003760",
/// 15.5 -> "15.50", 33554432 -> "33554432" (whole numbers are printed whole).
[[nodiscard]] std::string format_value(double value);

/// One results file given to the viewer: its contents, or why it could not be read.
struct LoadedResults {
  std::string path;                           ///< the path as it was given
  std::optional<ResultsFile> file;            ///< set when the file loaded
  std::optional<MemoryHistory> history;       ///< its memory history (memory_history.hpp), if any
  std::optional<ClassSummary> class_summary;  ///< the class summary it is (class_summary.hpp)
  std::string error;                ///< one line, set when it did not (ResultsError's message)
  std::vector<ContextRow> context;  ///< file->context as rows, formatted once at load
  std::vector<MetricRow> metrics;   ///< every metric of file, formatted once at load

  /// True when the file loaded.
  [[nodiscard]] bool ok() const { return file.has_value(); }
};

/// The views of one source, for the panels.
struct SourceViews {
  Source source;                               ///< the file and its legend label
  BenchmarkView benchmark;                     ///< its vector_add results
  std::vector<ComponentsView> components;      ///< its attention shapes
  std::vector<SweepView> sweeps;               ///< its block-size sweeps
  std::vector<MemoryView> memory;              ///< its counted kernels
  std::vector<CodeView> code;                  ///< its kernels' counted lines and problems
  std::vector<LevelsView> levels;              ///< its attention levels (lab 04)
  std::optional<MemoryTimelineView> timeline;  ///< its memory history, when it has one
  std::optional<ClassView> class_view;         ///< its class summary, when it is one
};

/// What the panels draw, rebuilt whenever results, the spec or a selection changes (never per
/// frame).
struct PanelData {
  std::vector<SourceViews> sources;  ///< each loaded file, in order, then the live run (once it
                                     ///< has results): last, so it never shifts a file's index
  RooflineView roofline;             ///< every source's ops on the selected spec's roofs
};

/// What the user picked in the panels, kept in the model so that it survives panels being
/// closed and reopened, and so that tests can set it.
struct Selections {
  std::size_t benchmark_source = 0;   ///< index in PanelData::sources for the histogram
  std::size_t benchmark_point = 0;    ///< index of the size whose samples are shown (clamped)
  std::size_t components_source = 0;  ///< index in PanelData::sources
  std::size_t components_shape = 0;   ///< index in that source's components
  std::size_t sweep_source = 0;       ///< index in PanelData::sources
  std::size_t sweep_index = 0;        ///< index in that source's sweeps
  std::size_t memory_source = 0;      ///< index in PanelData::sources
  std::size_t memory_kernel = 0;      ///< index in that source's counted kernels
  std::size_t code_source = 0;        ///< index in PanelData::sources, for the Source panel
  std::size_t code_kernel = 0;        ///< index in that source's code views
  std::size_t levels_source = 0;      ///< index in PanelData::sources
  std::size_t levels_shape = 0;       ///< index in that source's levels views
  std::size_t history_source = 0;     ///< index in PanelData::sources
  std::size_t class_source = 0;       ///< index in PanelData::sources
  bool components_times = false;      ///< components bars in ms rather than shares of the total
  bool sweep_linear_x = false;        ///< block sizes on a linear rather than a log2 axis
  bool levels_memory = false;         ///< levels bars show memory held rather than time
  Experiment experiment = Experiment::bandwidth;  ///< what the Run button starts
  ExperimentOptions options;                      ///< how big, which kernel, which shape
  std::string save_path = "gpulab-live.json";     ///< where the Run panel saves live results
};

/// Everything the viewer shows, built once at start and changed only by the functions below.
class Model {
 public:
  /// Builds the model from a device query and the value of GPULAB_SIM_SPEC (empty when unset).
  /// Picks the first spec: the detected device's, else GPULAB_SIM_SPEC's, else default_spec().
  Model(DeviceQuery devices, std::string sim_spec_env);

  /// The model of this process: query_devices() of its backend and its GPULAB_SIM_SPEC.
  [[nodiscard]] static Model detect();

  /// The device query the model was built from.
  [[nodiscard]] const DeviceQuery& devices() const { return devices_; }
  /// The GPU the sim backend simulates: GPULAB_SIM_SPEC's, or default_spec().
  [[nodiscard]] const GpuSpec& simulated_spec() const { return simulated_spec_; }
  /// Where simulated_spec() comes from, e.g. "GPULAB_SIM_SPEC=a100" or "default".
  [[nodiscard]] const std::string& simulated_spec_origin() const { return simulated_origin_; }

  /// The specs the viewer offers: the detected device's estimate first when it is not in the
  /// database, then every database entry (all_specs() order).
  [[nodiscard]] std::span<const GpuSpec> specs() const { return specs_; }
  /// Index of the selected spec in specs().
  [[nodiscard]] std::size_t selected_index() const { return selected_; }
  /// The selected spec.
  [[nodiscard]] const GpuSpec& selected_spec() const { return specs_[selected_]; }
  /// Why the selected spec was chosen.
  [[nodiscard]] SpecChoice choice() const { return choice_; }
  /// Selects specs()[index]; false (and no change) when index is out of range.
  bool select_spec(std::size_t index);
  /// Selects a spec by key or name as find_spec() reads them (also the estimated entry by its
  /// name); false (and no change) when nothing matches.
  bool select_spec(std::string_view name);

  /// Problems with the configuration a person should see, one line each (e.g. an unknown
  /// GPULAB_SIM_SPEC); empty when there are none.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  /// Loads a results file through the validated loader and appends it to results(). Never
  /// throws: a missing, malformed or unreadable file becomes an entry with `error` set. Returns
  /// the new entry.
  const LoadedResults& load_results(const std::filesystem::path& path);
  /// Every file loaded so far, in order, including those that failed.
  [[nodiscard]] const std::vector<LoadedResults>& results() const { return results_; }

  /// The panels' data (see PanelData).
  [[nodiscard]] const PanelData& panel_data() const { return panel_data_; }
  /// The user's picks; panels change them directly (indices are clamped when read).
  [[nodiscard]] Selections& selections() { return selections_; }
  [[nodiscard]] const Selections& selections() const { return selections_; }
  /// Precision of the roofline's compute roof.
  [[nodiscard]] Precision roofline_precision() const { return precision_; }
  /// Changes the roofline's precision and rebuilds its view.
  void set_roofline_precision(Precision precision);

  /// The occupancy explorer, on the selected spec.
  [[nodiscard]] OccupancyExplorer& explorer() { return explorer_; }
  [[nodiscard]] const OccupancyExplorer& explorer() const { return explorer_; }

  /// Starts selections().experiment with selections().options on the worker thread, modeled for
  /// the selected spec, and points the panel it fills at the live source. Results of an earlier
  /// run of the same experiment (for the sweep: of the same kernel) are dropped first. False,
  /// with the reason in `error`, while a run is in progress or when the options are invalid.
  bool start_run(std::string& error);
  /// Queues experiments to run one after another, each with selections().options; poll() starts
  /// the next when the previous has ended (a run that fails or is cancelled clears the queue).
  void queue_runs(std::vector<Experiment> experiments);
  /// True while a run is in progress or queued.
  [[nodiscard]] bool runs_pending() const;
  /// Asks the run in progress to stop after its current step, and empties the queue.
  void cancel_run();
  /// The run's progress.
  [[nodiscard]] RunStatus run_status() const { return runner_.status(); }
  /// Moves finished results of the live run into live() and rebuilds the panel data when there
  /// were any, and starts the next queued run; called once per frame. True when something new
  /// arrived.
  bool poll();
  /// Waits for the run in progress and every queued one to end, polling (tests).
  void wait_for_run();
  /// Errors of queued runs that could not start, one line each.
  [[nodiscard]] const std::vector<std::string>& run_errors() const { return run_errors_; }
  /// The live run's results so far, as a results file of this process's backend.
  [[nodiscard]] const ResultsFile& live() const { return live_; }
  /// live() formatted for the Results panel like a loaded file (path "live run (BACKEND)");
  /// not ok() until the live run has results.
  [[nodiscard]] const LoadedResults& live_entry() const { return live_entry_; }
  /// Saves live() (results JSON, schema as results.hpp); false with a one-line error when it
  /// cannot be written or there is nothing to save.
  bool save_live(const std::filesystem::path& path, std::string& error) const;

 private:
  void rebuild_views();
  bool collect_results();

  DeviceQuery devices_;
  GpuSpec simulated_spec_;
  std::string simulated_origin_;
  std::vector<GpuSpec> specs_;
  std::size_t selected_ = 0;
  SpecChoice choice_ = SpecChoice::fallback;
  std::vector<std::string> notes_;
  std::vector<LoadedResults> results_;
  PanelData panel_data_;
  Selections selections_;
  Precision precision_ = Precision::fp32;
  OccupancyExplorer explorer_;
  ResultsFile live_;
  LoadedResults live_entry_;
  std::vector<Experiment> queue_;  // runs still to start, next first
  std::vector<std::string> run_errors_;
  std::size_t ended_run_ = 0;  // the last run whose end poll() has acted on
  LiveRunner runner_;          // last: its destructor stops the worker before the rest goes away
};

}  // namespace gpulab::viewer
