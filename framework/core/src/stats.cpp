#include "gpulab/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab {

namespace {

double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * weight;
}

void require_time(double time_ms, const char* what) {
  if (!(time_ms > 0) || !std::isfinite(time_ms)) {
    throw std::invalid_argument(std::string(what) + ": time must be positive and finite, got " +
                                std::to_string(time_ms) + " ms");
  }
}

void require_amount(double amount, const char* what) {
  if (!(amount >= 0) || !std::isfinite(amount)) {
    throw std::invalid_argument(std::string(what) + ": work must be >= 0 and finite");
  }
}

}  // namespace

double quantile(std::span<const double> samples, double q) {
  if (samples.empty()) {
    throw std::invalid_argument("quantile: no samples");
  }
  if (!(q >= 0 && q <= 1)) {
    throw std::invalid_argument("quantile: q must be in [0, 1]");
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::ranges::sort(sorted);
  return sorted_quantile(sorted, q);
}

Summary summarize(std::span<const double> samples_ms) {
  if (samples_ms.empty()) {
    throw std::invalid_argument("summarize: no samples");
  }
  for (std::size_t i = 0; i < samples_ms.size(); ++i) {
    if (!std::isfinite(samples_ms[i]) || samples_ms[i] < 0) {
      throw std::invalid_argument("summarize: sample " + std::to_string(i) + " is " +
                                  std::to_string(samples_ms[i]) +
                                  " ms; times are finite and non-negative");
    }
  }
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  std::ranges::sort(sorted);
  Summary s;
  s.count = sorted.size();
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  const auto n = static_cast<double>(s.count);
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (const double x : sorted) {
    squares += (x - s.mean_ms) * (x - s.mean_ms);
  }
  s.stddev_ms = s.count > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.rel_noise = s.mean_ms > 0 ? s.stddev_ms / s.mean_ms : 0.0;
  s.median_ms = sorted_quantile(sorted, 0.5);
  s.p10_ms = sorted_quantile(sorted, 0.1);
  s.p90_ms = sorted_quantile(sorted, 0.9);
  return s;
}

double bandwidth_gb_s(double bytes, double time_ms) {
  require_amount(bytes, "bandwidth_gb_s");
  require_time(time_ms, "bandwidth_gb_s");
  return bytes / (time_ms * 1e-3) / 1e9;
}

double flop_rate_gflop_s(double flops, double time_ms) {
  require_amount(flops, "flop_rate_gflop_s");
  require_time(time_ms, "flop_rate_gflop_s");
  return flops / (time_ms * 1e-3) / 1e9;
}

double fraction_of_peak(double achieved, double peak) {
  if (!(peak > 0) || !std::isfinite(peak)) {
    throw std::invalid_argument("fraction_of_peak: peak must be positive and finite");
  }
  return achieved / peak;
}

double growth_exponent(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) {
    throw std::invalid_argument("growth_exponent: needs two or more (x, y) pairs, got " +
                                std::to_string(x.size()) + " x and " + std::to_string(y.size()) +
                                " y");
  }
  double mean_x = 0;
  double mean_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i])) {
      throw std::invalid_argument("growth_exponent: point " + std::to_string(i) + " (" +
                                  std::to_string(x[i]) + ", " + std::to_string(y[i]) +
                                  ") is not positive and finite");
    }
    mean_x += std::log(x[i]);
    mean_y += std::log(y[i]);
  }
  const auto n = static_cast<double>(x.size());
  mean_x /= n;
  mean_y /= n;
  double sxy = 0;
  double sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = std::log(x[i]) - mean_x;
    sxy += dx * (std::log(y[i]) - mean_y);
    sxx += dx * dx;
  }
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; }) || !(sxx > 0)) {
    throw std::invalid_argument("growth_exponent: every x is the same; a slope needs two");
  }
  return sxy / sxx;
}

std::string_view to_string(Comparison comparison) noexcept {
  switch (comparison) {
    case Comparison::same:
      return "SAME";
    case Comparison::faster:
      return "FASTER";
    case Comparison::slower:
      return "SLOWER";
    case Comparison::ambiguous:
      return "AMBIGUOUS";
  }
  return "?";
}

ComparisonResult compare(const Summary& baseline, const Summary& candidate, double threshold) {
  if (!(threshold > 0)) {
    throw std::invalid_argument("compare: threshold must be positive");
  }
  if (!(baseline.median_ms > 0) || !(candidate.median_ms > 0)) {
    throw std::invalid_argument("compare: medians must be positive");
  }
  ComparisonResult result;
  result.ratio = candidate.median_ms / baseline.median_ms;
  result.noise = std::max(baseline.rel_noise, candidate.rel_noise);
  const double change = result.ratio - 1;
  if (std::abs(change) <= threshold) {
    result.verdict = result.noise <= threshold ? Comparison::same : Comparison::ambiguous;
  } else if (change < 0 && candidate.p90_ms < baseline.p10_ms) {
    result.verdict = Comparison::faster;
  } else if (change > 0 && candidate.p10_ms > baseline.p90_ms) {
    result.verdict = Comparison::slower;
  } else {
    result.verdict = Comparison::ambiguous;
  }
  return result;
}

}  // namespace gpulab
