// <cuda_fp16.h> and <cuda_bf16.h> against references written independently of either
// implementation: every conversion and arithmetic result is the representable value nearest the
// exact one (ties to the even bit pattern), found by searching the format's sorted values. Built
// for both backends: on cuda the same tests check CUDA's own headers (host code needs no GPU),
// so passing on both means the sim rounds bit for bit as CUDA does. The kernels check the types
// in device code (and, on sim, that their loads count 2 bytes each).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "test_device.hpp"

namespace {

// ---- the reference: a format's values, exactly -------------------------------------------------

// A 16-bit pattern's value as an exact binary fraction: mantissa * 2^exponent (mantissa < 2^11).
struct Exact {
  bool negative = false;
  std::int64_t mantissa = 0;
  int exponent = 0;
};

struct FormatSpec {
  const char* name;
  int exponent_bits;
  int fraction_bits;
};
constexpr FormatSpec kHalf{"binary16", 5, 10};
constexpr FormatSpec kBfloat{"bfloat16", 8, 7};

bool is_nan_bits(FormatSpec f, std::uint16_t bits) {
  const int field = (bits >> f.fraction_bits) & ((1 << f.exponent_bits) - 1);
  return field == (1 << f.exponent_bits) - 1 && (bits & ((1 << f.fraction_bits) - 1)) != 0;
}
bool is_inf_bits(FormatSpec f, std::uint16_t bits) {
  const int field = (bits >> f.fraction_bits) & ((1 << f.exponent_bits) - 1);
  return field == (1 << f.exponent_bits) - 1 && (bits & ((1 << f.fraction_bits) - 1)) == 0;
}
Exact exact_of(FormatSpec f, std::uint16_t bits) {
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const int field = (bits >> f.fraction_bits) & ((1 << f.exponent_bits) - 1);
  const int fraction = bits & ((1 << f.fraction_bits) - 1);
  Exact e;
  e.negative = (bits & 0x8000) != 0;
  e.mantissa = field == 0 ? fraction : fraction + (1 << f.fraction_bits);
  e.exponent = (field == 0 ? 1 : field) - bias - f.fraction_bits;
  return e;
}
double double_of(const Exact& e) {
  const double v = std::ldexp(static_cast<double>(e.mantissa), e.exponent);
  return e.negative ? -v : v;
}

// The non-negative finite values of a format, ascending, with their patterns.
struct Ladder {
  std::vector<std::uint16_t> bits;
  std::vector<double> values;
};
Ladder ladder_of(FormatSpec f) {
  Ladder ladder;
  for (std::uint32_t b = 0; b < 0x8000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    if (!is_nan_bits(f, bits) && !is_inf_bits(f, bits)) {
      ladder.bits.push_back(bits);
      ladder.values.push_back(double_of(exact_of(f, bits)));
    }
  }
  return ladder;
}

// The nearest value of the format to a non-negative `x` (exact as a double), ties to the even
// pattern, infinity past the largest value plus half its spacing: the pattern, with the sign.
std::uint16_t nearest(const Ladder& ladder, double x) {
  const bool negative = std::signbit(x);
  x = std::fabs(x);
  const std::uint16_t sign = negative ? 0x8000 : 0;
  const double top = ladder.values.back();
  const double spacing = top - ladder.values[ladder.values.size() - 2];
  const auto infinity = static_cast<std::uint16_t>(ladder.bits.back() + 1);
  if (x >= top + spacing / 2) {
    return static_cast<std::uint16_t>(sign | infinity);
  }
  const auto above = std::lower_bound(ladder.values.begin(), ladder.values.end(), x);
  if (above == ladder.values.end()) {
    return static_cast<std::uint16_t>(sign | ladder.bits.back());
  }
  const auto i = static_cast<std::size_t>(above - ladder.values.begin());
  if (*above == x || i == 0) {
    return static_cast<std::uint16_t>(sign | ladder.bits[i]);
  }
  const double low = ladder.values[i - 1];
  const double high = ladder.values[i];
  std::size_t pick = x - low < high - x ? i - 1 : i;
  if (x - low == high - x) {
    pick = (ladder.bits[i - 1] & 1) == 0 ? i - 1 : i;
  }
  return static_cast<std::uint16_t>(sign | ladder.bits[pick]);
}

std::string hex(std::uint16_t bits) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%04x", bits);
  return text;
}

