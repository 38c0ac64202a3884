// Lab 03: identifying the bottleneck. The interface of the functions you implement in
// bottleneck.cpp (this header is the instructor's: do not edit it).
//
// You build the roofline analysis yourself, from the formulas, and use it to answer the question
// every optimization starts with: which component takes the time, and what limits it? So your
// code must not call the framework functions that already do it; a call to one fails, without
// running them, the graded tests of the function whose work it does:
//   gpulab::make_roofline, gpulab::peak_flop_s      the work of roofline_for
//   gpulab::Roofline::ridge_flop_per_byte           the work of ridge_point
//   gpulab::Roofline::attainable_flop_s             the work of attainable_flop_s
//   gpulab::Roofline::modeled_time_ms               the work of modeled_time_ms
//   gpulab::Roofline::bound                         the work of place_on_roofline and
//                                                   identify_bottleneck
//   gpulab::kernels::component_cost                 the work of the four *_cost functions
// Allowed: gpulab::GpuSpec's fields, gpulab::element_bytes and to_string of the framework's
// enums, the C++ standard library, and your own functions calling each other
// (labs/CMakeLists.txt's ALLOWED_CALLS for lab03). What lab code may call is an allowlist
// (docs/grading.md, "Code checks"): `gpulab grade` rejects a lab whose code calls anything else,
// such as a process, thread, signal, file or dynamic-loading function, the sim's instruments, or
// GoogleTest.
//
//   op cost           FLOPs and DRAM bytes of a GEMM, a softmax, an elementwise op, a layernorm
//   intensity         FLOPs per byte moved
//   roofline          the two roofs of a GPU at a precision: peak FLOP/s and DRAM bandwidth
//   placement         where a measured op sits under its roof: achieved, attainable, % of roof
//   bottleneck        the slowest component of a profile, why it is slow, and what to do
//
// Conventions (every function): sizes are element counts; bytes and FLOPs are plain counts
// (decimal units when printed); times are in milliseconds; rates in FLOP/s and bytes/s. Bad
// input throws std::invalid_argument with a message that names the argument and its value;
// nothing returns NaN or infinity.
//
// gpulab::Roofline and gpulab::make_roofline (gpulab/core/roofline.hpp) are the framework's own
// versions; the types and functions here are yours, graded against formulas written
// independently in the tests (yours is named roofline_for, so a call is never ambiguous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::lab03 {

using gpulab::OpCost;
using gpulab::Precision;

// ------------------------------------------------------------------------------------------------
// Op costs. Each tensor is read or written exactly once (an ideal kernel: nothing re-read from
// DRAM, no intermediate stored), and an element is element_bytes(precision) bytes: 4 for FP32 and
// TF32 (TF32 is stored as FP32), 2 for FP16 and BF16. Sizes must be >= 1; counts of inputs and
// FLOPs per element >= 0 and finite; otherwise std::invalid_argument.
// ------------------------------------------------------------------------------------------------

/// C[m x n] = A[m x k] * B[k x n]: flops 2*m*n*k (one multiply and one add per term);
/// bytes (m*k + k*n + m*n) * element size (read A and B once, write C once).
[[nodiscard]] OpCost gemm_cost(std::int64_t m, std::int64_t n, std::int64_t k, Precision precision);

/// Row softmax of a [rows x cols] matrix: flops 5 per element (max, subtract, exp, sum, divide);
/// bytes 2 * rows * cols * element size (read the input, write the output).
[[nodiscard]] OpCost softmax_cost(std::int64_t rows, std::int64_t cols, Precision precision);

/// An elementwise op over n elements that reads `inputs` arrays and writes one (vector add:
/// inputs 2, 1 flop per element): flops n * flops_per_element; bytes (inputs + 1) * n * element
/// size. inputs 0 is a fill.
[[nodiscard]] OpCost elementwise_cost(std::int64_t n, int inputs, double flops_per_element,
                                      Precision precision);

/// Layer normalization of each row of a [rows x cols] matrix, y = (x - mean) / std * gamma + beta:
/// flops kLayernormFlopsPerElement per element (see below; the per-row square root and
/// reciprocal are not counted); bytes (2 * rows * cols + 2 * cols) * element size (read x, write
/// y, read gamma and beta once).
[[nodiscard]] OpCost layernorm_cost(std::int64_t rows, std::int64_t cols, Precision precision);

