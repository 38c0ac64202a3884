// Unit tests of the numeric policy (gpulab/core/numeric.hpp) and its test-support half
// (numeric_check.hpp): the tolerance table, the accumulation and magnitude adjustments, the
// comparison rules at their boundaries, the mismatch message, the gtest adaptor and NaN
// poisoning. Built per backend because poisoning fills device memory; the rest is host-only.
#include "gpulab/core/numeric.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "numeric_check.hpp"
#include "test_device.hpp"

namespace gpulab {
namespace {

using gpulab::testing::all_close;
using gpulab::testing::poison;
using gpulab::testing::poison_async;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ------------------------------------------------------------------------------------------------
// Tolerances
// ------------------------------------------------------------------------------------------------

TEST(NumericTolerance, BaseValuesArePyTorchAssertCloseDefaults) {
  EXPECT_EQ(tolerance_for(DType::fp32).rtol, 1.3e-6);
  EXPECT_EQ(tolerance_for(DType::fp32).atol, 1e-5);
  EXPECT_EQ(tolerance_for(DType::fp16).rtol, 1e-3);
  EXPECT_EQ(tolerance_for(DType::fp16).atol, 1e-5);
  EXPECT_EQ(tolerance_for(DType::bf16).rtol, 1.6e-2);
  EXPECT_EQ(tolerance_for(DType::bf16).atol, 1e-5);
  EXPECT_EQ(tolerance_for(DType::fp64).rtol, 1e-7);
  EXPECT_EQ(tolerance_for(DType::fp64).atol, 1e-7);
}

TEST(NumericTolerance, AllowedIsAtolPlusRtolTimesTheMagnitudeOfExpected) {
  const Tolerance t{0.25, 0.5};
  EXPECT_EQ(t.allowed(0.0), 0.5);
  EXPECT_EQ(t.allowed(2.0), 1.0);
  EXPECT_EQ(t.allowed(-2.0), 1.0);
  EXPECT_EQ(Tolerance{}.allowed(3.0), 0.0);  // the default is exact
}

TEST(NumericTolerance, SumAddsBothParts) {
  const Tolerance sum = Tolerance{0.25, 0.5} + Tolerance{0.125, 2.0};
  EXPECT_EQ(sum.rtol, 0.375);
  EXPECT_EQ(sum.atol, 2.5);
}

TEST(NumericTolerance, AccumulationScalesBothPartsBySqrtOfTheLength) {
  for (const DType dtype : {DType::fp64, DType::fp32, DType::fp16, DType::bf16}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    const Tolerance base = tolerance_for(dtype);
    const Tolerance one = tolerance_for(dtype, 1);
    EXPECT_EQ(one.rtol, base.rtol);
    EXPECT_EQ(one.atol, base.atol);
    const Tolerance four = tolerance_for(dtype, 4);
    EXPECT_DOUBLE_EQ(four.rtol, 2 * base.rtol);
    EXPECT_DOUBLE_EQ(four.atol, 2 * base.atol);
    const Tolerance k1024 = tolerance_for(dtype, 1024);
    EXPECT_DOUBLE_EQ(k1024.rtol, 32 * base.rtol);
    EXPECT_DOUBLE_EQ(k1024.atol, 32 * base.atol);
    const Tolerance big = tolerance_for(dtype, std::int64_t{1} << 40);  // beyond 32-bit lengths
    EXPECT_DOUBLE_EQ(big.rtol, double(1 << 20) * base.rtol);
  }
}

TEST(NumericTolerance, AccumulationLengthMustBePositive) {
  EXPECT_THROW((void)tolerance_for(DType::fp32, 0), std::invalid_argument);
  EXPECT_THROW((void)tolerance_for(DType::fp32, -5), std::invalid_argument);
}

TEST(NumericTolerance, ScaledMultipliesAtolOnly) {
  const Tolerance t = scaled(Tolerance{1e-6, 1e-5}, 4.0);
  EXPECT_EQ(t.rtol, 1e-6);
  EXPECT_EQ(t.atol, 4e-5);
  const Tolerance relative_only = scaled(Tolerance{1e-6, 1e-5}, 0.0);
  EXPECT_EQ(relative_only.rtol, 1e-6);
  EXPECT_EQ(relative_only.atol, 0.0);
}

TEST(NumericTolerance, ScaleMustBeFiniteAndNonNegative) {
  EXPECT_THROW((void)scaled(Tolerance{}, -1.0), std::invalid_argument);
  EXPECT_THROW((void)scaled(Tolerance{}, std::nan("")), std::invalid_argument);
  EXPECT_THROW((void)scaled(Tolerance{}, std::numeric_limits<double>::infinity()),
               std::invalid_argument);
}

TEST(NumericRms, IsTheRootMeanSquareOfTheFiniteElements) {
  EXPECT_DOUBLE_EQ(rms(std::vector<float>{3.0f, -4.0f}), std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(rms(std::vector<double>{3.0, -4.0}), std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(rms(std::vector<float>{3.0f, kNaN, -4.0f, kInf}), std::sqrt(12.5));
  EXPECT_EQ(rms(std::vector<float>{}), 0.0);
  EXPECT_EQ(rms(std::vector<double>{std::nan("")}), 0.0);
}

// ------------------------------------------------------------------------------------------------
// compare_close: the rules
// ------------------------------------------------------------------------------------------------

TEST(NumericCompare, EqualValuesPass) {
  const std::vector<float> values{0.0f, 1.5f, -2.25f};
  const CloseResult result = compare_close(values, values, Tolerance{});
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.size, 3u);
  EXPECT_EQ(result.mismatches, 0u);
  EXPECT_FALSE(result.all_zero);
  EXPECT_EQ(result.message, "");
}

TEST(NumericCompare, BoundaryIsInclusiveOnBothSides) {
  // expected 2: allowed 0.5 + 0.25 * 2 = 1 (every number exact in binary).
  const Tolerance t{0.25, 0.5};
  const std::vector<float> expected{2.0f};
  EXPECT_TRUE(compare_close(expected, std::vector<float>{3.0f}, t).ok);
  EXPECT_TRUE(compare_close(expected, std::vector<float>{1.0f}, t).ok);
  EXPECT_FALSE(compare_close(expected, std::vector<float>{std::nextafter(3.0f, 4.0f)}, t).ok);
  EXPECT_FALSE(compare_close(expected, std::vector<float>{std::nextafter(1.0f, 0.0f)}, t).ok);
}

TEST(NumericCompare, Fp32BaseToleranceAroundOne) {
  // allowed(1) = 1e-5 + 1.3e-6 = 1.13e-5.
  const std::vector<float> one{1.0f};
  EXPECT_TRUE(
      compare_close(one, std::vector<float>{1.0f + 1.1e-5f}, tolerance_for(DType::fp32)).ok);
  EXPECT_FALSE(
      compare_close(one, std::vector<float>{1.0f + 1.2e-5f}, tolerance_for(DType::fp32)).ok);
  EXPECT_TRUE(
      compare_close(one, std::vector<float>{1.0f - 1.1e-5f}, tolerance_for(DType::fp32)).ok);
}

TEST(NumericCompare, NanInGotFailsWhateverTheTolerance) {
  const Tolerance huge{1e30, 1e30};
  EXPECT_FALSE(compare_close(std::vector<float>{1.0f}, std::vector<float>{kNaN}, huge).ok);
  EXPECT_FALSE(compare_close(std::vector<double>{1.0}, std::vector<double>{std::nan("")}, huge).ok);
}

TEST(NumericCompare, InfInGotFailsUnlessExpectedIsTheSameInf) {
  const Tolerance huge{1e30, 1e30};
  EXPECT_FALSE(compare_close(std::vector<float>{1.0f}, std::vector<float>{kInf}, huge).ok);
  EXPECT_FALSE(compare_close(std::vector<float>{1.0f}, std::vector<float>{-kInf}, huge).ok);
  EXPECT_TRUE(compare_close(std::vector<float>{kInf}, std::vector<float>{kInf}, Tolerance{}).ok);
  EXPECT_TRUE(compare_close(std::vector<float>{-kInf}, std::vector<float>{-kInf}, Tolerance{}).ok);
  EXPECT_FALSE(compare_close(std::vector<float>{kInf}, std::vector<float>{-kInf}, huge).ok);
  EXPECT_FALSE(compare_close(std::vector<float>{kInf}, std::vector<float>{3e38f}, huge).ok);
}

TEST(NumericCompare, ExpectedNanPassesOnlyAgainstNan) {
  EXPECT_TRUE(compare_close(std::vector<float>{kNaN}, std::vector<float>{kNaN}, Tolerance{}).ok);
  const CloseResult result =
      compare_close(std::vector<float>{kNaN}, std::vector<float>{1.0f}, Tolerance{1e30, 1e30});
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.message, "non-finite expected value")) << result.message;
}

TEST(NumericCompare, SizeMismatchFailsAndSaysBothSizes) {
  const CloseResult result =
      compare_close(std::vector<float>{1, 2, 3}, std::vector<float>{1, 2}, Tolerance{1, 1});
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, "size: expected 3 elements, got 2");
  EXPECT_FALSE(compare_close(std::vector<double>{}, std::vector<double>{0.0}, Tolerance{}).ok);
}

