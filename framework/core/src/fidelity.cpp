#include "gpulab/core/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace gpulab {

FidelitySummary summarize_fidelity(const std::vector<FidelityPoint>& points) {
  if (points.empty()) {
    throw std::invalid_argument("fidelity: no kernels to compare");
  }
  FidelitySummary summary;
  double error_sum = 0;
  for (const FidelityPoint& p : points) {
    const bool usable = std::isfinite(p.measured_ms) && std::isfinite(p.modeled_ms) &&
                        p.measured_ms > 0 && p.modeled_ms > 0;
    if (!usable) {
      throw std::invalid_argument("fidelity: " + p.ladder + ": " + p.name +
                                  ": measured and modeled times must be finite and positive");
    }
    const double ratio = p.modeled_ms / p.measured_ms;
    error_sum += std::abs(ratio - 1);
    const double off = std::max(ratio, 1 / ratio);
    if (off > summary.worst_ratio || summary.worst.empty()) {
      summary.worst_ratio = off;
      summary.worst = p.ladder + ": " + p.name;
    }
  }
  summary.mean_abs_error = error_sum / static_cast<double>(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto known =
        std::find_if(summary.ladders.begin(), summary.ladders.end(),
                     [&](const LadderOrder& l) { return l.ladder == points[i].ladder; });
    if (known == summary.ladders.end()) {
      summary.ladders.push_back({points[i].ladder, true, {}});
    }
  }
  // Every pair of one ladder: the model must rank them as the measurements do (a tie in either
  // counts as a rank of its own).
  const auto sign = [](double x, double y) { return (x > y) - (x < y); };
  for (LadderOrder& ladder : summary.ladders) {
    for (std::size_t i = 0; i < points.size() && ladder.kept; ++i) {
      for (std::size_t j = i + 1; j < points.size() && ladder.kept; ++j) {
        const FidelityPoint& a = points[i];
        const FidelityPoint& b = points[j];
        if (a.ladder != ladder.ladder || b.ladder != ladder.ladder) {
          continue;
        }
        if (sign(a.measured_ms, b.measured_ms) != sign(a.modeled_ms, b.modeled_ms)) {
          ladder.kept = false;
          ladder.first_swap = a.name + " and " + b.name;
        }
      }
    }
  }
  return summary;
}

}  // namespace gpulab
