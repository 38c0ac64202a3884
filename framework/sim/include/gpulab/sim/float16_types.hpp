// The 16-bit types of the sim's <cuda_fp16.h> and <cuda_bf16.h>, defined once:
//
//   GPULAB_SIM_FLOAT16_TYPES(Type, Type2, Raw, X, Format)
//
// defines the scalar `Type` (CUDA's __half or __nv_bfloat16), its pair `Type2`, the raw struct
// `Raw`, the traits float16_api.hpp's templates read, and the conversion functions whose names
// CUDA builds from X ("half": __float2half, __half2float, __halves2half2, ...; "bfloat16":
// __float2bfloat16, __bfloat162float, __halves2bfloat162, ...). `Format` is Binary16 or Bfloat16
// (float16.hpp). Conversions to int go toward zero or to nearest, NaN to 0, and saturate at
// INT_MIN and INT_MAX, as a GPU's cvt does.
#pragma once

#include <climits>
#include <cmath>

#include "gpulab/sim/float16.hpp"
#include "gpulab/sim/vector_types.hpp"

namespace gpulab::sim::fp16 {
/// A value converted to int as a GPU's cvt.rni/rzi.s32 does: NaN 0, saturated at the ends.
[[nodiscard]] inline int to_int(double value) noexcept {
  if (std::isnan(value)) {
    return 0;
  }
  if (value <= static_cast<double>(INT_MIN)) {
    return INT_MIN;
  }
  if (value >= static_cast<double>(INT_MAX)) {
    return INT_MAX;
  }
  return static_cast<int>(value);
}
}  // namespace gpulab::sim::fp16