TEST(NumericCompare, EmptyTensorsPass) {
  EXPECT_TRUE(compare_close(std::vector<float>{}, std::vector<float>{}, Tolerance{}).ok);
}

TEST(NumericCompare, AllZeroOutputNeverPassesAgainstANonzeroReference) {
  // Every element is within the (huge) tolerance, yet the output is all zero.
  const std::vector<float> expected{0.0f, 1e-9f, -2e-9f};
  const CloseResult result =
      compare_close(expected, std::vector<float>{0.0f, -0.0f, 0.0f}, Tolerance{0, 1.0});
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.all_zero);
  EXPECT_EQ(result.mismatches, 0u);
  EXPECT_EQ(result.index, 1u);  // the first nonzero element of the reference
  EXPECT_DOUBLE_EQ(result.expected, double(1e-9f));
  EXPECT_EQ(result.got, 0.0);
  EXPECT_TRUE(contains(result.message, "every element is 0")) << result.message;
  EXPECT_TRUE(contains(result.message, "index 1")) << result.message;
  EXPECT_FALSE(
      compare_close(std::vector<double>{0.0, 5.0}, std::vector<double>{0.0, 0.0}, Tolerance{0, 9})
          .ok);
}

TEST(NumericCompare, AllZeroOutputPassesAgainstAnAllZeroReference) {
  const std::vector<float> zeros(5, 0.0f);
  EXPECT_TRUE(compare_close(zeros, zeros, Tolerance{}).ok);
  // One nonzero element in got is enough to leave the all-zero rule to the tolerance.
  EXPECT_TRUE(compare_close(std::vector<float>{1e-9f, 0.0f}, std::vector<float>{0.0f, 1e-9f},
                            Tolerance{0, 1e-8})
                  .ok);
}

