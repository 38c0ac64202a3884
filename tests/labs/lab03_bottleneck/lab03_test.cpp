// Lab 03 autograder: op costs, arithmetic intensity, the roofline of a spec and precision, placing
// a measured op on it, and the bottleneck of a component profile. Host only: nothing here runs a
// kernel, so every test runs the same on both backends.
//
// Every expectation is derived from the formulas (written independently of the lab and of the
// framework's gpulab/core/roofline.hpp, in lab03_expect.hpp, which the hidden suite shares) and
// from the spec database's fields, never from stored answers:
//   peak             spec.<precision>_tflop_s * 1e12 FLOP/s;  bandwidth  dram_bandwidth_gb_s * 1e9
//   roof time        max(flops / peak, bytes / bandwidth)
//   bound            memory when flops / bytes < peak / bandwidth, else compute; latency when the
//                    slowest component runs below kLatencyFractionOfRoof of its roof and is
//                    shorter than kShortKernelMs (the rule constants are the lab header's)
// The attention profiles are the five components of kernels/attention (component_cost) for
// d_model 1024, 16 heads, batch 1, each given the time of its roof.
//
// Tolerance: the quantities are a few multiplications and divisions of doubles, exact up to
// rounding, so kRelTol = 1e-9 separates a rounding difference (1e-16) from any formula mistake
// (a factor, a missing term: 1e-3 and up).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/attention.hpp"
#include "graded_test.hpp"
#include "lab03.hpp"
#include "lab03_bottleneck/lab03_expect.hpp"

namespace {

using namespace gpulab::lab03_expect;
namespace kernels = gpulab::kernels;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The GPUs the lab is graded on: a datacenter Ampere and Hopper, a consumer Ada, an inference
// Turing without TF32 or BF16.
constexpr std::string_view kSpecNames[] = {"a100", "h100", "rtx-4090", "t4"};
constexpr int kSeqLens[] = {512, 1024, 2048, 4096, 8192};

// ------------------------------------------------------------------------------------------------
// Profiles
// ------------------------------------------------------------------------------------------------

OpKind kind_of(kernels::Component component) {
  return component == kernels::Component::softmax ? OpKind::softmax : OpKind::gemm;
}

// The five attention components (d_model 1024, 16 heads, batch 1), each at its roof's time.
std::vector<lab03::ComponentProfile> modeled_attention(const GpuSpec& spec, Precision precision,
                                                       int seq_len) {
  const kernels::AttentionConfig config{1, seq_len, 1024, 16, false};
  std::vector<lab03::ComponentProfile> profile;
  for (const kernels::Component component : kernels::all_components()) {
    const OpCost cost = kernels::component_cost(config, component);
    profile.push_back({std::string(kernels::component_name(component)), kind_of(component),
                       roof_time_ms(cost, peak_of(spec, precision), bandwidth_of(spec)), cost});
  }
  return profile;
}

// ================================================================================================
// Op costs
// ================================================================================================

GPULAB_GRADED_TEST(Lab03OpCost, GemmCountsTwoFlopsPerMultiplyAddAndMovesEachMatrixOnce, 4,
                   "gemm_cost", "a GEMM costs 2*m*n*k FLOP and moves A, B and C once") {
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{4096, 4096, 4096}, {4096, 4096, 64}, {512, 3072, 1024},
                          {7, 13, 5},         {1, 1, 1},        {8192, 8192, 64}};
  for (const Shape& s : shapes) {
    for (const Precision precision : kPrecisions) {
      EXPECT_TRUE(same_cost(expected_gemm_cost(s.m, s.n, s.k, precision),
                            lab03::gemm_cost(s.m, s.n, s.k, precision)))
          << "gemm_cost(" << s.m << ", " << s.n << ", " << s.k << ", " << precision_name(precision)
          << "): flops 2*m*n*k, bytes (m*k + k*n + m*n) * " << bytes_per_element(precision)
          << " bytes per element";
    }
  }
}

