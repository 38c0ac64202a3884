#include "gpulab/core/numeric.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gpulab {

namespace {

// A value as the message prints it: enough significant digits to show a difference the
// tolerance rejects (9 round-trips a float); NaN without the sign 0xff poison bytes give it.
template <class T>
std::string format_value(T value) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  std::ostringstream text;
  text.precision(std::is_same_v<T, float> ? 9 : 15);
  text << value;
  return text.str();
}

std::string format_tolerance(double tolerance) {
  std::ostringstream text;
  text.precision(6);
  text << tolerance;
  return text.str();
}

// Why a failing element failed, when it is not a plain "too far".
template <class T>
std::string hint(T expected, T got) {
  if (std::isnan(got) && !std::isnan(expected)) {
    return " (NaN: an element the kernel never wrote keeps the NaN poison)";
  }
  if (std::isinf(got) && std::isfinite(expected)) {
    return " (inf where a finite value was expected: an overflow?)";
  }
  if (!std::isfinite(expected)) {
    return " (a non-finite expected value passes only when got is the same value)";
  }
  return "";
}

template <class T>
bool element_close(T expected, T got, const Tolerance& tolerance) {
  if (!std::isfinite(expected) || !std::isfinite(got)) {
    // NaN matches only NaN, inf only the same inf (PyTorch's equal_nan=True semantics).
    return (std::isnan(expected) && std::isnan(got)) || expected == got;
  }
  const double difference = std::fabs(double(got) - double(expected));
  return difference <= tolerance.allowed(double(expected));
}

template <class T>
double rms_of(std::span<const T> values) noexcept {
  double sum = 0.0;
  std::size_t finite = 0;
  for (const T value : values) {
    if (std::isfinite(value)) {
      sum += double(value) * double(value);
      ++finite;
    }
  }
  return finite == 0 ? 0.0 : std::sqrt(sum / static_cast<double>(finite));
}

// How many elements a tensor of `shape` holds; 0 for an empty shape.
std::size_t elements_of(const TensorShape& shape) noexcept {
  std::size_t elements = shape.empty() ? 0 : 1;
  for (const Dim& dim : shape) {
    elements *= dim.extent;
  }
  return elements;
}

// Where element i of n is: "at batch 0, row 17, column 3 (index i of n)" when `shape` holds n
// elements, else "index i of n".
std::string place(const TensorShape& shape, std::size_t i, std::size_t n) {
  const std::string flat = "index " + std::to_string(i) + " of " + std::to_string(n);
  const std::string at = elements_of(shape) == n ? coordinates(shape, i) : "";
  return at.empty() ? flat : "at " + at + " (" + flat + ")";
}

template <class T>
CloseResult compare(std::span<const T> expected, std::span<const T> got, const Tolerance& tolerance,
                    const TensorShape& shape) {
  CloseResult result;
  if (expected.size() != got.size()) {
    result.ok = false;
    result.message = "size: expected " + std::to_string(expected.size()) + " elements, got " +
                     std::to_string(got.size());
    return result;
  }
  result.size = expected.size();
  bool got_all_zero = true;
  bool expected_has_nonzero = false;
  std::size_t first_nonzero = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (got[i] != T(0)) {
      got_all_zero = false;
    }
    if (expected[i] != T(0) && !expected_has_nonzero) {  // NaN counts as nonzero
      expected_has_nonzero = true;
      first_nonzero = i;
    }
    if (!element_close(expected[i], got[i], tolerance)) {
      if (result.mismatches == 0) {
        result.index = i;
      }
      ++result.mismatches;
    }
  }
  // An output the kernel never touched, or zero-filled, fails even where the tolerance is wide
  // enough to take every element (a reference of tiny values, a large atol).
  result.all_zero = got_all_zero && expected_has_nonzero;
  if (result.all_zero) {
    result.index = first_nonzero;
  }
  result.ok = result.mismatches == 0 && !result.all_zero;
  if (result.ok) {
    return result;
  }
  const std::size_t i = result.index;
  result.expected = double(expected[i]);
  result.got = double(got[i]);
  result.tolerance = tolerance.allowed(result.expected);
  std::ostringstream text;
  if (result.all_zero) {
    text << "every element is 0 (" << result.size
         << " of them), but the reference is not: " << place(shape, i, result.size) << " expected "
         << format_value(expected[i]) << ", tolerance " << format_tolerance(result.tolerance)
         << " (an output the kernel never wrote, or only zero-filled, never passes)";
  } else {
    text << place(shape, i, result.size) << ": expected " << format_value(expected[i]) << ", got "
         << format_value(got[i]) << ", tolerance " << format_tolerance(result.tolerance)
         << hint(expected[i], got[i]);
  }
  text << "; " << result.mismatches << (result.mismatches == 1 ? " element" : " elements")
       << " out of tolerance";
  result.message = text.str();
  return result;
}

}  // namespace

