// The 16-bit floating-point formats of the sim's <cuda_fp16.h> and <cuda_bf16.h>: IEEE 754
// binary16 (`half`: 5 exponent bits, 10 fraction bits) and bfloat16 (8 and 7), as bit patterns.
//
// encode() rounds a double to a format exactly as CUDA's conversions do: to nearest with ties to
// even (or toward zero, down, up), subnormals kept, overflow to infinity (toward zero and toward
// the other infinity: the largest finite value), every NaN to the canonical 0x7fff. decode() is
// exact (a NaN's payload is not kept: every NaN is the canonical one). Arithmetic on two values of
// a format is done in double and rounded once: the double result of +, -, * or / of two such values
// is exact or rounds so that a second rounding to the 11 (or 8) bit format gives the correctly
// rounded result (53 >= 2p + 2 bits; S. A. Figueroa, "When is double rounding innocuous?", SIGNUM
// Newsletter 30(3), 1995). A fused multiply-add rounds the double sum to odd first, which makes the
// second rounding correct as well (S. Boldo, G. Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", IEEE Transactions on Computers 57(4), 2008).
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>

namespace gpulab::sim::fp16 {

/// How a value that falls between two representable ones is rounded.
enum class Rounding { nearest_even, toward_zero, down, up };

/// A 16-bit format: `E` exponent bits and `M` fraction bits (E + M = 15).
template <int E, int M>
struct Format {
  static_assert(E + M == 15, "a 16-bit format");
  static constexpr int fraction_bits = M;
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr int emin = 1 - bias;  ///< the smallest normal exponent
  static constexpr int emax = bias;      ///< the largest finite exponent
  static constexpr std::uint16_t sign_bit = 0x8000;
  static constexpr std::uint16_t infinity = static_cast<std::uint16_t>(((1 << E) - 1) << M);
  static constexpr std::uint16_t max_finite = static_cast<std::uint16_t>(infinity - 1);
  static constexpr std::uint16_t canonical_nan = 0x7fff;
};

using Binary16 = Format<5, 10>;  ///< IEEE binary16: CUDA's __half
using Bfloat16 = Format<8, 7>;   ///< bfloat16: CUDA's __nv_bfloat16

/// Specialized by <cuda_fp16.h> for __half and __half2, by <cuda_bf16.h> for __nv_bfloat16 and
/// __nv_bfloat162: `format` (Binary16 or Bfloat16), `scalar` and `pair` (float16_api.hpp).
template <class T>
struct Traits;

/// The value of a bit pattern, exactly.
template <typename F>
[[nodiscard]] inline double decode(std::uint16_t bits) noexcept {
  constexpr int M = F::fraction_bits;
  const bool negative = (bits & F::sign_bit) != 0;
  const int field = (bits >> M) & ((1 << (15 - M)) - 1);
  const int fraction = bits & ((1 << M) - 1);
  double value = 0;
  if (field == (1 << (15 - M)) - 1) {
    value = fraction != 0 ? std::numeric_limits<double>::quiet_NaN()
                          : std::numeric_limits<double>::infinity();
  } else if (field == 0) {
    value = std::ldexp(static_cast<double>(fraction), F::emin - M);  // subnormal (or zero)
  } else {
    value = std::ldexp(static_cast<double>(fraction + (1 << M)), field - F::bias - M);
  }
  return negative ? -value : value;
}

/// `x` rounded to the format, as a bit pattern.
template <typename F>
[[nodiscard]] inline std::uint16_t encode(double x,
                                          Rounding rounding = Rounding::nearest_even) noexcept {
  constexpr int M = F::fraction_bits;
  if (std::isnan(x)) {
    return F::canonical_nan;
  }
  const bool negative = std::signbit(x);
  const std::uint16_t sign = negative ? F::sign_bit : 0;
  const double magnitude = std::fabs(x);
  // Rounding the magnitude: toward zero, or away from it (down for a negative value is away).
  const bool away =
      (rounding == Rounding::up && !negative) || (rounding == Rounding::down && negative);
  const bool toward_zero = !away && rounding != Rounding::nearest_even;
  if (std::isinf(magnitude)) {
    return static_cast<std::uint16_t>(sign | F::infinity);  // exact: no rounding
  }
  if (magnitude == 0) {
    return sign;
  }
  int exponent = 0;
  (void)std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  const int quantum = (exponent - 1 > F::emin ? exponent - 1 : F::emin) - M;
  const double scaled = std::ldexp(magnitude, -quantum);  // exact: a power-of-two scaling
  double units = std::trunc(scaled);
  if (rounding == Rounding::nearest_even) {
    const double rest = scaled - units;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(units, 2.0) != 0)) {
      units += 1;
    }
  } else if (away && units != scaled) {
    units += 1;
  }
  const double rounded = std::ldexp(units, quantum);  // exactly the rounded magnitude
  if (rounded > decode<F>(F::max_finite)) {
    return static_cast<std::uint16_t>(sign | (toward_zero ? F::max_finite : F::infinity));
  }
  if (rounded < std::ldexp(1.0, F::emin)) {  // subnormal: the units of 2^(emin - M) are the bits
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  (void)std::frexp(rounded, &exponent);
  const auto fraction = static_cast<int>(std::ldexp(rounded, M - (exponent - 1))) - (1 << M);
  return static_cast<std::uint16_t>(sign | ((exponent - 1 + F::bias) << M) | fraction);
}