GPULAB_GRADED_TEST(Lab03OpCost, SoftmaxCountsFiveFlopsPerElementAndOneReadOneWrite, 4,
                   "softmax_cost",
                   "softmax costs 5 FLOP per element and reads and writes the matrix once") {
  const std::int64_t shapes[][2] = {{4096, 4096}, {16 * 8192, 8192}, {3, 7}, {1, 1}};
  for (const auto& shape : shapes) {
    for (const Precision precision : kPrecisions) {
      const double elements = double(shape[0]) * double(shape[1]);
      const OpCost expected{5 * elements, 2 * elements * bytes_per_element(precision)};
      EXPECT_TRUE(same_cost(expected, lab03::softmax_cost(shape[0], shape[1], precision)))
          << "softmax_cost(" << shape[0] << ", " << shape[1] << ", " << precision_name(precision)
          << "): 5 flops per element, bytes 2 * rows * cols * " << bytes_per_element(precision);
    }
  }
}

GPULAB_GRADED_TEST(Lab03OpCost, ElementwiseReadsItsInputsAndWritesOneArray, 4, "elementwise_cost",
                   "an elementwise op reads each input once and writes one array") {
  struct Case {
    const char* what;
    std::int64_t n;
    int inputs;
    double flops_per_element;
  };
  const Case cases[] = {{"vector add", std::int64_t{1} << 26, 2, 1},
                        {"ReLU", 1000, 1, 1},
                        {"fill", 4096, 0, 0},
                        {"fused multiply-add d = a * b + c", 12345, 3, 2},
                        {"GELU (tanh form)", 1 << 20, 1, 8}};
  for (const Case& c : cases) {
    for (const Precision precision : kPrecisions) {
      const double n = double(c.n);
      const OpCost expected{n * c.flops_per_element,
                            (c.inputs + 1) * n * bytes_per_element(precision)};
      EXPECT_TRUE(same_cost(expected,
                            lab03::elementwise_cost(c.n, c.inputs, c.flops_per_element, precision)))
          << c.what << ": elementwise_cost(" << c.n << ", " << c.inputs << ", "
          << c.flops_per_element << ", " << precision_name(precision) << "): flops n * "
          << c.flops_per_element << ", bytes (inputs + 1) * n * " << bytes_per_element(precision);
    }
  }
}

GPULAB_GRADED_TEST(Lab03OpCost, LayernormCountsEightFlopsPerElementAndReadsGammaBetaOnce, 4,
                   "layernorm_cost",
                   "layernorm costs 8 FLOP per element and reads gamma and beta once") {
  static_assert(lab03::kLayernormFlopsPerElement == 8, "lab03.hpp documents 8 per element");
  const std::int64_t shapes[][2] = {{4096, 1024}, {1, 4096}, {512, 768}, {3, 5}};
  for (const auto& shape : shapes) {
    for (const Precision precision : kPrecisions) {
      const double rows = double(shape[0]), cols = double(shape[1]);
      const OpCost expected{8 * rows * cols,
                            (2 * rows * cols + 2 * cols) * bytes_per_element(precision)};
      EXPECT_TRUE(same_cost(expected, lab03::layernorm_cost(shape[0], shape[1], precision)))
          << "layernorm_cost(" << shape[0] << ", " << shape[1] << ", " << precision_name(precision)
          << "): flops 8 * rows * cols, bytes (2 * rows * cols + "
          << "2 * cols) * " << bytes_per_element(precision) << " (x, y, gamma, beta)";
    }
  }
}

GPULAB_GRADED_TEST(Lab03OpCost, RejectsSizesBelowOneAndInvalidCounts, 3,
                   "gemm_cost softmax_cost elementwise_cost layernorm_cost",
                   "std::invalid_argument for sizes below one and invalid input or FLOP counts") {
  const Precision fp32 = Precision::fp32;
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::gemm_cost(0, 8, 8, fp32); }))
      << "gemm_cost(0, 8, 8): m must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::gemm_cost(8, -8, 8, fp32); }))
      << "gemm_cost(8, -8, 8): n must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::gemm_cost(8, 8, 0, fp32); }))
      << "gemm_cost(8, 8, 0): k must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::softmax_cost(0, 8, fp32); }))
      << "softmax_cost(0, 8): rows must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::softmax_cost(8, -1, fp32); }))
      << "softmax_cost(8, -1): cols must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::elementwise_cost(0, 2, 1, fp32); }))
      << "elementwise_cost(n = 0): n must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::elementwise_cost(8, -1, 1, fp32); }))
      << "elementwise_cost(inputs = -1): inputs must be >= 0";
  for (const double flops : {-1.0, kNaN, kInf}) {
    EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::elementwise_cost(8, 2, flops, fp32); }))
        << "elementwise_cost(flops_per_element = " << flops << "): must be finite and >= 0";
  }
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::layernorm_cost(-4, 8, fp32); }))
      << "layernorm_cost(-4, 8): rows must be >= 1";
  EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::layernorm_cost(4, 0, fp32); }))
      << "layernorm_cost(4, 0): cols must be >= 1";
}