double Tolerance::allowed(double expected) const noexcept {
  return atol + rtol * std::fabs(expected);
}

Tolerance operator+(const Tolerance& a, const Tolerance& b) noexcept {
  return {a.rtol + b.rtol, a.atol + b.atol};
}

Tolerance tolerance_for(DType dtype) noexcept {
  // PyTorch's defaults for torch.testing.assert_close, the table _DTYPE_PRECISIONS in
  // torch/testing/_comparison.py (https://github.com/pytorch/pytorch/blob/main/torch/testing/
  // _comparison.py; documented at https://pytorch.org/docs/stable/testing.html). fp32's rtol is
  // about 11 float ulps (2^-23 = 1.19e-7), fp16's about 1 half ulp (2^-10 = 9.8e-4), bf16's
  // about 2 bf16 ulps (2^-7 = 7.8e-3).
  //
  // fp64 takes the same table's float64 row, 1e-7 for both parts: nine orders of magnitude above
  // double rounding (1.1e-16), so any summation order, FMA contraction or reference algorithm
  // passes, and still four orders below the 1e-3 and up of a wrong formula. One source for the
  // whole table.
  switch (dtype) {
    case DType::fp64:
      return {1e-7, 1e-7};
    case DType::fp32:
      return {1.3e-6, 1e-5};
    case DType::fp16:
      return {1e-3, 1e-5};
    case DType::bf16:
      return {1.6e-2, 1e-5};
  }
  return {1.3e-6, 1e-5};  // unreachable: every DType is handled above
}

Tolerance tolerance_for(DType dtype, std::int64_t accumulation_length) {
  if (accumulation_length < 1) {
    throw std::invalid_argument("tolerance_for: the accumulation length must be >= 1, got " +
                                std::to_string(accumulation_length));
  }
  // The rounding errors of a k-term sum are k small independent-looking steps: they add like a
  // random walk, so the error grows like sqrt(k) unit roundoffs with high probability (Higham and
  // Mary, "A New Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput. 41(5),
  // 2019), not like the worst-case bound k. Scaling by k would be 32x looser at k = 1024 and let
  // an indexing bug's small share of wrong terms through; sqrt(k) keeps a 1e-3 relative error at
  // k = 1024 failing in fp32 (sqrt(1024) * (1.3e-6 + 1e-5) = 3.6e-4).
  const double growth = std::sqrt(static_cast<double>(accumulation_length));
  const Tolerance base = tolerance_for(dtype);
  return {base.rtol * growth, base.atol * growth};
}

Tolerance scaled(const Tolerance& tolerance, double scale) {
  if (!(scale >= 0) || !std::isfinite(scale)) {
    throw std::invalid_argument("scaled: the scale must be finite and >= 0, got " +
                                std::to_string(scale));
  }
  return {tolerance.rtol, tolerance.atol * scale};
}

double rms(std::span<const float> values) noexcept {
  return rms_of(values);
}

double rms(std::span<const double> values) noexcept {
  return rms_of(values);
}

std::string coordinates(const TensorShape& shape, std::size_t index) {
  const std::size_t elements = elements_of(shape);
  if (elements == 0 || index >= elements) {
    return {};
  }
  std::vector<std::size_t> at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = index % shape[d].extent;
    index /= shape[d].extent;
  }
  std::string text;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    text += (d == 0 ? "" : ", ") + shape[d].name + " " + std::to_string(at[d]);
  }
  return text;
}

CloseResult compare_close(std::span<const float> expected, std::span<const float> got,
                          const Tolerance& tolerance, const TensorShape& shape) {
  return compare(expected, got, tolerance, shape);
}

CloseResult compare_close(std::span<const double> expected, std::span<const double> got,
                          const Tolerance& tolerance, const TensorShape& shape) {
  return compare(expected, got, tolerance, shape);
}

}  // namespace gpulab