/// a * b + c rounded once to the format: the product is exact in double (two 11-bit or 8-bit
/// significands need at most 22 bits, and the exponents stay in double's range), the sum is
/// rounded to odd (Boldo and Melquiond) so that rounding it to the format is correct.
template <typename F>
[[nodiscard]] inline std::uint16_t fused_multiply_add(double a, double b, double c) noexcept {
  const double product = a * b;  // exact
  const double sum = product + c;
  if (!std::isfinite(sum)) {
    return encode<F>(sum);
  }
  // TwoSum: the exact error of the rounded sum. Round to odd: an inexact sum with an even last
  // bit moves one ulp toward the exact value.
  const double b_virtual = sum - product;
  const double error = (product - (sum - b_virtual)) + (c - b_virtual);
  double odd = sum;
  if (error != 0) {
    if ((std::bit_cast<std::uint64_t>(odd) & 1) == 0) {
      odd = std::nextafter(sum, error > 0 ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity());
    }
  }
  return encode<F>(odd);
}

// ---- a type's value through its traits ---------------------------------------------------------
template <class T>
concept Scalar = requires {
  typename Traits<T>::format;
}
&&std::same_as<typename Traits<T>::scalar, T>;
template <class T>
concept Pair = requires {
  typename Traits<T>::format;
}
&&std::same_as<typename Traits<T>::pair, T>;

template <Scalar T>
[[nodiscard]] inline std::uint16_t bits(T value) noexcept {
  return std::bit_cast<std::uint16_t>(value);
}
template <Scalar T>
[[nodiscard]] inline T from_bits(std::uint16_t bits) noexcept {
  return std::bit_cast<T>(bits);
}
template <Scalar T>
[[nodiscard]] inline double value(T x) noexcept {
  return decode<typename Traits<T>::format>(bits(x));
}
template <Scalar T>
[[nodiscard]] inline T round(double x, Rounding rounding = Rounding::nearest_even) noexcept {
  return from_bits<T>(encode<typename Traits<T>::format>(x, rounding));
}
template <Scalar T>
[[nodiscard]] inline bool is_nan(T x) noexcept {
  return std::isnan(value(x));
}
// A pair's two lanes through a scalar function.
template <Pair T2, class Op>
[[nodiscard]] inline T2 lanewise(T2 a, T2 b, Op op) noexcept {
  return T2{op(a.x, b.x), op(a.y, b.y)};
}

}  // namespace gpulab::sim::fp16
