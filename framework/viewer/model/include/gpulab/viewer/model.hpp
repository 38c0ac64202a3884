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

#include "gpulab/core/device.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"

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
  std::string path;                 ///< the path as it was given
  std::optional<ResultsFile> file;  ///< set when the file loaded
  std::string error;                ///< one line, set when it did not (ResultsError's message)
  std::vector<ContextRow> context;  ///< file->context as rows, formatted once at load
  std::vector<MetricRow> metrics;   ///< every metric of file, formatted once at load

  /// True when the file loaded.
  [[nodiscard]] bool ok() const { return file.has_value(); }
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

 private:
  DeviceQuery devices_;
  GpuSpec simulated_spec_;
  std::string simulated_origin_;
  std::vector<GpuSpec> specs_;
  std::size_t selected_ = 0;
  SpecChoice choice_ = SpecChoice::fallback;
  std::vector<std::string> notes_;
  std::vector<LoadedResults> results_;
};

}  // namespace gpulab::viewer
