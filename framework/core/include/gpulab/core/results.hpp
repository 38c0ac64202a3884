// The results model and its JSON form, shared by every command, the viewer and the grader.
//
// A results file is {"context": {...}, "results": [...]}. The context says what produced the
// numbers (gpulab version, backend, device or spec, date, git revision, schema version); each
// result is a named configuration with metrics. Every metric has its unit in its name
// ("time_ms", "bandwidth_gb_s", "bytes") and says whether it was measured, modeled (for which
// spec) or is unavailable (and why). Readers ignore unknown fields; the loader bounds file size and
// nesting depth and turns malformed input into a ResultsError naming the location.
//
// Schema 1, as written by to_json() (fields marked * are optional on read):
//
//   {
//     "context": {
//       "schema_version": 1,                  // a positive integer; other versions are refused
//       "gpulab_version": "0.1.0",
//       "git_revision": "abc123def456",       // * written only when known
//       "backend": "sim",                     // "cuda" or "sim" (any non-empty string is read)
//       "device": "simulated device",         // *
//       "spec": "H100 SXM",                   // *
//       "date": "2026-11-22T10:15:00Z"        // ISO 8601 UTC
//     },
//     "results": [
//       {
//         "name": "vector_add",
//         "params": {"n": "1048576"},         // * string values only
//         "metrics": [
//           {"name": "time_ms", "provenance": "measured", "value": 0.81},
//           {"name": "time_ms", "provenance": "modeled", "spec": "H100 SXM", "value": 0.0038},
//           // schema 3: a time read from the sim's modeled clock (and figures derived from it)
//           {"name": "time_ms", "provenance": "modeled_clock", "spec": "H100 SXM", "value": 0.02},
//           {"name": "sm_efficiency_percent", "provenance": "unavailable",
//            "reason": "needs CUPTI (cuda backend only)"}   // "value" absent or null
//         ],
//         "samples_ms": [0.81, 0.80, 0.83]    // * the timed samples behind the measured time
//       }
//     ]
//   }
//
// Every ResultsError message is a single line: "SOURCE:LINE:COLUMN: ..." for syntax errors and
// "SOURCE: results[2].metrics[0].value: expected ..., found ..." for content errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpulab {

/// Version of the results JSON schema this gpulab writes. It reads this one and every earlier
/// one: schema 1 had no context.clock (read as "gpu" on cuda, "host" on sim, what it meant);
/// schema 2 had no "modeled_clock" provenance (its modeled-clock times say "measured", and only
/// the context's clock says they are not).
inline constexpr int kResultsSchemaVersion = 3;

/// Most samples one result may carry (the harness's max_samples default is 10000).
inline constexpr std::size_t kMaxSamples = 1000000;

/// What the measured times of a results file were taken with (CUDA events read it).
enum class TimingClock {
  gpu,      ///< the GPU's clock (cuda backend)
  modeled,  ///< the sim's modeled clock: times modeled on the context's spec from counted traffic
  host,     ///< the sim's host clock: CPU time of the simulation, nothing about a GPU
};

/// "gpu", "modeled" or "host".
[[nodiscard]] std::string_view to_string(TimingClock clock) noexcept;
/// The clock's name as a column label says it: "measured", "modeled clock (H100 SXM)" or
/// "measured (CPU simulation)"; `spec` names the modeled clock's GPU.
[[nodiscard]] std::string timing_label(TimingClock clock, std::string_view spec);

/// How a number came to be.
enum class Provenance {
  measured,     ///< measured on this run's backend
  modeled,      ///< computed from a spec (e.g. roofline time for H100 SXM)
  unavailable,  ///< could not be obtained; `reason` says why
  counted,      ///< counted on sim: what the simulated threads did to memory, exact (schema 2)
  /// read from the sim's modeled clock: a time (or a figure derived from one) modeled on `spec`
  /// from the counted work of the run, not measured (schema 3)
  modeled_clock,
};

/// "measured", "modeled", "unavailable", "counted" or "modeled_clock".
[[nodiscard]] std::string_view to_string(Provenance provenance) noexcept;