std::uint16_t bits_of(__half h) {
  return __half_as_ushort(h);
}
std::uint16_t bits_of(__nv_bfloat16 h) {
  return __bfloat16_as_ushort(h);
}

// Floats to convert: the values around every pattern's neighbours (each midpoint, and the floats
// next to it), the format's edges and random floats across the whole range.
std::vector<float> probe_floats(const Ladder& ladder) {
  std::vector<float> probes;
  for (std::size_t i = 0; i + 1 < ladder.values.size(); i += 7) {
    const auto mid = static_cast<float>((ladder.values[i] + ladder.values[i + 1]) / 2);
    probes.insert(probes.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY),
                                 static_cast<float>(ladder.values[i])});
  }
  std::mt19937 rng(16);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t bits = any(rng);
    float f = 0;
    std::memcpy(&f, &bits, sizeof(f));
    if (!std::isnan(f)) {
      probes.push_back(f);
    }
  }
  probes.insert(probes.end(), {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min(), 1e-30f, -1e-30f});
  return probes;
}

// ---- conversions -------------------------------------------------------------------------------

TEST(Float16Conversion, KnownBinary16Patterns) {
  const struct {
    float in;
    std::uint16_t out;
  } cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {65504.0f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00},  // past the largest half plus half its spacing: infinity
      {1e6f, 0x7c00},
      {-1e6f, 0xfc00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {std::ldexp(1.0f, -24), 0x0001},  // the smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},  // half of it: a tie, to the even zero
      {std::ldexp(3.0f, -25), 0x0002},  // 1.5 subnormal units: a tie, to the even 2
      {std::ldexp(1.0f, -14), 0x0400},  // the smallest normal
      {std::ldexp(1.0f, -14) - std::ldexp(1.0f, -24), 0x03ff},         // the largest subnormal
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},                          // a tie, down to even
      {1.0f + std::ldexp(3.0f, -11), 0x3c02},                          // a tie, up to even
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3c01},  // just above a tie
      {0.1f, 0x2e66},
      {1.0f / 3.0f, 0x3555},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(hex(bits_of(__float2half(c.in))), hex(c.out)) << "__float2half(" << c.in << ")";
  }
  EXPECT_EQ(hex(bits_of(__float2half(std::nanf("")))), hex(0x7fff)) << "NaN: the canonical 0x7fff";
  // The other rounding directions.
  const float above_one = 1.0f + std::ldexp(1.0f, -20);
  EXPECT_EQ(hex(bits_of(__float2half_rz(65520.0f))), hex(0x7bff));
  EXPECT_EQ(hex(bits_of(__float2half_rz(1e6f))), hex(0x7bff));
  EXPECT_EQ(hex(bits_of(__float2half_ru(above_one))), hex(0x3c01));
  EXPECT_EQ(hex(bits_of(__float2half_rd(above_one))), hex(0x3c00));
  EXPECT_EQ(hex(bits_of(__float2half_rd(-above_one))), hex(0xbc01));
  EXPECT_EQ(hex(bits_of(__float2half_ru(-1e6f))), hex(0xfbff));
  EXPECT_EQ(hex(bits_of(__float2half_rn(-above_one))), hex(0xbc00));
  // Infinity is exact: it stays infinity whatever the rounding.
  EXPECT_EQ(hex(bits_of(__float2half_rz(INFINITY))), hex(0x7c00));
  EXPECT_EQ(hex(bits_of(__float2half_rd(INFINITY))), hex(0x7c00));
  EXPECT_EQ(hex(bits_of(__float2half_ru(-INFINITY))), hex(0xfc00));
}

