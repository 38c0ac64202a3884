#include "gpulab/core/roofline.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace gpulab {

std::string_view to_string(Precision precision) noexcept {
  switch (precision) {
    case Precision::fp32:
      return "FP32";
    case Precision::tf32:
      return "TF32 tensor";
    case Precision::fp16:
      return "FP16 tensor";
    case Precision::bf16:
      return "BF16 tensor";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view text) noexcept {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "fp32") {
    return Precision::fp32;
  }
  if (lower == "tf32") {
    return Precision::tf32;
  }
  if (lower == "fp16") {
    return Precision::fp16;
  }
  if (lower == "bf16") {
    return Precision::bf16;
  }
  return std::nullopt;
}

int element_bytes(Precision precision) noexcept {
  return precision == Precision::fp16 || precision == Precision::bf16 ? 2 : 4;
}

double peak_flop_s(const GpuSpec& spec, Precision precision) noexcept {
  switch (precision) {
    case Precision::fp32:
      return spec.fp32_tflop_s * 1e12;
    case Precision::tf32:
      return spec.tf32_tensor_tflop_s * 1e12;
    case Precision::fp16:
      return spec.fp16_tensor_tflop_s * 1e12;
    case Precision::bf16:
      return spec.bf16_tensor_tflop_s * 1e12;
  }
  return 0;
}

double OpCost::intensity_flop_per_byte() const noexcept {
  return bytes > 0 ? flops / bytes : 0;
}

std::string_view to_string(Bound bound) noexcept {
  return bound == Bound::memory ? "memory-bound" : "compute-bound";
}

double Roofline::ridge_flop_per_byte() const noexcept {
  return peak_flop_s / bandwidth_bytes_s;
}

double Roofline::attainable_flop_s(double intensity_flop_per_byte) const noexcept {
  return std::min(peak_flop_s, intensity_flop_per_byte * bandwidth_bytes_s);
}

Bound Roofline::bound(const OpCost& cost) const noexcept {
  // intensity < ridge, written without dividing so an op that moves no bytes is compute-bound.
  return cost.bytes * peak_flop_s > cost.flops * bandwidth_bytes_s ? Bound::memory : Bound::compute;
}

double Roofline::modeled_time_ms(const OpCost& cost) const noexcept {
  return std::max(cost.flops / peak_flop_s, cost.bytes / bandwidth_bytes_s) * 1e3;
}

Roofline make_roofline(const GpuSpec& spec, Precision precision) {
  Roofline roof;
  roof.spec_name = spec.name;
  roof.precision = precision;
  roof.peak_flop_s = peak_flop_s(spec, precision);
  roof.bandwidth_bytes_s = spec.dram_bandwidth_gb_s * 1e9;
  if (!(roof.peak_flop_s > 0)) {
    throw std::invalid_argument(spec.name + " has no " + std::string(to_string(precision)) +
                                " peak");
  }
  if (!(roof.bandwidth_bytes_s > 0)) {
    throw std::invalid_argument(spec.name + " has no DRAM bandwidth");
  }
  return roof;
}

}  // namespace gpulab