#define GPULAB_SIM_FLOAT16_TYPES(Type, Type2, Raw, X, Format)                                    \
  struct Raw {                                                                                   \
    unsigned short x;                                                                            \
  };                                                                                             \
  /* Implicit conversions from and to float, as CUDA's; the bits uninitialized by default, so */ \
  /* the type is trivially constructible (shared memory, arrays) as CUDA's is. */                \
  struct alignas(2) Type {                                                                       \
    Type() = default;                                                                            \
    Type(const Raw& raw) noexcept : bits_(raw.x) {}                                              \
    Type(float x) noexcept                                                                       \
        : bits_(gpulab::sim::fp16::encode<gpulab::sim::fp16::Format>(static_cast<double>(x))) {} \
    Type(double x) noexcept : bits_(gpulab::sim::fp16::encode<gpulab::sim::fp16::Format>(x)) {}  \
    Type(int x) noexcept : bits_(gpulab::sim::fp16::encode<gpulab::sim::fp16::Format>(x)) {}     \
    Type(unsigned int x) noexcept                                                                \
        : bits_(gpulab::sim::fp16::encode<gpulab::sim::fp16::Format>(x)) {}                      \
    operator float() const noexcept {                                                            \
      return static_cast<float>(gpulab::sim::fp16::decode<gpulab::sim::fp16::Format>(bits_));    \
    }                                                                                            \
    operator Raw() const noexcept { return Raw{bits_}; }                                         \
                                                                                                 \
   private:                                                                                      \
    unsigned short bits_;                                                                        \
  };                                                                                             \
  struct alignas(4) Type2 {                                                                      \
    Type x;                                                                                      \
    Type y;                                                                                      \
  };                                                                                             \
  namespace gpulab::sim::fp16 {                                                                  \
  template <>                                                                                    \
  struct Traits<Type> {                                                                          \
    using format = Format;                                                                       \
    using scalar = Type;                                                                         \
    using pair = Type2;                                                                          \
  };                                                                                             \
  template <>                                                                                    \
  struct Traits<Type2> : Traits<Type> {};                                                        \
  }                                                                                              \
  inline Type __float2##X(float x) noexcept {                                                    \
    return gpulab::sim::fp16::round<Type>(static_cast<double>(x));                               \
  }                                                                                              \
  inline Type __float2##X##_rn(float x) noexcept {                                               \
    return gpulab::sim::fp16::round<Type>(static_cast<double>(x));                               \
  }                                                                                              \
  inline Type __float2##X##_rz(float x) noexcept {                                               \
    return gpulab::sim::fp16::round<Type>(static_cast<double>(x),                                \
                                          gpulab::sim::fp16::Rounding::toward_zero);             \
  }                                                                                              \
  inline Type __float2##X##_rd(float x) noexcept {                                               \
    return gpulab::sim::fp16::round<Type>(static_cast<double>(x),                                \
                                          gpulab::sim::fp16::Rounding::down);                    \
  }                                                                                              \
  inline Type __float2##X##_ru(float x) noexcept {                                               \
    return gpulab::sim::fp16::round<Type>(static_cast<double>(x),                                \
                                          gpulab::sim::fp16::Rounding::up);                      \
  }                                                                                              \
  inline Type __double2##X(double x) noexcept {                                                  \
    return gpulab::sim::fp16::round<Type>(x);                                                    \
  }                                                                                              \
  inline float __##X##2float(Type x) noexcept {                                                  \
    return static_cast<float>(gpulab::sim::fp16::value(x));                                      \
  }                                                                                              \
  inline Type __int2##X##_rn(int x) noexcept {                                                   \
    return gpulab::sim::fp16::round<Type>(x);                                                    \
  }                                                                                              \
  inline Type __uint2##X##_rn(unsigned int x) noexcept {                                         \
    return gpulab::sim::fp16::round<Type>(x);                                                    \
  }                                                                                              \
  inline int __##X##2int_rz(Type x) noexcept {                                                   \
    return gpulab::sim::fp16::to_int(std::trunc(gpulab::sim::fp16::value(x)));                   \
  }                                                                                              \
  inline int __##X##2int_rn(Type x) noexcept {                                                   \
    return gpulab::sim::fp16::to_int(std::nearbyint(gpulab::sim::fp16::value(x)));               \
  }                                                                                              \
  inline unsigned short __##X##_as_ushort(Type x) noexcept {                                     \
    return gpulab::sim::fp16::bits(x);                                                           \
  }                                                                                              \
  inline Type __ushort_as_##X(unsigned short bits) noexcept {                                    \
    return gpulab::sim::fp16::from_bits<Type>(bits);                                             \
  }                                                                                              \
  inline short __##X##_as_short(Type x) noexcept {                                               \
    return static_cast<short>(gpulab::sim::fp16::bits(x));                                       \
  }                                                                                              \
  inline Type __short_as_##X(short bits) noexcept {                                              \
    return gpulab::sim::fp16::from_bits<Type>(static_cast<unsigned short>(bits));                \
  }                                                                                              \
  inline Type2 __float2##X##2_rn(float x) noexcept {                                             \
    return Type2{__float2##X##_rn(x), __float2##X##_rn(x)};                                      \
  }                                                                                              \
  inline Type2 __floats2##X##2_rn(float low, float high) noexcept {                              \
    return Type2{__float2##X##_rn(low), __float2##X##_rn(high)};                                 \
  }                                                                                              \
  inline Type2 __float22##X##2_rn(float2 x) noexcept {                                           \
    return __floats2##X##2_rn(x.x, x.y);                                                         \
  }                                                                                              \
  inline float2 __##X##22float2(Type2 x) noexcept {                                              \
    return float2{__##X##2float(x.x), __##X##2float(x.y)};                                       \
  }                                                                                              \
  inline Type2 __halves2##X##2(Type low, Type high) noexcept {                                   \
    return Type2{low, high};                                                                     \
  }                                                                                              \
  inline Type2 __##X##2##X##2(Type x) noexcept {                                                 \
    return Type2{x, x};                                                                          \
  }                                                                                              \
  inline Type __low2##X(Type2 x) noexcept {                                                      \
    return x.x;                                                                                  \
  }                                                                                              \
  inline Type __high2##X(Type2 x) noexcept {                                                     \
    return x.y;                                                                                  \
  }
