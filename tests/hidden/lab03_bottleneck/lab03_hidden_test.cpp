// Lab 03 hidden suite (10 points): the lab's functions on cases the public suite does not show.
// Graded with tests/labs/lab03_bottleneck/lab03_test.cpp but never shipped to students
// (scripts/release-student leaves tests/hidden/ out), so it catches code written to the public
// cases rather than to the contract:
//   - other shapes: skinny and odd-sized GEMMs, a GEMV, a vocabulary-wide softmax, a fused
//     three-input elementwise op, a fill, odd layernorm widths;
//   - other GPUs of the spec database: L4, V100 SXM2 (no TF32, no BF16), H200 SXM, H100 PCIe and
//     RTX 3090 (the public suite grades A100, H100 SXM, RTX 4090 and T4);
//   - half precision end to end: attention profiles whose bytes are FP16/BF16 elements, on the
//     FP16/BF16 tensor roofs, and measured (not modeled) profiles.
// Host only, like the public suite: every test runs the same on both backends.
//
// Every expectation is derived from the formulas of the lab header and the spec database's fields
// (by the helpers of tests/labs/lab03_bottleneck/lab03_expect.hpp, shared with the public suite,
// and the attention costs below), never from the solution:
//   peak             spec.<precision>_tflop_s * 1e12 FLOP/s;  bandwidth  dram_bandwidth_gb_s * 1e9
//   roof time        max(flops / peak, bytes / bandwidth)
//   bound            memory when flops / bytes < peak / bandwidth, else compute; latency when the
//                    slowest component runs below kLatencyFractionOfRoof of its roof and is
//                    shorter than kShortKernelMs
// The attention costs are written out here for any element size (kernels/attention's
// component_cost is FP32 only): B = batch, S = seq_len, D = d_model, H = heads, dh = D / H, e
// bytes per element:
//   QKV Projection     flops 2*B*S*D*3D     bytes e*(B*S*D + D*3D + B*S*3D)
//   Score Computation  flops 2*B*H*S*S*dh   bytes e*(2*B*S*D + B*H*S*S)
//   Softmax            flops 5*B*H*S*S      bytes e*2*B*H*S*S
//   Weighted Sum       flops 2*B*H*S*S*dh   bytes e*(B*H*S*S + 2*B*S*D)
//   Output Projection  flops 2*B*S*D*D      bytes e*(2*B*S*D + D*D)
//
// Tolerance: as in the public suite, kRelTol = 1e-9 (the quantities are exact up to rounding).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"
#include "graded_test.hpp"
#include "lab03.hpp"
#include "lab03_bottleneck/lab03_expect.hpp"

