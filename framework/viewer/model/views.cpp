// The results panels' views (see views.hpp): plain data derived from results files.
//
// A results file may come from another machine, an older gpulab or a hand edit, so nothing here
// trusts its content beyond what the loader checked (names, units, finite values): a param that
// is not a number, a missing metric, a zero time or a duplicate only makes the affected point,
// row or op disappear, never an exception or a NaN on screen.
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

namespace gpulab::viewer {

namespace {

// Histograms of more bins than this are not drawable anyway; the cap keeps an absurd argument
// from allocating gigabytes.
constexpr int kMaxBins = 1 << 20;

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

}  // namespace

GpuSpec spec_of(const ResultsFile& file, const GpuSpec& fallback) {
  if (!file.context.spec.empty()) {
    if (std::optional<GpuSpec> spec = find_spec(file.context.spec)) {
      return *std::move(spec);
    }
  }
  return fallback;
}

// ---------------------------------------------------------------------------------------------
// Benchmark
// ---------------------------------------------------------------------------------------------

Histogram make_histogram(std::span<const double> samples_ms, int bins) {
  Histogram h;
  bins = std::clamp(bins, 1, kMaxBins);
  // Non-finite samples cannot be placed in a bin; the loader never lets them in anyway.
  double low = 0;
  double high = 0;
  bool any = false;
  for (const double s : samples_ms) {
    if (!std::isfinite(s)) {
      continue;
    }
    low = any ? std::min(low, s) : s;
    high = any ? std::max(high, s) : s;
    any = true;
  }
  if (!any) {
    return h;
  }
  std::size_t count = 0;
  for (const double s : samples_ms) {
    count += std::isfinite(s) ? 1 : 0;
  }
  if (low == high) {
    h.bin_width_ms = std::max(1e-9, std::abs(low) * 1e-3);
    h.min_ms = low - h.bin_width_ms / 2;
    h.counts.assign(1, count);
    return h;
  }
  // In long double: (high - low) overflows a double for samples near its range's ends.
  const long double width = (static_cast<long double>(high) - static_cast<long double>(low)) / bins;
  h.min_ms = low;
  h.bin_width_ms = static_cast<double>(width);
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  for (const double s : samples_ms) {
    if (!std::isfinite(s)) {
      continue;
    }
    const long double position =
        (static_cast<long double>(s) - static_cast<long double>(low)) / width;
    // The last bin includes its right edge (the maximum lands exactly on `bins`).
    const auto index = std::min(static_cast<std::size_t>(std::max(0.0L, std::floor(position))),
                                static_cast<std::size_t>(bins - 1));
    ++h.counts[index];
  }
  return h;
}

BenchmarkView benchmark_view(const ResultsFile& file, const GpuSpec& fallback) {
  BenchmarkView view;
  view.kernel = result_kind::vector_add;
  view.cpu_times = host_clock_times(file);
  const GpuSpec spec = spec_of(file, fallback);
  view.peak_gb_s = spec.dram_bandwidth_gb_s;
  view.peak_label = spec.name + " peak " + peak_number(spec.dram_bandwidth_gb_s) + " GB/s (" +
                    (spec.origin == SpecOrigin::datasheet ? "datasheet" : "estimated") + ")";

  std::size_t named = 0;
  for (const Result& r : file.results) {
    if (r.name != result_kind::vector_add) {
      continue;
    }
    ++named;
    const std::string* n_text = param(r, "n");
    const std::optional<double> n = n_text != nullptr ? parse_number(*n_text) : std::nullopt;
    if (!n || *n <= 0) {
      continue;  // a size that is not a positive number cannot be placed
    }
    BenchmarkPoint p;
    p.n = *n;
    p.bytes = work_value(r, "bytes").value_or(0);
    p.measured_ms = time_ms(r, Provenance::measured);
    p.modeled_ms = time_ms(r, Provenance::modeled);
    p.measured_gb_s = metric_value(r, "bandwidth_gb_s", Provenance::measured);
    if (!p.measured_gb_s && p.measured_ms && p.bytes > 0) {
      p.measured_gb_s = gb_per_s(p.bytes, *p.measured_ms);
    }
    if (p.modeled_ms && p.bytes > 0) {
      p.modeled_gb_s = gb_per_s(p.bytes, *p.modeled_ms);
    }
    p.rel_noise_percent = metric_value(r, "rel_noise_percent", Provenance::measured);
    if (!p.measured_ms) {
      for (const Metric& m : r.metrics) {
        if (m.name == "time_ms" && m.provenance == Provenance::unavailable) {
          p.unavailable = m.reason.empty() ? "unavailable (no reason given)" : m.reason;
          break;
        }
      }
      if (p.unavailable.empty()) {
        p.unavailable = metric_value(r, "time_ms", Provenance::measured)
                            ? "the measured time is not positive"
                            : "no measured time in the file";
      }
    }
    p.samples_ms = r.samples_ms;
    p.histogram = make_histogram(p.samples_ms, kHistogramBins);
    if (!p.samples_ms.empty()) {
      try {
        p.summary = summarize(p.samples_ms);
      } catch (const std::exception&) {
        // A negative or non-finite sample: the samples are shown, the statistics are not.
      }
    }
    // By size; equal sizes keep the file's order.
    const auto after =
        std::upper_bound(view.points.begin(), view.points.end(), p.n,
                         [](double size, const BenchmarkPoint& point) { return size < point.n; });
    view.points.insert(after, std::move(p));
  }
  if (view.points.empty()) {
    view.empty_reason = named == 0 ? "no vector_add results in this file"
                                   : "no vector_add result has a positive number as param n";
  }
  return view;
}

// ---------------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------------

std::vector<ComponentsView> components_views(const ResultsFile& file) {
  // Shapes in order of first appearance, each with its results in file order.
  std::vector<std::pair<std::map<std::string, std::string>, std::vector<const Result*>>> shapes;
  for (const Result& r : file.results) {
    if (r.name != result_kind::attention_component || param(r, "component") == nullptr) {
      continue;
    }
    std::map<std::string, std::string> shape =
        params_without(r, {"component", "bound", "model_bound"});
    auto it = std::find_if(shapes.begin(), shapes.end(),
                           [&](const auto& entry) { return entry.first == shape; });
    if (it == shapes.end()) {
      shapes.emplace_back(std::move(shape), std::vector<const Result*>{});
      it = std::prev(shapes.end());
    }
    it->second.push_back(&r);
  }

  std::vector<ComponentsView> views;
  for (const auto& [shape, results] : shapes) {
    ComponentsView view;
    view.shape = join_params(shape);
    view.cpu_times = host_clock_times(file);
    view.modeled_spec = modeled_spec_of(results, file);
    std::set<std::string> seen;
    for (const Result* r : results) {
      const std::string& name = *param(*r, "component");
      if (!seen.insert(name).second) {
        continue;  // a component twice in one shape: the first one counts
      }
      ComponentRow row;
      row.name = name;
      row.measured_ms = time_ms(*r, Provenance::measured);
      row.modeled_ms = time_ms(*r, Provenance::modeled);
      row.flop = flops_of(*r);
      row.bytes = work_value(*r, "bytes");
      if (const std::string* bound = param(*r, "bound")) {
        row.bound = *bound;
      }
      view.rows.push_back(std::move(row));
    }

    double measured_total = 0;
    double modeled_total = 0;
    for (const ComponentRow& row : view.rows) {
      measured_total += row.measured_ms.value_or(0);
      modeled_total += row.modeled_ms.value_or(0);
    }
    std::optional<std::size_t> slowest_measured;
    std::optional<std::size_t> slowest_modeled;
    for (std::size_t i = 0; i < view.rows.size(); ++i) {
      ComponentRow& row = view.rows[i];
      if (row.measured_ms) {
        if (measured_total > 0) {
          row.measured_share = *row.measured_ms / measured_total;
        }
        if (!slowest_measured || *row.measured_ms > *view.rows[*slowest_measured].measured_ms) {
          slowest_measured = i;
        }
      }
      if (row.modeled_ms) {
        if (modeled_total > 0) {
          row.modeled_share = *row.modeled_ms / modeled_total;
        }
        if (!slowest_modeled || *row.modeled_ms > *view.rows[*slowest_modeled].modeled_ms) {
          slowest_modeled = i;
        }
      }
    }
    // On the sim's host clock the measured ranking is the CPU's: the GPU's bottleneck is the
    // modeled one.
    const bool cpu_times = host_clock_times(file);
    if (slowest_measured && !(cpu_times && slowest_modeled)) {
      view.bottleneck = slowest_measured;
    } else if (slowest_modeled) {
      view.bottleneck = slowest_modeled;
      view.bottleneck_is_modeled = true;
    }
    views.push_back(std::move(view));
  }
  return views;
}

// ---------------------------------------------------------------------------------------------
// Roofline
// ---------------------------------------------------------------------------------------------

namespace {

// Labels of a source's attention components: the component, then the params that tell its shape
// from the source's other shapes at the precision ("Softmax (seq_len=4096)"); seq_len when the
// source has one shape.
class ComponentLabels {
 public:
  ComponentLabels(const ResultsFile& file, Precision precision) {
    std::vector<std::map<std::string, std::string>> shapes;
    for (const Result& r : file.results) {
      if (r.name == result_kind::attention_component && precision_of(r) == precision) {
        shapes.push_back(params_without(r, {"component", "bound", "model_bound", "precision"}));
      }
    }
    std::set<std::string> keys;
    for (const auto& shape : shapes) {
      for (const auto& entry : shape) {
        keys.insert(entry.first);
      }
    }
    for (const std::string& key : keys) {
      const auto value_in = [&](const std::map<std::string, std::string>& shape) {
        const auto it = shape.find(key);
        return it == shape.end() ? std::optional<std::string>() : it->second;
      };
      const std::optional<std::string> first = value_in(shapes.front());
      const bool varies = std::any_of(shapes.begin(), shapes.end(),
                                      [&](const auto& shape) { return value_in(shape) != first; });
      if (varies) {
        varying_.push_back(key);
      }
    }
    if (varying_.empty() && keys.count("seq_len") > 0) {
      varying_.push_back("seq_len");
    }
  }

