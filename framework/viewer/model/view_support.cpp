#include "view_support.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <string_view>
#include <system_error>

namespace gpulab::viewer::detail {

// The param's value, or nullptr when the result has none.
const std::string* param(const Result& result, const std::string& key) {
  const auto it = result.params.find(key);
  return it == result.params.end() ? nullptr : &it->second;
}

// A whole-string decimal number ("1048576", "1e6"); empty for "abc", "12x", "", "inf".
std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// A whole-string integer ("256"); empty otherwise.
std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) {
    return std::nullopt;
  }
  return value;
}

// The first metric `name` with `provenance` and a finite value; nullptr when there is none.
// Provenance::measured asks for the run's own figures: measured, or read from the sim's modeled
// clock (schema 3; the file's clock labels them, as it labels schema 2's, which say "measured").
const Metric* find_metric(const Result& result, std::string_view name, Provenance provenance) {
  for (const Metric& m : result.metrics) {
    const bool run_figure =
        provenance == Provenance::measured && m.provenance == Provenance::modeled_clock;
    if (m.name == name && (m.provenance == provenance || run_figure) && m.value &&
        std::isfinite(*m.value)) {
      return &m;
    }
  }
  return nullptr;
}

std::optional<double> metric_value(const Result& result, std::string_view name,
                                   Provenance provenance) {
  const Metric* m = find_metric(result, name, provenance);
  return m != nullptr ? m->value : std::nullopt;
}

// A time: only a positive one is usable (a zero time would make every rate infinite).
std::optional<double> time_ms(const Result& result, Provenance provenance) {
  const std::optional<double> t = metric_value(result, "time_ms", provenance);
  return t && *t > 0 ? t : std::nullopt;
}

// A declared amount of work (FLOPs, bytes): measured or modeled, whichever comes first (the labs
// write the declared work as measured, the modeled analyses as modeled); never negative.
std::optional<double> work_value(const Result& result, std::string_view name) {
  for (const Metric& m : result.metrics) {
    if (m.name == name && m.provenance != Provenance::unavailable && m.value &&
        std::isfinite(*m.value) && *m.value >= 0) {
      return m.value;
    }
  }
  return std::nullopt;
}

// Decimal GB/s for bytes in time_ms (> 0); empty when it overflows (a denormal time).
std::optional<double> gb_per_s(double bytes, double time_ms) {
  const double rate = bytes / (time_ms * 1e-3) / 1e9;
  return std::isfinite(rate) ? std::optional<double>(rate) : std::nullopt;
}

// FLOPs of an op: metric flop, else work_gflop x 1e9.
std::optional<double> flops_of(const Result& result) {
  if (const std::optional<double> flop = work_value(result, "flop")) {
    return flop;
  }
  if (const std::optional<double> gflop = work_value(result, "work_gflop")) {
    return *gflop * 1e9;
  }
  return std::nullopt;
}

// The spec named by the first modeled metric of `results`, else the file's spec.
std::string modeled_spec_of(const std::vector<const Result*>& results, const ResultsFile& file) {
  for (const Result* r : results) {
    for (const Metric& m : r->metrics) {
      if (m.provenance == Provenance::modeled && !m.spec.empty()) {
        return m.spec;
      }
    }
  }
  return file.context.spec;
}

// "batch=1, seq_len=64": params in their (sorted) map order.
std::string join_params(const std::map<std::string, std::string>& params) {
  std::string text;
  for (const auto& [key, value] : params) {
    if (!text.empty()) {
      text += ", ";
    }
    text += key + "=" + value;
  }
  return text;
}

// The params without `excluded`.
std::map<std::string, std::string> params_without(
    const Result& result, std::initializer_list<std::string_view> excluded) {
  std::map<std::string, std::string> kept;
  for (const auto& [key, value] : result.params) {
    if (std::find(excluded.begin(), excluded.end(), key) == excluded.end()) {
      kept.emplace(key, value);
    }
  }
  return kept;
}

// True when the file's measured times are CPU time of the simulation (the sim's host clock).
bool host_clock_times(const ResultsFile& file) {
  return file.context.clock == TimingClock::host;
}

// A peak for a label: "3350", "1555", "320.5" (up to 6 significant digits, no trailing zeros).
std::string peak_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

// Case-insensitive equality for ASCII text.
bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

// The precision of a result: its param "precision" as parse_precision() reads it ("fp16") or as
// to_string() writes it ("FP16 tensor", what the labs write); FP32 without the param; empty for
// a precision gpulab does not know.
std::optional<Precision> precision_of(const Result& result) {
  const std::string* text = param(result, "precision");
  if (text == nullptr) {
    return Precision::fp32;
  }
  if (const std::optional<Precision> p = parse_precision(*text)) {
    return p;
  }
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
    if (equal_ignoring_case(*text, to_string(p))) {
      return p;
    }
  }
  return std::nullopt;
}

// True when a modeled metric's spec is `spec` (by display name, or by what find_spec makes of it).
bool names_spec(const std::string& metric_spec, const GpuSpec& spec) {
  if (metric_spec.empty()) {
    return false;
  }
  if (metric_spec == spec.name) {
    return true;
  }
  const std::optional<GpuSpec> found = find_spec(metric_spec);
  return found && found->key == spec.key && spec.origin == SpecOrigin::datasheet;
}

}  // namespace gpulab::viewer::detail
