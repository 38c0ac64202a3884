// Axis arithmetic for the viewer's charts (see gpulab/viewer/plot/math.hpp). Everything here takes
// values from results files, so it must survive NaN, infinities, a single value, non-positive
// values on log axes and ranges of 27 decades without producing a NaN or an infinite coordinate.
#include "gpulab/viewer/plot/math.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"

namespace gpulab::viewer {

namespace {

// Where values that cannot be drawn (NaN, non-positive on a log axis) go, and the bound on every
// fraction: far outside any chart, so they are clipped away, but finite, so that multiplying by a
// chart's size in pixels never gives an infinity or a NaN.
constexpr double kFarOutside = 1e6;

// Decimal exponents a log axis may span: 10^-307 and 10^308 are normal doubles.
constexpr int kMinDecade = -307;
constexpr int kMaxDecade = 308;

// Margin a fitted axis leaves around the data: a share of the span on linear axes, a factor on
// log axes, so that no point is drawn exactly on the chart's border.
constexpr double kLinearMargin = 0.02;
constexpr double kLogMargin = 1.05;

// Linear axes aim for about this many intervals when fitted.
constexpr double kFitIntervals = 8;

bool valid_axis(const Axis& axis) {
  if (!std::isfinite(axis.min) || !std::isfinite(axis.max) || !(axis.max > axis.min)) {
    return false;
  }
  return !axis.log || axis.min > 0;
}

double clamp_fraction(double fraction) {
  if (std::isnan(fraction)) {
    return -kFarOutside;
  }
  return std::clamp(fraction, -kFarOutside, kFarOutside);
}

// 10^decade for a decade in the range of normal doubles.
double decade_value(int decade) {
  return std::pow(10.0, static_cast<double>(decade));
}

// floor(log10(x)) as an int, for any x: non-positive and NaN give the smallest decade, infinity
// the largest (a cast of an infinite or huge double to int is undefined behaviour).
int floor_log10(double x) {
  if (!(x > 0)) {
    return kMinDecade - 20;
  }
  const double decade = std::floor(std::log10(x));
  return static_cast<int>(std::clamp(decade, kMinDecade - 20.0, kMaxDecade + 1.0));
}

// The smallest step of the form {1, 2, 5} x 10^k that is at least `raw` (> 0, finite).
double nice_step(double raw) {
  const double magnitude = decade_value(std::clamp(floor_log10(raw), kMinDecade, kMaxDecade));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * magnitude >= raw * (1 - 1e-12)) {
      return factor * magnitude;
    }
  }
  return 10 * magnitude;
}

// "1.500" -> "1.5", "2.000" -> "2"; text without a '.' is returned as is.
std::string strip_zeros(std::string text) {
  if (text.find('.') == std::string::npos) {
    return text;
  }
  while (!text.empty() && text.back() == '0') {
    text.pop_back();
  }
  if (!text.empty() && text.back() == '.') {
    text.pop_back();
  }
  return text;
}

// `value` in exponent style with `significant` digits, trailing zeros of the mantissa dropped:
// "2.5e+09", "1e-04".
std::string format_exponent(double value, int significant) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", std::max(0, significant - 1), value);
  std::string text = buffer;
  const std::size_t e = text.find('e');
  if (e == std::string::npos) {
    return text;
  }
  return strip_zeros(text.substr(0, e)) + text.substr(e);
}

// Exponent style (the header's "1e+06") for magnitudes of 1e6 and above or below 1e-3.
bool wants_exponent(double magnitude) {
  return magnitude >= 1e6 || magnitude < 1e-3;
}

// `value` with `significant` significant digits, plain or in exponent style.
std::string format_significant(double value, int significant) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  if (value == 0) {
    return "0";
  }
  // Round first, so that 999999.6 (which rounds to 1e6) picks the exponent style.
  const std::string rounded_text = format_exponent(value, significant);
  const double rounded = std::strtod(rounded_text.c_str(), nullptr);
  const double magnitude = std::abs(rounded);
  if (wants_exponent(magnitude)) {
    return rounded_text;
  }
  const int exponent = floor_log10(magnitude);
  const int decimals = std::max(0, significant - 1 - exponent);
  return strip_zeros(format_fixed(rounded, decimals));
}

