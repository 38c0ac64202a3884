// Unit tests of roofline.hpp: precisions, the peaks the spec database gives them, and the roofline
// model (ridge point, attainable FLOP/s, bound and modeled time) on real database GPUs.
#include "gpulab/core/roofline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpulab/core/specs.hpp"
#include "test_specs.hpp"

namespace gpulab {
namespace {

// The model is a handful of multiplications and divisions of the spec's numbers: the library and
// the test agree to rounding.
constexpr double kRelTolerance = 1e-12;

void expect_close(const char* what, double got, double expected) {
  const double tolerance = std::abs(expected) * kRelTolerance + 1e-300;
  EXPECT_LE(std::abs(got - expected), tolerance)
      << what << ": expected " << expected << ", got " << got << ", tolerance " << tolerance;
}

using gpulab::testing::spec;

// ---------------------------------------------------------------------------------------------
// Precision
// ---------------------------------------------------------------------------------------------

TEST(Precision, DisplayNames) {
  EXPECT_EQ(to_string(Precision::fp32), "FP32");
  EXPECT_EQ(to_string(Precision::tf32), "TF32 tensor");
  EXPECT_EQ(to_string(Precision::fp16), "FP16 tensor");
  EXPECT_EQ(to_string(Precision::bf16), "BF16 tensor");
}

TEST(Precision, ParsesEachNameInAnyCase) {
  EXPECT_EQ(parse_precision("fp32"), Precision::fp32);
  EXPECT_EQ(parse_precision("FP32"), Precision::fp32);
  EXPECT_EQ(parse_precision("tf32"), Precision::tf32);
  EXPECT_EQ(parse_precision("Tf32"), Precision::tf32);
  EXPECT_EQ(parse_precision("fp16"), Precision::fp16);
  EXPECT_EQ(parse_precision("BF16"), Precision::bf16);
  EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
}

TEST(Precision, RejectsUnknownOrPaddedNames) {
  for (const char* text : {"", "fp64", "int8", "fp32 ", " fp16", "FP32 tensor", "f32"}) {
    EXPECT_EQ(parse_precision(text), std::nullopt) << "\"" << text << "\"";
  }
}

TEST(Precision, ElementBytesStoreTf32AsFp32) {
  EXPECT_EQ(element_bytes(Precision::fp32), 4);
  EXPECT_EQ(element_bytes(Precision::tf32), 4);
  EXPECT_EQ(element_bytes(Precision::fp16), 2);
  EXPECT_EQ(element_bytes(Precision::bf16), 2);
}

TEST(Precision, PeaksOfH100SxmAreTheDatasheetDenseValues) {
  const GpuSpec h100 = spec("h100");
  expect_close("fp32", peak_flop_s(h100, Precision::fp32), 66.9e12);
  expect_close("tf32", peak_flop_s(h100, Precision::tf32), 494.7e12);
  expect_close("fp16", peak_flop_s(h100, Precision::fp16), 989.4e12);
  expect_close("bf16", peak_flop_s(h100, Precision::bf16), 989.4e12);
}

TEST(Precision, PeaksOfA100AreTheWhitepaperDenseValues) {
  const GpuSpec a100 = spec("a100");
  expect_close("fp32", peak_flop_s(a100, Precision::fp32), 19.5e12);
  expect_close("tf32", peak_flop_s(a100, Precision::tf32), 156e12);
  expect_close("fp16", peak_flop_s(a100, Precision::fp16), 312e12);
  expect_close("bf16", peak_flop_s(a100, Precision::bf16), 312e12);
}

TEST(Precision, T4HasNoTf32OrBf16Peak) {
  const GpuSpec t4 = spec("t4");
  expect_close("fp32", peak_flop_s(t4, Precision::fp32), 8.1e12);
  expect_close("fp16", peak_flop_s(t4, Precision::fp16), 65e12);
  EXPECT_EQ(peak_flop_s(t4, Precision::tf32), 0.0);
  EXPECT_EQ(peak_flop_s(t4, Precision::bf16), 0.0);
}

// ---------------------------------------------------------------------------------------------
// OpCost and Bound
// ---------------------------------------------------------------------------------------------

TEST(OpCost, IntensityIsFlopsPerByte) {
  expect_close("2e6 FLOP / 1e6 bytes", OpCost{2e6, 1e6}.intensity_flop_per_byte(), 2.0);
  // Vector add of n floats: n FLOP, 12 n bytes.
  expect_close("vector add", OpCost{1e6, 12e6}.intensity_flop_per_byte(), 1.0 / 12.0);
}

TEST(OpCost, IntensityIsZeroWhenNoBytesMove) {
  EXPECT_EQ((OpCost{1e6, 0}.intensity_flop_per_byte()), 0.0);
  EXPECT_EQ((OpCost{0, 0}.intensity_flop_per_byte()), 0.0);
}

TEST(Bound, DisplayNames) {
  EXPECT_EQ(to_string(Bound::memory), "memory-bound");
  EXPECT_EQ(to_string(Bound::compute), "compute-bound");
}

// ---------------------------------------------------------------------------------------------
// make_roofline and the model
// ---------------------------------------------------------------------------------------------

TEST(Roofline, MadeFromTheSpecsPeakAndBandwidth) {
  const GpuSpec h100 = spec("h100");
  const Roofline roof = make_roofline(h100, Precision::fp16);
  EXPECT_EQ(roof.spec_name, "H100 SXM");
  EXPECT_EQ(roof.precision, Precision::fp16);
  expect_close("peak_flop_s", roof.peak_flop_s, h100.fp16_tensor_tflop_s * 1e12);
  expect_close("bandwidth_bytes_s", roof.bandwidth_bytes_s, h100.dram_bandwidth_gb_s * 1e9);
}

TEST(Roofline, DefaultsToFp32) {
  EXPECT_EQ(make_roofline(spec("a100")).precision, Precision::fp32);
}

TEST(Roofline, RidgeIsPeakOverBandwidthForEachSpecAndPrecision) {
  for (const char* name : {"h100", "a100", "t4"}) {
    const GpuSpec s = spec(name);
    for (const Precision p : {Precision::fp32, Precision::fp16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(to_string(p)));
      const double expected = peak_flop_s(s, p) / (s.dram_bandwidth_gb_s * 1e9);
      expect_close("ridge_flop_per_byte", make_roofline(s, p).ridge_flop_per_byte(), expected);
    }
  }
  // Hand-worked: H100 SXM FP32 is 66.9e12 / 3.35e12 = 19.97 FLOP per byte.
  expect_close("H100 FP32 ridge", make_roofline(spec("h100")).ridge_flop_per_byte(), 66.9 / 3.35);
}

TEST(Roofline, AttainableFollowsTheBandwidthSlopeBelowTheRidgeAndThePeakAbove) {
  const GpuSpec a100 = spec("a100");
  const Roofline roof = make_roofline(a100, Precision::fp32);
  const double bandwidth = a100.dram_bandwidth_gb_s * 1e9;
  const double peak = a100.fp32_tflop_s * 1e12;
  const double ridge = peak / bandwidth;
  expect_close("intensity 1", roof.attainable_flop_s(1.0), bandwidth);
  expect_close("half the ridge", roof.attainable_flop_s(ridge / 2), peak / 2);
  expect_close("at the ridge", roof.attainable_flop_s(ridge), peak);
  expect_close("twice the ridge", roof.attainable_flop_s(2 * ridge), peak);
  expect_close("intensity 1000", roof.attainable_flop_s(1000.0), peak);
  EXPECT_EQ(roof.attainable_flop_s(0.0), 0.0);
}

TEST(Roofline, BoundIsMemoryLeftOfTheRidgeAndComputeOnOrRightOfIt) {
  const GpuSpec h100 = spec("h100");
  const Roofline roof = make_roofline(h100, Precision::fp32);
  const double bandwidth = h100.dram_bandwidth_gb_s * 1e9;
  const double peak = h100.fp32_tflop_s * 1e12;
  // Intensity exactly peak / bandwidth: the same division the ridge is.
  const OpCost on_ridge{peak, bandwidth};
  EXPECT_EQ(roof.bound(on_ridge), Bound::compute) << "on the ridge counts as compute-bound";
  const OpCost vector_add{1e8, 12e8};  // 1/12 FLOP per byte
  EXPECT_EQ(roof.bound(vector_add), Bound::memory);
  const OpCost just_left{peak, bandwidth * (1 + 1e-9)};
  EXPECT_EQ(roof.bound(just_left), Bound::memory);
  const OpCost gemm{2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 4};  // ~683 FLOP per byte
  EXPECT_EQ(roof.bound(gemm), Bound::compute);
}

TEST(Roofline, ModeledTimeOfAMemoryBoundOpIsBytesOverBandwidth) {
  const GpuSpec h100 = spec("h100");
  const Roofline roof = make_roofline(h100, Precision::fp32);
  const OpCost vector_add{1e8, 12e8};  // n = 1e8 floats: read two arrays, write one
  const double memory_ms = 12e8 / (h100.dram_bandwidth_gb_s * 1e9) * 1e3;
  const double compute_ms = 1e8 / (h100.fp32_tflop_s * 1e12) * 1e3;
  ASSERT_GT(memory_ms, compute_ms);
  expect_close("modeled_time_ms", roof.modeled_time_ms(vector_add),
               std::max(memory_ms, compute_ms));
  // Hand-worked: 1.2e9 bytes at 3.35e12 bytes/s is 0.3582 ms.
  expect_close("hand-worked", roof.modeled_time_ms(vector_add), 1.2e9 / 3.35e12 * 1e3);
}

TEST(Roofline, ModeledTimeOfAComputeBoundOpIsFlopsOverPeak) {
  const GpuSpec a100 = spec("a100");
  const Roofline roof = make_roofline(a100, Precision::fp16);
  const double n = 8192;
  const OpCost gemm{2 * n * n * n, 3 * n * n * 2};  // FP16 A, B, C each moved once
  const double compute_ms = gemm.flops / (a100.fp16_tensor_tflop_s * 1e12) * 1e3;
  const double memory_ms = gemm.bytes / (a100.dram_bandwidth_gb_s * 1e9) * 1e3;
  ASSERT_GT(compute_ms, memory_ms);
  expect_close("modeled_time_ms", roof.modeled_time_ms(gemm), std::max(memory_ms, compute_ms));
}

TEST(Roofline, BoundAgreesWithTheTermThatDominatesTheModeledTime) {
  // The label and the time come from the same model: an op is memory-bound exactly when its
  // bytes take longer than its FLOPs. That includes an op that moves no DRAM bytes at all
  // (intensity reported as 0): its modeled time is all compute, so it is compute-bound.
  const GpuSpec h100 = spec("h100");
  const Roofline roof = make_roofline(h100, Precision::fp32);
  const double bandwidth = h100.dram_bandwidth_gb_s * 1e9;
  const double peak = h100.fp32_tflop_s * 1e12;
  for (const OpCost cost : {OpCost{1e8, 12e8}, OpCost{1.4e11, 2e8}, OpCost{1e9, 0}}) {
    const double memory_ms = cost.bytes / bandwidth * 1e3;
    const double compute_ms = cost.flops / peak * 1e3;
    const Bound expected = memory_ms > compute_ms ? Bound::memory : Bound::compute;
    EXPECT_EQ(roof.bound(cost), expected)
        << cost.flops << " FLOP, " << cost.bytes << " bytes: expected " << to_string(expected)
        << " (memory " << memory_ms << " ms, compute " << compute_ms << " ms), got "
        << to_string(roof.bound(cost));
  }
}

TEST(Roofline, ThrowsForAPrecisionTheGpuLacksNamingGpuAndPrecision) {
  const GpuSpec t4 = spec("t4");
  for (const Precision p : {Precision::bf16, Precision::tf32}) {
    try {
      (void)make_roofline(t4, p);
      ADD_FAILURE() << "T4 " << to_string(p) << " gave a roofline";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(t4.name), std::string::npos) << message;
      EXPECT_NE(message.find(std::string(to_string(p))), std::string::npos) << message;
    }
  }
  EXPECT_NO_THROW((void)make_roofline(t4, Precision::fp16));
}

TEST(Roofline, ThrowsForASpecWithoutBandwidth) {
  GpuSpec no_bandwidth = spec("h100");
  no_bandwidth.dram_bandwidth_gb_s = 0;
  EXPECT_THROW((void)make_roofline(no_bandwidth), std::invalid_argument);
}

}  // namespace
}  // namespace gpulab