TEST(Float16Conversion, KnownBfloat16Patterns) {
  const struct {
    float in;
    std::uint16_t out;
  } cases[] = {
      {1.0f, 0x3f80},
      {3.0f, 0x4040},
      {-0.0f, 0x8000},
      {std::numeric_limits<float>::max(), 0x7f80},  // past the largest bfloat16: infinity
      {3.3895314e38f, 0x7f7f},                      // the largest bfloat16
      {std::ldexp(1.0f, -133), 0x0001},             // the smallest subnormal
      {std::ldexp(1.0f, -126), 0x0080},             // the smallest normal
      {1.0f + std::ldexp(1.0f, -8), 0x3f80},        // a tie, down to even
      {1.0f + std::ldexp(3.0f, -8), 0x3f82},        // a tie, up to even
      {0.1f, 0x3dcd},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(hex(bits_of(__float2bfloat16(c.in))), hex(c.out))
        << "__float2bfloat16(" << c.in << ")";
  }
  EXPECT_EQ(hex(bits_of(__float2bfloat16(std::nanf("")))), hex(0x7fff));
  EXPECT_EQ(hex(bits_of(__float2bfloat16_rz(std::numeric_limits<float>::max()))), hex(0x7f7f));
  EXPECT_EQ(hex(bits_of(__float2bfloat16_rz(INFINITY))), hex(0x7f80));
}

TEST(Float16Conversion, EveryPatternConvertsToFloatExactlyAndBack) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = __half2float(__ushort_as_half(bits));
    const float bf = __bfloat162float(__ushort_as_bfloat16(bits));
    if (is_nan_bits(kHalf, bits)) {
      EXPECT_TRUE(std::isnan(h)) << hex(bits);
    } else if (is_inf_bits(kHalf, bits)) {
      ASSERT_EQ(h, (bits & 0x8000) != 0 ? -INFINITY : INFINITY) << hex(bits);
    } else {
      ASSERT_EQ(h, static_cast<float>(double_of(exact_of(kHalf, bits)))) << hex(bits);
      ASSERT_EQ(hex(bits_of(__float2half(h))), hex(bits)) << "binary16 round trip";
    }
    if (is_nan_bits(kBfloat, bits)) {
      EXPECT_TRUE(std::isnan(bf)) << hex(bits);
    } else if (is_inf_bits(kBfloat, bits)) {
      ASSERT_EQ(bf, (bits & 0x8000) != 0 ? -INFINITY : INFINITY) << hex(bits);
    } else {
      ASSERT_EQ(bf, static_cast<float>(double_of(exact_of(kBfloat, bits)))) << hex(bits);
      ASSERT_EQ(hex(bits_of(__float2bfloat16(bf))), hex(bits)) << "bfloat16 round trip";
    }
  }
}

TEST(Float16Conversion, FloatsRoundToTheNearestValueTiesToEven) {
  const Ladder half = ladder_of(kHalf);
  const Ladder bfloat = ladder_of(kBfloat);
  int checked = 0;
  for (const float f : probe_floats(half)) {
    ASSERT_EQ(hex(bits_of(__float2half(f))), hex(nearest(half, static_cast<double>(f))))
        << "__float2half(" << f << ")";
    ++checked;
  }
  for (const float f : probe_floats(bfloat)) {
    ASSERT_EQ(hex(bits_of(__float2bfloat16(f))), hex(nearest(bfloat, static_cast<double>(f))))
        << "__float2bfloat16(" << f << ")";
    ++checked;
  }
  EXPECT_GT(checked, 40000);
}

TEST(Float16Conversion, ToIntTruncatesAndSaturates) {
  EXPECT_EQ(__half2int_rz(__float2half(-2.75f)), -2);
  EXPECT_EQ(__half2int_rz(CUDART_NAN_FP16), 0);
  EXPECT_EQ(__half2int_rz(CUDART_INF_FP16), std::numeric_limits<int>::max());
  EXPECT_EQ(__bfloat162int_rz(CUDART_MAX_NORMAL_BF16), std::numeric_limits<int>::max());
  EXPECT_EQ(__bfloat162int_rz(__float2bfloat16(-3e38f)), std::numeric_limits<int>::min());
  EXPECT_EQ(__half2float(__int2half_rn(2049)), 2048.0f) << "2049 is a tie between 2048 and 2050";
}