/// FLOPs per element of layernorm_cost: sum for the mean (1), subtract the mean, square and sum
/// for the variance (3), subtract the mean again, multiply by 1/std, by gamma, add beta (4).
inline constexpr double kLayernormFlopsPerElement = 8;

/// cost.flops / cost.bytes in FLOP per byte. Throws std::invalid_argument unless flops is finite
/// and >= 0 and bytes finite and > 0 (every op moves at least one byte; the same rule holds for
/// every OpCost passed to the functions below).
[[nodiscard]] double arithmetic_intensity(const OpCost& cost);

// ------------------------------------------------------------------------------------------------
// The roofline
// ------------------------------------------------------------------------------------------------

/// The two roofs of one GPU at one precision. Every function below that takes a Roofline throws
/// std::invalid_argument unless both are finite and > 0.
struct Roofline {
  double peak_flop_s = 0;        ///< compute roof: peak arithmetic throughput, FLOP/s
  double bandwidth_bytes_s = 0;  ///< memory roof: peak DRAM bandwidth, bytes/s
};

/// The roofline of `spec` at `precision`: the spec's peak for that precision (fp32_tflop_s,
/// tf32_tensor_tflop_s, fp16_tensor_tflop_s or bf16_tensor_tflop_s, in TFLOP/s = 1e12 FLOP/s)
/// and its DRAM bandwidth (dram_bandwidth_gb_s, GB/s = 1e9 bytes/s). Throws std::invalid_argument
/// naming the GPU (spec.name) and the precision when the spec has no peak for it (0: e.g. BF16 on
/// a T4), or when its bandwidth is not > 0. The precision may be named, in any case, as
/// to_string writes it ("fp32", "tf32", "fp16", "bf16") or by its long name ("float32",
/// "tensorfloat-32", "float16", "bfloat16").
[[nodiscard]] Roofline roofline_for(const GpuSpec& spec, Precision precision);

/// The ridge point: peak / bandwidth, in FLOP per byte. An op with a lower intensity is
/// memory-bound, one at or above it compute-bound.
[[nodiscard]] double ridge_point(const Roofline& roofline);

/// The highest FLOP/s an op of this intensity can reach: min(peak, intensity * bandwidth).
/// Throws std::invalid_argument unless intensity_flop_per_byte is finite and >= 0.
[[nodiscard]] double attainable_flop_s(const Roofline& roofline, double intensity_flop_per_byte);

/// The time of the op running exactly at its roof, in ms: max(flops / peak, bytes / bandwidth).
/// The slower of the two roofs decides.
[[nodiscard]] double modeled_time_ms(const OpCost& cost, const Roofline& roofline);

// ------------------------------------------------------------------------------------------------
// Placing a measured op on the roofline
// ------------------------------------------------------------------------------------------------

/// What limits an op.
enum class BoundKind {
  memory,   ///< below the ridge: DRAM bandwidth limits it
  compute,  ///< at or above the ridge: arithmetic throughput limits it
  latency,  ///< neither roof: far below its roof and short, so launch and latency dominate
};

/// "memory-bound", "compute-bound", "latency-bound".
[[nodiscard]] constexpr std::string_view to_string(BoundKind bound) noexcept {
  switch (bound) {
    case BoundKind::memory:
      return "memory-bound";
    case BoundKind::compute:
      return "compute-bound";
    case BoundKind::latency:
      return "latency-bound";
  }
  return "?";
}

/// Where a measured op sits under its roof.
struct Placement {
  double intensity_flop_per_byte = 0;  ///< flops / bytes
  double achieved_flop_s = 0;          ///< flops / measured time, FLOP/s
  double attainable_flop_s = 0;        ///< the roof at this intensity, FLOP/s
  /// modeled_time_ms / measured time: 1 = running at the roof, 0.25 = four times slower than
  /// the roof allows. For an op with FLOPs this equals achieved / attainable; unlike that ratio
  /// it is also defined for a pure copy (no FLOPs). Above 1 the op beat the DRAM roof (served
  /// from cache, or its cost overstates its traffic); it is not clamped.
  double fraction_of_roof = 0;
  BoundKind bound = BoundKind::memory;  ///< memory or compute, from intensity vs ridge point
};