// ================================================================================================
// Arithmetic intensity
// ================================================================================================

GPULAB_GRADED_TEST(Lab03Intensity, IsFlopsPerByteMoved, 4, "arithmetic_intensity",
                   "arithmetic intensity = FLOP / bytes moved") {
  const double n = 4096;
  const OpCost costs[] = {
      {2 * n * n * n, 3 * n * n * 4},  // GEMM 4096^3 in FP32: 682.7 FLOP/byte
      {n, 3 * n * 4},                  // vector add in FP32: 1/12
      {5 * n * n, 2 * n * n * 2},      // softmax in FP16: 1.25
      {0, 1e6},                        // a copy: no FLOPs at all
      {1, 1},
  };
  for (const OpCost& cost : costs) {
    EXPECT_TRUE(near_rel(cost.flops / cost.bytes, lab03::arithmetic_intensity(cost)))
        << "arithmetic_intensity(" << describe(cost) << ") = flops / bytes";
  }
}

GPULAB_GRADED_TEST(Lab03Intensity, RejectsZeroBytesAndInvalidCounts, 2, "arithmetic_intensity",
                   "std::invalid_argument for zero bytes and negative or non-finite counts") {
  const OpCost bad[] = {{1e9, 0}, {1e9, -4}, {1e9, kNaN}, {1e9, kInf},
                        {-1, 4},  {kNaN, 4}, {kInf, 4}};
  for (const OpCost& cost : bad) {
    EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::arithmetic_intensity(cost); }))
        << "arithmetic_intensity(" << describe(cost)
        << "): flops must be finite and >= 0, bytes finite and > 0";
  }
}

// ================================================================================================
// The roofline
// ================================================================================================

GPULAB_GRADED_TEST(
    Lab03Roofline, MakeRooflineReadsThePeakOfThePrecisionAndTheBandwidth, 5, "roofline_for",
    "the roofline takes the spec's peak of the chosen precision and its DRAM bandwidth") {
  int checked = 0;
  for (const std::string_view name : kSpecNames) {
    const GpuSpec spec = spec_named(name);
    for (const Precision precision : kPrecisions) {
      if (!(peak_of(spec, precision) > 0)) {
        continue;  // Lab03Roofline.MakeRooflineRejectsAPrecisionTheGpuLacks
      }
      const lab03::Roofline roof = lab03::roofline_for(spec, precision);
      EXPECT_TRUE(near_rel(peak_of(spec, precision), roof.peak_flop_s))
          << spec.name << " " << precision_name(precision)
          << ": peak_flop_s = the spec's TFLOP/s for the precision * 1e12";
      EXPECT_TRUE(near_rel(bandwidth_of(spec), roof.bandwidth_bytes_s))
          << spec.name << " " << precision_name(precision)
          << ": bandwidth_bytes_s = dram_bandwidth_gb_s * 1e9";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 14) << "rooflines checked (4 GPUs, T4 without TF32 and BF16)";
}

GPULAB_GRADED_TEST(Lab03Roofline, MakeRooflineRejectsAPrecisionTheGpuLacks, 4, "roofline_for",
                   "std::invalid_argument, naming the precision, for one the GPU has no peak for") {
  const GpuSpec t4 = spec_named("t4");
  for (const Precision precision : {Precision::tf32, Precision::bf16}) {
    std::string message;
    EXPECT_TRUE(
        throws_invalid_argument([&] { (void)lab03::roofline_for(t4, precision); }, &message))
        << "roofline_for(T4, " << precision_name(precision) << "): a T4 has no "
        << precision_name(precision) << " peak";
    EXPECT_NE(message.find(t4.name), std::string::npos)
        << "the message names the GPU (\"" << t4.name << "\"); it was: " << message;
    const std::vector<std::string> names = precision_names(precision);
    EXPECT_TRUE(std::any_of(
        names.begin(), names.end(),
        [&](const std::string& name) { return lower(message).find(name) != std::string::npos; }))
        << "the message names the precision (\"" << names.front() << "\" or \"" << names.back()
        << "\"); it was: " << message;
  }
  EXPECT_NO_THROW((void)lab03::roofline_for(t4, Precision::fp16)) << "a T4 has FP16 tensor cores";

  GpuSpec no_bandwidth = spec_named("h100");
  no_bandwidth.dram_bandwidth_gb_s = 0;
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::roofline_for(no_bandwidth, Precision::fp32);
  })) << "roofline_for of a spec with dram_bandwidth_gb_s = 0";
}

