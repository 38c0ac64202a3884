// Statistics of timing samples, throughput from declared work, and the comparison of two
// measurements. Host-only: the harness that produces the samples is in bench.hpp.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace gpulab {

/// Summary of a set of timing samples, in milliseconds.
struct Summary {
  std::size_t count = 0;  ///< number of samples
  double min_ms = 0;      ///< fastest sample
  double max_ms = 0;      ///< slowest sample
  double mean_ms = 0;     ///< arithmetic mean
  double median_ms = 0;   ///< 50th percentile
  double stddev_ms = 0;   ///< sample standard deviation (n - 1 in the denominator; 0 for n = 1)
  double rel_noise = 0;   ///< stddev / mean: the relative noise of one sample
  double p10_ms = 0;      ///< 10th percentile
  double p90_ms = 0;      ///< 90th percentile
};

/// The q-th quantile (0 <= q <= 1) of samples, with linear interpolation between the two closest
/// ranks (position q * (n - 1) in the sorted samples; numpy's default). Throws
/// std::invalid_argument on an empty span or q outside [0, 1].
[[nodiscard]] double quantile(std::span<const double> samples, double q);

/// Summarizes samples. Throws std::invalid_argument when empty or when a sample is negative or
/// not finite (a time cannot be).
[[nodiscard]] Summary summarize(std::span<const double> samples_ms);

/// Decimal GB/s for `bytes` moved in `time_ms`. Throws std::invalid_argument unless time_ms > 0
/// and bytes >= 0.
[[nodiscard]] double bandwidth_gb_s(double bytes, double time_ms);
/// Decimal GFLOP/s for `flops` done in `time_ms`. Same preconditions as bandwidth_gb_s.
[[nodiscard]] double flop_rate_gflop_s(double flops, double time_ms);
/// achieved / peak (1.0 = at peak), for quantities in the same unit. Throws unless peak > 0.
[[nodiscard]] double fraction_of_peak(double achieved, double peak);

/// How fast `y` grows with `x`: the least-squares slope of log(y) against log(x), so that
/// y ~ x^exponent (about 2 for an S x S tensor against S, 1 for a buffer of S rows). Throws
/// std::invalid_argument unless x and y have the same size, at least two points, every value
/// positive and finite, and two different x.
[[nodiscard]] double growth_exponent(std::span<const double> x, std::span<const double> y);

/// How a candidate measurement compares with a baseline.
enum class Comparison {
  same,       ///< medians within the threshold and both measurements quiet enough to tell
  faster,     ///< the candidate is faster beyond the threshold and beyond the noise
  slower,     ///< the candidate is slower beyond the threshold and beyond the noise
  ambiguous,  ///< the difference is within the noise: measure longer or on a quieter machine
};

/// "SAME", "FASTER", "SLOWER", "AMBIGUOUS".
[[nodiscard]] std::string_view to_string(Comparison comparison) noexcept;

/// The verdict and the numbers it rests on.
struct ComparisonResult {
  Comparison verdict = Comparison::ambiguous;
  double ratio = 1;  ///< candidate median / baseline median (< 1: candidate faster)
  double noise = 0;  ///< the larger relative noise of the two
};

/// Compares medians. With r = candidate / baseline - 1 and noise = max(rel_noise of both):
///   FASTER / SLOWER  when |r| > threshold and the middle 80% of the two sample sets do not
///                    overlap (one's p90 below the other's p10);
///   SAME             when |r| <= threshold and noise <= threshold;
///   AMBIGUOUS        otherwise.
/// threshold is a relative change (0.02 = 2%); throws std::invalid_argument unless it is > 0 and
/// both medians are > 0.
[[nodiscard]] ComparisonResult compare(const Summary& baseline, const Summary& candidate,
                                       double threshold = 0.02);

}  // namespace gpulab