/// Places an op of `cost` that took `time_ms` on the roofline. The bound is memory when the
/// intensity is below the ridge point, compute otherwise (a placement never says latency: that
/// takes the rule of identify_bottleneck). Throws std::invalid_argument unless time_ms is finite
/// and > 0 (and for a bad cost or roofline).
[[nodiscard]] Placement place_on_roofline(const OpCost& cost, double time_ms,
                                          const Roofline& roofline);

// ------------------------------------------------------------------------------------------------
// The bottleneck of a profile
// ------------------------------------------------------------------------------------------------

/// The kind of op a component is: it picks the recommendation.
enum class OpKind { gemm, softmax, elementwise, layernorm };

/// "GEMM", "softmax", "elementwise", "layernorm".
[[nodiscard]] constexpr std::string_view to_string(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::gemm:
      return "GEMM";
    case OpKind::softmax:
      return "softmax";
    case OpKind::elementwise:
      return "elementwise";
    case OpKind::layernorm:
      return "layernorm";
  }
  return "?";
}

/// One component of a profile: what it is, how long it took, what work it does.
struct ComponentProfile {
  std::string name;            ///< e.g. "Softmax"
  OpKind kind = OpKind::gemm;  ///< picks the recommendation
  double time_ms = 0;          ///< measured (or modeled) time of one run
  OpCost cost;                 ///< its FLOPs and DRAM bytes
};

/// The latency rule: the bottleneck is latency-bound (launch overhead, too little parallel work,
/// dependent memory latency) when it runs below this fraction of its roof ...
inline constexpr double kLatencyFractionOfRoof = 0.10;
/// ... and is also shorter than this, in ms (50 us: a few launch latencies, not a long kernel
/// that is merely inefficient).
inline constexpr double kShortKernelMs = 0.05;

/// What to do about a bottleneck of this kind and bound: the fixed table the lab grades with.
[[nodiscard]] constexpr std::string_view recommendation(OpKind kind, BoundKind bound) noexcept {
  if (bound == BoundKind::latency) {
    return "fuse it with its neighbours or launch the sequence as a CUDA graph: launch overhead, "
           "not the GPU's roofs, sets its time";
  }
  switch (kind) {
    case OpKind::gemm:
      return bound == BoundKind::compute
                 ? "use tensor cores or a lower precision (TF32, FP16, BF16): its intensity "
                   "puts it under the arithmetic roof"
                 : "fuse it with the ops around it so its operands stay on chip (flash attention "
                   "for the attention GEMMs), or batch skinny GEMMs into larger ones";
    case OpKind::softmax:
      return bound == BoundKind::memory
                 ? "fuse it with the GEMMs around it (flash attention): the score matrix then "
                   "never goes to DRAM"
                 : "cut its arithmetic: exp2 with a prescaled log2(e), one pass with an online "
                   "max and sum";
    case OpKind::elementwise:
      return bound == BoundKind::memory
                 ? "fuse it into the kernel that produces its input, or store it at a lower "
                   "precision"
                 : "use cheaper math (fast intrinsics) or a lower precision";
    case OpKind::layernorm:
      return bound == BoundKind::memory
                 ? "fuse it with the residual add before it or the GEMM after it, so x is read "
                   "once"
                 : "use cheaper math (one-pass mean and variance, rsqrt) or a lower precision";
  }
  return "?";
}

/// The bottleneck of a profile and what to do about it.
struct Bottleneck {
  std::size_t index = 0;                ///< position of the component in the profile
  std::string name;                     ///< its name
  double share = 0;                     ///< its time / the profile's total time, 0..1
  BoundKind bound = BoundKind::memory;  ///< memory, compute or latency (the rule below)
  std::string_view recommendation;      ///< recommendation(kind, bound)
};

/// The component with the largest time_ms (the first one on a tie), its share of the total time,
/// what bounds it, and the recommendation for its kind and bound. The bound is latency when the
/// component runs below kLatencyFractionOfRoof of its roof AND its time is below kShortKernelMs;
/// otherwise its placement's memory or compute. Throws std::invalid_argument for an empty
/// profile, and for any component (not only the slowest) whose time is not finite and > 0 or
/// whose cost is invalid, naming the component.
[[nodiscard]] Bottleneck identify_bottleneck(std::span<const ComponentProfile> profile,
                                             const Roofline& roofline);

}  // namespace gpulab::lab03