GPULAB_GRADED_TEST(Lab03Roofline, RidgePointIsPeakOverBandwidth, 4, "ridge_point",
                   "the ridge point = peak FLOP/s / bandwidth") {
  for (const GpuRoof& gpu : roofs_with_peak(kSpecNames, kPrecisions)) {
    EXPECT_TRUE(near_rel(gpu.peak / gpu.bandwidth, lab03::ridge_point({gpu.peak, gpu.bandwidth})))
        << gpu.spec.name << " " << precision_name(gpu.precision) << ": ridge = " << gpu.peak
        << " FLOP/s / " << gpu.bandwidth << " bytes/s";
  }
  // The worked example of the README: H100 SXM in FP32, 66.9 TFLOP/s over 3350 GB/s.
  EXPECT_TRUE(near_rel(66.9e12 / 3350e9, lab03::ridge_point({66.9e12, 3350e9})))
      << "H100 SXM FP32: 66.9e12 / 3350e9 = 19.97 FLOP/byte";
  const lab03::Roofline bad[] = {{0, 3350e9}, {66.9e12, 0}, {-1, 1}, {kNaN, 1}, {1, kInf}};
  for (const lab03::Roofline& roof : bad) {
    EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::ridge_point(roof); }))
        << "ridge_point({" << roof.peak_flop_s << ", " << roof.bandwidth_bytes_s
        << "}): both roofs must be finite and > 0";
  }
}

GPULAB_GRADED_TEST(Lab03Roofline, AttainableFlopsFollowsBandwidthBelowTheRidgeAndPeakAbove, 4,
                   "attainable_flop_s", "attainable FLOP/s = min(peak, intensity * bandwidth)") {
  for (const std::string_view name : kSpecNames) {
    const GpuSpec spec = spec_named(name);
    const double peak = peak_of(spec, Precision::fp32);
    const double bandwidth = bandwidth_of(spec);
    const double ridge = peak / bandwidth;
    const lab03::Roofline roof{peak, bandwidth};
    for (const double intensity :
         {0.0, 1.0 / 12, ridge / 4, ridge * 0.999, ridge, ridge * 4, 682.7}) {
      const double expected = std::min(peak, intensity * bandwidth);
      EXPECT_TRUE(near_rel(expected, lab03::attainable_flop_s(roof, intensity)))
          << spec.name << " FP32 (ridge " << ridge << " FLOP/byte), intensity " << intensity
          << ": attainable = min(peak, intensity * bandwidth)";
    }
  }
  const lab03::Roofline roof{66.9e12, 3350e9};
  for (const double intensity : {-1.0, kNaN, kInf}) {
    EXPECT_TRUE(throws_invalid_argument([&] { (void)lab03::attainable_flop_s(roof, intensity); }))
        << "attainable_flop_s(intensity " << intensity << "): must be finite and >= 0";
  }
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::attainable_flop_s({0, 0}, 1);
  })) << "attainable_flop_s of a roofline with no roofs";
}