namespace {

using namespace gpulab::lab03_expect;

// GPUs the public suite does not grade on.
constexpr std::string_view kHiddenSpecNames[] = {"l4", "v100", "h200", "h100-pcie", "rtx-3090"};

// ------------------------------------------------------------------------------------------------
// Profiles
// ------------------------------------------------------------------------------------------------

struct AttentionShape {
  double batch, seq_len, d_model, heads;
};

// The five attention components of `shape` at `element_bytes` per element, each at its roof.
std::vector<lab03::ComponentProfile> modeled_attention(const AttentionShape& shape,
                                                       double element_bytes, double peak,
                                                       double bandwidth) {
  const double b = shape.batch, s = shape.seq_len, d = shape.d_model, h = shape.heads;
  const double dh = d / h;
  const double e = element_bytes;
  const struct {
    const char* name;
    OpKind kind;
    OpCost cost;
  } components[] = {
      {"QKV Projection",
       OpKind::gemm,
       {2 * b * s * d * 3 * d, e * (b * s * d + 3 * d * d + 3 * b * s * d)}},
      {"Score Computation",
       OpKind::gemm,
       {2 * b * h * s * s * dh, e * (2 * b * s * d + b * h * s * s)}},
      {"Softmax", OpKind::softmax, {5 * b * h * s * s, e * 2 * b * h * s * s}},
      {"Weighted Sum", OpKind::gemm, {2 * b * h * s * s * dh, e * (b * h * s * s + 2 * b * s * d)}},
      {"Output Projection", OpKind::gemm, {2 * b * s * d * d, e * (2 * b * s * d + d * d)}},
  };
  std::vector<lab03::ComponentProfile> profile;
  for (const auto& c : components) {
    profile.push_back({c.name, c.kind, roof_time_ms(c.cost, peak, bandwidth), c.cost});
  }
  return profile;
}

// ================================================================================================
// Costs, rooflines and placements at other shapes, on other GPUs
// ================================================================================================

GPULAB_GRADED_TEST(
    Lab03Hidden, CostsRooflinesAndPlacementsAtOtherShapesAndGpus, 5,
    "gemm_cost softmax_cost elementwise_cost layernorm_cost roofline_for ridge_point "
    "attainable_flop_s modeled_time_ms place_on_roofline",
    "costs, rooflines and placements at shapes and GPUs the public tests do not use") {
  // Op costs at shapes the public suite does not use: a GEMV, skinny and odd GEMMs, a long k.
  struct GemmShape {
    std::int64_t m, n, k;
  };
  const GemmShape gemms[] = {{8192, 1, 4096}, {1, 4096, 8192}, {1000, 3, 77}, {3, 5, 100003}};
  for (const GemmShape& s : gemms) {
    for (const Precision precision : kPrecisions) {
      EXPECT_TRUE(same_cost(expected_gemm_cost(s.m, s.n, s.k, precision),
                            lab03::gemm_cost(s.m, s.n, s.k, precision)))
          << "gemm_cost(" << s.m << ", " << s.n << ", " << s.k << ", " << precision_name(precision)
          << ")";
    }
  }
  for (const Precision precision : {Precision::bf16, Precision::tf32}) {
    const double size = bytes_per_element(precision);
    // Softmax over a vocabulary-wide row (50257 columns) and an odd shape.
    const std::int64_t softmax_shapes[][2] = {{1, 50257}, {37, 4099}};
    for (const auto& [rows, cols] : softmax_shapes) {
      const double elements = double(rows) * double(cols);
      EXPECT_TRUE(same_cost({5 * elements, 2 * elements * size},
                            lab03::softmax_cost(rows, cols, precision)))
          << "softmax_cost(" << rows << ", " << cols << ", " << precision_name(precision) << ")";
    }
    // A fused three-input op (2.5 flops per element), a GELU-like op (8 flops, one input), a fill.
    const double n = 1000003;
    EXPECT_TRUE(
        same_cost({n * 2.5, 4 * n * size}, lab03::elementwise_cost(1000003, 3, 2.5, precision)))
        << "elementwise_cost(1000003, inputs 3, 2.5 flops, " << precision_name(precision) << ")";
    EXPECT_TRUE(same_cost({8 * 1048576.0, 2 * 1048576.0 * size},
                          lab03::elementwise_cost(1048576, 1, 8, precision)))
        << "elementwise_cost(2^20, inputs 1, 8 flops, " << precision_name(precision) << ")";
    EXPECT_TRUE(same_cost({0, 17 * size}, lab03::elementwise_cost(17, 0, 0, precision)))
        << "elementwise_cost(17, inputs 0, 0 flops, " << precision_name(precision)
        << "): a fill writes one array";
    // Layernorm at odd widths, and a single element (gamma and beta still read once).
    const std::int64_t layernorm_shapes[][2] = {{257, 769}, {1, 1}};
    for (const auto& [rows, cols] : layernorm_shapes) {
      const double r = double(rows), c = double(cols);
      EXPECT_TRUE(same_cost({8 * r * c, (2 * r * c + 2 * c) * size},
                            lab03::layernorm_cost(rows, cols, precision)))
          << "layernorm_cost(" << rows << ", " << cols << ", " << precision_name(precision) << ")";
    }
  }

  // Rooflines, ridges, attainable FLOP/s and roof times of other GPUs at every precision they have.
  const OpCost ops[] = {
      {2 * 8192.0 * 4096, (8192.0 * 4096 + 4096 + 8192) * 2},  // GEMV in BF16: memory
      {2 * 8192.0 * 8192 * 8192, 3 * 8192.0 * 8192 * 2},       // 8192^3 in FP16: compute
      {0, 17 * 4.0},                                           // a tiny fill
  };
  int checked = 0;
  for (const std::string_view name : kHiddenSpecNames) {
    const GpuSpec spec = spec_named(name);
    for (const Precision precision : kPrecisions) {
      const double peak = peak_of(spec, precision);
      const std::string context = spec.name + " " + precision_name(precision);
      if (!(peak > 0)) {
        std::string message;
        EXPECT_TRUE(
            throws_invalid_argument([&] { (void)lab03::roofline_for(spec, precision); }, &message))
            << "roofline_for(" << context << "): the GPU has no such peak";
        EXPECT_NE(message.find(spec.name), std::string::npos)
            << context << ": the message names the GPU; it was: " << message;
        const std::vector<std::string> names = precision_names(precision);
        EXPECT_TRUE(std::any_of(names.begin(), names.end(),
                                [&](const std::string& candidate) {
                                  return lower(message).find(candidate) != std::string::npos;
                                }))
            << context << ": the message names the precision; it was: " << message;
        continue;
      }
      const double bandwidth = bandwidth_of(spec);
      const lab03::Roofline roof = lab03::roofline_for(spec, precision);
      EXPECT_TRUE(near_rel(peak, roof.peak_flop_s)) << context << ": peak_flop_s";
      EXPECT_TRUE(near_rel(bandwidth, roof.bandwidth_bytes_s)) << context << ": bandwidth_bytes_s";
      const lab03::Roofline exact{peak, bandwidth};
      const double ridge = peak / bandwidth;
      EXPECT_TRUE(near_rel(ridge, lab03::ridge_point(exact))) << context << ": ridge point";
      for (const double intensity : {0.5, ridge / 3, ridge * 1.5, 4096.0}) {
        EXPECT_TRUE(near_rel(std::min(peak, intensity * bandwidth),
                             lab03::attainable_flop_s(exact, intensity)))
            << context << ", intensity " << intensity << ": attainable";
      }
      for (const OpCost& op : ops) {
        EXPECT_TRUE(near_rel(roof_time_ms(op, peak, bandwidth), lab03::modeled_time_ms(op, exact)))
            << context << ", " << describe(op) << ": modeled time";
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18) << "rooflines checked (5 GPUs, V100 without TF32 and BF16)";

  // Placements: a BF16 GEMV on L4 at 30% of its roof (memory-bound), an FP16 8192^3 GEMM on V100
  // at 70% (compute-bound), a fill on H200 faster than its roof (not clamped).
  struct Case {
    std::string_view spec;
    Precision precision;
    OpCost cost;
    double fraction;
    BoundKind bound;
  };
  const Case cases[] = {{"l4", Precision::bf16, ops[0], 0.3, BoundKind::memory},
                        {"v100", Precision::fp16, ops[1], 0.7, BoundKind::compute},
                        {"h200", Precision::fp32, {0, 4e9}, 1.25, BoundKind::memory}};
  for (const Case& c : cases) {
    const GpuSpec spec = spec_named(c.spec);
    const double peak = peak_of(spec, c.precision);
    const double bandwidth = bandwidth_of(spec);
    const double time_ms = roof_time_ms(c.cost, peak, bandwidth) / c.fraction;
    const std::string context = describe(c.cost) + " " + precision_name(c.precision) + " on " +
                                spec.name + " in " + std::to_string(time_ms) + " ms";
    const lab03::Placement got = lab03::place_on_roofline(c.cost, time_ms, {peak, bandwidth});
    const double intensity = c.cost.flops / c.cost.bytes;
    EXPECT_TRUE(near_rel(intensity, got.intensity_flop_per_byte)) << context << ": intensity";
    EXPECT_TRUE(near_rel(c.cost.flops / (time_ms * 1e-3), got.achieved_flop_s))
        << context << ": achieved";
    EXPECT_TRUE(near_rel(std::min(peak, intensity * bandwidth), got.attainable_flop_s))
        << context << ": attainable";
    EXPECT_TRUE(near_rel(c.fraction, got.fraction_of_roof)) << context << ": fraction of roof";
    EXPECT_EQ(bound_name(got.bound), bound_name(c.bound)) << context;
  }
}

// ================================================================================================
// Bottlenecks at half precision and of measured profiles, on other GPUs
// ================================================================================================

GPULAB_GRADED_TEST(Lab03Hidden, BottlenecksAtHalfPrecisionAndOfMeasuredProfiles, 5,
                   "identify_bottleneck",
                   "bottlenecks at half precision and of measured profiles") {
  // Attention with batch 2, d_model 2048, 32 heads, FP16/BF16 elements, on the tensor roofs.
  const GpuSpec h200 = spec_named("h200");
  const GpuSpec l4 = spec_named("l4");
  const GpuSpec v100 = spec_named("v100");
  const auto shape = [](double seq_len) { return AttentionShape{2, seq_len, 2048, 32}; };

  // Hand checks of the derivation. H200 BF16 (989.4 TFLOP/s, 4800 GB/s): at S = 1024 the
  // softmax's 268 MB (0.056 ms) already beats the 5.2 GFLOP QKV projection (0.052 ms), far
  // earlier than in FP32. L4 BF16 (121 TFLOP/s, 300 GB/s, ridge 403 FLOP/byte): at S = 128 the
  // QKV projection is the bottleneck and, being skinny, memory-bound.
  {
    const double peak = peak_of(h200, Precision::bf16), bandwidth = bandwidth_of(h200);
    const auto profile = modeled_attention(shape(1024), 2, peak, bandwidth);
    const ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
    ASSERT_TRUE(derived_as(profile, expected, "Softmax", BoundKind::memory));
    expect_bottleneck(profile, expected, lab03::identify_bottleneck(profile, {peak, bandwidth}),
                      "attention B 2, S 1024 on H200 SXM BF16");
  }
  {
    const double peak = peak_of(l4, Precision::bf16), bandwidth = bandwidth_of(l4);
    const auto profile = modeled_attention(shape(128), 2, peak, bandwidth);
    const ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
    ASSERT_TRUE(derived_as(profile, expected, "QKV Projection", BoundKind::memory));
    const lab03::Bottleneck got = lab03::identify_bottleneck(profile, {peak, bandwidth});
    expect_bottleneck(profile, expected, got, "attention B 2, S 128 on L4 BF16");
    EXPECT_NE(got.recommendation.find("skinny"), std::string_view::npos)
        << "a memory-bound GEMM calls for fusion or batching skinny GEMMs; got: "
        << got.recommendation;
  }

  // The crossover at FP16 and BF16 on every hidden GPU that has the precision.
  for (const GpuRoof& gpu : roofs_with_peak(kHiddenSpecNames, {Precision::fp16, Precision::bf16})) {
    for (const double seq_len : {128.0, 256.0, 1024.0, 4096.0, 16384.0}) {
      const auto profile = modeled_attention(shape(seq_len), 2, gpu.peak, gpu.bandwidth);
      const ExpectedBottleneck expected = derive_bottleneck(profile, gpu.peak, gpu.bandwidth);
      expect_bottleneck(profile, expected,
                        lab03::identify_bottleneck(profile, {gpu.peak, gpu.bandwidth}),
                        "attention B 2, S " + std::to_string(int(seq_len)) + " on " +
                            gpu.spec.name + " " + precision_name(gpu.precision));
    }
  }

  // Measured profiles of a decode step on V100 FP16 (900 GB/s): 8 tokens through a 4096 -> 16384
  // MLP. Times are what was "measured", not the roofs.
  const double peak = peak_of(v100, Precision::fp16);
  const double bandwidth = bandwidth_of(v100);
  const double tokens = 8, width = 4096, hidden = 16384;
  const OpCost norm{8 * tokens * width, (2 * tokens * width + 2 * width) * 2};
  const OpCost up{2 * tokens * width * hidden,
                  (tokens * width + width * hidden + tokens * hidden) * 2};
  const OpCost gelu{8 * tokens * hidden, 2 * tokens * hidden * 2};
  const OpCost down{2 * tokens * hidden * width,
                    (tokens * hidden + hidden * width + tokens * width) * 2};
  std::vector<lab03::ComponentProfile> profile = {
      {"RMSNorm", OpKind::layernorm, 0.011, norm},
      {"Up projection", OpKind::gemm, roof_time_ms(up, peak, bandwidth) / 0.9, up},
      {"GELU", OpKind::elementwise, 0.009, gelu},
      {"Down projection", OpKind::gemm, roof_time_ms(down, peak, bandwidth) / 0.95, down},
  };
  // Both projections stream 134 MB of weights; the up projection, at 90% of the DRAM roof, is
  // slower than the down projection at 95%: memory-bound, the bottleneck.
  ExpectedBottleneck expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 1u);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::memory));
  expect_bottleneck(profile, expected, lab03::identify_bottleneck(profile, {peak, bandwidth}),
                    "decode MLP (8 tokens) on V100 FP16");

