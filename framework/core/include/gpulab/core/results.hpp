// The results model and its JSON form, shared by every command, the viewer and the grader.
//
// A results file is {"context": {...}, "results": [...]}. The context says what produced the
// numbers (gpulab version, backend, device or spec, date, git revision, schema version); each
// result is a named configuration with metrics. Every metric has its unit in its name
// ("time_ms", "bandwidth_gb_s", "bytes") and says whether it was measured, modeled (for which
// spec) or is unavailable (and why). Readers ignore unknown fields; the loader bounds file size and
// nesting depth and turns malformed input into a ResultsError naming the location.
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

/// Version of the results JSON schema this gpulab writes and reads.
inline constexpr int kResultsSchemaVersion = 1;

/// How a number came to be.
enum class Provenance {
  measured,     ///< measured on this run's backend
  modeled,      ///< computed from a spec (e.g. roofline time for H100 SXM)
  unavailable,  ///< could not be obtained; `reason` says why
};

/// "measured", "modeled" or "unavailable".
[[nodiscard]] std::string_view to_string(Provenance provenance) noexcept;

/// One number with its unit in its name.
struct Metric {
  std::string name;                  ///< unit-suffixed, e.g. "time_ms" (see has_unit_suffix)
  std::optional<double> value;       ///< finite; empty when unavailable
  Provenance provenance = Provenance::measured;  ///< measured, modeled or unavailable
  std::string spec;                  ///< for modeled metrics: the spec, e.g. "H100 SXM"
  std::string reason;                ///< for unavailable metrics: why
};

/// One measured or modeled configuration (a kernel at a size, a lab step, ...).
struct Result {
  std::string name;                             ///< e.g. "vector_add"
  std::map<std::string, std::string> params;    ///< configuration, e.g. {"n": "1048576"}
  std::vector<Metric> metrics;                  ///< the numbers
};

/// What produced a results file.
struct ResultsContext {
  int schema_version = kResultsSchemaVersion;  ///< schema of the file
  std::string gpulab_version;   ///< gpulab version that wrote it
  std::string git_revision;     ///< empty when unknown
  std::string backend;          ///< "cuda" or "sim"
  std::string device;           ///< device name, or the simulated device on sim
  std::string spec;             ///< the spec used for modeled numbers, e.g. "H100 SXM"
  std::string date;             ///< ISO 8601 UTC, e.g. "2026-11-22T10:15:00Z"
};

/// A whole results file.
struct ResultsFile {
  ResultsContext context;        ///< provenance of the file
  std::vector<Result> results;   ///< the results, in order
};

/// A results file or document that cannot be read: the message names the source and location.
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bounds on what the loader accepts.
struct LoadLimits {
  std::uintmax_t max_bytes = 64ull * 1000 * 1000;  ///< largest file accepted
  int max_depth = 32;                              ///< deepest nesting of arrays/objects
};

/// True when `name` ends in one of the unit suffixes gpulab uses (_ms, _us, _ns, _s, _bytes, _gb,
/// _gb_s, _gflop, _gflop_s, _tflop_s, _flop, _percent, _ratio, _count, _hz, _mhz, ...).
[[nodiscard]] bool has_unit_suffix(std::string_view name) noexcept;

/// A context filled in for this process: version, revision, backend, current UTC date.
[[nodiscard]] ResultsContext make_context(std::string backend, std::string device,
                                          std::string spec);

/// The results file as JSON (validated first: throws ResultsError on a metric without a unit,
/// a non-finite value, or an unavailable metric without a reason).
[[nodiscard]] nlohmann::json to_json(const ResultsFile& file);
/// Reads a results file from JSON; `source` (a file name) prefixes error messages.
[[nodiscard]] ResultsFile results_from_json(const nlohmann::json& json, std::string_view source);
/// Parses JSON text with the limits; errors name `source`, line and column.
[[nodiscard]] ResultsFile parse_results(std::string_view text, std::string_view source,
                                        const LoadLimits& limits = {});
/// Loads a file; errors (missing, too large, malformed) are ResultsError with the path.
[[nodiscard]] ResultsFile load_results(const std::filesystem::path& path,
                                       const LoadLimits& limits = {});
/// Writes a file atomically (temporary file, then rename), so a failure never leaves a partial
/// file behind; throws ResultsError on I/O failure.
void save_results(const std::filesystem::path& path, const ResultsFile& file);

/// A report for a person: the context, then one table per result name.
[[nodiscard]] std::string render_report(const ResultsFile& file);

}  // namespace gpulab
