// The arithmetic of the viewer's charts, without drawing: axis ranges, linear and log mappings,
// and tick positions with labels. The plotting module (plot.hpp beside it) draws with
// ImGui; everything it computes lives here so it is unit-tested.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace gpulab::viewer {

/// One chart axis.
struct Axis {
  double min = 0;    ///< value at the start (left or bottom)
  double max = 1;    ///< value at the end; > min
  bool log = false;  ///< log10 scale (then min > 0)
};

/// Where `value` falls on the axis as a fraction: 0 at min, 1 at max (outside 0..1 when the value
/// is outside the range). Non-positive values on a log axis map to 0 - a large number, so they
/// are clipped away rather than drawn at the edge.
[[nodiscard]] double axis_fraction(const Axis& axis, double value);

/// An axis covering every finite value of `values` (and for log axes, every positive one) with
/// a margin; log axes extend to whole decades, linear ones to "nice" steps. With no usable
/// values: [0, 1] linear, [1, 10] log. When `include_zero`, a linear axis starts at 0 or below.
[[nodiscard]] Axis fit_axis(std::span<const double> values, bool log, bool include_zero = false);

/// One tick mark.
struct Tick {
  double value = 0;   ///< where it is
  std::string label;  ///< text ("1e+06" style only beyond 1e6 or below 1e-3; else plain)
  bool major = true;  ///< labelled (log axes: decades); minor ticks (2..9 x decade) are not
};

/// Ticks for the axis: linear axes get 1-2-5 steps with at most about `max_labels` labels, log
/// axes a labelled tick per decade (every other decade when there are more than max_labels) and
/// unlabelled 2..9 minors when the axis spans at most 6 decades.
[[nodiscard]] std::vector<Tick> axis_ticks(const Axis& axis, int max_labels = 8);

/// A short number for a chart label: 3 significant digits, SI-free: 0.00125 -> "0.00125",
/// 1500 -> "1500", 2.5e9 -> "2.5e+09".
[[nodiscard]] std::string short_number(double value);

}  // namespace gpulab::viewer
