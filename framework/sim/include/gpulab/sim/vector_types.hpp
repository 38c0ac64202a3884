// The sim backend's vector types: CUDA's char, uchar, short, ushort, int, uint, longlong,
// ulonglong, float and double structs of 1 to 4 elements with the CUDA alignments (float2 8 bytes,
// float4 16, ...), dim3 and the make_* functions, as vector_types.h and vector_functions.h declare
// them.
#pragma once

// NOLINTBEGIN: these are CUDA's spellings.
#define GPULAB_SIM_VECTOR_TYPES(T, name, a2, a4)                  \
  struct name##1 {                                                \
    T x;                                                          \
  };                                                              \
  struct alignas(a2) name##2 {                                    \
    T x, y;                                                       \
  };                                                              \
  struct name##3 {                                                \
    T x, y, z;                                                    \
  };                                                              \
  struct alignas(a4) name##4 {                                    \
    T x, y, z, w;                                                 \
  };                                                              \
  constexpr name##1 make_##name##1(T x) noexcept {                \
    return {x};                                                   \
  }                                                               \
  constexpr name##2 make_##name##2(T x, T y) noexcept {           \
    return {x, y};                                                \
  }                                                               \
  constexpr name##3 make_##name##3(T x, T y, T z) noexcept {      \
    return {x, y, z};                                             \
  }                                                               \
  constexpr name##4 make_##name##4(T x, T y, T z, T w) noexcept { \
    return {x, y, z, w};                                          \
  }

GPULAB_SIM_VECTOR_TYPES(signed char, char, 2, 4)
GPULAB_SIM_VECTOR_TYPES(unsigned char, uchar, 2, 4)
GPULAB_SIM_VECTOR_TYPES(short, short, 4, 8)
GPULAB_SIM_VECTOR_TYPES(unsigned short, ushort, 4, 8)
GPULAB_SIM_VECTOR_TYPES(int, int, 8, 16)
GPULAB_SIM_VECTOR_TYPES(unsigned int, uint, 8, 16)
GPULAB_SIM_VECTOR_TYPES(long long, longlong, 16, 16)
GPULAB_SIM_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
GPULAB_SIM_VECTOR_TYPES(float, float, 8, 16)
GPULAB_SIM_VECTOR_TYPES(double, double, 16, 16)

#undef GPULAB_SIM_VECTOR_TYPES

/// Grid and block dimensions; unspecified components are 1.
struct dim3 {
  unsigned int x = 1;
  unsigned int y = 1;
  unsigned int z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) noexcept
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) noexcept : x(v.x), y(v.y), z(v.z) {}     // NOLINT: implicit as in CUDA
  constexpr operator uint3() const noexcept { return {x, y, z}; }  // NOLINT: implicit as in CUDA
};
// NOLINTEND
