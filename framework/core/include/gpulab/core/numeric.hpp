// The numeric policy: how a kernel's output is compared with its CPU reference, in one place.
// docs/grading.md ("Numeric policy") explains it for students and instructors.
//
//   element i passes  when  |got[i] - expected[i]| <= atol + rtol * |expected[i]|
//
// - The base (rtol, atol) of each dtype are PyTorch's defaults for torch.testing.assert_close
//   (tolerance_for(DType)).
// - A value accumulated over k terms gets both parts times sqrt(k) (tolerance_for(DType, k)); a
//   tensor whose typical magnitude is s gets atol * s (scaled); a result computed in stages gets
//   the sum of the stages' tolerances (operator+).
// - NaN or inf in got fails unless expected holds the same non-finite value; an all-zero got
//   never passes against a reference with a nonzero element, whatever the tolerance.
// - A failure is reported on one line: where (the coordinates in the tensor's shape when the
//   caller gives it, and the flat index), expected, got, tolerance, and how many elements are out
//   of tolerance (compare_close).
//
// Host-only and free of gtest: tests/support/numeric_check.hpp adapts compare_close to gtest
// and poisons device outputs with NaN before a kernel runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpulab {

/// The element type a compared tensor is stored and rounded in. Not roofline.hpp's Precision:
/// that names an arithmetic unit (TF32 is a tensor-core mode, not a storage type, and no roof is
/// drawn for FP64), this names the type of the values being checked.
enum class DType {
  fp64,  ///< IEEE binary64
  fp32,  ///< IEEE binary32
  fp16,  ///< IEEE binary16 (half)
  bf16,  ///< bfloat16: binary32's exponent, 8 significant bits
};

/// How far got may be from expected: |got - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double rtol = 0;  ///< relative part: a multiple of |expected|
  double atol = 0;  ///< absolute part, in the unit of the values: the floor for expected near 0

  /// atol + rtol * |expected|: the largest |got - expected| this element may show.
  [[nodiscard]] double allowed(double expected) const noexcept;
};

/// The sum of two tolerances, part by part: the tolerance of a result computed in two stages
/// (to first order, relative errors add along a chain of well-conditioned stages).
[[nodiscard]] Tolerance operator+(const Tolerance& a, const Tolerance& b) noexcept;

/// The base tolerance of one rounded value of a dtype (PyTorch's assert_close defaults; fp64 is
/// 1e-7 for both parts):
///   fp64  rtol 1e-7    atol 1e-7
///   fp32  rtol 1.3e-6  atol 1e-5
///   fp16  rtol 1e-3    atol 1e-5
///   bf16  rtol 1.6e-2  atol 1e-5
[[nodiscard]] Tolerance tolerance_for(DType dtype) noexcept;

/// The tolerance of a value accumulated over `accumulation_length` (k) terms: both parts of
/// tolerance_for(dtype) times sqrt(k), the growth of rounding errors that add like a random walk.
/// k = 1 gives the base. Throws std::invalid_argument unless k >= 1.
[[nodiscard]] Tolerance tolerance_for(DType dtype, std::int64_t accumulation_length);

/// The tolerance for a tensor whose typical magnitude is `scale` (usually rms of the reference):
/// atol times scale, rtol unchanged. PyTorch's atol is absolute, i.e. right for values of
/// magnitude about 1; scaling it makes the check independent of the problem's units. Scale 0
/// leaves only the relative part. Throws std::invalid_argument unless scale is finite and >= 0.
[[nodiscard]] Tolerance scaled(const Tolerance& tolerance, double scale);

/// Root mean square of the finite elements (0 when there are none): the typical magnitude of a
/// tensor, the usual `scale`.
[[nodiscard]] double rms(std::span<const float> values) noexcept;
[[nodiscard]] double rms(std::span<const double> values) noexcept;

/// One dimension of a tensor, for messages: its name ("batch", "row", "head", ...) and extent.
struct Dim {
  std::string name;
  std::size_t extent = 0;
};

/// A row-major tensor's dimensions, outermost first; empty for a flat array.
using TensorShape = std::vector<Dim>;

/// Where element `index` of a row-major tensor of `shape` is: "batch 1, row 17, column 3". Empty
/// when the shape is empty, has a dimension of extent 0, or holds no element `index`.
[[nodiscard]] std::string coordinates(const TensorShape& shape, std::size_t index);

/// The outcome of compare_close. On a size mismatch only ok and message are meaningful.
struct CloseResult {
  bool ok = true;              ///< every element within tolerance, sizes equal, not all-zero
  std::size_t size = 0;        ///< elements compared
  std::size_t mismatches = 0;  ///< elements outside their tolerance
  bool all_zero = false;       ///< got is all 0 while expected has a nonzero element
  std::size_t index = 0;       ///< the first failing element (all-zero: the first nonzero expected)
  double expected = 0;         ///< expected[index]
  double got = 0;              ///< got[index]
  double tolerance = 0;        ///< the allowed |got - expected| at index
  std::string message;         ///< one line naming index, expected, got and tolerance; "" when ok
};

/// Compares got with expected element by element under `tolerance` (rules at the top of this
/// file). The message reads, e.g.
///   index 17 of 4096: expected 0.25, got nan, tolerance 1.0325e-05 (NaN: an element the kernel
///   never wrote keeps the NaN poison); 1 element out of tolerance
/// and, given the tensor's `shape` (when it holds as many elements as expected),
///   at batch 0, row 0, column 17 (index 17 of 4096): expected 0.25, ...
[[nodiscard]] CloseResult compare_close(std::span<const float> expected, std::span<const float> got,
                                        const Tolerance& tolerance, const TensorShape& shape = {});
/// The same for doubles (values print with 15 significant digits instead of float's 9).
[[nodiscard]] CloseResult compare_close(std::span<const double> expected,
                                        std::span<const double> got, const Tolerance& tolerance,
                                        const TensorShape& shape = {});

}  // namespace gpulab