GPULAB_GRADED_TEST(Lab03Roofline, ModeledTimeIsTheSlowerOfTheTwoRoofs, 4, "modeled_time_ms",
                   "modeled time = the larger of FLOP / peak and bytes / bandwidth") {
  const double n = 4096;
  const OpCost costs[] = {
      {2 * n * n * n, 3 * n * n * 4},              // GEMM 4096^3: compute time wins
      {n * n * 16, 3 * n * n * 16 * 4},            // vector add: memory time wins
      {2 * n * n * 64, (2 * n * 64 + n * n) * 4},  // 4096x4096x64: between, spec-dependent
      {0, 1e9},                                    // a 1 GB copy
  };
  for (const std::string_view name : kSpecNames) {
    const GpuSpec spec = spec_named(name);
    for (const Precision precision : {Precision::fp32, Precision::fp16}) {
      const double peak = peak_of(spec, precision);
      const double bandwidth = bandwidth_of(spec);
      for (const OpCost& cost : costs) {
        EXPECT_TRUE(near_rel(roof_time_ms(cost, peak, bandwidth),
                             lab03::modeled_time_ms(cost, {peak, bandwidth})))
            << spec.name << " " << precision_name(precision) << ", " << describe(cost)
            << ": max(flops / peak, bytes / bandwidth) in ms";
      }
    }
  }
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::modeled_time_ms({1e9, 0}, {66.9e12, 3350e9});
  })) << "modeled_time_ms of an op that moves 0 bytes";
}

// ================================================================================================
// Placing a measured op
// ================================================================================================

GPULAB_GRADED_TEST(
    Lab03Placement, PlacesAMemoryBoundOpBelowTheBandwidthRoof, 5, "place_on_roofline",
    "a memory-bound op: its intensity, achieved rate and fraction of the bandwidth roof") {
  // Vector add of 2^26 floats on an A100 (2039 GB/s), measured at 80% of its roof.
  const GpuSpec a100 = spec_named("a100");
  const double peak = peak_of(a100, Precision::fp32);
  const double bandwidth = bandwidth_of(a100);
  const double n = double(std::int64_t{1} << 26);
  const OpCost add{n, 3 * n * 4};
  const double time_ms = roof_time_ms(add, peak, bandwidth) / 0.8;
  const lab03::Placement got = lab03::place_on_roofline(add, time_ms, {peak, bandwidth});
  const std::string context = "vector add 2^26 FP32 on A100 in " + std::to_string(time_ms) + " ms";
  EXPECT_TRUE(near_rel(1.0 / 12, got.intensity_flop_per_byte)) << context << ": intensity";
  EXPECT_TRUE(near_rel(n / (time_ms * 1e-3), got.achieved_flop_s))
      << context << ": achieved = flops / time";
  EXPECT_TRUE(near_rel(bandwidth / 12, got.attainable_flop_s))
      << context << ": attainable = intensity * bandwidth";
  EXPECT_TRUE(near_rel(0.8, got.fraction_of_roof)) << context << ": fraction of roof";
  EXPECT_EQ(bound_name(got.bound), bound_name(BoundKind::memory)) << context;

  // A copy has no FLOPs: its fraction of roof is its bandwidth time over its measured time.
  const OpCost copy{0, 2e9};
  const lab03::Placement copied = lab03::place_on_roofline(copy, 2.5, {peak, bandwidth});
  const double copy_roof_ms = 2e9 / bandwidth * 1e3;
  EXPECT_TRUE(near_rel(0.0, copied.achieved_flop_s)) << "1 GB copy in 2.5 ms: achieved";
  EXPECT_TRUE(near_rel(0.0, copied.attainable_flop_s)) << "1 GB copy: attainable at intensity 0";
  EXPECT_TRUE(near_rel(copy_roof_ms / 2.5, copied.fraction_of_roof))
      << "1 GB copy in 2.5 ms: fraction of roof = (bytes / bandwidth) / time";
  EXPECT_EQ(bound_name(copied.bound), bound_name(BoundKind::memory)) << "a copy";
}

