// The numeric policy (gpulab/core/numeric.hpp, docs/grading.md) as tests use it: compare_close
// as a gtest assertion, NaN poisoning of device outputs before a kernel runs, and the tolerance
// of the attention forward pass (tests/kernels/attention_test.cpp and the lab 02 autograder).
//
//   poison(out);                                     // 0xff bytes: NaN
//   launch(...);
//   EXPECT_TRUE(all_close(expected, out.to_vector(), tolerance, "y"));
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "gpulab/core/memory.hpp"
#include "gpulab/core/numeric.hpp"

namespace gpulab::testing {

/// compare_close as a gtest assertion: success, or a failure whose message is compare_close's
/// line, prefixed with `what` (which tensor, which seed) when given.
inline ::testing::AssertionResult all_close(std::span<const float> expected,
                                            std::span<const float> got, const Tolerance& tolerance,
                                            std::string_view what = "") {
  const CloseResult result = compare_close(expected, got, tolerance);
  if (result.ok) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << (what.empty() ? "" : ": ") << result.message;
}

/// The same for doubles.
inline ::testing::AssertionResult all_close(std::span<const double> expected,
                                            std::span<const double> got, const Tolerance& tolerance,
                                            std::string_view what = "") {
  const CloseResult result = compare_close(expected, got, tolerance);
  if (result.ok) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << (what.empty() ? "" : ": ") << result.message;
}

/// Fills device buffers with 0xff bytes before the kernel under test runs: a NaN for float,
/// double and half (all exponent bits set, nonzero mantissa), so an element the kernel never
/// writes fails compare_close. Integer buffers get their maximum value.
template <class... T>
void poison(DeviceBuffer<T>&... buffers) {
  (buffers.fill_bytes(0xff), ...);
}

/// The fp32 tolerance of the attention forward pass, relative to the output's typical magnitude
/// `scale` (rms of the reference): the sum of its five components' tolerances (numeric.hpp:
/// errors add along a chain), each accumulating over k terms: the QKV projection over d_model,
/// the scores over head_dim, the softmax over seq_len (the row sum), the weighted sum over
/// seq_len, the output projection over d_model. A template so that this header does not need
/// kernels/attention (call it with a kernels::AttentionConfig).
template <class AttentionConfig>
Tolerance attention_forward_tolerance(const AttentionConfig& config, double scale) {
  const auto fp32 = [](std::int64_t k) { return tolerance_for(DType::fp32, k); };
  return scaled(fp32(config.d_model) + fp32(config.head_dim()) + fp32(config.seq_len) +
                    fp32(config.seq_len) + fp32(config.d_model),
                scale);
}

}  // namespace gpulab::testing
