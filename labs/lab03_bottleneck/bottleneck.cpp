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
  (void)m;
  (void)n;
  (void)k;
  (void)precision;
  gpulab::not_implemented("lab03", "gemm_cost");
  // TODO(lab03) END
}

OpCost softmax_cost(std::int64_t rows, std::int64_t cols, Precision precision) {
  // TODO(lab03) BEGIN: check rows, cols >= 1; 5 FLOPs per element; read once, write once
  (void)rows;
  (void)cols;
  (void)precision;
  gpulab::not_implemented("lab03", "softmax_cost");
  // TODO(lab03) END
}

OpCost elementwise_cost(std::int64_t n, int inputs, double flops_per_element, Precision precision) {
  // TODO(lab03) BEGIN: check the arguments; read `inputs` arrays, write one
  (void)n;
  (void)inputs;
  (void)flops_per_element;
  (void)precision;
  gpulab::not_implemented("lab03", "elementwise_cost");
  // TODO(lab03) END
}

OpCost layernorm_cost(std::int64_t rows, std::int64_t cols, Precision precision) {
  // TODO(lab03) BEGIN: check rows, cols >= 1; x read, y written, gamma and beta read once
  (void)rows;
  (void)cols;
  (void)precision;
  gpulab::not_implemented("lab03", "layernorm_cost");
  // TODO(lab03) END
}

double arithmetic_intensity(const OpCost& cost) {
  // TODO(lab03) BEGIN: check flops >= 0 and bytes > 0 (both finite); FLOP per byte
  (void)cost;
  gpulab::not_implemented("lab03", "arithmetic_intensity");
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// The roofline
// ------------------------------------------------------------------------------------------------

Roofline roofline_for(const GpuSpec& spec, Precision precision) {
  // TODO(lab03) BEGIN: the spec's peak for the precision and its bandwidth, in FLOP/s and bytes/s
  (void)spec;
  (void)precision;
  gpulab::not_implemented("lab03", "roofline_for");
  // TODO(lab03) END
}

double ridge_point(const Roofline& roofline) {
  // TODO(lab03) BEGIN: check both roofs are finite and > 0; peak / bandwidth
  (void)roofline;
  gpulab::not_implemented("lab03", "ridge_point");
  // TODO(lab03) END
}

double attainable_flop_s(const Roofline& roofline, double intensity_flop_per_byte) {
  // TODO(lab03) BEGIN: check the roofline and the intensity; the lower roof at this intensity
  (void)roofline;
  (void)intensity_flop_per_byte;
  gpulab::not_implemented("lab03", "attainable_flop_s");
  // TODO(lab03) END
}

double modeled_time_ms(const OpCost& cost, const Roofline& roofline) {
  // TODO(lab03) BEGIN: check cost and roofline; the slower of compute and memory time, in ms
  (void)cost;
  (void)roofline;
  gpulab::not_implemented("lab03", "modeled_time_ms");
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// Placing a measured op on the roofline
// ------------------------------------------------------------------------------------------------

Placement place_on_roofline(const OpCost& cost, double time_ms, const Roofline& roofline) {
  // TODO(lab03) BEGIN: check time_ms; fill in every Placement field (see lab03.hpp)
  (void)cost;
  (void)time_ms;
  (void)roofline;
  gpulab::not_implemented("lab03", "place_on_roofline");
  // TODO(lab03) END
}

// ------------------------------------------------------------------------------------------------
// The bottleneck of a profile
// ------------------------------------------------------------------------------------------------

Bottleneck identify_bottleneck(std::span<const ComponentProfile> profile,
                               const Roofline& roofline) {
  // TODO(lab03) BEGIN: check every component; the slowest, its share, bound, recommendation
  (void)profile;
  (void)roofline;
  gpulab::not_implemented("lab03", "identify_bottleneck");
  // TODO(lab03) END
}

}  // namespace gpulab::lab03