  [[nodiscard]] std::string label(const Result& r) const {
    std::string text = *param(r, "component");
    std::string detail;
    for (const std::string& key : varying_) {
      if (const std::string* value = param(r, key)) {
        detail += (detail.empty() ? "" : ", ") + key + "=" + *value;
      }
    }
    return detail.empty() ? text : text + " (" + detail + ")";
  }

 private:
  std::vector<std::string> varying_;
};

// Why the roofline has no points, from what was left out.
std::string roofline_empty_reason(std::size_t sources, Precision precision,
                                  std::size_t sim_measured_dropped, std::size_t without_work,
                                  std::size_t without_time) {
  if (sources == 0) {
    return "no results: load a results file or run an experiment";
  }
  std::string reason =
      "no op at " + std::string(to_string(precision)) + " with FLOPs, bytes and a time";
  if (sim_measured_dropped > 0) {
    reason += "; " + std::to_string(sim_measured_dropped) +
              " measured time(s) of sim runs left out (CPU time of the simulation, not GPU time)";
  }
  if (without_work > 0) {
    reason += "; " + std::to_string(without_work) +
              " op(s) not placed: the file gives no FLOPs and bytes for them";
  }
  if (without_time > 0) {
    reason += "; " + std::to_string(without_time) + " op(s) have no positive time";
  }
  return reason;
}

}  // namespace

// The roofline of the GPU a file was measured on (spec_of), at the precision; `drawn` when the
// file names no known spec or that spec lacks the precision.
Roofline file_roof(const ResultsFile& file, const GpuSpec& spec, Precision precision,
                   const Roofline& drawn) {
  try {
    return make_roofline(spec_of(file, spec), precision);
  } catch (const std::exception&) {
    return drawn;
  }
}

RooflineView roofline_view(std::span<const Source> sources, const GpuSpec& spec,
                           Precision precision) {
  RooflineView view;
  try {
    view.roofline = make_roofline(spec, precision);
  } catch (const std::exception& e) {
    view.unavailable = e.what();
    view.empty_reason = view.unavailable;
    return view;
  }
  const Roofline& roof = *view.roofline;

  std::size_t sim_measured_dropped = 0;
  std::size_t without_work = 0;
  std::size_t without_time = 0;
  for (const Source& source : sources) {
    if (source.file == nullptr) {
      continue;
    }
    const ComponentLabels labels(*source.file, precision);
    for (const Result& r : source.file->results) {
      const bool is_component =
          r.name == result_kind::attention_component && param(r, "component") != nullptr;
      if ((!is_component && r.name != result_kind::op_cost) || precision_of(r) != precision) {
        continue;
      }
      const std::optional<double> flops = flops_of(r);
      const std::optional<double> bytes = work_value(r, "bytes");
      // FLOPs per byte must be a finite positive number to sit on a log-log roofline.
      // (work_value() never returns a negative amount; 0 bytes give an infinite intensity.)
      if (!flops || !bytes || !(*flops / *bytes > 0) || !std::isfinite(*flops / *bytes)) {
        ++without_work;
        continue;
      }
      const OpCost cost{*flops, *bytes};
      std::string label;
      if (is_component) {
        label = labels.label(r);
      } else {
        const std::string* op = param(r, "op");
        label = op != nullptr ? *op : r.name;
      }

      bool placed = false;
      // A measured point's % of roof is against the roofs of the GPU it ran on (the file's
      // spec), which may not be the spec drawn: an A100 run is not judged by H100 peaks.
      const auto place = [&](double time, Provenance kind, const Roofline& own) {
        RooflinePoint p;
        p.label = label;
        p.source = source.label;
        p.intensity_flop_per_byte = cost.intensity_flop_per_byte();
        p.achieved_flop_s = cost.flops / (time * 1e-3);
        p.kind = kind;
        p.kind_label =
            kind == Provenance::measured ? source.measured_label : std::string(to_string(kind));
        p.roof_flop_s = own.attainable_flop_s(p.intensity_flop_per_byte);
        p.percent_of_roof = p.roof_flop_s > 0 ? 100 * p.achieved_flop_s / p.roof_flop_s : 0;
        p.bound = own.bound(cost);
        if (std::isfinite(p.achieved_flop_s) && std::isfinite(p.percent_of_roof)) {
          view.points.push_back(std::move(p));
          placed = true;
        }
      };

      if (const std::optional<double> measured = time_ms(r, Provenance::measured)) {
        if (source.cpu_times) {
          ++sim_measured_dropped;
        } else {
          place(*measured, Provenance::measured, file_roof(*source.file, spec, precision, roof));
        }
      }
      if (const Metric* modeled = find_metric(r, "time_ms", Provenance::modeled);
          modeled != nullptr && *modeled->value > 0) {
        // A modeled time is a property of the spec it was modeled for: on another spec's roofs
        // the op is modeled again for that spec rather than drawn above or below its roof.
        place(names_spec(modeled->spec, spec) ? *modeled->value : roof.modeled_time_ms(cost),
              Provenance::modeled, roof);
      }
      if (!placed && !time_ms(r, Provenance::measured)) {
        ++without_time;
      }
    }
  }
  if (view.points.empty()) {
    view.empty_reason = roofline_empty_reason(sources.size(), precision, sim_measured_dropped,
                                              without_work, without_time);
  }
  return view;
}

// ---------------------------------------------------------------------------------------------
// Block-size sweep
// ---------------------------------------------------------------------------------------------

std::vector<SweepView> sweep_views(const ResultsFile& file) {
  struct Group {
    std::string kernel;
    std::map<std::string, std::string> problem;
    std::vector<const Result*> results;
  };
  std::vector<Group> groups;
  for (const Result& r : file.results) {
    const std::string* kernel = param(r, "kernel");
    if (r.name != result_kind::block_size_sweep || kernel == nullptr) {
      continue;
    }
    std::map<std::string, std::string> problem =
        params_without(r, {"kernel", "block_size", "limiter"});
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.kernel == *kernel && g.problem == problem;
    });
    if (it == groups.end()) {
      groups.push_back(Group{*kernel, std::move(problem), {}});
      it = std::prev(groups.end());
    }
    it->results.push_back(&r);
  }

  std::vector<SweepView> views;
  for (const Group& g : groups) {
    SweepView view;
    view.kernel = g.kernel;
    view.problem = join_params(g.problem);
    view.cpu_times = host_clock_times(file);
    view.modeled_spec = modeled_spec_of(g.results, file);
    std::set<int> seen;
    for (const Result* r : g.results) {
      const std::string* text = param(*r, "block_size");
      const std::optional<int> block = text != nullptr ? parse_int(*text) : std::nullopt;
      if (!block || *block <= 0 || !seen.insert(*block).second) {
        continue;  // not a block size, or one seen already (the first counts)
      }
      SweepPoint p;
      p.block_size = *block;
      p.measured_ms = time_ms(*r, Provenance::measured);
      p.modeled_ms = time_ms(*r, Provenance::modeled);
      p.occupancy_percent = metric_value(*r, "occupancy_percent", Provenance::modeled);
      if (!p.occupancy_percent) {
        p.occupancy_percent = metric_value(*r, "occupancy_percent", Provenance::measured);
      }
      if (const std::string* limiter = param(*r, "limiter")) {
        p.limiter = *limiter;
      }
      view.points.push_back(std::move(p));
    }
    if (view.points.empty()) {
      continue;  // nothing usable in this group
    }
    std::sort(view.points.begin(), view.points.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.block_size < b.block_size; });
    for (std::size_t i = 0; i < view.points.size(); ++i) {
      const std::optional<double>& t = view.points[i].measured_ms;
      if (t && (!view.fastest_measured || *t < *view.points[*view.fastest_measured].measured_ms)) {
        view.fastest_measured = i;
      }
    }
    views.push_back(std::move(view));
  }
  return views;
}