GPULAB_GRADED_TEST(Lab03Placement, PlacesAComputeBoundOpBelowThePeakRoof, 4, "place_on_roofline",
                   "a compute-bound op: its fraction of the peak roof") {
  struct Case {
    std::string_view spec;
    Precision precision;
    double fraction;
  };
  // Half the roof; a quarter; and faster than the roof (served from cache): not clamped to 1.
  const Case cases[] = {{"h100", Precision::fp32, 0.5},
                        {"rtx-4090", Precision::tf32, 0.25},
                        {"a100", Precision::bf16, 2.0}};
  const double n = 4096;
  for (const Case& c : cases) {
    const GpuSpec spec = spec_named(c.spec);
    const double peak = peak_of(spec, c.precision);
    const double bandwidth = bandwidth_of(spec);
    const double size = bytes_per_element(c.precision);
    const OpCost gemm{2 * n * n * n, 3 * n * n * size};
    const double time_ms = roof_time_ms(gemm, peak, bandwidth) / c.fraction;
    const lab03::Placement got = lab03::place_on_roofline(gemm, time_ms, {peak, bandwidth});
    const std::string context = "GEMM 4096^3 " + precision_name(c.precision) + " on " + spec.name +
                                " in " + std::to_string(time_ms) + " ms";
    EXPECT_TRUE(near_rel(gemm.flops / gemm.bytes, got.intensity_flop_per_byte))
        << context << ": intensity";
    EXPECT_TRUE(near_rel(gemm.flops / (time_ms * 1e-3), got.achieved_flop_s))
        << context << ": achieved = flops / time";
    EXPECT_TRUE(near_rel(peak, got.attainable_flop_s)) << context << ": attainable = peak";
    EXPECT_TRUE(near_rel(c.fraction, got.fraction_of_roof))
        << context << ": fraction of roof = modeled time / measured time";
    EXPECT_EQ(bound_name(got.bound), bound_name(BoundKind::compute)) << context;
  }
  // Exactly on the ridge (32 FLOP/byte on a 64 TFLOP/s, 2 TB/s roof; exact in binary): the
  // contract says compute-bound, and both roofs give the same time.
  const lab03::Placement ridge = lab03::place_on_roofline({32e9, 1e9}, 1.0, {64e12, 2e12});
  EXPECT_EQ(bound_name(ridge.bound), bound_name(BoundKind::compute))
      << "an op at exactly the ridge point (32 FLOP/byte) is compute-bound";
  EXPECT_TRUE(near_rel(0.5, ridge.fraction_of_roof))
      << "32 GFLOP, 1 GB in 1 ms on a 64 TFLOP/s, 2 TB/s roof: roof time 0.5 ms";
}

GPULAB_GRADED_TEST(
    Lab03Placement, RejectsTimesThatAreNotPositiveAndOpsWithoutBytes, 3, "place_on_roofline",
    "std::invalid_argument for a time that is not positive and an op that moves no bytes") {
  const lab03::Roofline roof{66.9e12, 3350e9};
  const OpCost cost{1e9, 1e8};
  for (const double time_ms : {0.0, -1.0, kNaN, kInf}) {
    EXPECT_TRUE(throws_invalid_argument([&] {
      (void)lab03::place_on_roofline(cost, time_ms, roof);
    })) << "place_on_roofline(time_ms = "
        << time_ms << "): must be finite and > 0";
  }
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::place_on_roofline({1e9, 0}, 1, roof);
  })) << "place_on_roofline of an op that moves 0 bytes";
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::place_on_roofline(cost, 1, {0, 1e9});
  })) << "place_on_roofline on a roofline with peak_flop_s = 0";
}

// ================================================================================================
// The bottleneck of a profile
// ================================================================================================

GPULAB_GRADED_TEST(
    Lab03Bottleneck, LongSequenceOnH100IsTheMemoryBoundSoftmax, 7, "identify_bottleneck",
    "attention at a long sequence on H100: the bottleneck is the softmax, memory bound") {
  const GpuSpec h100 = spec_named("h100");
  const double peak = peak_of(h100, Precision::fp32);
  const double bandwidth = bandwidth_of(h100);
  const auto profile = modeled_attention(h100, Precision::fp32, 8192);
  const ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
  // The derivation agrees with the hand check: softmax moves 2*16*8192^2*4 = 8.6 GB (2.56 ms at
  // 3350 GB/s) and beats the 137 GFLOP score GEMM (2.05 ms at 66.9 TFLOP/s).
  ASSERT_TRUE(derived_as(profile, expected, "Softmax", BoundKind::memory));

  const lab03::Bottleneck got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "attention seq_len 8192 on H100 SXM FP32");
  EXPECT_NE(got.recommendation.find("flash attention"), std::string_view::npos)
      << "a memory-bound softmax calls for fusion (flash attention); got: " << got.recommendation;
}

