// The roofline model: what a GPU can attain for an op of a given arithmetic intensity, and the
// time it would take there. Every "modeled" number gpulab shows comes from here:
//
//   attainable FLOP/s = min(peak FLOP/s, intensity * DRAM bandwidth)
//   modeled time      = max(flops / peak FLOP/s, bytes / DRAM bandwidth)
//
// The ridge point (peak / bandwidth, in FLOP per byte) separates memory-bound ops (to its left)
// from compute-bound ones. The model ignores launch latency, caches and occupancy, which is
// exactly why measured times are compared against it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpulab/core/specs.hpp"

namespace gpulab {

/// The arithmetic a roof is drawn for.
enum class Precision {
  fp32,  ///< FP32 on the CUDA cores
  tf32,  ///< TF32 tensor cores, FP32 accumulate
  fp16,  ///< FP16 tensor cores, FP32 accumulate
  bf16,  ///< BF16 tensor cores, FP32 accumulate
};

/// "FP32", "TF32 tensor", "FP16 tensor", "BF16 tensor".
[[nodiscard]] std::string_view to_string(Precision precision) noexcept;
/// Parses "fp32", "tf32", "fp16", "bf16" (any case); nullopt otherwise.
[[nodiscard]] std::optional<Precision> parse_precision(std::string_view text) noexcept;
/// Bytes of one element stored at this precision (TF32 is stored as FP32): 4, 4, 2, 2.
[[nodiscard]] int element_bytes(Precision precision) noexcept;
/// The spec's dense peak for the precision in FLOP/s; 0 where the GPU lacks it.
[[nodiscard]] double peak_flop_s(const GpuSpec& spec, Precision precision) noexcept;

/// The work of one op: floating-point operations and DRAM bytes moved (read + written).
struct OpCost {
  double flops = 0;  ///< floating-point operations (a multiply-add counts 2)
  double bytes = 0;  ///< bytes read from and written to DRAM

  /// FLOP per byte; 0 when no bytes move.
  [[nodiscard]] double intensity_flop_per_byte() const noexcept;
};

/// Which roof limits an op.
enum class Bound {
  memory,   ///< left of the ridge: DRAM bandwidth limits it
  compute,  ///< right of the ridge (or on it): arithmetic throughput limits it
};

/// "memory-bound" or "compute-bound".
[[nodiscard]] std::string_view to_string(Bound bound) noexcept;

/// The two roofs of one spec at one precision.
struct Roofline {
  std::string spec_name;  ///< e.g. "H100 SXM"
  Precision precision = Precision::fp32;
  double peak_flop_s = 0;        ///< compute roof
  double bandwidth_bytes_s = 0;  ///< memory roof slope

  /// peak / bandwidth: the intensity where the two roofs meet, in FLOP per byte.
  [[nodiscard]] double ridge_flop_per_byte() const noexcept;
  /// min(peak, intensity * bandwidth), in FLOP/s.
  [[nodiscard]] double attainable_flop_s(double intensity_flop_per_byte) const noexcept;
  /// Memory-bound when the op's intensity is below the ridge point (an op that moves no bytes is
  /// compute-bound).
  [[nodiscard]] Bound bound(const OpCost& cost) const noexcept;
  /// max(flops / peak, bytes / bandwidth) in milliseconds: the op running at its roof.
  [[nodiscard]] double modeled_time_ms(const OpCost& cost) const noexcept;
};

/// The roofline of a spec at a precision. Throws std::invalid_argument when the spec has no
/// peak for it (e.g. BF16 on a T4) or no bandwidth.
[[nodiscard]] Roofline make_roofline(const GpuSpec& spec, Precision precision = Precision::fp32);

}  // namespace gpulab
