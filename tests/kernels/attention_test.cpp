// The attention forward pass (kernels/attention/) against its CPU reference, component by
// component and end to end, on both backends; on sim also under the reverse and a shuffled thread
// schedule, so a missing barrier in the tiled GEMM or the softmax reductions cannot pass by luck.
// Outputs are poisoned (0xff bytes: NaN) before every run, so an unwritten element fails.
//
// Tolerance: the numeric policy (gpulab/core/numeric.hpp, docs/grading.md). A component's output,
// accumulated over k terms, gets tolerance_for(fp32, k) with atol scaled by the rms of its
// reference; the forward pass the sum of the five (forward_tolerance, kernels/attention).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/memory.hpp"
#include "numeric_check.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {

// How gtest prints a configuration in a failure message (found by argument-dependent lookup, so
// it lives in the config's namespace).
void PrintTo(const AttentionConfig& config, std::ostream* out) {
  *out << "{batch " << config.batch << ", seq_len " << config.seq_len << ", d_model "
       << config.d_model << ", heads " << config.heads << (config.causal ? ", causal}" : "}");
}

namespace {

using gpulab::testing::all_close;
using gpulab::testing::for_each_schedule;
using gpulab::testing::poison;

// The tolerance of a component's output accumulated over k terms: fp32's, times sqrt(k), with
// atol relative to the reference's rms (elements that cancel to near zero are held to the
// tensor's typical magnitude, not to their own).
Tolerance stage_tolerance(const std::vector<float>& expected, int k) {
  return scaled(tolerance_for(DType::fp32, k), rms(expected));
}

// Values the test computes by hand in double, against the float the reference rounds them to:
// one fp32 rounding, fp32's base tolerance.
::testing::AssertionResult equal_to_float(const std::vector<double>& expected,
                                          const std::vector<float>& got) {
  return all_close(expected, std::vector<double>(got.begin(), got.end()),
                   tolerance_for(DType::fp32));
}

// Every row of probs sums to 1; with causal, every entry right of the diagonal is exactly 0.
::testing::AssertionResult valid_probabilities(const AttentionConfig& config,
                                               const std::vector<float>& probs) {
  const auto s = static_cast<std::size_t>(config.seq_len);
  const double tolerance = tolerance_for(DType::fp32, config.seq_len).allowed(1.0);  // S terms
  for (std::size_t row = 0; row * s < probs.size(); ++row) {
    double sum = 0.0;
    for (std::size_t j = 0; j < s; ++j) {
      const float p = probs[row * s + j];
      if (config.causal && j > row % s && p != 0.0f) {
        return ::testing::AssertionFailure()
               << "row " << row << " column " << j << " (masked): expected exactly 0, got " << p;
      }
      sum += double(p);
    }
    if (!(std::fabs(sum - 1.0) <= tolerance)) {
      return ::testing::AssertionFailure()
             << "row " << row << ": expected the sum 1, got " << sum << ", tolerance " << tolerance;
    }
  }
  return ::testing::AssertionSuccess();
}

std::string validation_error(const AttentionConfig& config) {
  try {
    config.validate();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

// ------------------------------------------------------------------------------------------------
// Configuration, names, cost (host only)
// ------------------------------------------------------------------------------------------------

TEST(AttentionConfig, HeadDimIsModelWidthOverHeads) {
  EXPECT_EQ((AttentionConfig{1, 128, 128, 4, false}.head_dim()), 32);
  EXPECT_EQ((AttentionConfig{2, 37, 48, 3, true}.head_dim()), 16);
  EXPECT_EQ((AttentionConfig{1, 1, 8, 8, false}.head_dim()), 1);
}

TEST(AttentionConfig, ValidateAcceptsPositiveSizesWithWholeHeads) {
  EXPECT_NO_THROW(AttentionConfig{}.validate());
  EXPECT_NO_THROW((AttentionConfig{2, 37, 48, 3, true}.validate()));
  EXPECT_NO_THROW((AttentionConfig{1, 1, 1, 1, false}.validate()));
}

TEST(AttentionConfig, ValidateNamesTheFieldThatIsNotPositive) {
  EXPECT_NE(validation_error({0, 128, 128, 4, false}).find("batch"), std::string::npos);
  EXPECT_NE(validation_error({1, -3, 128, 4, false}).find("seq_len"), std::string::npos);
  EXPECT_NE(validation_error({1, 128, 0, 4, false}).find("d_model"), std::string::npos);
  EXPECT_NE(validation_error({1, 128, 128, 0, false}).find("heads"), std::string::npos);
  EXPECT_NE(validation_error({1, 128, 128, -4, false}).find("heads"), std::string::npos);
}

TEST(AttentionConfig, ValidateRejectsAModelWidthThatHeadsDoNotDivide) {
  const std::string error = validation_error({1, 16, 50, 3, false});
  EXPECT_NE(error.find("d_model (50) must be divisible by heads (3)"), std::string::npos) << error;
}

TEST(AttentionComponents, NamesAreTheNvtxRangeNames) {
  EXPECT_EQ(component_name(Component::qkv_projection), "QKV Projection");
  EXPECT_EQ(component_name(Component::scores), "Score Computation");
  EXPECT_EQ(component_name(Component::softmax), "Softmax");
  EXPECT_EQ(component_name(Component::weighted_sum), "Weighted Sum");
  EXPECT_EQ(component_name(Component::output_projection), "Output Projection");
}

TEST(AttentionComponents, AllComponentsListsTheFiveInExecutionOrder) {
  const auto components = all_components();
  ASSERT_EQ(components.size(), std::size_t(kComponentCount));
  EXPECT_EQ(components[0], Component::qkv_projection);
  EXPECT_EQ(components[1], Component::scores);
  EXPECT_EQ(components[2], Component::softmax);
  EXPECT_EQ(components[3], Component::weighted_sum);
  EXPECT_EQ(components[4], Component::output_projection);
}

TEST(AttentionCost, ComponentCostsMatchTheFormulasEvaluatedByHand) {
  // B = 2, S = 64, D = 128, H = 4, dh = 32; B*S = 128 tokens, B*H*S*S = 8 * 4096 = 32768.
  const AttentionConfig config{2, 64, 128, 4, false};
  struct Expected {
    Component component;
    double flops, bytes;
  };
  const Expected expected[] = {
      // 2 * 128 * 128 * 384 = 12,582,912;  4 * (16384 + 49152 + 49152) = 4 * 114688 = 458,752
      {Component::qkv_projection, 12582912, 458752},
      // 2 * 32768 * 32 = 2,097,152;  4 * (2 * 16384 + 32768) = 4 * 65536 = 262,144
      {Component::scores, 2097152, 262144},
      // 5 * 32768 = 163,840;  4 * 2 * 32768 = 262,144
      {Component::softmax, 163840, 262144},
      // 2 * 32768 * 32 = 2,097,152;  4 * (32768 + 16384 + 16384) = 262,144
      {Component::weighted_sum, 2097152, 262144},
      // 2 * 128 * 128 * 128 = 4,194,304;  4 * (16384 + 16384 + 16384) = 196,608
      {Component::output_projection, 4194304, 196608},
  };
  for (const auto& [component, flops, bytes] : expected) {
    SCOPED_TRACE(std::string(component_name(component)));
    const gpulab::OpCost cost = component_cost(config, component);
    EXPECT_EQ(cost.flops, flops);
    EXPECT_EQ(cost.bytes, bytes);
  }
}

TEST(AttentionCost, ForwardCostIsTheSumOfTheFiveComponents) {
  // Same config: 12,582,912 + 2,097,152 + 163,840 + 2,097,152 + 4,194,304 = 21,135,360 FLOPs;
  // 458,752 + 3 * 262,144 + 196,608 = 1,441,792 bytes.
  const gpulab::OpCost cost = forward_cost({2, 64, 128, 4, false});
  EXPECT_EQ(cost.flops, 21135360.0);
  EXPECT_EQ(cost.bytes, 1441792.0);
}

TEST(AttentionCost, CausalMaskingDoesNotChangeTheCost) {
  for (const Component component : all_components()) {
    const gpulab::OpCost full = component_cost({2, 37, 48, 3, false}, component);
    const gpulab::OpCost causal = component_cost({2, 37, 48, 3, true}, component);
    EXPECT_EQ(full.flops, causal.flops) << component_name(component);
    EXPECT_EQ(full.bytes, causal.bytes) << component_name(component);
  }
}

TEST(AttentionCost, RejectsAnInvalidConfig) {
  EXPECT_THROW((void)component_cost({1, 16, 50, 3, false}, Component::softmax),
               std::invalid_argument);
  EXPECT_THROW((void)forward_cost({0, 16, 48, 3, false}), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// Tolerance of the forward pass (host only)
// ------------------------------------------------------------------------------------------------

TEST(AttentionTolerance, ForwardToleranceSumsTheFiveComponents) {
  // D = 64, S = 32, dh = 16: sqrt(64) + sqrt(16) + 2 * sqrt(32) + sqrt(64) = 20 + 8 sqrt(2)
  // times fp32's base (rtol 1.3e-6, atol 1e-5), atol times the scale.
  const Tolerance t = forward_tolerance({1, 32, 64, 4, false}, 0.5);
  const double lengths = 20 + 8 * std::sqrt(2.0);
  EXPECT_DOUBLE_EQ(t.rtol, 1.3e-6 * lengths);
  EXPECT_DOUBLE_EQ(t.atol, 1e-5 * lengths * 0.5);
  // Neither the batch nor causal masking changes a sum's length.
  const Tolerance same = forward_tolerance({3, 32, 64, 4, true}, 0.5);
  EXPECT_DOUBLE_EQ(same.rtol, t.rtol);
  EXPECT_DOUBLE_EQ(same.atol, t.atol);
}

TEST(AttentionTolerance, RejectsAnInvalidConfig) {
  EXPECT_THROW((void)forward_tolerance({1, 16, 50, 3, false}, 1.0), std::invalid_argument);
}

TEST(AttentionShapes, NameWhereAnElementOfYAndAttnIs) {
  const AttentionConfig config{2, 37, 48, 3, false};  // 3552 elements, head_dim 16
  // Element 1 * 37 * 48 + 5 * 48 + 35: batch 1, token 5, column 35, which is head 2's column 3.
  const std::size_t index = 1 * 37 * 48 + 5 * 48 + 35;
  EXPECT_EQ(coordinates(output_shape(config), index), "batch 1, row 5, column 35");
  EXPECT_EQ(coordinates(heads_shape(config), index), "batch 1, row 5, head 2, column 3");
  EXPECT_EQ(coordinates(output_shape(config), 2 * 37 * 48), "");  // past the end
}

// ------------------------------------------------------------------------------------------------
// Inputs and CPU references (host only)
// ------------------------------------------------------------------------------------------------

TEST(AttentionInputs, AreDeterministicSizedAndScaled) {
  const AttentionConfig config{2, 37, 48, 3, false};
  const AttentionInputs a = make_attention_inputs(config, 7);
  const AttentionInputs b = make_attention_inputs(config, 7);
  const AttentionInputs c = make_attention_inputs(config, 8);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.w_qkv, b.w_qkv);
  EXPECT_EQ(a.w_out, b.w_out);
  EXPECT_NE(a.x, c.x);
  ASSERT_EQ(a.x.size(), std::size_t(2 * 37 * 48));
  ASSERT_EQ(a.w_qkv.size(), std::size_t(48 * 144));
  ASSERT_EQ(a.w_out.size(), std::size_t(48 * 48));
  const auto max_abs = [](const std::vector<float>& values) {
    float max = 0.0f;
    for (const float value : values) {
      max = std::max(max, std::fabs(value));
    }
    return max;
  };
  const float weight_bound = 1.0f / std::sqrt(48.0f);
  EXPECT_LE(max_abs(a.x), 1.0f);
  EXPECT_GT(max_abs(a.x), 0.9f);  // uniform over [-1, 1], not a narrower range
  EXPECT_LE(max_abs(a.w_qkv), weight_bound);
  EXPECT_GT(max_abs(a.w_qkv), 0.9f * weight_bound);
  EXPECT_LE(max_abs(a.w_out), weight_bound);
  EXPECT_GT(max_abs(a.w_out), 0.9f * weight_bound);
}

TEST(AttentionInputs, RejectAnInvalidConfig) {
  EXPECT_THROW((void)make_attention_inputs({1, 16, 50, 3, false}, 1), std::invalid_argument);
}

// Hand-computable inputs: x as given, w_qkv = [I | I | I] (so Q = K = V = x), w_out = I (so
// y = attn).
AttentionInputs identity_inputs(int d, std::vector<float> x) {
  AttentionInputs inputs{std::move(x), std::vector<float>(std::size_t(d) * 3 * d, 0.0f),
                         std::vector<float>(std::size_t(d) * d, 0.0f)};
  for (int i = 0; i < d; ++i) {
    for (int part = 0; part < 3; ++part) {
      inputs.w_qkv[std::size_t(i) * 3 * d + std::size_t(part) * d + i] = 1.0f;
    }
    inputs.w_out[std::size_t(i) * d + i] = 1.0f;
  }
  return inputs;
}

// softmax([a, b])[0].
double first_of_softmax2(double a, double b) {
  return 1.0 / (1.0 + std::exp(b - a));
}

TEST(AttentionReference, EveryStageMatchesAHandComputedSingleHeadExample) {
  // S = 2, D = 2, H = 1: tokens e0, e1. Scores = I / sqrt(2); each token attends to itself with
  // weight t = softmax([1/sqrt(2), 0])[0] and to the other with 1 - t; y = attn = probs.
  const AttentionConfig config{1, 2, 2, 1, false};
  const AttentionInputs inputs = identity_inputs(2, {1, 0, 0, 1});
  const AttentionStages stages = attention_reference_stages(config, inputs);
  const double a = 1.0 / std::sqrt(2.0);
  const double t = first_of_softmax2(a, 0.0);
  EXPECT_TRUE(equal_to_float({1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1}, stages.qkv));
  EXPECT_TRUE(equal_to_float({a, 0, 0, a}, stages.scores));
  EXPECT_TRUE(equal_to_float({t, 1 - t, 1 - t, t}, stages.probs));
  EXPECT_TRUE(equal_to_float({t, 1 - t, 1 - t, t}, stages.attn));
  EXPECT_TRUE(equal_to_float({t, 1 - t, 1 - t, t}, stages.y));
  EXPECT_EQ(attention_reference(config, inputs), stages.y);
}

TEST(AttentionReference, CausalMaskLetsTheFirstTokenSeeOnlyItself) {
  const AttentionConfig config{1, 2, 2, 1, true};
  const AttentionInputs inputs = identity_inputs(2, {1, 0, 0, 1});
  const AttentionStages stages = attention_reference_stages(config, inputs);
  const double a = 1.0 / std::sqrt(2.0);
  const double t = first_of_softmax2(a, 0.0);
  EXPECT_TRUE(equal_to_float({a, 0, 0, a}, stages.scores));  // scores are never masked
  EXPECT_TRUE(equal_to_float({1, 0, 1 - t, t}, stages.probs));
  EXPECT_TRUE(equal_to_float({1, 0, 1 - t, t}, stages.y));
}

TEST(AttentionReference, HeadsUseTheirOwnColumnsAndAreConcatenated) {
  // S = 2, D = 2, H = 2, dh = 1, scale 1: head 0 sees column 0 of x ([1, 3]), head 1 column 1
  // ([2, 4]). Head 0: scores [[1, 3], [3, 9]], attn[:, 0] = p . [1, 3]; head 1: scores
  // [[4, 8], [8, 16]], attn[:, 1] = p . [2, 4].
  const AttentionConfig config{1, 2, 2, 2, false};
  const AttentionInputs inputs = identity_inputs(2, {1, 2, 3, 4});
  const AttentionStages stages = attention_reference_stages(config, inputs);
  EXPECT_TRUE(equal_to_float({1, 3, 3, 9, 4, 8, 8, 16}, stages.scores));
  const double p00 = first_of_softmax2(1, 3), p01 = first_of_softmax2(3, 9);
  const double p10 = first_of_softmax2(4, 8), p11 = first_of_softmax2(8, 16);
  EXPECT_TRUE(
      equal_to_float({p00, 1 - p00, p01, 1 - p01, p10, 1 - p10, p11, 1 - p11}, stages.probs));
  const std::vector<double> attn{p00 * 1 + (1 - p00) * 3, p10 * 2 + (1 - p10) * 4,
                                 p01 * 1 + (1 - p01) * 3, p11 * 2 + (1 - p11) * 4};
  EXPECT_TRUE(equal_to_float(attn, stages.attn));
  EXPECT_TRUE(equal_to_float(attn, stages.y));
}

TEST(AttentionReference, ComponentReferencesRejectInputsOfTheWrongSize) {
  const AttentionConfig config{1, 2, 2, 1, false};
  const std::vector<float> few(3);
  const std::vector<float> qkv(12);
  EXPECT_THROW((void)qkv_projection_reference(config, few, std::vector<float>(12)),
               std::invalid_argument);
  EXPECT_THROW((void)scores_reference(config, few), std::invalid_argument);
  EXPECT_THROW((void)softmax_reference(config, few), std::invalid_argument);
  EXPECT_THROW((void)weighted_sum_reference(config, few, qkv), std::invalid_argument);
  EXPECT_THROW((void)output_projection_reference(config, std::vector<float>(4), few),
               std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// Buffers
// ------------------------------------------------------------------------------------------------

static_assert(!std::is_copy_constructible_v<AttentionBuffers>, "AttentionBuffers is move-only");
static_assert(std::is_nothrow_move_constructible_v<AttentionBuffers>);

TEST(AttentionBuffers, HoldEveryTensorOfEveryLevelByDefault) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionBuffers buffers({2, 37, 48, 3, false});
  // 74 tokens: x, attn, y 74 * 48 = 3552; w_qkv 48 * 144 = 6912; qkv 74 * 144 = 10656;
  // scores, probs 2 * 3 * 37 * 37 = 8214; w_out 48 * 48 = 2304.
  EXPECT_EQ(buffers.x.size(), 3552u);
  EXPECT_EQ(buffers.w_qkv.size(), 6912u);
  EXPECT_EQ(buffers.qkv.size(), 10656u);
  EXPECT_EQ(buffers.scores.size(), 8214u);
  EXPECT_EQ(buffers.probs.size(), 8214u);
  EXPECT_EQ(buffers.attn.size(), 3552u);
  EXPECT_EQ(buffers.w_out.size(), 2304u);
  EXPECT_EQ(buffers.y.size(), 3552u);
  EXPECT_EQ(buffers.qkv_half.size(), 10656u) << "level 4's FP16 copy of qkv";
  // 3 * 3552 + 6912 + 10656 + 2 * 8214 + 2304 = 46956 floats, and 10656 halves.
  EXPECT_EQ(buffers.bytes(), 46956u * 4u + 10656u * 2u);
}

TEST(AttentionBuffers, RejectAnInvalidConfigBeforeAllocating) {
  EXPECT_THROW(AttentionBuffers({1, 16, 50, 3, false}), std::invalid_argument);
}

TEST(AttentionBuffers, UploadCopiesTheInputsToTheDevice) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{1, 5, 8, 2, false};
  const AttentionInputs inputs = make_attention_inputs(config, 3);
  AttentionBuffers buffers(config);
  upload(inputs, buffers);
  EXPECT_EQ(buffers.x.to_vector(), inputs.x);
  EXPECT_EQ(buffers.w_qkv.to_vector(), inputs.w_qkv);
  EXPECT_EQ(buffers.w_out.to_vector(), inputs.w_out);
}

TEST(AttentionBuffers, UploadRejectsInputsOfAnotherConfig) {
  GPULAB_REQUIRE_DEVICE();
  AttentionBuffers buffers({1, 5, 8, 2, false});
  EXPECT_THROW(upload(make_attention_inputs({1, 6, 8, 2, false}, 3), buffers),
               std::invalid_argument);
}

TEST(AttentionLaunch, RejectsBuffersOfAnotherConfigAndInvalidConfigs) {
  GPULAB_REQUIRE_DEVICE();
  AttentionBuffers buffers({1, 5, 8, 2, false});
  for (const Component component : all_components()) {
    SCOPED_TRACE(std::string(component_name(component)));
    EXPECT_THROW(run_component(component, {1, 6, 8, 2, false}, buffers, nullptr),
                 std::invalid_argument);
    EXPECT_THROW(run_component(component, {1, 5, 8, 3, false}, buffers, nullptr),
                 std::invalid_argument);
  }
  EXPECT_THROW(attention_forward({2, 5, 8, 2, false}, buffers, nullptr), std::invalid_argument);
  AttentionBuffers moved = std::move(buffers);  // the moved-from buffers are empty
  EXPECT_THROW(attention_forward({1, 5, 8, 2, false}, buffers, nullptr), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// Kernels against the reference
// ------------------------------------------------------------------------------------------------

class AttentionKernels : public ::testing::TestWithParam<AttentionConfig> {};

std::string config_name(const ::testing::TestParamInfo<AttentionConfig>& info) {
  const AttentionConfig& c = info.param;
  return "B" + std::to_string(c.batch) + "_S" + std::to_string(c.seq_len) + "_D" +
         std::to_string(c.d_model) + "_H" + std::to_string(c.heads) + (c.causal ? "_causal" : "");
}

// The device buffer a component writes, its reference value and its accumulation length.
struct StageOutput {
  DeviceBuffer<float>* buffer;
  const std::vector<float>* expected;
  int k;
};

StageOutput output_of(Component component, const AttentionConfig& config, AttentionBuffers& buffers,
                      const AttentionStages& stages) {
  switch (component) {
    case Component::qkv_projection:
      return {&buffers.qkv, &stages.qkv, config.d_model};
    case Component::scores:
      return {&buffers.scores, &stages.scores, config.head_dim()};
    case Component::softmax:
      return {&buffers.probs, &stages.probs, config.seq_len};
    case Component::weighted_sum:
      return {&buffers.attn, &stages.attn, config.seq_len};
    case Component::output_projection:
      return {&buffers.y, &stages.y, config.d_model};
  }
  throw std::invalid_argument("unknown component");
}

TEST_P(AttentionKernels, EveryComponentMatchesTheCpuReferenceOnReferenceInputs) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config = GetParam();
  const AttentionInputs inputs = make_attention_inputs(config, 11);
  const AttentionStages stages = attention_reference_stages(config, inputs);
  AttentionBuffers buffers(config);
  upload(inputs, buffers);
  // Each component reads the reference's previous stage, so its own error is measured alone.
  buffers.qkv.copy_from(stages.qkv);
  buffers.scores.copy_from(stages.scores);
  buffers.probs.copy_from(stages.probs);
  buffers.attn.copy_from(stages.attn);
  for (const Component component : all_components()) {
    SCOPED_TRACE(std::string(component_name(component)));
    const StageOutput out = output_of(component, config, buffers, stages);
    const Tolerance tolerance = stage_tolerance(*out.expected, out.k);
    for_each_schedule([&] {
      poison(*out.buffer);
      run_component(component, config, buffers, nullptr);
      EXPECT_TRUE(all_close(*out.expected, out.buffer->to_vector(), tolerance));
    });
    out.buffer->copy_from(*out.expected);  // the next component reads the reference again
  }
}

TEST_P(AttentionKernels, ForwardMatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config = GetParam();
  const AttentionInputs inputs = make_attention_inputs(config, 12);
  const AttentionStages stages = attention_reference_stages(config, inputs);
  AttentionBuffers buffers(config);
  upload(inputs, buffers);
  const Tolerance chain = forward_tolerance(config, rms(stages.y));
  for_each_schedule([&] {
    poison(buffers.qkv, buffers.scores, buffers.probs, buffers.attn, buffers.y);
    attention_forward(config, buffers, nullptr);
    EXPECT_TRUE(all_close(stages.y, buffers.y.to_vector(), chain, "y"));
    EXPECT_TRUE(valid_probabilities(config, buffers.probs.to_vector()));
  });
}

TEST_P(AttentionKernels, SoftmaxRowsSumToOneAndMaskedEntriesAreExactlyZero) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config = GetParam();
  const AttentionStages stages =
      attention_reference_stages(config, make_attention_inputs(config, 13));
  AttentionBuffers buffers(config);
  buffers.scores.copy_from(stages.scores);
  poison(buffers.probs);
  run_component(Component::softmax, config, buffers, nullptr);
  EXPECT_TRUE(valid_probabilities(config, buffers.probs.to_vector()));
}

TEST_P(AttentionKernels, SoftmaxIsStableForScoresFarFromZero) {
  // Shifted by +-1000, exp() of a raw score overflows to inf (or underflows to 0) in fp32; the
  // row maximum subtracted first keeps the result finite and equal to the reference's.
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config = GetParam();
  const AttentionStages stages =
      attention_reference_stages(config, make_attention_inputs(config, 14));
  AttentionBuffers buffers(config);
  for (const float shift : {1000.0f, -1000.0f}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    std::vector<float> shifted = stages.scores;
    for (float& score : shifted) {
      score += shift;
    }
    buffers.scores.copy_from(shifted);
    poison(buffers.probs);
    run_component(Component::softmax, config, buffers, nullptr);
    const std::vector<float> expected = softmax_reference(config, shifted);
    EXPECT_TRUE(
        all_close(expected, buffers.probs.to_vector(), stage_tolerance(expected, config.seq_len)));
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, AttentionKernels,
                         ::testing::Values(AttentionConfig{1, 32, 64, 4, false},
                                           AttentionConfig{2, 37, 48, 3, false},
                                           AttentionConfig{2, 37, 48, 3, true},
                                           AttentionConfig{1, 20, 24, 2, true}),
                         config_name);

TEST(AttentionKernels, CausalSoftmaxNeverReadsMaskedScores) {
  // Masked scores set to NaN: a kernel that reads them (even to multiply by 0) turns its row
  // into NaN.
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{2, 37, 48, 3, true};
  const AttentionStages stages =
      attention_reference_stages(config, make_attention_inputs(config, 15));
  std::vector<float> scores = stages.scores;
  const auto s = static_cast<std::size_t>(config.seq_len);
  for (std::size_t row = 0; row * s < scores.size(); ++row) {
    for (std::size_t j = row % s + 1; j < s; ++j) {
      scores[row * s + j] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  AttentionBuffers buffers(config);
  buffers.scores.copy_from(scores);
  const Tolerance tolerance = stage_tolerance(stages.probs, config.seq_len);
  for_each_schedule([&] {
    poison(buffers.probs);
    run_component(Component::softmax, config, buffers, nullptr);
    const std::vector<float> probs = buffers.probs.to_vector();
    EXPECT_TRUE(all_close(stages.probs, probs, tolerance));
    EXPECT_TRUE(valid_probabilities(config, probs));
  });
}

}  // namespace
}  // namespace gpulab::kernels