GPULAB_GRADED_TEST(
    Lab03Bottleneck, ShortSequenceOnH100IsTheComputeBoundQkvProjection, 7, "identify_bottleneck",
    "attention at a short sequence on H100: the bottleneck is the QKV projection, compute bound") {
  const GpuSpec h100 = spec_named("h100");
  const double peak = peak_of(h100, Precision::fp32);
  const double bandwidth = bandwidth_of(h100);
  const auto profile = modeled_attention(h100, Precision::fp32, 512);
  const ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
  // 2*512*1024*3072 = 3.2 GFLOP at 66.9 TFLOP/s: 0.048 ms, the largest of the five. It is
  // shorter than kShortKernelMs but runs at its roof, so it is not latency-bound.
  ASSERT_TRUE(derived_as(profile, expected, "QKV Projection", BoundKind::compute));

  const lab03::Bottleneck got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "attention seq_len 512 on H100 SXM FP32");
  EXPECT_NE(got.recommendation.find("tensor cores"), std::string_view::npos)
      << "a compute-bound GEMM calls for tensor cores; got: " << got.recommendation;
}

GPULAB_GRADED_TEST(Lab03Bottleneck, FollowsTheCrossoverOnEverySpecAndPrecision, 5,
                   "identify_bottleneck",
                   "the bottleneck and its bound follow the crossover on every GPU and precision") {
  // TF32 stores FP32, so the FP32 byte counts of the attention components hold for it too.
  for (const GpuRoof& gpu : roofs_with_peak(kSpecNames, {Precision::fp32, Precision::tf32})) {
    for (const int seq_len : kSeqLens) {
      const auto profile = modeled_attention(gpu.spec, gpu.precision, seq_len);
      const ExpectedBottleneck expected = derive_bottleneck(profile, gpu.peak, gpu.bandwidth);
      const lab03::Bottleneck got = lab03::identify_bottleneck(profile, {gpu.peak, gpu.bandwidth});
      expect_bottleneck(profile, expected, got,
                        "attention seq_len " + std::to_string(seq_len) + " on " + gpu.spec.name +
                            " " + precision_name(gpu.precision));
    }
  }
}

GPULAB_GRADED_TEST(Lab03Bottleneck, ShortKernelFarBelowItsRoofIsLatencyBound, 7,
                   "identify_bottleneck",
                   "a short kernel far below both roofs is called latency bound") {
  // A small layer on H100 SXM FP32, measured: the layernorm's roof is 1.3 us (4.2 MB at
  // 3350 GB/s) but it took 30 us, about 4% of its roof, and it is short: latency-bound.
  const GpuSpec h100 = spec_named("h100");
  const double peak = peak_of(h100, Precision::fp32);
  const double bandwidth = bandwidth_of(h100);
  const double rows = 512, cols = 1024;
  const OpCost layernorm{8 * rows * cols, (2 * rows * cols + 2 * cols) * 4};
  const OpCost bias_add{rows * cols, 3 * rows * cols * 4};
  const OpCost gemm{2 * rows * cols * cols, (rows * cols + cols * cols + rows * cols) * 4};
  std::vector<lab03::ComponentProfile> profile = {
      {"LayerNorm", OpKind::layernorm, 0.030, layernorm},
      {"Bias add", OpKind::elementwise, 0.012, bias_add},
      {"Projection", OpKind::gemm, 0.025, gemm},
  };
  ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 0u);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::latency));
  lab03::Bottleneck got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "short LayerNorm at ~4% of its roof");
  EXPECT_NE(lower(got.recommendation).find("cuda graph"), std::string_view::npos)
      << "a latency-bound kernel calls for fusion or CUDA graphs; got: " << got.recommendation;

  // Just as far below its roof but long (0.2 ms): an inefficient kernel, not a launch problem.
  profile[0].time_ms = 0.2;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::memory));
  got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "long LayerNorm (0.2 ms) far below its roof");

  // Short but near its roof (the GEMM at 0.0185 ms, 87% of its 16 us roof): compute-bound.
  profile[0].time_ms = 0.010;
  profile[2].time_ms = roof_time_ms(gemm, peak, bandwidth) / 0.87;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 2u);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::compute));
  got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "short GEMM at 87% of its roof");

  // On the boundary: exactly kShortKernelMs is not "shorter than" it.
  profile[0].time_ms = lab03::kShortKernelMs;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::memory));
  got = lab03::identify_bottleneck(profile, {peak, bandwidth});
  expect_bottleneck(profile, expected, got, "LayerNorm at exactly kShortKernelMs");
}

