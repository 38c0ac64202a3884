// Lab 03: identifying the bottleneck. Fill in every TODO(lab03) region; the contracts are in
// lab03.hpp and the background in README.md. `gpulab run lab03` prints your analysis, `gpulab
// grade lab03` grades it.
//
// Every function checks its input and throws std::invalid_argument with a message that names
// the argument and its value: a profiler that silently returns NaN for a zero-byte op or a
// negative time hides the bug that produced it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "gpulab/core/lab.hpp"
#include "lab03.hpp"

namespace gpulab::lab03 {

// ------------------------------------------------------------------------------------------------
// Op costs
// ------------------------------------------------------------------------------------------------

OpCost gemm_cost(std::int64_t m, std::int64_t n, std::int64_t k, Precision precision) {
  // TODO(lab03) BEGIN: check m, n, k >= 1; 2*m*n*k FLOPs; A, B and C each moved once
  if (m < 1 || n < 1 || k < 1) {
    throw std::invalid_argument("gemm_cost: m, n and k must be >= 1, got m = " + std::to_string(m) +
                                ", n = " + std::to_string(n) + ", k = " + std::to_string(k));
  }
  // In double: 2*m*n*k overflows nothing there, and the costs are doubles anyway.
  const auto md = static_cast<double>(m);
  const auto nd = static_cast<double>(n);
  const auto kd = static_cast<double>(k);
  const double size = element_bytes(precision);
  return OpCost{2 * md * nd * kd, (md * kd + kd * nd + md * nd) * size};
  // TODO(lab03) END
}

OpCost softmax_cost(std::int64_t rows, std::int64_t cols, Precision precision) {
  // TODO(lab03) BEGIN: check rows, cols >= 1; 5 FLOPs per element; read once, write once
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("softmax_cost: rows and cols must be >= 1, got rows = " +
                                std::to_string(rows) + ", cols = " + std::to_string(cols));
  }
  const double elements = static_cast<double>(rows) * static_cast<double>(cols);
  return OpCost{5 * elements, 2 * elements * element_bytes(precision)};
  // TODO(lab03) END
}

OpCost elementwise_cost(std::int64_t n, int inputs, double flops_per_element, Precision precision) {
  // TODO(lab03) BEGIN: check the arguments; read `inputs` arrays, write one
  if (n < 1) {
    throw std::invalid_argument("elementwise_cost: n must be >= 1, got " + std::to_string(n));
  }
  if (inputs < 0) {
    throw std::invalid_argument("elementwise_cost: inputs must be >= 0, got " +
                                std::to_string(inputs));
  }
  if (!(std::isfinite(flops_per_element) && flops_per_element >= 0)) {
    throw std::invalid_argument(
        "elementwise_cost: flops_per_element must be finite and >= 0, "
        "got " +
        std::to_string(flops_per_element));
  }
  const auto elements = static_cast<double>(n);
  return OpCost{elements * flops_per_element, (inputs + 1) * elements * element_bytes(precision)};
  // TODO(lab03) END
}

OpCost layernorm_cost(std::int64_t rows, std::int64_t cols, Precision precision) {
  // TODO(lab03) BEGIN: check rows, cols >= 1; x read, y written, gamma and beta read once
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("layernorm_cost: rows and cols must be >= 1, got rows = " +
                                std::to_string(rows) + ", cols = " + std::to_string(cols));
  }
  const double elements = static_cast<double>(rows) * static_cast<double>(cols);
  const auto params = static_cast<double>(cols);  // gamma and beta: one value per column each
  return OpCost{kLayernormFlopsPerElement * elements,
                (2 * elements + 2 * params) * element_bytes(precision)};
  // TODO(lab03) END
}

