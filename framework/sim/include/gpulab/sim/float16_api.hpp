// What <cuda_fp16.h> and <cuda_bf16.h> share on sim: CUDA's intrinsics and operators on one
// 16-bit type T (__half or __nv_bfloat16) and its pair T2 (__half2, __nv_bfloat162), written
// once as templates over the traits each header declares (gpulab::sim::fp16::Traits). Values
// round as float16.hpp says: every result correctly rounded to nearest even, as a GPU's native
// half and bfloat16 arithmetic does. hexp, hlog, hsqrt, hrsqrt and hrcp round the float result
// (a GPU's approximate versions may differ in the last bit).
#pragma once

#include <cmath>
#include <cstdint>

#include "gpulab/sim/float16.hpp"
#include "gpulab/sim/vector_types.hpp"

// ---- arithmetic (correctly rounded to nearest even) -------------------------------------------
template <gpulab::sim::fp16::Scalar T>
inline T __hadd(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::round<T>(fp::value(a) + fp::value(b));
}
template <gpulab::sim::fp16::Scalar T>
inline T __hsub(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::round<T>(fp::value(a) - fp::value(b));
}
template <gpulab::sim::fp16::Scalar T>
inline T __hmul(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::round<T>(fp::value(a) * fp::value(b));
}
template <gpulab::sim::fp16::Scalar T>
inline T __hdiv(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::round<T>(fp::value(a) / fp::value(b));
}
template <gpulab::sim::fp16::Scalar T>
inline T __hfma(T a, T b, T c) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::from_bits<T>(fp::fused_multiply_add<typename fp::Traits<T>::format>(
      fp::value(a), fp::value(b), fp::value(c)));
}
template <gpulab::sim::fp16::Scalar T>
inline T __hneg(T a) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::from_bits<T>(static_cast<std::uint16_t>(fp::bits(a) ^ 0x8000u));
}
template <gpulab::sim::fp16::Scalar T>
inline T __habs(T a) noexcept {
  namespace fp = gpulab::sim::fp16;
  return fp::from_bits<T>(static_cast<std::uint16_t>(fp::bits(a) & 0x7fffu));
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hadd2(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hadd(x, y); });
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hsub2(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hsub(x, y); });
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hmul2(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hmul(x, y); });
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __h2div(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hdiv(x, y); });
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hfma2(T2 a, T2 b, T2 c) noexcept {
  return T2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hneg2(T2 a) noexcept {
  return T2{__hneg(a.x), __hneg(a.y)};
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __habs2(T2 a) noexcept {
  return T2{__habs(a.x), __habs(a.y)};
}

// ---- comparisons: ordered (false with a NaN) and unordered (true with a NaN) -------------------
#define GPULAB_SIM_FP16_COMPARE(ordered, unordered, op)                    \
  template <gpulab::sim::fp16::Scalar T>                                   \
  inline bool ordered(T a, T b) noexcept {                                 \
    return gpulab::sim::fp16::value(a) op gpulab::sim::fp16::value(b);     \
  }                                                                        \
  template <gpulab::sim::fp16::Scalar T>                                   \
  inline bool unordered(T a, T b) noexcept {                               \
    return gpulab::sim::fp16::is_nan(a) || gpulab::sim::fp16::is_nan(b) || \
           gpulab::sim::fp16::value(a) op gpulab::sim::fp16::value(b);     \
  }
GPULAB_SIM_FP16_COMPARE(__heq, __hequ, ==)
GPULAB_SIM_FP16_COMPARE(__hlt, __hltu, <)
GPULAB_SIM_FP16_COMPARE(__hle, __hleu, <=)
GPULAB_SIM_FP16_COMPARE(__hgt, __hgtu, >)
GPULAB_SIM_FP16_COMPARE(__hge, __hgeu, >=)
#undef GPULAB_SIM_FP16_COMPARE
template <gpulab::sim::fp16::Scalar T>
inline bool __hne(T a, T b) noexcept {  // ordered: false with a NaN
  return !gpulab::sim::fp16::is_nan(a) && !gpulab::sim::fp16::is_nan(b) &&
         gpulab::sim::fp16::value(a) != gpulab::sim::fp16::value(b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool __hneu(T a, T b) noexcept {
  return gpulab::sim::fp16::value(a) != gpulab::sim::fp16::value(b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool __hisnan(T a) noexcept {
  return gpulab::sim::fp16::is_nan(a);
}
/// -1 for negative infinity, 1 for positive infinity, else 0.
template <gpulab::sim::fp16::Scalar T>
inline int __hisinf(T a) noexcept {
  const double v = gpulab::sim::fp16::value(a);
  return std::isinf(v) ? (v < 0 ? -1 : 1) : 0;
}
/// The larger value (+0 above -0); a NaN loses to a number, two NaNs give the canonical NaN.
template <gpulab::sim::fp16::Scalar T>
inline T __hmax(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  if (fp::is_nan(a) || fp::is_nan(b)) {
    return fp::is_nan(a) && fp::is_nan(b) ? fp::from_bits<T>(0x7fff) : (fp::is_nan(a) ? b : a);
  }
  if (fp::value(a) == fp::value(b)) {
    return (fp::bits(a) & 0x8000u) != 0 ? b : a;  // +0 is larger than -0
  }
  return fp::value(a) < fp::value(b) ? b : a;
}
template <gpulab::sim::fp16::Scalar T>
inline T __hmin(T a, T b) noexcept {
  namespace fp = gpulab::sim::fp16;
  if (fp::is_nan(a) || fp::is_nan(b)) {
    return fp::is_nan(a) && fp::is_nan(b) ? fp::from_bits<T>(0x7fff) : (fp::is_nan(a) ? b : a);
  }
  if (fp::value(a) == fp::value(b)) {
    return (fp::bits(a) & 0x8000u) != 0 ? a : b;  // -0 is smaller than +0
  }
  return fp::value(b) < fp::value(a) ? b : a;
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hmax2(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hmax(x, y); });
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __hmin2(T2 a, T2 b) noexcept {
  return gpulab::sim::fp16::lanewise(a, b, [](auto x, auto y) { return __hmin(x, y); });
}

// ---- math functions (the float function, rounded once) ----------------------------------------
#define GPULAB_SIM_FP16_MATH(name, expression)                           \
  template <gpulab::sim::fp16::Scalar T>                                 \
  inline T name(T a) noexcept {                                          \
    const float x = static_cast<float>(gpulab::sim::fp16::value(a));     \
    return gpulab::sim::fp16::round<T>(static_cast<double>(expression)); \
  }
GPULAB_SIM_FP16_MATH(hsqrt, std::sqrt(x))
GPULAB_SIM_FP16_MATH(hrsqrt, 1.0f / std::sqrt(x))
GPULAB_SIM_FP16_MATH(hrcp, 1.0f / x)
GPULAB_SIM_FP16_MATH(hexp, std::exp(x))
GPULAB_SIM_FP16_MATH(hlog, std::log(x))
GPULAB_SIM_FP16_MATH(hfloor, std::floor(x))
GPULAB_SIM_FP16_MATH(hceil, std::ceil(x))
#undef GPULAB_SIM_FP16_MATH

// ---- the pair's lanes --------------------------------------------------------------------------
template <gpulab::sim::fp16::Pair T2>
inline auto __low2float(T2 a) noexcept {
  return static_cast<float>(gpulab::sim::fp16::value(a.x));
}
template <gpulab::sim::fp16::Pair T2>
inline auto __high2float(T2 a) noexcept {
  return static_cast<float>(gpulab::sim::fp16::value(a.y));
}
template <gpulab::sim::fp16::Pair T2>
inline T2 __lowhigh2highlow(T2 a) noexcept {
  return T2{a.y, a.x};
}

// ---- operators (host and device alike) ---------------------------------------------------------
template <gpulab::sim::fp16::Scalar T>
inline T operator+(T a, T b) noexcept {
  return __hadd(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T operator-(T a, T b) noexcept {
  return __hsub(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T operator*(T a, T b) noexcept {
  return __hmul(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T operator/(T a, T b) noexcept {
  return __hdiv(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T operator-(T a) noexcept {
  return __hneg(a);
}
template <gpulab::sim::fp16::Scalar T>
inline T operator+(T a) noexcept {
  return a;
}
template <gpulab::sim::fp16::Scalar T>
inline T& operator+=(T& a, T b) noexcept {
  return a = __hadd(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T& operator-=(T& a, T b) noexcept {
  return a = __hsub(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T& operator*=(T& a, T b) noexcept {
  return a = __hmul(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline T& operator/=(T& a, T b) noexcept {
  return a = __hdiv(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator==(T a, T b) noexcept {
  return __heq(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator!=(T a, T b) noexcept {
  return __hneu(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator<(T a, T b) noexcept {
  return __hlt(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator<=(T a, T b) noexcept {
  return __hle(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator>(T a, T b) noexcept {
  return __hgt(a, b);
}
template <gpulab::sim::fp16::Scalar T>
inline bool operator>=(T a, T b) noexcept {
  return __hge(a, b);
}
template <gpulab::sim::fp16::Pair T2>
inline T2 operator+(T2 a, T2 b) noexcept {
  return __hadd2(a, b);
}
template <gpulab::sim::fp16::Pair T2>
inline T2 operator-(T2 a, T2 b) noexcept {
  return __hsub2(a, b);
}
template <gpulab::sim::fp16::Pair T2>
inline T2 operator*(T2 a, T2 b) noexcept {
  return __hmul2(a, b);
}
template <gpulab::sim::fp16::Pair T2>
inline T2 operator/(T2 a, T2 b) noexcept {
  return __h2div(a, b);
}