std::vector<MemoryView> memory_views(const ResultsFile& file) {
  std::vector<MemoryView> views;
  for (const Result& r : file.results) {
    if (r.name != result_kind::counted_kernel) {
      continue;
    }
    // Counted on sim, or measured by Nsight Compute on a GPU (gpulab profile --backend cuda); a
    // kernel's figures all come from one of the two, counted first, never a mix.
    const bool any_counted = std::any_of(r.metrics.begin(), r.metrics.end(), [](const Metric& m) {
      return m.provenance == Provenance::counted;
    });
    const Provenance source = any_counted ? Provenance::counted : Provenance::measured;
    // A figure by its Nsight Compute (or gpulab__) name, whatever unit suffix it has.
    const auto counted = [&](std::string_view name) -> std::optional<double> {
      for (const Metric& m : r.metrics) {
        if (m.provenance == source && metric_stem(m.name) == name && m.value) {
          return m.value;
        }
      }
      return std::nullopt;
    };
    const auto sum = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
      if (!a && !b) {
        return std::nullopt;
      }
      return a.value_or(0) + b.value_or(0);
    };
    MemoryView v;
    const auto param = [&](const char* key) {
      const auto it = r.params.find(key);
      return it == r.params.end() ? std::string() : it->second;
    };
    v.kernel = param("kernel");
    v.launches = param("launches");
    v.modeled_bound = param("bound");
    v.provenance = source;
    v.loads = {counted("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
               counted("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
               counted("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"),
               counted("lts__t_sectors_srcunit_tex_op_read.sum"), counted("dram__bytes_read.sum")};
    v.stores = {counted("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                counted("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                counted("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"),
                counted("lts__t_sectors_srcunit_tex_op_write.sum"),
                counted("dram__bytes_write.sum")};
    v.load_efficiency_percent = counted("gpulab__global_ld_efficiency.pct");
    v.partial_store_sectors = counted("gpulab__global_st_partial_sectors.sum");
    v.l2_hit_percent = counted("lts__t_sector_hit_rate.pct");
    v.shared_requests = sum(counted("smsp__inst_executed_op_shared_ld.sum"),
                            counted("smsp__inst_executed_op_shared_st.sum"));
    v.shared_wavefronts = sum(counted("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                              counted("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
    v.bank_conflicts = sum(counted("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                           counted("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
    v.lanes_per_request = counted("gpulab__lanes_per_memory_request.ratio");
    for (const Metric& m : r.metrics) {
      if (m.name == "time_ms" && m.provenance == Provenance::modeled && m.value) {
        v.modeled_ms = m.value;
        v.modeled_spec = m.spec;
      }
    }
    views.push_back(std::move(v));
  }
  return views;
}

// ---------------------------------------------------------------------------------------------
// Levels
// ---------------------------------------------------------------------------------------------

namespace {

// A level's number (param level, >= 0); empty when it has none or it is not one.
std::optional<int> level_of(const Result& result) {
  const std::string* text = param(result, "level");
  if (text == nullptr) {
    return std::nullopt;
  }
  const std::optional<int> level = parse_int(*text);
  return level && *level >= 0 ? level : std::nullopt;
}

// "L3 flash", or "L3" without a level_name.
std::string level_label(const Result& result, int level) {
  std::string label = "L" + std::to_string(level);
  if (const std::string* name = param(result, "level_name"); name != nullptr && !name->empty()) {
    label += " " + *name;
  }
  return label;
}

LevelRow level_row(const Result& r, int level) {
  LevelRow row;
  row.level = level;
  row.name = level_label(r, level);
  row.time_ms = time_ms(r, Provenance::measured);
  if (const std::optional<double> memory = metric_value(r, "memory_bytes", Provenance::measured);
      memory && *memory > 0) {
    row.memory_bytes = memory;
  }
  for (const Provenance provenance :
       {Provenance::counted, Provenance::measured, Provenance::modeled}) {
    if (const std::optional<double> dram = metric_value(r, "dram_bytes", provenance);
        dram && *dram >= 0) {
      row.dram_bytes = dram;
      row.dram_provenance = provenance;
      break;
    }
  }
  if (const std::string* bound = param(r, "bound")) {
    row.bound = *bound;
  }
  if (const std::string* bound = param(r, "model_bound")) {
    row.model_bound = *bound;
  }
  if (const std::string* kernel = param(r, "longest_kernel")) {
    row.longest_kernel = *kernel;
  }
  return row;
}

// The memory of one level at one length: its memory_bytes (> 0), computed from the shape (modeled)
// when there is such a figure, else measured; and whether it was measured.
struct PointMemory {
  double bytes = 0;
  bool measured = false;
};
std::optional<PointMemory> memory_of(const Result& r) {
  for (const Provenance provenance : {Provenance::modeled, Provenance::measured}) {
    if (const std::optional<double> bytes = metric_value(r, "memory_bytes", provenance);
        bytes && *bytes > 0) {
      return PointMemory{*bytes, provenance == Provenance::measured};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<LevelsView> levels_views(const ResultsFile& file) {
  // A view per shape, in order of first appearance. A level result's shape is its params but
  // level, level_name and what was found of the level (its bounds, its longest kernel); a memory
  // result belongs to every view whose shape equals its params but level, level_name and seq_len
  // once seq_len is taken out too.
  struct Entry {
    std::map<std::string, std::string> shape;   // empty for a view of memory results only
    std::map<std::string, std::string> family;  // shape without seq_len
    std::vector<std::pair<int, const Result*>> levels;
  };
  struct Memory {
    int level;
    const Result* result;
    std::map<std::string, std::string> family;  // its params but level, level_name, seq_len
  };
  std::vector<Entry> entries;
  std::vector<Memory> memory;
  for (const Result& r : file.results) {
    const std::optional<int> level = level_of(r);
    if (!level) {
      continue;
    }
    if (r.name == result_kind::attention_level) {
      std::map<std::string, std::string> shape =
          params_without(r, {"level", "level_name", "bound", "model_bound", "longest_kernel"});
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const Entry& e) { return e.shape == shape; });
      if (it == entries.end()) {
        std::map<std::string, std::string> family = shape;
        family.erase("seq_len");
        entries.push_back({std::move(shape), std::move(family), {}});
        it = std::prev(entries.end());
      }
      it->levels.emplace_back(*level, &r);
    } else if (r.name == result_kind::attention_level_memory) {
      memory.push_back(
          {*level, &r, params_without(r, {"level", "level_name", "seq_len", "bound"})});
    }
  }
  // Memory families without a level result of their shape get a view of their own.
  for (const Memory& m : memory) {
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.family == m.family; })) {
      entries.push_back({{}, m.family, {}});
    }
  }

  const bool cpu_times = host_clock_times(file);
  std::vector<LevelsView> views;
  for (const Entry& entry : entries) {
    LevelsView view;
    view.shape = join_params(entry.shape.empty() ? entry.family : entry.shape);
    if (const auto it = entry.shape.find("seq_len"); it != entry.shape.end()) {
      view.seq_len = parse_number(it->second);
    }
    view.cpu_times = cpu_times;
    for (const auto& [level, r] : entry.levels) {
      const auto at =
          std::lower_bound(view.rows.begin(), view.rows.end(), level,
                           [](const LevelRow& row, int value) { return row.level < value; });
      if (at == view.rows.end() || at->level != level) {  // a level twice: the first counts
        view.rows.insert(at, level_row(*r, level));
      }
    }
    const auto baseline = std::find_if(view.rows.begin(), view.rows.end(),
                                       [](const LevelRow& row) { return row.level == 0; });
    for (std::size_t i = 0; i < view.rows.size(); ++i) {
      LevelRow& row = view.rows[i];
      if (row.time_ms && baseline != view.rows.end() && baseline->time_ms) {
        row.speedup = *baseline->time_ms / *row.time_ms;
      }
      if (!cpu_times && row.time_ms &&
          (!view.fastest || *row.time_ms < *view.rows[*view.fastest].time_ms)) {
        view.fastest = i;
      }
    }

    for (const auto& [level, r, family] : memory) {
      if (family != entry.family) {
        continue;
      }
      const std::string* seq_text = param(*r, "seq_len");
      const std::optional<double> seq_len =
          seq_text != nullptr ? parse_number(*seq_text) : std::nullopt;
      const std::optional<PointMemory> point = memory_of(*r);
      if (!seq_len || !(*seq_len > 0) || !point) {
        continue;
      }
      auto curve =
          std::lower_bound(view.memory.begin(), view.memory.end(), level,
                           [](const LevelMemoryCurve& c, int value) { return c.level < value; });
      if (curve == view.memory.end() || curve->level != level) {
        curve = view.memory.insert(
            curve, LevelMemoryCurve{level, level_label(*r, level), {}, {}, {}, true});
      }
      const auto at = std::lower_bound(curve->seq_len.begin(), curve->seq_len.end(), *seq_len);
      if (at != curve->seq_len.end() && *at == *seq_len) {
        continue;  // a length twice: the first counts
      }
      const auto index = at - curve->seq_len.begin();
      curve->measured = curve->measured && point->measured;
      curve->seq_len.insert(at, *seq_len);
      curve->bytes.insert(curve->bytes.begin() + index, point->bytes);
    }
    for (LevelMemoryCurve& curve : view.memory) {
      if (curve.seq_len.size() >= 2) {
        try {
          curve.exponent = growth_exponent(curve.seq_len, curve.bytes);
        } catch (const std::invalid_argument&) {
          // lengths too close to tell apart in a double (a hand-made file): no exponent
        }
      }
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gpulab::viewer