// A tick label with as many digits as the step between ticks needs, so neighbouring ticks never
// share a label (1000, 1001, 1002 rather than 1000, 1000, 1000).
std::string tick_label(double value, double step) {
  if (value == 0) {
    return "0";
  }
  const double magnitude = std::abs(value);
  const int value_exponent = floor_log10(magnitude);
  const int step_exponent = floor_log10(step);
  if (wants_exponent(magnitude)) {
    // One more digit than the step's position needs (the step may be 2 or 5 x 10^k); at most 15.
    const int significant = std::clamp(value_exponent - step_exponent + 1, 1, 15);
    return format_exponent(value, significant);
  }
  const int decimals = std::clamp(-step_exponent, 0, 17);
  return strip_zeros(format_fixed(value, decimals));
}

// The 1-2-5 step below `step` (itself a 1-2-5 step): 100 -> 50, 50 -> 20, 20 -> 10.
double smaller_step(double step) {
  const double magnitude = decade_value(floor_log10(step));
  const double mantissa = step / magnitude;
  return mantissa > 3 ? step * 0.4 : step * 0.5;
}

// Ticks at k * step (not min + k * step), so that 0 is exactly 0 and values do not drift.
double first_index(const Axis& axis, double step) {
  return std::ceil(axis.min / step - 1e-9);
}
double last_index(const Axis& axis, double step) {
  return std::floor(axis.max / step + 1e-9);
}

std::vector<Tick> linear_ticks(const Axis& axis, int max_labels) {
  // Infinite for an axis wider than a double can hold (-1.7e308..1.7e308); the step below is then
  // infinite too, which the end of this function handles.
  const double span = axis.max - axis.min;
  // At most max_labels ticks: max_labels - 1 intervals (nice_step rounds up, so this holds
  // already; the loop is a guard against rounding).
  double step = nice_step(span / (max_labels - 1));
  while (span / step > max_labels - 1 + 1e-9) {
    step = nice_step(step * 1.5);
  }
  // A step as wide as the axis may leave one tick (0 on -3.7..123.4): a smaller step that still
  // fits gives the two a reader needs to tell the scale.
  for (int tries = 0; tries < 3 && last_index(axis, step) - first_index(axis, step) < 1; ++tries) {
    const double smaller = smaller_step(step);
    if (last_index(axis, smaller) - first_index(axis, smaller) + 1 > max_labels) {
      break;
    }
    step = smaller;
  }
  std::vector<Tick> ticks;
  if (!std::isfinite(step)) {
    // An axis about as wide as the double range: a nice step would be 2e308, which is not a
    // double. The two ends and zero.
    for (const double v : {axis.min, 0.0, axis.max}) {
      if (v >= axis.min && v <= axis.max) {
        ticks.push_back(Tick{v, short_number(v), true});
      }
    }
    return ticks;
  }
  const double first = first_index(axis, step);
  const double last = last_index(axis, step);
  for (double k = first; k <= last; k += 1) {
    double value = k * step;
    if (!std::isfinite(value)) {
      continue;
    }
    if (std::abs(value) < step * 1e-9) {
      value = 0;
    }
    ticks.push_back(Tick{value, tick_label(value, step), true});
    if (ticks.size() > static_cast<std::size_t>(max_labels) + 1) {
      break;  // only rounding could get here; never draw a forest of ticks
    }
  }
  return ticks;
}

std::vector<Tick> log_ticks(const Axis& axis, int max_labels) {
  const double low = std::log10(axis.min);
  const double high = std::log10(axis.max);
  // low and high are finite: the axis is valid.
  const int first =
      static_cast<int>(std::clamp(std::ceil(low - 1e-9), kMinDecade - 20.0, kMaxDecade + 1.0));
  const int last =
      static_cast<int>(std::clamp(std::floor(high + 1e-9), kMinDecade - 20.0, kMaxDecade + 1.0));
  const int decades = last - first + 1;
  // Every decade when they fit, else every 2nd (every kth beyond 2 x max_labels), anchored on
  // multiples of the stride so that 10^0 stays labelled.
  const int stride = decades > max_labels ? (decades + max_labels - 1) / max_labels : 1;
  const bool minors = high - low <= 6 + 1e-9;

  std::vector<Tick> ticks;
  const auto inside = [&](double value) {
    return std::isfinite(value) && value >= axis.min * (1 - 1e-12) && value / axis.max <= 1 + 1e-12;
  };
  // Minors from the decade below the first labelled one, so that 200..900 below it show too.
  for (int decade = first - 1; decade <= last; ++decade) {
    const double base = decade_value(decade);
    if (decade >= first) {
      const bool labelled = ((decade % stride) + stride) % stride == 0;
      ticks.push_back(Tick{base, labelled ? short_number(base) : std::string(), labelled});
    }
    if (minors) {
      for (int m = 2; m <= 9; ++m) {
        const double value = m * base;
        if (inside(value)) {
          ticks.push_back(Tick{value, std::string(), false});
        }
      }
    }
  }
  // An axis inside one decade (e.g. 2..8) has no decade tick: label its minors instead.
  if (decades <= 0) {
    for (Tick& tick : ticks) {
      tick.major = true;
      tick.label = short_number(tick.value);
    }
  }
  std::sort(ticks.begin(), ticks.end(),
            [](const Tick& a, const Tick& b) { return a.value < b.value; });
  return ticks;
}

}  // namespace

