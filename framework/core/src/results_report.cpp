// The report of a results file for a person (render_report, results.hpp): its context, then one
// table per result name, with units and each metric's provenance in the column titles.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/results.hpp"
#include "results_errors.hpp"
#include "text.hpp"

namespace gpulab {
namespace {

using detail::has_spec;
using detail::printable;

// About four significant digits; integers stay integers; very large or small in e-notation.
std::string format_number(double value) {
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value)) {
    return format_fixed(value, 0);
  }
  if (magnitude != 0.0 && (magnitude >= 1e15 || magnitude < 1e-6)) {
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.3e", value);
    return buffer.data();
  }
  if (value == std::trunc(value)) {
    return format_fixed(value, 0);
  }
  const int digits = static_cast<int>(std::floor(std::log10(magnitude)));
  return format_fixed(value, std::clamp(3 - digits, 0, 9));
}

bool looks_numeric(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789.+-eExX") == std::string_view::npos;
}

// A metric column of one table: one per metric name, and one per (name, spec) for modeled values.
struct MetricColumn {
  std::string name;
  std::string spec;      // empty for measured, counted and unavailable values
  bool counted = false;  // counted on sim
  bool clock = false;    // read from the modeled clock of `spec`

  [[nodiscard]] static MetricColumn of(const Metric& metric) {
    return {metric.name, has_spec(metric.provenance) ? metric.spec : std::string(),
            metric.provenance == Provenance::counted,
            metric.provenance == Provenance::modeled_clock};
  }
  [[nodiscard]] bool operator==(const MetricColumn& other) const {
    return name == other.name && spec == other.spec && clock == other.clock;
  }
};

std::string column_title(const MetricColumn& column) {
  const std::string_view stem = metric_stem(column.name);
  const std::string_view unit = unit_label(column.name);
  // "bandwidth (GB/s)"; a bare unit ("bytes") or a name without one is shown as it is.
  std::string title = stem.empty() || unit.empty()
                          ? printable(column.name, 60)
                          : printable(stem, 80) + " (" + std::string(unit) + ")";
  if (column.clock) {
    title += " " + timing_label(TimingClock::modeled, printable(column.spec, 40));
  } else if (!column.spec.empty()) {
    title += " modeled (" + printable(column.spec, 40) + ")";
  }
  if (column.counted) {
    title += " counted (sim)";
  }
  return title;
}

void render_group(std::ostringstream& out, const std::string& name,
                  const std::vector<const Result*>& group) {
  std::vector<std::string> params;
  std::vector<MetricColumn> metrics;
  for (const Result* result : group) {
    for (const auto& [key, value] : result->params) {
      if (std::find(params.begin(), params.end(), key) == params.end()) {
        params.push_back(key);
      }
    }
    for (const Metric& metric : result->metrics) {
      MetricColumn column = MetricColumn::of(metric);
      if (std::find(metrics.begin(), metrics.end(), column) == metrics.end()) {
        metrics.push_back(std::move(column));
      }
    }
  }

  std::vector<Column> columns;
  for (const std::string& key : params) {
    const bool numeric = std::all_of(group.begin(), group.end(), [&](const Result* result) {
      const auto it = result->params.find(key);
      return it == result->params.end() || looks_numeric(it->second);
    });
    columns.push_back(Column{printable(key, 40), "", numeric ? Align::right : Align::left});
  }
  for (const MetricColumn& column : metrics) {
    columns.push_back(Column{column_title(column), "", Align::right});
  }

  Table table(columns);
  std::vector<std::string> reasons;  // "title: reason", each once
  for (const Result* result : group) {
    std::vector<std::string> row;
    for (const std::string& key : params) {
      const auto it = result->params.find(key);
      row.push_back(it == result->params.end() ? "-" : printable(it->second, 40));
    }
    for (const MetricColumn& column : metrics) {
      std::string cell;
      for (const Metric& metric : result->metrics) {
        if (MetricColumn::of(metric) != column) {
          continue;
        }
        std::string text = "n/a";
        if (metric.provenance == Provenance::unavailable) {
          const std::string reason = column_title(column) + ": " + printable(metric.reason, 200);
          if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
            reasons.push_back(reason);
          }
        } else if (metric.value.has_value()) {
          text = format_number(*metric.value);
        }
        cell += cell.empty() ? text : ", " + text;
      }
      row.push_back(cell.empty() ? "-" : cell);
    }
    table.add_row(std::move(row));
  }

  out << "\n" << printable(name, 80) << "\n" << table.render();
  for (const std::string& reason : reasons) {
    out << "  n/a " << reason << "\n";
  }
}

}  // namespace

std::string render_report(const ResultsFile& file) {
  const ResultsContext& c = file.context;
  const auto or_unknown = [](const std::string& text) {
    return text.empty() ? std::string("unknown") : printable(text, 200);
  };
  std::ostringstream out;
  out << "gpulab results (schema " << c.schema_version << ")\n";
  out << "  gpulab    " << or_unknown(c.gpulab_version) << "\n";
  out << "  revision  " << or_unknown(c.git_revision) << "\n";
  out << "  backend   " << or_unknown(c.backend) << "\n";
  out << "  clock     " << to_string(c.clock);
  if (c.clock == TimingClock::host) {
    out << " (measured times are CPU time of the simulation, not GPU time)";
  } else if (c.clock == TimingClock::modeled) {
    out << " (measured times are modeled for " << printable(c.spec, 200)
        << " from counted memory traffic and instructions, not measured on a GPU)";
  }
  out << "\n";
  out << "  device    " << or_unknown(c.device) << "\n";
  out << "  spec      " << (c.spec.empty() ? std::string("none") : printable(c.spec, 200)) << "\n";
  out << "  date      " << or_unknown(c.date) << "\n";

  if (file.results.empty()) {
    out << "\n(no results)\n";
    return out.str();
  }
  // One table per result name, in order of first appearance.
  std::vector<std::pair<std::string, std::vector<const Result*>>> groups;
  for (const Result& result : file.results) {
    const auto it = std::find_if(groups.begin(), groups.end(),
                                 [&](const auto& group) { return group.first == result.name; });
    if (it == groups.end()) {
      groups.push_back({result.name, {&result}});
    } else {
      it->second.push_back(&result);
    }
  }
  for (const auto& [name, group] : groups) {
    render_group(out, name, group);
  }
  return out.str();
}

}  // namespace gpulab