// ---- arithmetic --------------------------------------------------------------------------------

// Random finite patterns of a format, a fifth of them subnormal or near the extremes.
std::vector<std::uint16_t> random_patterns(FormatSpec f, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> any(0, 0xffff);
  std::vector<std::uint16_t> out;
  while (static_cast<int>(out.size()) < count) {
    const auto bits = static_cast<std::uint16_t>(any(rng));
    if (!is_nan_bits(f, bits) && !is_inf_bits(f, bits)) {
      out.push_back(bits);
    }
  }
  return out;
}

TEST(Float16Arithmetic, SumsDifferencesAndProductsAreCorrectlyRounded) {
  const Ladder half = ladder_of(kHalf);
  const Ladder bfloat = ladder_of(kBfloat);
  const std::vector<std::uint16_t> a = random_patterns(kHalf, 4000, 1);
  const std::vector<std::uint16_t> b = random_patterns(kHalf, 4000, 2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const __half x = __ushort_as_half(a[i]);
    const __half y = __ushort_as_half(b[i]);
    const double dx = double_of(exact_of(kHalf, a[i]));
    const double dy = double_of(exact_of(kHalf, b[i]));
    // A sum or product of two halves is exact in double: the reference rounds it once.
    ASSERT_EQ(hex(bits_of(__hadd(x, y))), hex(nearest(half, dx + dy))) << dx << " + " << dy;
    ASSERT_EQ(hex(bits_of(__hsub(x, y))), hex(nearest(half, dx - dy))) << dx << " - " << dy;
    ASSERT_EQ(hex(bits_of(__hmul(x, y))), hex(nearest(half, dx * dy))) << dx << " * " << dy;
  }
  const std::vector<std::uint16_t> c = random_patterns(kBfloat, 4000, 3);
  const std::vector<std::uint16_t> d = random_patterns(kBfloat, 4000, 4);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const __nv_bfloat16 x = __ushort_as_bfloat16(c[i]);
    const __nv_bfloat16 y = __ushort_as_bfloat16(d[i]);
    const double dx = double_of(exact_of(kBfloat, c[i]));
    const double dy = double_of(exact_of(kBfloat, d[i]));
    if (std::fabs(std::log2(std::fabs(dx) + 1e-300) - std::log2(std::fabs(dy) + 1e-300)) < 40) {
      ASSERT_EQ(hex(bits_of(__hadd(x, y))), hex(nearest(bfloat, dx + dy))) << dx << " + " << dy;
    }
    ASSERT_EQ(hex(bits_of(__hmul(x, y))), hex(nearest(bfloat, dx * dy))) << dx << " * " << dy;
  }
}

// __hfma is device code in CUDA's header: the triples go through a kernel.
__global__ void fused_multiply_add(const __half* a, const __half* b, const __half* c, __half* out,
                                   int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    out[i] = __hfma(a[i], b[i], c[i]);
  }
}