/// One number with its unit in its name.
struct Metric {
  std::string name;             ///< unit-suffixed, e.g. "time_ms" (see has_unit_suffix)
  std::optional<double> value;  ///< finite; required unless unavailable, empty when unavailable
  Provenance provenance = Provenance::measured;
  std::string spec;    ///< modeled and modeled-clock metrics only (required there), e.g. "H100 SXM"
  std::string reason;  ///< unavailable metrics only (required there): why

  /// A measured value.
  [[nodiscard]] static Metric measured(std::string name, double value) {
    return {std::move(name), value, Provenance::measured, {}, {}};
  }
  /// A value modeled on the spec named `spec_name`.
  [[nodiscard]] static Metric modeled(std::string name, double value, std::string spec_name) {
    return {std::move(name), value, Provenance::modeled, std::move(spec_name), {}};
  }
  /// A time, or a figure derived from one, as the run's clock gave it: measured on a GPU's or the
  /// host's clock, read from the modeled clock of the GPU `spec_name` when `clock` is modeled.
  [[nodiscard]] static Metric timed(std::string name, double value, TimingClock clock,
                                    std::string spec_name);
  /// A value that could not be had, and why.
  [[nodiscard]] static Metric unavailable(std::string name, std::string why) {
    return {std::move(name), std::nullopt, Provenance::unavailable, {}, std::move(why)};
  }

  friend bool operator==(const Metric&, const Metric&) = default;
};

/// The result names that gpulab's programs write and the viewer reads (Result::name): one spelling
/// for writer and reader. A results file may hold other names too; readers skip what they do not
/// know.
namespace result_kind {
inline constexpr const char* vector_add = "vector_add";          ///< lab 01, viewer: param n
inline constexpr const char* timing_pitfall = "timing_pitfall";  ///< lab 01: param method
inline constexpr const char* attention_component = "attention_component";    ///< labs 02, 03
inline constexpr const char* attention_forward = "attention_forward";        ///< lab 02
inline constexpr const char* attention_bottleneck = "attention_bottleneck";  ///< lab 03
inline constexpr const char* op_cost = "op_cost";  ///< lab 03: an op placed on the roofline
inline constexpr const char* block_size_sweep = "block_size_sweep";  ///< viewer: param kernel
inline constexpr const char* counted_kernel = "counted_kernel";      ///< gpulab profile
/// gpulab profile --source: params kernel, file, line, code; a line's counted figures
inline constexpr const char* counted_line = "counted_line";
/// gpulab profile --source: params kernel, problem, file, line, what; its modeled speedup_ratio
inline constexpr const char* finding = "finding";
inline constexpr const char* kernel_bench = "kernel_bench";  ///< gpulab bench: params op, level
inline constexpr const char* attention_level = "attention_level";  ///< lab 04: param level
/// lab 04: params level, seq_len; the device memory a level's buffers take at that length
inline constexpr const char* attention_level_memory = "attention_level_memory";
/// lab 05: param allocations_per_step; a step's time with cudaMalloc and cudaFree, and with the
/// caching allocator the first time and once it hits
inline constexpr const char* allocator_step = "allocator_step";
}  // namespace result_kind

/// One measured or modeled configuration (a kernel at a size, a lab step, ...).
struct Result {
  std::string name;                           ///< e.g. result_kind::vector_add; never empty
  std::map<std::string, std::string> params;  ///< configuration, e.g. {"n": "1048576"}
  std::vector<Metric> metrics;                ///< the numbers
  std::vector<double> samples_ms{};  ///< timed samples (finite, >= 0); empty when not recorded

  friend bool operator==(const Result&, const Result&) = default;
};

/// What produced a results file.
struct ResultsContext {
  int schema_version = kResultsSchemaVersion;  ///< schema of the file
  std::string gpulab_version;                  ///< gpulab version that wrote it; never empty
  std::string git_revision;                    ///< empty when unknown
  std::string backend;                         ///< "cuda" or "sim"; never empty
  std::string device;  ///< device name, or the simulated device on sim; may be empty
  std::string spec;    ///< the spec used for modeled numbers, e.g. "H100 SXM"; may be empty
  std::string date;    ///< ISO 8601 UTC, e.g. "2026-11-22T10:15:00Z"; never empty
  TimingClock clock = TimingClock::gpu;  ///< what measured times were taken with (schema 2)

  friend bool operator==(const ResultsContext&, const ResultsContext&) = default;
};

/// A whole results file.
struct ResultsFile {
  ResultsContext context;       ///< provenance of the file
  std::vector<Result> results;  ///< the results, in order