  // With the weights resident (the GEMMs now take 5 us each), the GELU at 45 us is slowest: its
  // 524 kB roof is 0.58 us, about 1% of its time, and it is short: latency-bound.
  profile[1].time_ms = 0.005;
  profile[3].time_ms = 0.005;
  profile[2].time_ms = 0.045;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 2u);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::latency));
  expect_bottleneck(profile, expected, lab03::identify_bottleneck(profile, {peak, bandwidth}),
                    "GELU at 45 us, ~1% of its roof, on V100 FP16");

  // Just as short but at 60% of its roof: memory-bound, not latency (the rule needs both).
  profile[2].time_ms = roof_time_ms(gelu, peak, bandwidth) / 0.6;
  profile[0].time_ms = 0.0005;
  profile[1].time_ms = 0.0004;
  profile[3].time_ms = 0.0004;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 2u);
  ASSERT_EQ(bound_name(expected.bound), bound_name(BoundKind::memory));
  expect_bottleneck(profile, expected, lab03::identify_bottleneck(profile, {peak, bandwidth}),
                    "GELU at 60% of its roof on V100 FP16");

  // A tie of the two GEMMs after the GELU: the first one (index 1) wins.
  profile[1].time_ms = 0.5;
  profile[3].time_ms = 0.5;
  expected = derive_bottleneck(profile, peak, bandwidth);
  ASSERT_EQ(expected.index, 1u);
  expect_bottleneck(profile, expected, lab03::identify_bottleneck(profile, {peak, bandwidth}),
                    "two GEMMs tied at 0.5 ms on V100 FP16");
}

}  // namespace