// ------------------------------------------------------------------------------------------------
// compare_close: the result and its message
// ------------------------------------------------------------------------------------------------

TEST(NumericMessage, NamesIndexExpectedGotToleranceAndThePoison) {
  std::vector<float> expected(4096, 0.25f);
  std::vector<float> got = expected;
  got[17] = kNaN;
  const CloseResult result = compare_close(expected, got, tolerance_for(DType::fp32));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.size, 4096u);
  EXPECT_EQ(result.mismatches, 1u);
  EXPECT_EQ(result.index, 17u);
  EXPECT_EQ(result.expected, 0.25);
  EXPECT_TRUE(std::isnan(result.got));
  EXPECT_DOUBLE_EQ(result.tolerance, 1e-5 + 1.3e-6 * 0.25);
  EXPECT_EQ(result.message,
            "index 17 of 4096: expected 0.25, got nan, tolerance 1.0325e-05 (NaN: an element the "
            "kernel never wrote keeps the NaN poison); 1 element out of tolerance");
}

TEST(NumericMessage, PoisonBytesPrintAsNanWithoutASign) {
  // 0xff bytes are a NaN with the sign bit set, which printf would show as "-nan".
  float poisoned = 0;
  const std::uint32_t bits = 0xffffffffu;
  std::memcpy(&poisoned, &bits, sizeof poisoned);
  ASSERT_TRUE(std::isnan(poisoned));
  const CloseResult result =
      compare_close(std::vector<float>{1.0f}, std::vector<float>{poisoned}, Tolerance{});
  EXPECT_TRUE(contains(result.message, "got nan,")) << result.message;
}

TEST(NumericMessage, CountsEveryMismatchAndReportsTheFirst) {
  const CloseResult result = compare_close(std::vector<float>{1, 2, 3, 4},
                                           std::vector<float>{1, 2.5f, 3, 5}, Tolerance{0, 0.1});
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.mismatches, 2u);
  EXPECT_EQ(result.index, 1u);
  EXPECT_EQ(result.expected, 2.0);
  EXPECT_EQ(result.got, 2.5);
  EXPECT_EQ(result.message,
            "index 1 of 4: expected 2, got 2.5, tolerance 0.1; 2 elements out of tolerance");
}