  friend bool operator==(const ResultsFile&, const ResultsFile&) = default;
};

/// A results file or document that cannot be read or written: the message is one line naming
/// the source, the location and what was expected versus found.
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bounds on what the loader accepts.
struct LoadLimits {
  std::uintmax_t max_bytes = 64ull * 1000 * 1000;  ///< largest file or text accepted, in bytes
  int max_depth = 32;  ///< deepest nesting of arrays/objects (a valid file needs 5)
};

/// True when `name` is a unit or ends in '_' + a unit. The units (decimal multiples throughout):
///   time       ns us ms s cycles
///   frequency  hz khz mhz ghz
///   size       bits bytes kb mb gb tb
///   bandwidth  bytes_s mb_s gb_s tb_s
///   work       flop gflop tflop; rate flop_s gflop_s tflop_s; intensity flop_per_byte
///   shares     percent ratio fraction
///   counts     count elements threads blocks warps registers
///   power      w
/// so "time_ms", "bandwidth_gb_s", "bytes" and "occupancy_percent" pass and "time" does not.
[[nodiscard]] bool has_unit_suffix(std::string_view name) noexcept;
/// The unit of a metric name as shown to a person: "bandwidth_gb_s" -> "GB/s", "time_ms" -> "ms",
/// "occupancy_percent" -> "%"; empty when the name has no unit suffix.
[[nodiscard]] std::string_view unit_label(std::string_view name) noexcept;
/// The name without its unit suffix: "bandwidth_gb_s" -> "bandwidth", "bytes" -> "".
[[nodiscard]] std::string_view metric_stem(std::string_view name) noexcept;

/// A context filled in for this process: version, revision, backend, current UTC date, and the
/// clock: "gpu" on cuda, "host" on sim (set `clock` when the sim's modeled clock timed the run).
[[nodiscard]] ResultsContext make_context(std::string backend, std::string device,
                                          std::string spec);

/// The results file as JSON. Validated first: throws ResultsError (naming the field, e.g.
/// "results[0].metrics[1].value") on a schema version other than kResultsSchemaVersion, an empty
/// gpulab version, backend, date or result name, a metric without a unit suffix, a missing or
/// non-finite value, an unavailable metric with a value or without a reason, a modeled metric
/// without a spec, a negative or non-finite sample, more than kMaxSamples samples in a result, or
/// a string that is not valid UTF-8.
[[nodiscard]] nlohmann::json to_json(const ResultsFile& file);
/// Reads a results file from JSON; `source` (a file name) prefixes error messages. Unknown
/// fields are ignored; everything to_json() checks is checked here too.
[[nodiscard]] ResultsFile results_from_json(const nlohmann::json& json, std::string_view source);
/// Parses JSON text with the limits; errors name `source`, line and column. Rejects NUL bytes,
/// duplicate keys, NaN/Infinity, numbers that overflow a double or underflow to zero (1e400,
/// 1e-400), trailing data and invalid UTF-8; a leading UTF-8 byte order mark is skipped.
[[nodiscard]] ResultsFile parse_results(std::string_view text, std::string_view source,
                                        const LoadLimits& limits = {});
/// Loads a file; errors (missing, a directory, too large, malformed) are ResultsError with the
/// path.
[[nodiscard]] ResultsFile load_results(const std::filesystem::path& path,
                                       const LoadLimits& limits = {});
/// Loads a file as JSON with load_results' checks of the file and the text (missing, a
/// directory, too large, empty, malformed), without reading it as results: for formats that
/// extend a results file (memory_history.hpp).
[[nodiscard]] nlohmann::json load_results_json(const std::filesystem::path& path,
                                               const LoadLimits& limits = {});
/// Writes a file atomically (temporary file in the same directory, then rename), so a failure
/// never leaves a partial file behind; throws ResultsError on invalid data or I/O failure.
void save_results(const std::filesystem::path& path, const ResultsFile& file);

/// A report for a person (`gpulab show FILE`): the context, then one table per result name with
/// the params and metrics as columns; modeled metrics get their own "... modeled (SPEC)" column,
/// unavailable ones show "n/a" with the reasons listed under the table.
[[nodiscard]] std::string render_report(const ResultsFile& file);

}  // namespace gpulab
