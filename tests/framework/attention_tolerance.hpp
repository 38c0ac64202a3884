// The tolerance attention outputs are checked with (tests/kernels/attention_test.cpp and the lab 02
// autograder), in one place.
//
// fp32 against a double-accumulated reference: a value summed over k terms carries a rounding
// error that grows like sqrt(k) float ulps of the terms' magnitude, so each element must satisfy
//   |got - expected| <= rtol(k) * (|expected| + rms(expected)),   rtol(k) = 1e-5 * sqrt(k)
// The rms floor (a relative comparison with a nonzero floor) holds elements that cancel to near
// zero to the tensor's typical magnitude rather than to their own. 1e-5 is about 100 float ulps:
// room for a different summation order, and still 4 orders of magnitude below the O(1) error of an
// indexing or masking bug. k per component: QKV projection D, scores dh, softmax S (the row sum),
// weighted sum S, output projection D. Relative errors add along a chain, so the end-to-end check
// uses the sum of the five (forward_rtol).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include "attention/attention.hpp"

namespace gpulab::testing {

/// Relative tolerance of a value accumulated over k terms.
inline double rtol(int k) {
  return 1e-5 * std::sqrt(static_cast<double>(k));
}

/// Relative tolerance of the whole forward pass: the five components' tolerances summed.
inline double forward_rtol(const kernels::AttentionConfig& config) {
  return rtol(config.d_model) + rtol(config.head_dim()) + 2 * rtol(config.seq_len) +
         rtol(config.d_model);
}

/// Root mean square of the values (0 when empty): the floor of the tolerance.
inline double rms(const std::vector<float>& values) {
  double sum = 0.0;
  for (const float value : values) {
    sum += double(value) * double(value);
  }
  return values.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(values.size()));
}

/// Every element within relative * (|expected| + rms(expected)); the first mismatch names
/// `what`, the index, expected, got and the tolerance, and `nan_hint` when got is NaN (the poison
/// an unwritten element keeps).
inline ::testing::AssertionResult near_all(const std::vector<float>& expected,
                                           const std::vector<float>& got, double relative,
                                           std::string_view what = "",
                                           std::string_view nan_hint = "") {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure() << what << (what.empty() ? "" : " ") << "size: expected "
                                         << expected.size() << ", got " << got.size();
  }
  const double floor = rms(expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double tolerance = relative * (std::fabs(double(expected[i])) + floor);
    if (!(std::fabs(double(got[i]) - double(expected[i])) <= tolerance)) {  // NaN fails
      return ::testing::AssertionFailure()
             << what << (what.empty() ? "" : " ") << "index " << i << ": expected " << expected[i]
             << ", got " << got[i] << ", tolerance " << tolerance
             << (std::isnan(got[i]) ? nan_hint : "");
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpulab::testing