TEST(NumericMessage, AShapeGivesTheFirstMismatchsCoordinates) {
  // 2 x 3 x 4: element 17 is [1, 1, 1].
  const TensorShape shape = {{"batch", 2}, {"row", 3}, {"column", 4}};
  std::vector<double> expected(24, 1.0);
  std::vector<double> got = expected;
  got[17] = 3.0;
  got[20] = 3.0;
  EXPECT_EQ(compare_close(expected, got, Tolerance{0, 0.5}, shape).message,
            "at batch 1, row 1, column 1 (index 17 of 24): expected 1, got 3, tolerance 0.5; 2 "
            "elements out of tolerance");
  // Float and an all-zero output likewise.
  const std::vector<float> zeros(24, 0.0f);
  const std::vector<float> ones(24, 1.0f);
  EXPECT_TRUE(contains(compare_close(ones, zeros, Tolerance{1, 1}, shape).message,
                       "but the reference is not: at batch 0, row 0, column 0 (index 0 of 24) "
                       "expected 1"))
      << compare_close(ones, zeros, Tolerance{1, 1}, shape).message;
  // A shape of another size is left out: the flat index alone.
  const TensorShape wrong = {{"row", 5}, {"column", 5}};
  EXPECT_TRUE(compare_close(expected, got, Tolerance{0, 0.5}, wrong)
                  .message.starts_with("index 17 of 24: expected 1"));
}

TEST(NumericMessage, CoordinatesOfARowMajorIndex) {
  const TensorShape shape = {{"batch", 2}, {"row", 3}, {"column", 4}};
  EXPECT_EQ(coordinates(shape, 0), "batch 0, row 0, column 0");
  EXPECT_EQ(coordinates(shape, 23), "batch 1, row 2, column 3");
  EXPECT_EQ(coordinates(shape, 24), "");  // past the end
  EXPECT_EQ(coordinates({}, 0), "");
  EXPECT_EQ(coordinates({{"row", 0}}, 0), "");
  EXPECT_EQ(coordinates({{"i", 7}}, 6), "i 6");
}

TEST(NumericMessage, FloatsPrintWithNineDigitsAndDoublesWithFifteen) {
  const CloseResult f =
      compare_close(std::vector<float>{0.1f}, std::vector<float>{0.2f}, Tolerance{});
  EXPECT_TRUE(contains(f.message, "expected 0.100000001, got 0.200000003")) << f.message;
  const CloseResult d =
      compare_close(std::vector<double>{0.1}, std::vector<double>{1.0 / 3.0}, Tolerance{});
  EXPECT_TRUE(contains(d.message, "expected 0.1, got 0.333333333333333,")) << d.message;
}

TEST(NumericMessage, InfInGotSaysSo) {
  const CloseResult result =
      compare_close(std::vector<float>{1.0f}, std::vector<float>{-kInf}, Tolerance{});
  EXPECT_TRUE(contains(result.message, "got -inf")) << result.message;
  EXPECT_TRUE(contains(result.message, "inf where a finite value was expected")) << result.message;
}

// ------------------------------------------------------------------------------------------------
// The accumulation adjustment separates rounding from bugs
// ------------------------------------------------------------------------------------------------

// rows dot products of length k of values uniform in [-1, 1]: the reference in double, the float
// result summed forward, backward or pairwise (the orders a kernel may use).
struct Dots {
  std::vector<float> expected;
  std::vector<float> forward, backward, pairwise, shifted_index, relative_1e3;
};

float pairwise_sum(const std::vector<float>& terms, std::size_t first, std::size_t count) {
  if (count == 1) {
    return terms[first];
  }
  const std::size_t half = count / 2;
  return pairwise_sum(terms, first, half) + pairwise_sum(terms, first + half, count - half);
}