double arithmetic_intensity(const OpCost& cost) {
  // TODO(lab03) BEGIN: check flops >= 0 and bytes > 0 (both finite); FLOP per byte
  if (!(std::isfinite(cost.flops) && cost.flops >= 0)) {
    throw std::invalid_argument("op cost: flops must be finite and >= 0, got " +
                                std::to_string(cost.flops));
  }
  if (!(std::isfinite(cost.bytes) && cost.bytes > 0)) {
    throw std::invalid_argument(
        "op cost: bytes must be finite and > 0 (every op moves data), "
        "got " +
        std::to_string(cost.bytes));
  }
  return cost.flops / cost.bytes;
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// The roofline
// ------------------------------------------------------------------------------------------------

Roofline roofline_for(const GpuSpec& spec, Precision precision) {
  // TODO(lab03) BEGIN: the spec's peak for the precision and its bandwidth, in FLOP/s and bytes/s
  double peak_tflop_s = 0;
  switch (precision) {
    case Precision::fp32:
      peak_tflop_s = spec.fp32_tflop_s;
      break;
    case Precision::tf32:
      peak_tflop_s = spec.tf32_tensor_tflop_s;
      break;
    case Precision::fp16:
      peak_tflop_s = spec.fp16_tensor_tflop_s;
      break;
    case Precision::bf16:
      peak_tflop_s = spec.bf16_tensor_tflop_s;
      break;
  }
  if (!(std::isfinite(peak_tflop_s) && peak_tflop_s > 0)) {
    throw std::invalid_argument(spec.name + " has no " + std::string(to_string(precision)) +
                                " peak");
  }
  if (!(std::isfinite(spec.dram_bandwidth_gb_s) && spec.dram_bandwidth_gb_s > 0)) {
    throw std::invalid_argument(spec.name + " has no DRAM bandwidth (got " +
                                std::to_string(spec.dram_bandwidth_gb_s) + " GB/s)");
  }
  return Roofline{peak_tflop_s * 1e12, spec.dram_bandwidth_gb_s * 1e9};
  // TODO(lab03) END
}

double ridge_point(const Roofline& roofline) {
  // TODO(lab03) BEGIN: check both roofs are finite and > 0; peak / bandwidth
  if (!(std::isfinite(roofline.peak_flop_s) && roofline.peak_flop_s > 0)) {
    throw std::invalid_argument("roofline: peak_flop_s must be finite and > 0, got " +
                                std::to_string(roofline.peak_flop_s));
  }
  if (!(std::isfinite(roofline.bandwidth_bytes_s) && roofline.bandwidth_bytes_s > 0)) {
    throw std::invalid_argument("roofline: bandwidth_bytes_s must be finite and > 0, got " +
                                std::to_string(roofline.bandwidth_bytes_s));
  }
  return roofline.peak_flop_s / roofline.bandwidth_bytes_s;
  // TODO(lab03) END
}

double attainable_flop_s(const Roofline& roofline, double intensity_flop_per_byte) {
  // TODO(lab03) BEGIN: check the roofline and the intensity; the lower roof at this intensity
  (void)ridge_point(roofline);  // checks the roofline
  if (!(std::isfinite(intensity_flop_per_byte) && intensity_flop_per_byte >= 0)) {
    throw std::invalid_argument("attainable_flop_s: intensity must be finite and >= 0, got " +
                                std::to_string(intensity_flop_per_byte));
  }
  return std::min(roofline.peak_flop_s, intensity_flop_per_byte * roofline.bandwidth_bytes_s);
  // TODO(lab03) END
}

double modeled_time_ms(const OpCost& cost, const Roofline& roofline) {
  // TODO(lab03) BEGIN: check cost and roofline; the slower of compute and memory time, in ms
  (void)arithmetic_intensity(cost);  // checks the cost
  (void)ridge_point(roofline);       // checks the roofline
  const double compute_s = cost.flops / roofline.peak_flop_s;
  const double memory_s = cost.bytes / roofline.bandwidth_bytes_s;
  return std::max(compute_s, memory_s) * 1e3;
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// Placing a measured op on the roofline
// ------------------------------------------------------------------------------------------------

Placement place_on_roofline(const OpCost& cost, double time_ms, const Roofline& roofline) {
  // TODO(lab03) BEGIN: check time_ms; fill in every Placement field (see lab03.hpp)
  if (!(std::isfinite(time_ms) && time_ms > 0)) {
    throw std::invalid_argument("place_on_roofline: time_ms must be finite and > 0, got " +
                                std::to_string(time_ms));
  }
  Placement placement;
  placement.intensity_flop_per_byte = arithmetic_intensity(cost);
  placement.achieved_flop_s = cost.flops / (time_ms * 1e-3);
  placement.attainable_flop_s = attainable_flop_s(roofline, placement.intensity_flop_per_byte);
  placement.fraction_of_roof = modeled_time_ms(cost, roofline) / time_ms;
  placement.bound = placement.intensity_flop_per_byte < ridge_point(roofline) ? BoundKind::memory
                                                                              : BoundKind::compute;
  return placement;
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// The bottleneck of a profile
// ------------------------------------------------------------------------------------------------

Bottleneck identify_bottleneck(std::span<const ComponentProfile> profile,
                               const Roofline& roofline) {
  // TODO(lab03) BEGIN: check every component; the slowest, its share, bound, recommendation
  if (profile.empty()) {
    throw std::invalid_argument("identify_bottleneck: the profile has no components");
  }
  double total_ms = 0;
  std::size_t slowest = 0;
  for (std::size_t i = 0; i < profile.size(); ++i) {
    const ComponentProfile& component = profile[i];
    const std::string which =
        "identify_bottleneck: component " + std::to_string(i) + " (\"" + component.name + "\"): ";
    if (!(std::isfinite(component.time_ms) && component.time_ms > 0)) {
      throw std::invalid_argument(which + "time_ms must be finite and > 0, got " +
                                  std::to_string(component.time_ms));
    }
    try {
      (void)arithmetic_intensity(component.cost);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(which + error.what());
    }
    total_ms += component.time_ms;
    if (component.time_ms > profile[slowest].time_ms) {  // strictly: the first one wins a tie
      slowest = i;
    }
  }

  const ComponentProfile& component = profile[slowest];
  const Placement placement = place_on_roofline(component.cost, component.time_ms, roofline);
  // Far below both roofs and short: neither DRAM nor the ALUs are busy; the launch is.
  const bool latency =
      placement.fraction_of_roof < kLatencyFractionOfRoof && component.time_ms < kShortKernelMs;
  Bottleneck bottleneck;
  bottleneck.index = slowest;
  bottleneck.name = component.name;
  bottleneck.share = component.time_ms / total_ms;
  bottleneck.bound = latency ? BoundKind::latency : placement.bound;
  bottleneck.recommendation = recommendation(component.kind, bottleneck.bound);
  return bottleneck;
  // TODO(lab03) END
}

}  // namespace gpulab::lab03