double axis_fraction(const Axis& axis, double value) {
  if (std::isnan(value)) {
    return -kFarOutside;
  }
  if (!valid_axis(axis)) {
    return 0.5;  // nothing sensible to map to; the middle keeps it visible and finite
  }
  if (axis.log) {
    if (!(value > 0)) {
      return -kFarOutside;
    }
    const double low = std::log10(axis.min);
    return clamp_fraction((std::log10(value) - low) / (std::log10(axis.max) - low));
  }
  // Halved terms: (max - min) and (value - min) overflow for values near the double range's ends.
  const double half_span = axis.max / 2 - axis.min / 2;
  return clamp_fraction((value / 2 - axis.min / 2) / half_span);
}

Axis fit_axis(std::span<const double> values, bool log, bool include_zero) {
  if (log) {
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    for (const double v : values) {
      if (std::isfinite(v) && v > 0) {
        low = std::min(low, v);
        high = std::max(high, v);
      }
    }
    if (!(low <= high)) {
      return Axis{1, 10, true};
    }
    // In log space, so that the margin cannot overflow next to the largest double; clamped
    // before the conversion to int.
    const double margin = std::log10(kLogMargin);
    const double first = std::clamp(std::floor(std::log10(low) - margin),
                                    static_cast<double>(kMinDecade), kMaxDecade - 1.0);
    const double last =
        std::clamp(std::ceil(std::log10(high) + margin), first + 1, kMaxDecade + 1.0);
    // 10^309 is not a double: values above 10^308 get the largest double as the axis's end.
    const double max = last > kMaxDecade ? std::numeric_limits<double>::max()
                                         : decade_value(static_cast<int>(last));
    return Axis{decade_value(static_cast<int>(first)), max, true};
  }

  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (const double v : values) {
    if (std::isfinite(v)) {
      low = std::min(low, v);
      high = std::max(high, v);
    }
  }
  if (!(low <= high)) {
    return Axis{0, 1, false};
  }
  const bool zero_below = include_zero && low >= 0;  // data at or above 0: start exactly at 0
  const bool zero_above = include_zero && high <= 0;
  if (include_zero) {
    low = std::min(low, 0.0);
    high = std::max(high, 0.0);
  }
  // Halve before subtracting: the span of -1.7e308..1.7e308 overflows a double.
  const double half_span = high / 2 - low / 2;
  if (half_span <= 0) {
    // A single value: a range around it (about 10% of it, or +-1 around zero).
    const double pad = low == 0 ? 1 : std::abs(low) * 0.1;
    low -= pad;
    high += pad;
  } else {
    const double margin = half_span * 2 * kLinearMargin;
    if (!zero_below) {
      low -= margin;
    }
    if (!zero_above) {
      high += margin;
    }
  }
  const double half = high / 2 - low / 2;
  if (std::isfinite(half) && half > 0 && std::isfinite(low) && std::isfinite(high)) {
    const double step = nice_step(half / (kFitIntervals / 2));
    const double nice_low = std::floor(low / step) * step;
    const double nice_high = std::ceil(high / step) * step;
    if (std::isfinite(nice_low) && std::isfinite(nice_high) && nice_high > nice_low) {
      return Axis{nice_low, nice_high, false};
    }
  }
  // Values at the edge of the double range: keep them, without the nice rounding.
  low = std::max(low, std::numeric_limits<double>::lowest());
  high = std::min(high, std::numeric_limits<double>::max());
  if (high > low) {
    return Axis{low, high, false};
  }
  return Axis{0, 1, false};
}

std::vector<Tick> axis_ticks(const Axis& axis, int max_labels) {
  if (!valid_axis(axis)) {
    return {};
  }
  const int labels = std::clamp(max_labels, 2, 1000);
  if (axis.log) {
    return log_ticks(axis, labels);
  }
  return linear_ticks(axis, labels);
}

std::string short_number(double value) {
  return format_significant(value, 3);
}

}  // namespace gpulab::viewer