Dots make_dots(int k, int rows) {
  std::mt19937 random(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Dots d;
  for (int r = 0; r < rows; ++r) {
    const auto n = static_cast<std::size_t>(k);
    std::vector<float> a(n + 1), b(n + 1), products(n);
    for (std::size_t i = 0; i <= n; ++i) {
      a[i] = uniform(random);
      b[i] = uniform(random);
    }
    double exact = 0;
    float forward = 0, backward = 0, shifted = 0;
    for (std::size_t i = 0; i < n; ++i) {
      exact += double(a[i]) * double(b[i]);
      forward = std::fma(a[i], b[i], forward);
      backward = std::fma(a[n - 1 - i], b[n - 1 - i], backward);
      shifted += a[i] * b[i + 1];  // an off-by-one index
      products[i] = a[i] * b[i];
    }
    d.expected.push_back(float(exact));
    d.forward.push_back(forward);
    d.backward.push_back(backward);
    d.pairwise.push_back(pairwise_sum(products, 0, products.size()));
    d.shifted_index.push_back(shifted);
    d.relative_1e3.push_back(float(exact * (1 + 1e-3)));
  }
  return d;
}

TEST(NumericAccumulation, Fp32RoundingPassesInAnySummationOrder) {
  for (const int k : {1, 16, 100, 1024, 4096}) {
    SCOPED_TRACE("k " + std::to_string(k));
    const Dots d = make_dots(k, 256);
    const Tolerance t = scaled(tolerance_for(DType::fp32, k), rms(d.expected));
    EXPECT_TRUE(all_close(d.expected, d.forward, t, "forward"));
    EXPECT_TRUE(all_close(d.expected, d.backward, t, "backward"));
    EXPECT_TRUE(all_close(d.expected, d.pairwise, t, "pairwise"));
  }
}

TEST(NumericAccumulation, IndexingBugsAndRelativeErrorsOf1e3Fail) {
  for (const int k : {16, 100, 1024}) {
    SCOPED_TRACE("k " + std::to_string(k));
    const Dots d = make_dots(k, 256);
    const Tolerance t = scaled(tolerance_for(DType::fp32, k), rms(d.expected));
    EXPECT_FALSE(all_close(d.expected, d.shifted_index, t));
    const CloseResult off = compare_close(d.expected, d.relative_1e3, t);
    EXPECT_FALSE(off.ok);
    EXPECT_GT(off.mismatches, d.expected.size() / 2) << "most elements, not a few outliers";
  }
}

// ------------------------------------------------------------------------------------------------
// Test support: the gtest adaptor, poisoning, the attention forward tolerance
// ------------------------------------------------------------------------------------------------

TEST(NumericCheck, AllCloseSucceedsOrFailsWithTheMessageAfterWhat) {
  EXPECT_TRUE(all_close(std::vector<float>{1.0f}, std::vector<float>{1.0f}, Tolerance{}));
  EXPECT_TRUE(all_close(std::vector<double>{1.0}, std::vector<double>{1.0}, Tolerance{}));
  const ::testing::AssertionResult named =
      all_close(std::vector<float>{1.0f}, std::vector<float>{2.0f}, Tolerance{}, "y");
  EXPECT_FALSE(named);
  EXPECT_EQ(std::string(named.message()),
            "y: index 0 of 1: expected 1, got 2, tolerance 0; 1 element out of tolerance");
  const ::testing::AssertionResult unnamed =
      all_close(std::vector<double>{1.0}, std::vector<double>{0.0}, Tolerance{});
  EXPECT_FALSE(unnamed);
  EXPECT_EQ(std::string(unnamed.message()).rfind("every element is 0", 0), 0u) << unnamed.message();
}

TEST(NumericCheck, PoisonFillsEveryBufferWithNan) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<float> a(100);
  DeviceBuffer<double> b(7);
  a.copy_from(std::vector<float>(100, 1.0f));
  poison(a, b);
  for (const float value : a.to_vector()) {
    ASSERT_TRUE(std::isnan(value));
  }
  for (const double value : b.to_vector()) {
    ASSERT_TRUE(std::isnan(value));
  }
  // A kernel that writes nothing leaves the poison, and the comparison names it.
  const CloseResult result =
      compare_close(std::vector<float>(100, 0.5f), a.to_vector(), tolerance_for(DType::fp32));
  EXPECT_EQ(result.mismatches, 100u);
  EXPECT_TRUE(contains(result.message, "NaN poison")) << result.message;
}

TEST(NumericCheck, PoisonAsyncFillsEveryBufferWithNanBeforeLaterWorkOnTheStream) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  DeviceBuffer<float> a(100);
  DeviceBuffer<double> b(7);
  a.copy_from(std::vector<float>(100, 1.0f));
  b.copy_from(std::vector<double>(7, 1.0));
  poison_async(stream, a, b);
  std::vector<float> host_a(a.size());
  std::vector<double> host_b(b.size());
  a.copy_to_async(host_a, stream);  // queued after the poison, on the same stream
  b.copy_to_async(host_b, stream);
  stream.synchronize();
  for (const float value : host_a) {
    ASSERT_TRUE(std::isnan(value));
  }
  for (const double value : host_b) {
    ASSERT_TRUE(std::isnan(value));
  }
}

}  // namespace
}  // namespace gpulab