GPULAB_GRADED_TEST(Lab03Bottleneck, PicksTheLongestComponentAndTheFirstOnATie, 3,
                   "identify_bottleneck",
                   "the longest component is the bottleneck, the first of equals on a tie") {
  const lab03::Roofline roof{66.9e12, 3350e9};
  // Measured times decide, not the model: the GEMM has the most work but ran fastest.
  const std::vector<lab03::ComponentProfile> profile = {
      {"GEMM", OpKind::gemm, 1.0, {2e12, 1e9}},
      {"Softmax A", OpKind::softmax, 2.0, {5e6, 8e6}},
      {"Softmax B", OpKind::softmax, 2.0, {5e6, 8e6}},
  };
  const lab03::Bottleneck got = lab03::identify_bottleneck(profile, roof);
  EXPECT_EQ(got.index, 1u) << "times 1.0, 2.0, 2.0 ms: the first of the two longest";
  EXPECT_EQ(got.name, "Softmax A");
  EXPECT_TRUE(near_rel(0.4, got.share)) << "share of 2.0 ms in 5.0 ms";

  const std::vector<lab03::ComponentProfile> single = {{"only", OpKind::gemm, 3.0, {1e9, 1e6}}};
  const lab03::Bottleneck alone = lab03::identify_bottleneck(single, roof);
  EXPECT_EQ(alone.index, 0u) << "a profile of one component";
  EXPECT_TRUE(near_rel(1.0, alone.share)) << "a profile of one component: share";
}

GPULAB_GRADED_TEST(
    Lab03Bottleneck, RejectsEmptyProfilesAndInvalidComponents, 3, "identify_bottleneck",
    "std::invalid_argument for an empty profile and components with invalid times or costs") {
  const lab03::Roofline roof{66.9e12, 3350e9};
  EXPECT_TRUE(throws_invalid_argument([&] {
    (void)lab03::identify_bottleneck(std::span<const lab03::ComponentProfile>{}, roof);
  })) << "identify_bottleneck of an empty profile";

  const lab03::ComponentProfile good{"Good", OpKind::gemm, 5.0, {1e12, 1e9}};
  struct Case {
    const char* what;
    lab03::ComponentProfile bad;
  };
  // Each bad component is not the slowest one: every component is checked.
  const Case cases[] = {
      {"a negative time", {"Negative", OpKind::softmax, -1.0, {1e6, 1e6}}},
      {"a zero time", {"Zero", OpKind::softmax, 0.0, {1e6, 1e6}}},
      {"a NaN time", {"NotANumber", OpKind::softmax, kNaN, {1e6, 1e6}}},
      {"an op that moves 0 bytes", {"NoBytes", OpKind::elementwise, 1.0, {1e6, 0}}},
  };
  for (const Case& c : cases) {
    const std::vector<lab03::ComponentProfile> profile = {good, c.bad};
    std::string message;
    EXPECT_TRUE(
        throws_invalid_argument([&] { (void)lab03::identify_bottleneck(profile, roof); }, &message))
        << "identify_bottleneck of a profile with " << c.what;
    EXPECT_NE(message.find(c.bad.name), std::string::npos)
        << c.what << ": the message names the component (\"" << c.bad.name
        << "\"); it was: " << message;
  }
}

}  // namespace
