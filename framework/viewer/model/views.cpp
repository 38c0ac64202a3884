// The benchmark panel's view and the spec a file was measured on (views.hpp): plain data derived
// from results files, which nothing here trusts beyond what the loader checked
// (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

namespace {

// Histograms of more bins than this are not drawable anyway; the cap keeps an absurd argument
// from allocating gigabytes.
constexpr int kMaxBins = 1 << 20;

}  // namespace

GpuSpec spec_of(const ResultsFile& file, const GpuSpec& fallback) {
  if (!file.context.spec.empty()) {
    if (std::optional<GpuSpec> spec = find_spec(file.context.spec)) {
      return *std::move(spec);
    }
  }
  return fallback;
}

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

}  // namespace gpulab::viewer