TEST(Float16Arithmetic, FusedMultiplyAddRoundsOnce) {
  GPULAB_REQUIRE_DEVICE();
  // First a case where rounding the product first gives another answer:
  // (1 + 2^-10)(1 - 2^-10) - 1 = -2^-20, kept by one rounding, lost by two (the product rounds
  // to 1). Then random triples within a product's reach of c, against the reference on the exact
  // value (skipped where the product and c do not add exactly in double).
  std::vector<__half> a{__float2half(1.0f + std::ldexp(1.0f, -10))};
  std::vector<__half> b{__float2half(1.0f - std::ldexp(1.0f, -10))};
  std::vector<__half> c{__float2half(-1.0f)};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  for (int i = 0; i < 20000; ++i) {
    a.push_back(__float2half(unit(rng)));
    b.push_back(__float2half(unit(rng)));
    c.push_back(__float2half(unit(rng)));
  }
  const int n = static_cast<int>(a.size());
  gpulab::DeviceBuffer<__half> da(a.size());
  gpulab::DeviceBuffer<__half> db(a.size());
  gpulab::DeviceBuffer<__half> dc(a.size());
  gpulab::DeviceBuffer<__half> dout(a.size());
  const std::size_t bytes = a.size() * sizeof(__half);
  GPULAB_CHECK(cudaMemcpy(da.data(), a.data(), bytes, cudaMemcpyHostToDevice));
  GPULAB_CHECK(cudaMemcpy(db.data(), b.data(), bytes, cudaMemcpyHostToDevice));
  GPULAB_CHECK(cudaMemcpy(dc.data(), c.data(), bytes, cudaMemcpyHostToDevice));
  fused_multiply_add<<<(n + 255) / 256, 256>>>(da.data(), db.data(), dc.data(), dout.data(), n);
  GPULAB_CHECK(cudaGetLastError());
  std::vector<__half> out(a.size());
  GPULAB_CHECK(cudaMemcpy(out.data(), dout.data(), bytes, cudaMemcpyDeviceToHost));

  EXPECT_EQ(__half2float(out[0]), -std::ldexp(1.0f, -20));
  EXPECT_EQ(__half2float(__hadd(__hmul(a[0], b[0]), c[0])), 0.0f);
  const Ladder half = ladder_of(kHalf);
  int checked = 0;
  for (int i = 1; i < n; ++i) {
    const double dx = static_cast<double>(__half2float(a[i]));
    const double dy = static_cast<double>(__half2float(b[i]));
    const double dz = static_cast<double>(__half2float(c[i]));
    const double product = dx * dy;
    const double exact = product + dz;
    if (exact - product != dz || exact - dz != product) {
      continue;  // not exact in double: the reference would round twice
    }
    ASSERT_EQ(hex(bits_of(out[i])), hex(nearest(half, exact))) << dx << " * " << dy << " + " << dz;
    ++checked;
  }
  EXPECT_GT(checked, 19000);
}

TEST(Float16Arithmetic, ComparisonsMaxMinAndSpecialValues) {
  const __half one = __float2half(1.0f);
  const __half two = __float2half(2.0f);
  const __half nan = CUDART_NAN_FP16;
  EXPECT_TRUE(__hlt(one, two));
  EXPECT_TRUE(__hge(two, one));
  EXPECT_FALSE(__heq(nan, nan));
  EXPECT_FALSE(__hne(nan, one)) << "ordered: false with a NaN";
  EXPECT_TRUE(__hneu(nan, one)) << "unordered: true with a NaN";
  EXPECT_TRUE(__hisnan(nan));
  EXPECT_EQ(__hisinf(CUDART_INF_FP16), 1);
  EXPECT_EQ(__hisinf(__hneg(CUDART_INF_FP16)), -1);
  EXPECT_EQ(__half2float(__hmax(one, nan)), 1.0f) << "a NaN loses to a number";
  EXPECT_EQ(__half2float(__hmin(nan, two)), 2.0f);
  EXPECT_EQ(hex(bits_of(__hmax(nan, nan))), hex(0x7fff));
  EXPECT_EQ(hex(bits_of(__hmax(CUDART_NEG_ZERO_FP16, CUDART_ZERO_FP16))), hex(0x0000)) << "+0 > -0";
  EXPECT_EQ(hex(bits_of(__hmax(CUDART_ZERO_FP16, CUDART_NEG_ZERO_FP16))), hex(0x0000));
  EXPECT_EQ(hex(bits_of(__hmin(CUDART_ZERO_FP16, CUDART_NEG_ZERO_FP16))), hex(0x8000)) << "-0 < +0";
  EXPECT_EQ(hex(bits_of(__hmin(CUDART_NEG_ZERO_FP16, CUDART_ZERO_FP16))), hex(0x8000));
  EXPECT_EQ(__half2float(__habs(__float2half(-3.5f))), 3.5f);
  EXPECT_EQ(__half2float(__hadd(CUDART_MAX_NORMAL_FP16, CUDART_MAX_NORMAL_FP16)), INFINITY);
  EXPECT_EQ(__half2float(one + two * two), 5.0f) << "the operators";
  const __half2 pair = __floats2half2_rn(1.5f, -2.0f);
  const float2 back = __half22float2(__hmul2(pair, pair));
  EXPECT_EQ(back.x, 2.25f);
  EXPECT_EQ(back.y, 4.0f);
  EXPECT_EQ(__low2float(pair), 1.5f);
  EXPECT_EQ(__high2float(pair), -2.0f);
  const __nv_bfloat16 b = __float2bfloat16(3.0f);
  EXPECT_EQ(__bfloat162float(__hmul(b, b) + b), 12.0f);
  EXPECT_TRUE(__hisnan(CUDART_NAN_BF16));
}

