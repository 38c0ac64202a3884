// The results file as JSON (results.hpp): validation, reading, writing and atomic saving.
//
// Reading is built to survive hostile input. The text is parsed with nlohmann's SAX interface
// into a DOM we build ourselves, so that the nesting limit stops the parse at the first bracket too
// deep (nothing recursive ever sees a deep document), duplicate keys are refused instead of "last
// one wins", and numbers that underflow a double (1e-400 would silently become 0) are refused like
// the ones that overflow (nlohmann already refuses 1e400 rather than storing inf). Every error ends
// as one ResultsError line: "SOURCE:LINE:COLUMN: ..." or "SOURCE: results[2].name: ...".
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "gpulab/core/results.hpp"
#include "results_errors.hpp"
#include "text.hpp"

namespace gpulab {
namespace {

using detail::describe;
using detail::fail;
using detail::has_spec;
using detail::is_valid_utf8;
using detail::printable;
using detail::quote_text;
using nlohmann::json;

// A JSON path segment for an object key: ".name" or ["odd key"].
std::string key_path(std::string_view key) {
  const bool identifier = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  return identifier ? "." + std::string(key) : "[" + quote_text(key, 40) + "]";
}

std::string index_path(std::string_view base, std::size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

std::string join(std::string_view base, std::string_view key) {
  std::string path = key_path(key);
  if (base.empty() && path.front() == '.') {
    path.erase(0, 1);
  }
  return std::string(base) + path;
}

// ---------------------------------------------------------------------------------------------
// Validation shared by to_json() and results_from_json(): what may be written may be read back.
// ---------------------------------------------------------------------------------------------

void check_text(std::string_view source, const std::string& path, const std::string& value,
                bool required, std::string_view expected) {
  if (required && value.empty()) {
    fail(source, path, "expected " + std::string(expected) + ", found an empty string");
  }
  if (!is_valid_utf8(value)) {
    fail(source, path, "expected valid UTF-8 text, found " + quote_text(value));
  }
}

std::string format_value(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void validate_metric(std::string_view source, const std::string& path, const Metric& metric) {
  const std::string name_path = path + ".name";
  check_text(source, name_path, metric.name, true, "a metric name with a unit suffix (time_ms)");
  if (!has_unit_suffix(metric.name)) {
    fail(source, name_path,
         "expected a name ending in a unit suffix such as _ms, _bytes, _gb_s or _percent, "
         "found " +
             quote_text(metric.name));
  }
  switch (metric.provenance) {
    case Provenance::measured:
    case Provenance::modeled:
    case Provenance::counted:
    case Provenance::modeled_clock:
      if (!metric.value.has_value()) {
        fail(source, path + ".value",
             "expected a finite number for a " + std::string(to_string(metric.provenance)) +
                 " metric, found nothing");
      }
      if (!std::isfinite(*metric.value)) {
        fail(source, path + ".value",
             "expected a finite number, found " + format_value(*metric.value));
      }
      if (has_spec(metric.provenance)) {
        check_text(source, path + ".spec", metric.spec, true,
                   "the spec a modeled metric was modeled for (\"H100 SXM\")");
      }
      break;
    case Provenance::unavailable:
      if (metric.value.has_value()) {
        fail(source, path + ".value",
             "expected no value for an unavailable metric, found " + format_value(*metric.value));
      }
      check_text(source, path + ".reason", metric.reason, true,
                 "the reason an unavailable metric is unavailable");
      break;
    default:
      fail(source, path + ".provenance",
           "expected measured, modeled or unavailable, found the value " +
               std::to_string(static_cast<int>(metric.provenance)));
  }
}

void validate_result(std::string_view source, const std::string& path, const Result& result) {
  check_text(source, path + ".name", result.name, true, "a result name");
  for (const auto& [key, value] : result.params) {
    const std::string param_path = path + ".params" + key_path(key);
    check_text(source, param_path, key, false, "");
    check_text(source, param_path, value, false, "");
  }
  for (std::size_t i = 0; i < result.metrics.size(); ++i) {
    validate_metric(source, index_path(path + ".metrics", i), result.metrics[i]);
  }
  if (result.samples_ms.size() > kMaxSamples) {
    fail(source, path + ".samples_ms",
         "expected at most " + std::to_string(kMaxSamples) + " samples, found " +
             std::to_string(result.samples_ms.size()));
  }
  for (std::size_t i = 0; i < result.samples_ms.size(); ++i) {
    const double sample = result.samples_ms[i];
    if (!std::isfinite(sample) || sample < 0) {
      fail(source, index_path(path + ".samples_ms", i),
           "expected a finite time >= 0, found " + format_value(sample));
    }
  }
}

std::string schema_mismatch(std::string_view found) {
  return "written with results schema " + std::string(found) + "; this gpulab reads schemas 1 to " +
         std::to_string(kResultsSchemaVersion);
}

void validate_context(std::string_view source, const ResultsContext& context) {
  if (context.schema_version != kResultsSchemaVersion) {
    fail(source, "context.schema_version", schema_mismatch(std::to_string(context.schema_version)));
  }
  check_text(source, "context.gpulab_version", context.gpulab_version, true, "the gpulab version");
  check_text(source, "context.git_revision", context.git_revision, false, "");
  check_text(source, "context.backend", context.backend, true, "a backend (\"cuda\" or \"sim\")");
  check_text(source, "context.device", context.device, false, "");
  check_text(source, "context.spec", context.spec, false, "");
  check_text(source, "context.date", context.date, true, "an ISO 8601 UTC date");
  if (context.clock == TimingClock::gpu && context.backend == "sim") {
    fail(source, "context.clock", "\"gpu\" on the sim backend, which has no GPU clock");
  }
  if (context.clock == TimingClock::modeled && context.spec.empty()) {
    fail(source, "context.clock", "\"modeled\" without a spec: the modeled clock is a GPU's");
  }
  if (context.clock != TimingClock::gpu && context.backend == "cuda") {
    fail(source, "context.clock",
         "\"" + std::string(to_string(context.clock)) + "\" on the cuda backend: only sim has it");
  }
}

// The one of `values` whose to_string() is `name`; nothing when none is.
template <class Enum, std::size_t N>
std::optional<Enum> from_name(std::string_view name, const std::array<Enum, N>& values) {
  for (const Enum value : values) {
    if (to_string(value) == name) {
      return value;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Reading a JSON DOM (type checks with paths; then the shared validation)
// ---------------------------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void expected(const std::string& path, std::string_view what,
                             const json* found) const {
    fail(source_, path,
         "expected " + std::string(what) + ", found " + (found ? describe(*found) : "nothing"));
  }

  // The member `key` of `object` (which is an object), or nullptr.
  static const json* member(const json& object, std::string_view key) {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  const json& object_at(const json& parent, const std::string& base, std::string_view key) const {
    const json* value = member(parent, key);
    if (value == nullptr || !value->is_object()) {
      expected(join(base, key), "an object", value);
    }
    return *value;
  }

  const json& array_at(const json& parent, const std::string& base, std::string_view key) const {
    const json* value = member(parent, key);
    if (value == nullptr || !value->is_array()) {
      expected(join(base, key), "an array", value);
    }
    return *value;
  }

  // A string member; absent is "" unless required.
  std::string string_at(const json& parent, const std::string& base, std::string_view key,
                        bool required) const {
    const json* value = member(parent, key);
    if (value == nullptr && !required) {
      return {};
    }
    if (value == nullptr || !value->is_string()) {
      expected(join(base, key), "a string", value);
    }
    return value->get<std::string>();
  }

  ResultsContext context(const json& root) const {
    const json& object = object_at(root, "", "context");
    ResultsContext context;
    // The schema version first: a file from another schema may differ in everything else.
    const std::string version_path = "context.schema_version";
    const json* version = member(object, "schema_version");
    if (version == nullptr || !version->is_number_integer()) {
      expected(version_path, "the results schema version (an integer)", version);
    }
    if (version->is_number_unsigned() ? version->get<std::uint64_t>() == 0
                                      : version->get<std::int64_t>() <= 0) {
      expected(version_path, "a positive schema version", version);
    }
    // Parsed text gives unsigned numbers, a DOM built in code signed ones.
    const bool supported =
        version->is_number_unsigned()
            ? version->get<std::uint64_t>() <= static_cast<std::uint64_t>(kResultsSchemaVersion)
            : version->get<std::int64_t>() <= kResultsSchemaVersion;
    if (!supported) {
      fail(source_, version_path, schema_mismatch(version->dump()));
    }
    const int written = static_cast<int>(version->get<std::int64_t>());
    context.gpulab_version = string_at(object, "context", "gpulab_version", true);
    context.git_revision = string_at(object, "context", "git_revision", false);
    context.backend = string_at(object, "context", "backend", true);
    context.device = string_at(object, "context", "device", false);
    context.spec = string_at(object, "context", "spec", false);
    context.date = string_at(object, "context", "date", true);
    if (written >= 2) {
      const std::string clock = string_at(object, "context", "clock", true);
      const auto named =
          from_name(clock, std::array{TimingClock::gpu, TimingClock::modeled, TimingClock::host});
      if (!named) {
        fail(source_, "context.clock",
             "expected \"gpu\", \"modeled\" or \"host\", found " + quote_text(clock));
      }
      context.clock = *named;
    } else {  // schema 1: what its times were
      context.clock = context.backend == "sim" ? TimingClock::host : TimingClock::gpu;
    }
    // Read into the current schema: written back, the file is schema kResultsSchemaVersion.
    context.schema_version = kResultsSchemaVersion;
    validate_context(source_, context);
    return context;
  }

  Metric metric(const json& object, const std::string& path) const {
    if (!object.is_object()) {
      expected(path, "a metric object", &object);
    }
    Metric metric;
    metric.name = string_at(object, path, "name", true);
    const std::string provenance = string_at(object, path, "provenance", true);
    const auto named = from_name(
        provenance, std::array{Provenance::measured, Provenance::modeled, Provenance::unavailable,
                               Provenance::counted, Provenance::modeled_clock});
    if (!named) {
      fail(source_, path + ".provenance",
           "expected \"measured\", \"modeled\", \"unavailable\", \"counted\" or "
           "\"modeled_clock\", found " +
               quote_text(provenance));
    }
    metric.provenance = *named;
    const json* value = member(object, "value");
    if (value != nullptr && !value->is_null()) {
      if (!value->is_number()) {
        expected(path + ".value", "a number", value);
      }
      metric.value = value->get<double>();
    } else if (metric.provenance != Provenance::unavailable) {
      expected(path + ".value", "a finite number for a " + provenance + " metric", value);
    }
    if (has_spec(metric.provenance)) {
      metric.spec = string_at(object, path, "spec", true);
    }
    if (metric.provenance == Provenance::unavailable) {
      metric.reason = string_at(object, path, "reason", true);
    }
    validate_metric(source_, path, metric);
    return metric;
  }

  Result result(const json& object, const std::string& path) const {
    if (!object.is_object()) {
      expected(path, "a result object", &object);
    }
    Result result;
    result.name = string_at(object, path, "name", true);
    if (const json* params = member(object, "params"); params != nullptr) {
      if (!params->is_object()) {
        expected(path + ".params", "an object of strings", params);
      }
      for (const auto& [key, value] : params->items()) {
        if (!value.is_string()) {
          expected(path + ".params" + key_path(key), "a string", &value);
        }
        result.params.emplace(key, value.get<std::string>());
      }
    }
    const json& metrics = array_at(object, path, "metrics");
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      result.metrics.push_back(metric(metrics[i], index_path(path + ".metrics", i)));
    }
    if (const json* samples = member(object, "samples_ms"); samples != nullptr) {
      if (!samples->is_array()) {
        expected(path + ".samples_ms", "an array of times", samples);
      }
      result.samples_ms.reserve(std::min(samples->size(), kMaxSamples + 1));
      for (std::size_t i = 0; i < samples->size() && i <= kMaxSamples; ++i) {
        if (!(*samples)[i].is_number()) {
          expected(index_path(path + ".samples_ms", i), "a time in milliseconds", &(*samples)[i]);
        }
        result.samples_ms.push_back((*samples)[i].get<double>());
      }
    }
    validate_result(source_, path, result);
    return result;
  }

  ResultsFile file(const json& root) const {
    if (!root.is_object()) {
      expected("", "a JSON object with \"context\" and \"results\"", &root);
    }
    ResultsFile file;
    file.context = context(root);
    const json& results = array_at(root, "", "results");
    for (std::size_t i = 0; i < results.size(); ++i) {
      file.results.push_back(result(results[i], index_path("results", i)));
    }
    return file;
  }

 private:
  std::string_view source_;
};

}  // namespace

namespace {

// to_json() with `source` naming the destination in error messages.
json build_json(const ResultsFile& file, std::string_view source) {
  validate_context(source, file.context);
  for (std::size_t i = 0; i < file.results.size(); ++i) {
    validate_result(source, index_path("results", i), file.results[i]);
  }

  const ResultsContext& c = file.context;
  json context = {{"schema_version", c.schema_version},
                  {"gpulab_version", c.gpulab_version},
                  {"backend", c.backend},
                  {"device", c.device},
                  {"spec", c.spec},
                  {"date", c.date},
                  {"clock", to_string(c.clock)}};
  if (!c.git_revision.empty()) {
    context["git_revision"] = c.git_revision;
  }
  json results = json::array();
  for (const Result& result : file.results) {
    json metrics = json::array();
    for (const Metric& metric : result.metrics) {
      json entry = {{"name", metric.name}, {"provenance", to_string(metric.provenance)}};
      if (metric.value.has_value()) {
        entry["value"] = *metric.value;
      }
      if (has_spec(metric.provenance)) {
        entry["spec"] = metric.spec;
      }
      if (metric.provenance == Provenance::unavailable) {
        entry["reason"] = metric.reason;
      }
      metrics.push_back(std::move(entry));
    }
    json entry = {{"name", result.name}, {"params", result.params}, {"metrics", metrics}};
    if (!result.samples_ms.empty()) {
      entry["samples_ms"] = result.samples_ms;
    }
    results.push_back(std::move(entry));
  }
  return {{"context", std::move(context)}, {"results", std::move(results)}};
}

}  // namespace

nlohmann::json to_json(const ResultsFile& file) {
  return build_json(file, "results to write");
}

ResultsFile results_from_json(const nlohmann::json& json, std::string_view source) {
  return Reader(source).file(json);
}

namespace {

// The JSON of a results text, with the limits; errors as parse_results'.
json parse_results_json(std::string_view text, std::string_view source, const LoadLimits& limits) {
  if (text.size() > limits.max_bytes) {
    fail(source, "",
         "expected at most " + std::to_string(limits.max_bytes) + " bytes, found " +
             std::to_string(text.size()));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    fail(source, "",
         "expected a JSON object with \"context\" and \"results\", found an empty document");
  }
  try {
    return parse_json(text, source,
                      JsonLimits{static_cast<std::size_t>(limits.max_bytes), limits.max_depth});
  } catch (const JsonError& error) {
    throw ResultsError(error.what());
  }
}

}  // namespace

ResultsFile parse_results(std::string_view text, std::string_view source,
                          const LoadLimits& limits) {
  return results_from_json(parse_results_json(text, source, limits), source);
}

json load_results_json(const std::filesystem::path& path, const LoadLimits& limits) {
  namespace fs = std::filesystem;
  const std::string source = path.string();
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) {
    fail(source, "", "cannot read the file: it does not exist");
  }
  if (error) {
    fail(source, "", "cannot read the file: " + error.message());
  }
  if (fs::is_directory(status)) {
    fail(source, "", "expected a results JSON file, found a directory");
  }
  if (!fs::is_regular_file(status)) {
    fail(source, "", "expected a results JSON file, found a special file");
  }
  const std::uintmax_t size = fs::file_size(path, error);
  if (!error && size > limits.max_bytes) {
    fail(source, "",
         "expected at most " + std::to_string(limits.max_bytes) + " bytes, found " +
             std::to_string(size));
  }

  const auto close = [](std::FILE* f) { std::fclose(f); };
  const std::unique_ptr<std::FILE, decltype(close)> stream(std::fopen(source.c_str(), "rb"), close);
  if (!stream) {
    fail(source, "",
         "cannot open the file: " + std::error_code(errno, std::generic_category()).message());
  }
  // Read at most one byte past the limit: the file may have grown since it was measured.
  std::string text;
  std::array<char, 65536> chunk{};
  while (text.size() <= limits.max_bytes) {
    const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), stream.get());
    text.append(chunk.data(), got);
    if (got < chunk.size()) {
      if (std::ferror(stream.get()) != 0) {
        fail(source, "",
             "cannot read the file: " + std::error_code(errno, std::generic_category()).message());
      }
      break;
    }
  }
  return parse_results_json(text, source, limits);
}

ResultsFile load_results(const std::filesystem::path& path, const LoadLimits& limits) {
  return results_from_json(load_results_json(path, limits), path.string());
}

void save_results(const std::filesystem::path& path, const ResultsFile& file) {
  const std::string target = path.string();
  if (path.filename().empty()) {
    fail(target, "", "expected a file name to write the results to");
  }
  std::string text;
  try {
    text = build_json(file, target).dump(2) + "\n";
  } catch (const json::exception& error) {
    fail(target, "", std::string("cannot encode the results: ") + error.what());
  }

  // Readers see the old file or the new one, never a half-written one. The folder must exist.
  try {
    write_file_atomically(path, text, ParentFolders::must_exist);
  } catch (const std::runtime_error& error) {
    throw ResultsError(error.what());  // "PATH: cannot ...", as every ResultsError reads
  }
}

}  // namespace gpulab
