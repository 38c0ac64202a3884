// The results model (results.hpp): units in metric names, clocks and provenances in words, a
// results file's context, and the one error path of the readers (results_errors.hpp). Its JSON is
// results_json.cpp, its report for a person results_report.cpp.
#include "gpulab/core/results.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpulab/core/version.hpp"
#include "results_errors.hpp"
#include "text.hpp"

namespace gpulab {
namespace {

// ---------------------------------------------------------------------------------------------
// Units
// ---------------------------------------------------------------------------------------------

struct Unit {
  std::string_view suffix;  // as written in a metric name, after '_'
  std::string_view label;   // as shown to a person
};

// Decimal multiples only (GB = 1e9 bytes): gpulab never mixes GB and GiB.
// clang-format off
constexpr std::array kUnits{
    // time and clocks
    Unit{"ns", "ns"}, Unit{"us", "us"}, Unit{"ms", "ms"}, Unit{"s", "s"},
    Unit{"cycles", "cycles"}, Unit{"hz", "Hz"}, Unit{"khz", "kHz"}, Unit{"mhz", "MHz"},
    Unit{"ghz", "GHz"},
    // sizes and bandwidths
    Unit{"bits", "bits"}, Unit{"bytes", "bytes"}, Unit{"kb", "kB"}, Unit{"mb", "MB"}, Unit{"gb", "GB"},
    Unit{"tb", "TB"},
    Unit{"bytes_s", "B/s"}, Unit{"mb_s", "MB/s"}, Unit{"gb_s", "GB/s"}, Unit{"tb_s", "TB/s"},
    // work, rates and arithmetic intensity
    Unit{"flop", "FLOP"}, Unit{"gflop", "GFLOP"}, Unit{"tflop", "TFLOP"}, Unit{"flop_s", "FLOP/s"},
    Unit{"gflop_s", "GFLOP/s"}, Unit{"tflop_s", "TFLOP/s"}, Unit{"flop_per_byte", "FLOP/byte"},
    // shares
    Unit{"percent", "%"}, Unit{"ratio", "ratio"}, Unit{"fraction", "fraction"},
    // counts
    Unit{"count", "count"}, Unit{"elements", "elements"}, Unit{"threads", "threads"},
    Unit{"blocks", "blocks"}, Unit{"warps", "warps"}, Unit{"registers", "registers"},
    // power
    Unit{"w", "W"},
};
// clang-format on

// The longest unit that is the whole name or follows a '_' at its end ("bandwidth_gb_s" is GB/s,
// not s); nullptr when there is none. "_ms" alone has no stem and does not count.
const Unit* find_unit(std::string_view name) noexcept {
  const Unit* best = nullptr;
  for (const Unit& unit : kUnits) {
    if (!name.ends_with(unit.suffix)) {
      continue;
    }
    const std::size_t stem = name.size() - unit.suffix.size();
    const bool whole = stem == 0;
    const bool after_stem = stem >= 2 && name[stem - 1] == '_';
    if ((whole || after_stem) && (best == nullptr || unit.suffix.size() > best->suffix.size())) {
      best = &unit;
    }
  }
  return best;
}

}  // namespace

std::string_view to_string(TimingClock clock) noexcept {
  switch (clock) {
    case TimingClock::gpu:
      return "gpu";
    case TimingClock::modeled:
      return "modeled";
    case TimingClock::host:
      return "host";
  }
  return "gpu";
}

std::string timing_label(TimingClock clock, std::string_view spec) {
  switch (clock) {
    case TimingClock::gpu:
      return "measured";
    case TimingClock::modeled:
      return "modeled clock (" + std::string(spec) + ")";
    case TimingClock::host:
      return "measured (CPU simulation)";
  }
  return "measured";
}

std::string_view to_string(Provenance provenance) noexcept {
  switch (provenance) {
    case Provenance::measured:
      return "measured";
    case Provenance::modeled:
      return "modeled";
    case Provenance::unavailable:
      return "unavailable";
    case Provenance::counted:
      return "counted";
    case Provenance::modeled_clock:
      return "modeled_clock";
  }
  return "unknown";
}

bool has_unit_suffix(std::string_view name) noexcept {
  return find_unit(name) != nullptr;
}

std::string_view unit_label(std::string_view name) noexcept {
  const Unit* unit = find_unit(name);
  return unit == nullptr ? std::string_view() : unit->label;
}

std::string_view metric_stem(std::string_view name) noexcept {
  const Unit* unit = find_unit(name);
  if (unit == nullptr) {
    return name;
  }
  const std::size_t stem = name.size() - unit->suffix.size();
  return name.substr(0, stem == 0 ? 0 : stem - 1);
}

Metric Metric::timed(std::string name, double value, TimingClock clock, std::string spec_name) {
  if (clock == TimingClock::modeled) {
    return {std::move(name), value, Provenance::modeled_clock, std::move(spec_name), {}};
  }
  return measured(std::move(name), value);
}

ResultsContext make_context(std::string backend, std::string device, std::string spec) {
  ResultsContext context;
  context.gpulab_version = std::string(version());
  context.git_revision = std::string(git_revision());
  context.backend = std::move(backend);
  context.device = std::move(device);
  context.spec = std::move(spec);
  context.clock = context.backend == "sim" ? TimingClock::host : TimingClock::gpu;
  // system_clock, not std::time(): glibc's time() reads a coarse clock that can lag a second
  // behind system_clock at a second boundary.
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> date{};
  std::strftime(date.data(), date.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  context.date = date.data();
  return context;
}

namespace detail {

// Throws the one-line ResultsError "SOURCE: WHERE: WHAT" (WHERE may be empty).
[[noreturn]] void fail(std::string_view source, std::string_view where, std::string_view what) {
  std::string message = source.empty() ? std::string("<input>") : printable(source, 300);
  message += ": ";
  if (!where.empty()) {
    message += where;
    message += ": ";
  }
  message += what;
  throw ResultsError(printable(message, std::string::npos));
}

// "expected X, found Y" for a JSON value that is present but wrong; never dumps containers (they
// can be huge or deep).
std::string describe(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "integer " + value.dump();
    case nlohmann::json::value_t::number_float:
      return "number " + value.dump();
    case nlohmann::json::value_t::string:
      return "string " + quote_text(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array:
      return "an array of " + std::to_string(value.size()) + " element(s)";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return std::string(value.type_name());
}

}  // namespace detail

}  // namespace gpulab