// ---- device code -------------------------------------------------------------------------------

__global__ void scale_and_accumulate(const __half* x, const __nv_bfloat16* y, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    const __half doubled = __hmul(x[i], __float2half(2.0f));
    const __half sum = __shfl_xor_sync(0xffffffffu, doubled, 1) + doubled;  // lanes i and i ^ 1
    out[i] = __half2float(sum) + __bfloat162float(__hfma(y[i], y[i], y[i]));
  }
}

TEST(Float16Device, HalfAndBfloat16InAKernelAndThroughAShuffle) {
  GPULAB_REQUIRE_DEVICE();
  constexpr int n = 64;
  std::vector<__half> x(n);
  std::vector<__nv_bfloat16> y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = __float2half(0.25f * static_cast<float>(i));
    y[i] = __float2bfloat16(static_cast<float>(i % 5));
  }
  gpulab::DeviceBuffer<__half> dx(n);
  gpulab::DeviceBuffer<__nv_bfloat16> dy(n);
  gpulab::DeviceBuffer<float> dout(n);
  GPULAB_CHECK(cudaMemcpy(dx.data(), x.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  GPULAB_CHECK(cudaMemcpy(dy.data(), y.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  scale_and_accumulate<<<2, 32>>>(dx.data(), dy.data(), dout.data(), n);
  GPULAB_CHECK(cudaGetLastError());
  std::vector<float> out(n);
  GPULAB_CHECK(cudaMemcpy(out.data(), dout.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const float v = static_cast<float>(i % 5);
    const float expected =
        0.5f * static_cast<float>(i) + 0.5f * static_cast<float>(i ^ 1) + v * v + v;
    EXPECT_EQ(out[i], expected) << "element " << i;
  }
}

#if GPULAB_BACKEND_SIM
__global__ void copy_halves(const __half* in, __half* out) {
  out[threadIdx.x] = in[threadIdx.x];
}

TEST(Float16Device, AWarpsHalfLoadsCountTwoBytesPerLane) {
  GPULAB_REQUIRE_COUNTING();
  gpulab::DeviceBuffer<__half> in(32);
  gpulab::DeviceBuffer<__half> out(32);
  const std::vector<gpulab::CountedLaunch> launches = gpulab::sim::count_launches([&] {
    copy_halves<<<1, 32>>>(in.data(), out.data());
    GPULAB_CHECK(cudaGetLastError());
  });
  ASSERT_EQ(launches.size(), 1u);
  const gpulab::GlobalAccessCounts& load = launches.front().counters.global_load;
  EXPECT_EQ(load.requests, 1u);
  EXPECT_EQ(load.bytes_requested, 64u) << "32 lanes of 2 bytes";
  EXPECT_EQ(load.sectors, 2u) << "64 contiguous bytes: two 32-byte sectors";
}
#endif

TEST(Float16Device, TypesHaveCudasSizesAndAlignments) {
  static_assert(sizeof(__half) == 2 && alignof(__half) == 2);
  static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4);
  static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2);
  static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4);
  SUCCEED();
}

}  // namespace
