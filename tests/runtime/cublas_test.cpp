// cuBLAS SGEMM and strided-batched SGEMM: results against a double-precision CPU reference, the
// BLAS conventions for alpha, beta and k, argument checking, stream order and pointer modes. The
// same tests run on real cuBLAS (cuda backend; they skip without a device) and on the sim's CPU
// implementation; a few sim-only tests pin down what cuBLAS leaves undefined.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/runtime/cublas_check.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "test_device.hpp"

namespace {

using gpulab::DeviceBuffer;
using gpulab::PinnedBuffer;
using gpulab::Stream;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Fills the padding rows of C (ldc > m): a finite value no GEMM here produces, compared exactly,
// so a write past row m shows.
constexpr float kCPadding = -999.0f;

// Tolerance of an FP32 GEMM element against the double reference: the numeric policy's
// (gpulab/core/numeric.hpp) for a value accumulated over k terms, with atol scaled by the sum of
// the terms' magnitudes:
//   |got - expected| <= allowed(expected) of scaled(tolerance_for(fp32, k), magnitude),
//   magnitude = |alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|
// i.e. sqrt(k) * (1e-5 * magnitude + 1.3e-6 * |expected|). Scaled by the sum of magnitudes, not by
// |expected|, which cancellation can make tiny. FP32 rounding of random-sign sums grows like
// sqrt(k) * 2^-24 (about 6e-8); the policy leaves room for any summation order (blocked, split-k,
// FMA), while a wrong element, transpose, leading dimension or scalar is off by orders of
// magnitude more.
gpulab::Tolerance gemm_tolerance(int k, double magnitude) {
  return gpulab::scaled(gpulab::tolerance_for(gpulab::DType::fp32, std::max(k, 1)), magnitude);
}

/// A cuBLAS handle for one test, destroyed at the end of it. // non-copyable
class CublasHandle {
 public:
  CublasHandle() { GPULAB_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() { GPULAB_CHECK_NOEXCEPT(cublasDestroy(handle_)); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  operator cublasHandle_t() const noexcept { return handle_; }  // NOLINT: handle conversion

 private:
  cublasHandle_t handle_ = nullptr;
};

const char* op_name(cublasOperation_t op) {
  switch (op) {
    case CUBLAS_OP_N:
      return "N";
    case CUBLAS_OP_T:
      return "T";
    case CUBLAS_OP_C:
      return "C";
    default:
      return "?";
  }
}

/// The shape, leading dimensions and scalars of one SGEMM (column-major, as cuBLAS).
struct Gemm {
  cublasOperation_t transa = CUBLAS_OP_N;
  cublasOperation_t transb = CUBLAS_OP_N;
  int m = 0;
  int n = 0;
  int k = 0;
  int lda = 1;
  int ldb = 1;
  int ldc = 1;
  float alpha = 1.0f;
  float beta = 0.0f;

  // A is stored a_rows x a_cols (op(A) is m x k), B is stored b_rows x b_cols (op(B) is k x n).
  [[nodiscard]] int a_rows() const { return transa == CUBLAS_OP_N ? m : k; }
  [[nodiscard]] int a_cols() const { return transa == CUBLAS_OP_N ? k : m; }
  [[nodiscard]] int b_rows() const { return transb == CUBLAS_OP_N ? k : n; }
  [[nodiscard]] int b_cols() const { return transb == CUBLAS_OP_N ? n : k; }
  [[nodiscard]] std::size_t a_size() const { return elements(lda, a_cols()); }
  [[nodiscard]] std::size_t b_size() const { return elements(ldb, b_cols()); }
  [[nodiscard]] std::size_t c_size() const { return elements(ldc, n); }

  /// op(A)(i, p) and op(B)(p, j) of column-major storage.
  [[nodiscard]] float op_a(const float* a, int i, int p) const {
    return transa == CUBLAS_OP_N ? a[index(i, p, lda)] : a[index(p, i, lda)];
  }
  [[nodiscard]] float op_b(const float* b, int p, int j) const {
    return transb == CUBLAS_OP_N ? b[index(p, j, ldb)] : b[index(j, p, ldb)];
  }

  static std::size_t elements(int ld, int cols) {
    return static_cast<std::size_t>(ld) * static_cast<std::size_t>(cols);
  }
  static std::size_t index(int row, int col, int ld) {
    return static_cast<std::size_t>(row) + elements(ld, col);
  }
};

/// A Gemm whose leading dimensions exceed the minimum (by 3 for A, 5 for B, 4 for C), so the
/// padding rows are there to be (wrongly) read or written.
Gemm padded(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, float alpha,
            float beta) {
  Gemm g;
  g.transa = transa;
  g.transb = transb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = std::max(1, g.a_rows()) + 3;
  g.ldb = std::max(1, g.b_rows()) + 5;
  g.ldc = std::max(1, m) + 4;
  g.alpha = alpha;
  g.beta = beta;
  return g;
}

/// A rows x cols column-major matrix with leading dimension ld: values uniform in [-1, 1] from
/// `seed`, padding rows set to `padding`.
std::vector<float> matrix(int rows, int cols, int ld, std::uint32_t seed, float padding) {
  std::vector<float> v(Gemm::elements(ld, cols), padding);
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int j = 0; j < cols; ++j) {
    for (int i = 0; i < rows; ++i) {
      v[Gemm::index(i, j, ld)] = uniform(generator);
    }
  }
  return v;
}

/// Host copies of A, B and C for one Gemm. The padding of A and B is NaN: reading it poisons C.
struct Operands {
  std::vector<float> a;
  std::vector<float> b;
  std::vector<float> c;
};

Operands random_operands(const Gemm& g, std::uint32_t seed) {
  return {matrix(g.a_rows(), g.a_cols(), g.lda, seed, kNaN),
          matrix(g.b_rows(), g.b_cols(), g.ldb, seed + 1, kNaN),
          matrix(g.m, g.n, g.ldc, seed + 2, kCPadding)};
}

/// What C must hold afterwards, element by element, with the tolerance of each.
struct Expected {
  std::vector<double> value;
  std::vector<double> tolerance;
};

/// C after the GEMM, in double: alpha * op(A) * op(B) + beta * C inside the m x n block, the old
/// value (tolerance 0) in the padding. BLAS conventions: C is not read when beta == 0; A and B
/// are not read when alpha == 0 or k == 0.
void reference_into(const Gemm& g, const float* a, const float* b, const float* c, double* value,
                    double* tolerance) {
  for (std::size_t i = 0; i < g.c_size(); ++i) {
    value[i] = static_cast<double>(c[i]);
    tolerance[i] = 0.0;
  }
  const double alpha = static_cast<double>(g.alpha);
  const double beta = static_cast<double>(g.beta);
  for (int j = 0; j < g.n; ++j) {
    for (int i = 0; i < g.m; ++i) {
      double sum = 0.0;
      double magnitude = 0.0;
      if (g.alpha != 0.0f) {
        for (int p = 0; p < g.k; ++p) {
          const double product =
              static_cast<double>(g.op_a(a, i, p)) * static_cast<double>(g.op_b(b, p, j));
          sum += product;
          magnitude += std::abs(product);
        }
      }
      const std::size_t at = Gemm::index(i, j, g.ldc);
      double want = alpha * sum;
      double bound = std::abs(alpha) * magnitude;
      if (g.beta != 0.0f) {
        want += beta * static_cast<double>(c[at]);
        bound += std::abs(beta * static_cast<double>(c[at]));
      }
      value[at] = want;
      tolerance[at] = gemm_tolerance(g.k, bound).allowed(want);
    }
  }
}

Expected reference(const Gemm& g, const Operands& x) {
  Expected e{std::vector<double>(x.c.size()), std::vector<double>(x.c.size())};
  reference_into(g, x.a.data(), x.b.data(), x.c.data(), e.value.data(), e.tolerance.data());
  return e;
}

/// Every element within its tolerance (an expected NaN must be NaN); otherwise the number of
/// mismatches and the first one: index, row and column (for leading dimension ld), expected,
/// got, tolerance.
testing::AssertionResult matches(const std::vector<float>& got, const Expected& want, int ld) {
  if (got.size() != want.value.size()) {
    return testing::AssertionFailure()
           << "got " << got.size() << " elements, expected " << want.value.size();
  }
  std::size_t mismatches = 0;
  std::ostringstream first;
  first << std::setprecision(9);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    const double w = want.value[i];
    const double tolerance = want.tolerance[i];
    const bool ok = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= tolerance;  // NaN fails
    if (!ok) {
      if (mismatches == 0) {
        const auto column_length = static_cast<std::size_t>(ld);
        first << "C[" << i << "] (row " << i % column_length << ", column " << i / column_length
              << "): expected " << w << ", got " << g << ", tolerance " << tolerance;
      }
      ++mismatches;
    }
  }
  if (mismatches > 0) {
    return testing::AssertionFailure()
           << mismatches << " of " << got.size() << " elements differ; first: " << first.str();
  }
  return testing::AssertionSuccess();
}

/// Device copy of a host vector (empty stays empty). Synchronizes the device, so later work on
/// any stream sees the data.
DeviceBuffer<float> upload(const std::vector<float>& host) {
  DeviceBuffer<float> buffer(host.size());
  if (!host.empty()) {
    buffer.copy_from(host);
  }
  GPULAB_CHECK(cudaDeviceSynchronize());
  return buffer;
}

/// Runs cublasSgemm on device copies of the operands and returns C once the device is done.
std::vector<float> run_sgemm(cublasHandle_t handle, const Gemm& g, const Operands& x) {
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  GPULAB_CHECK(cublasSgemm(handle, g.transa, g.transb, g.m, g.n, g.k, &g.alpha, a.data(), g.lda,
                           b.data(), g.ldb, &g.beta, c.data(), g.ldc));
  GPULAB_CHECK(cudaDeviceSynchronize());
  return c.to_vector();
}

/// A 384^3 GEMM queued on the handle's stream. On sim it keeps the device busy for milliseconds,
/// so work queued after it is still pending when the host goes on: reading alpha, beta or inputs
/// at the wrong time then gives a wrong result instead of a lucky right one.
class BusyWork {
 public:
  BusyWork(cublasHandle_t handle, cudaStream_t stream) : a_(kSize), b_(kSize), c_(kSize) {
    for (DeviceBuffer<float>* buffer : {&a_, &b_, &c_}) {
      GPULAB_CHECK(cudaMemsetAsync(buffer->data(), 0, buffer->bytes(), stream));
    }
    const float one = 1.0f;
    GPULAB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a_.data(), kN,
                             b_.data(), kN, &one, c_.data(), kN));
  }

 private:
  static constexpr int kN = 384;
  static constexpr std::size_t kSize = static_cast<std::size_t>(kN) * kN;
  DeviceBuffer<float> a_;
  DeviceBuffer<float> b_;
  DeviceBuffer<float> c_;
};

// ------------------------------------------------------------------------------------------------
// Results
// ------------------------------------------------------------------------------------------------

TEST(CublasSgemm, EveryOperationPairMatchesTheReferenceAndLeavesPaddingAlone) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  // CUBLAS_OP_C on real data is the transpose.
  for (const cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
    for (const cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
      SCOPED_TRACE(std::string("transa ") + op_name(transa) + ", transb " + op_name(transb));
      const Gemm g = padded(transa, transb, 37, 23, 51, 1.5f, -0.75f);
      const Operands x = random_operands(g, 11);
      EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
    }
  }
}

// Larger than one block in every dimension on sim (tiles of 128 x 96, depth blocks of 256), with
// sizes that leave partial tiles and micro-tiles at every edge.
TEST(CublasSgemm, ProblemsSpanningManyTilesMatchTheReference) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  for (const cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    for (const cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      SCOPED_TRACE(std::string("transa ") + op_name(transa) + ", transb " + op_name(transb));
      const Gemm g = padded(transa, transb, 263, 197, 517, 1.0f, 0.5f);
      const Operands x = random_operands(g, 23);
      EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
    }
  }
}

TEST(CublasSgemm, AlphaAndBetaCombinationsMatchTheReference) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const float scalars[][2] = {{1.0f, 0.0f},  {1.0f, 1.0f},   {-2.0f, 0.5f},
                              {0.5f, -1.0f}, {0.0f, 0.0f},   {0.0f, 1.0f},
                              {0.0f, 2.5f},  {3.0f, -0.25f}, {-1.0f, 1.0f}};
  for (const auto& [alpha, beta] : scalars) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta));
    const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_T, 37, 23, 51, alpha, beta);
    const Operands x = random_operands(g, 31);
    EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
  }
}

TEST(CublasSgemm, BetaZeroWritesCWithoutReadingIt) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_T, CUBLAS_OP_N, 37, 23, 51, 1.25f, 0.0f);
  Operands x = random_operands(g, 41);
  // NaN and Inf in C: 0 * NaN is NaN, so any read of C would show.
  for (int j = 0; j < g.n; ++j) {
    for (int i = 0; i < g.m; ++i) {
      x.c[Gemm::index(i, j, g.ldc)] =
          (i + j) % 2 == 0 ? kNaN : std::numeric_limits<float>::infinity();
    }
  }
  EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
}

TEST(CublasSgemm, AlphaZeroOnlyScalesC) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 37, 23, 51, 0.0f, -1.5f);
  Operands x = random_operands(g, 43);
#if GPULAB_BACKEND_SIM
  // The BLAS convention: A and B need not be set when alpha == 0. The sim does not read them;
  // cuBLAS does not document it, so this part is sim-only.
  std::fill(x.a.begin(), x.a.end(), kNaN);
  std::fill(x.b.begin(), x.b.end(), kNaN);
#endif
  EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
}

TEST(CublasSgemm, KZeroScalesCByBeta) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  for (const float beta : {0.5f, 0.0f}) {
    SCOPED_TRACE("beta " + std::to_string(beta));
    const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 37, 23, 0, 2.0f, beta);
    Operands x = random_operands(g, 47);
    if (beta == 0.0f) {
      x.c[0] = kNaN;  // beta == 0: C is written without being read, even when k == 0
    }
    EXPECT_TRUE(matches(run_sgemm(handle, g, x), reference(g, x), g.ldc));
  }
}

TEST(CublasSgemm, EmptyProblemsSucceedAndTouchNothing) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 5, 4, 3, 1.0f, 0.0f);
  const Operands x = random_operands(g, 53);
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 0, g.n, g.k, &alpha, a.data(), g.lda,
                        b.data(), g.ldb, &beta, c.data(), g.ldc),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.m, 0, g.k, &alpha, a.data(), g.lda,
                        b.data(), g.ldb, &beta, c.data(), g.ldc),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(
      cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &alpha, a.data(),
                                g.lda, 0, b.data(), g.ldb, 0, &beta, c.data(), g.ldc, 0, 0),
      CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(c.to_vector(), x.c);
}

TEST(CublasSgemm, RepeatedRunsAreBitwiseIdentical) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_T, CUBLAS_OP_N, 200, 150, 300, 1.0f, 0.5f);
  const Operands x = random_operands(g, 59);
  const std::vector<float> first = run_sgemm(handle, g, x);
  const std::vector<float> second = run_sgemm(handle, g, x);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first[i], second[i]) << "C[" << i << "] differs between two identical runs";
  }
}

// ------------------------------------------------------------------------------------------------
// Argument checking
// ------------------------------------------------------------------------------------------------

/// Every argument of a (strided-batched) SGEMM call.
struct Call {
  cublasOperation_t transa = CUBLAS_OP_N;
  cublasOperation_t transb = CUBLAS_OP_N;
  int m = 5;
  int n = 4;
  int k = 3;
  const float* alpha = nullptr;
  const float* a = nullptr;
  int lda = 5;
  const float* b = nullptr;
  int ldb = 3;
  const float* beta = nullptr;
  float* c = nullptr;
  int ldc = 5;
  int batch_count = 1;
};

TEST(CublasSgemm, InvalidArgumentsAreRejectedAndTouchNothing) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  // Buffers large enough for every variant below, so only the arguments are wrong.
  const std::vector<float> original = matrix(64, 1, 64, 61, 0.0f);
  const DeviceBuffer<float> a = upload(original);
  const DeviceBuffer<float> b = upload(original);
  DeviceBuffer<float> c = upload(original);
  const float one = 1.0f;
  Call valid;
  valid.alpha = &one;
  valid.beta = &one;
  valid.a = a.data();
  valid.b = b.data();
  valid.c = c.data();

  const auto invalid_op = static_cast<cublasOperation_t>(42);
  const std::vector<std::pair<const char*, std::function<void(Call&)>>> cases = {
      {"m < 0", [](Call& x) { x.m = -1; }},
      {"n < 0", [](Call& x) { x.n = -1; }},
      {"k < 0", [](Call& x) { x.k = -1; }},
      {"transa invalid", [=](Call& x) { x.transa = invalid_op; }},
      {"transb invalid", [=](Call& x) { x.transb = invalid_op; }},
      {"lda < m (transa N)", [](Call& x) { x.lda = 4; }},
      {"lda < k (transa T)",
       [](Call& x) {
         x.transa = CUBLAS_OP_T;
         x.lda = 2;
       }},
      {"ldb < k (transb N)", [](Call& x) { x.ldb = 2; }},
      {"ldb < n (transb T)",
       [](Call& x) {
         x.transb = CUBLAS_OP_T;
         x.ldb = 3;
       }},
      {"ldc < m", [](Call& x) { x.ldc = 4; }},
      {"alpha null", [](Call& x) { x.alpha = nullptr; }},
      {"beta null", [](Call& x) { x.beta = nullptr; }},
  };
  for (const auto& [what, edit] : cases) {
    SCOPED_TRACE(what);
    Call x = valid;
    edit(x);
    EXPECT_EQ(cublasSgemm(handle, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b,
                          x.ldb, x.beta, x.c, x.ldc),
              CUBLAS_STATUS_INVALID_VALUE);
#if GPULAB_BACKEND_CUDA
    // cuBLAS 13.0's strided-batched SGEMM reads a null alpha (seen on an H200: a segmentation
    // fault inside libcublas), where cublasSgemm returns CUBLAS_STATUS_INVALID_VALUE; the sim's
    // cuBLAS rejects both, which only the sim can be held to.
    const bool checked_by_library = x.alpha != nullptr && x.beta != nullptr;
#else
    const bool checked_by_library = true;
#endif
    if (checked_by_library) {
      EXPECT_EQ(cublasSgemmStridedBatched(handle, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a,
                                          x.lda, 0, x.b, x.ldb, 0, x.beta, x.c, x.ldc, 0, 1),
                CUBLAS_STATUS_INVALID_VALUE);
    }
    GPULAB_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(c.to_vector(), original);
  }

  const Call x = valid;
  EXPECT_EQ(cublasSgemmStridedBatched(handle, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a,
                                      x.lda, 0, x.b, x.ldb, 0, x.beta, x.c, x.ldc, 0, -1),
            CUBLAS_STATUS_INVALID_VALUE)
      << "batchCount < 0";
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(c.to_vector(), original);
}

TEST(CublasSgemm, NullHandleIsNotInitialized) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<float> buffer(64);
  float* data = buffer.data();
  const float one = 1.0f;
  EXPECT_EQ(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, data, 2, data, 2, &one,
                        data, 2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSgemmStridedBatched(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, data, 2, 4,
                                      data, 2, 4, &one, data, 2, 4, 2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  EXPECT_EQ(cublasSetPointerMode(nullptr, CUBLAS_POINTER_MODE_DEVICE),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasGetPointerMode(nullptr, &pointer_mode), CUBLAS_STATUS_NOT_INITIALIZED);
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  EXPECT_EQ(cublasSetMathMode(nullptr, CUBLAS_PEDANTIC_MATH), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasGetMathMode(nullptr, &math_mode), CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST(CublasModes, PointerAndMathModesRoundTripOnTheHandle) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
  ASSERT_EQ(cublasGetPointerMode(handle, &pointer_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(pointer_mode, CUBLAS_POINTER_MODE_HOST) << "the default";
  ASSERT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGetPointerMode(handle, &pointer_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(pointer_mode, CUBLAS_POINTER_MODE_DEVICE);

  cublasMath_t math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
  ASSERT_EQ(cublasGetMathMode(handle, &math_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math_mode, CUBLAS_DEFAULT_MATH) << "the default";
  ASSERT_EQ(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGetMathMode(handle, &math_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math_mode, CUBLAS_TF32_TENSOR_OP_MATH);
  const auto pedantic_exact = static_cast<cublasMath_t>(
      CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  ASSERT_EQ(cublasSetMathMode(handle, pedantic_exact), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGetMathMode(handle, &math_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math_mode, pedantic_exact);
}

// ------------------------------------------------------------------------------------------------
// Strided batched
// ------------------------------------------------------------------------------------------------

/// Strides between the batch entries of A, B and C (elements) and their number.
struct Batch {
  long long stride_a = 0;
  long long stride_b = 0;
  long long stride_c = 0;
  int count = 1;
};

/// `count` entries of a matrix, `stride` elements apart (stride 0: one shared entry). Each
/// entry has its own random values; gaps between entries hold `padding`.
std::vector<float> batched_matrix(int rows, int cols, int ld, long long stride, int count,
                                  std::uint32_t seed, float padding) {
  const std::size_t entry = Gemm::elements(ld, cols);
  const std::size_t entries = stride == 0 ? 1 : static_cast<std::size_t>(count);
  const auto step = static_cast<std::size_t>(stride);
  std::vector<float> all(entries == 1 ? entry : step * (entries - 1) + entry, padding);
  for (std::size_t e = 0; e < entries; ++e) {
    const std::vector<float> one =
        matrix(rows, cols, ld, seed + 7 * static_cast<std::uint32_t>(e), padding);
    std::copy(one.begin(), one.end(), all.begin() + static_cast<std::ptrdiff_t>(e * step));
  }
  return all;
}

/// Runs cublasSgemmStridedBatched and checks every entry (and the gaps) against the reference.
void expect_batched_matches(cublasHandle_t handle, const Gemm& g, const Batch& batch,
                            std::uint32_t seed) {
  const Operands x{
      batched_matrix(g.a_rows(), g.a_cols(), g.lda, batch.stride_a, batch.count, seed, kNaN),
      batched_matrix(g.b_rows(), g.b_cols(), g.ldb, batch.stride_b, batch.count, seed + 1, kNaN),
      batched_matrix(g.m, g.n, g.ldc, batch.stride_c, batch.count, seed + 2, kCPadding)};
  Expected want{std::vector<double>(x.c.begin(), x.c.end()), std::vector<double>(x.c.size())};
  for (int e = 0; e < batch.count; ++e) {
    const auto offset = [e](long long stride) { return static_cast<std::size_t>(stride * e); };
    reference_into(g, x.a.data() + offset(batch.stride_a), x.b.data() + offset(batch.stride_b),
                   x.c.data() + offset(batch.stride_c), want.value.data() + offset(batch.stride_c),
                   want.tolerance.data() + offset(batch.stride_c));
  }

  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  ASSERT_EQ(cublasSgemmStridedBatched(handle, g.transa, g.transb, g.m, g.n, g.k, &g.alpha, a.data(),
                                      g.lda, batch.stride_a, b.data(), g.ldb, batch.stride_b,
                                      &g.beta, c.data(), g.ldc, batch.stride_c, batch.count),
            CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(c.to_vector(), want, g.ldc));
}

TEST(CublasSgemmStridedBatched, EveryEntryMatchesTheReference) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_T, CUBLAS_OP_N, 37, 23, 51, 0.75f, 0.5f);
  // Gaps between the entries: reading or writing past an entry shows.
  const Batch batch{static_cast<long long>(g.a_size()) + 7, static_cast<long long>(g.b_size()) + 11,
                    static_cast<long long>(g.c_size()) + 13, 4};
  expect_batched_matches(handle, g, batch, 71);
}

TEST(CublasSgemmStridedBatched, StrideZeroBroadcastsOneAOrB) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_T, 37, 23, 51, 1.0f, 0.0f);
  const auto size_a = static_cast<long long>(g.a_size());
  const auto size_b = static_cast<long long>(g.b_size());
  const auto size_c = static_cast<long long>(g.c_size());
  {
    SCOPED_TRACE("strideA 0");
    expect_batched_matches(handle, g, Batch{0, size_b, size_c, 3}, 73);
  }
  {
    SCOPED_TRACE("strideB 0");
    expect_batched_matches(handle, g, Batch{size_a, 0, size_c, 3}, 79);
  }
}

TEST(CublasSgemmStridedBatched, ManySmallEntriesMatchTheReference) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_C, CUBLAS_OP_N, 9, 7, 5, -1.0f, 2.0f);
  const Batch batch{static_cast<long long>(g.a_size()), static_cast<long long>(g.b_size()),
                    static_cast<long long>(g.c_size()), 100};
  expect_batched_matches(handle, g, batch, 83);
}

// ------------------------------------------------------------------------------------------------
// Streams and pointer modes
// ------------------------------------------------------------------------------------------------

TEST(CublasSgemm, ResultIsProducedInStreamOrderOnTheHandlesStream) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  Stream stream;  // non-blocking: no implicit ordering with the legacy default stream
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  ASSERT_EQ(cublasGetStream(handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream.get());

  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 37, 23, 51, 1.0f, 1.0f);
  const Operands x = random_operands(g, 89);
  const auto pinned = [](const std::vector<float>& host) {
    PinnedBuffer<float> buffer(host.size());
    std::copy(host.begin(), host.end(), buffer.data());
    return buffer;
  };
  const PinnedBuffer<float> host_a = pinned(x.a);
  const PinnedBuffer<float> host_b = pinned(x.b);
  const PinnedBuffer<float> host_c = pinned(x.c);
  PinnedBuffer<float> result(x.c.size());
  DeviceBuffer<float> a(x.a.size());
  DeviceBuffer<float> b(x.b.size());
  DeviceBuffer<float> c(x.c.size());

  // Everything on one stream, nothing synchronized until the end.
  const BusyWork busy(handle, stream);
  a.copy_from_async(host_a.span(), stream);
  b.copy_from_async(host_b.span(), stream);
  c.copy_from_async(host_c.span(), stream);
  ASSERT_EQ(cublasSgemm(handle, g.transa, g.transb, g.m, g.n, g.k, &g.alpha, a.data(), g.lda,
                        b.data(), g.ldb, &g.beta, c.data(), g.ldc),
            CUBLAS_STATUS_SUCCESS);
  c.copy_to_async(result.span(), stream);
  GPULAB_CHECK(cudaStreamSynchronize(stream));

  const std::vector<float> produced(result.span().begin(), result.span().end());
  EXPECT_TRUE(matches(produced, reference(g, x), g.ldc));
}

TEST(CublasSgemm, HostScalarsAreReadWhenTheCallIsMade) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  Stream stream;
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_T, 37, 23, 51, 0.5f, 2.0f);
  const Operands x = random_operands(g, 97);
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);

  const BusyWork busy(handle, stream);
  float alpha = g.alpha;
  float beta = g.beta;
  ASSERT_EQ(cublasSgemm(handle, g.transa, g.transb, g.m, g.n, g.k, &alpha, a.data(), g.lda,
                        b.data(), g.ldb, &beta, c.data(), g.ldc),
            CUBLAS_STATUS_SUCCESS);
  // Host pointer mode: the call has read the scalars; the work, maybe still queued, must not.
  alpha = 1000.0f;
  beta = -1000.0f;
  GPULAB_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(matches(c.to_vector(), reference(g, x), g.ldc));
}

TEST(CublasSgemm, DevicePointerModeReadsScalarsWhenTheWorkRuns) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  Stream stream;
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  const Gemm g = padded(CUBLAS_OP_T, CUBLAS_OP_T, 37, 23, 51, -0.5f, 1.5f);
  const Operands x = random_operands(g, 101);
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  // alpha and beta in device memory: stale values now, the right ones written by earlier work
  // on the same stream.
  DeviceBuffer<float> scalars = upload({7.0f, -7.0f});
  PinnedBuffer<float> fresh(2);
  fresh[0] = g.alpha;
  fresh[1] = g.beta;

  const BusyWork busy(handle, stream);  // queued in host pointer mode
  ASSERT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  scalars.copy_from_async(fresh.span(), stream);
  ASSERT_EQ(cublasSgemm(handle, g.transa, g.transb, g.m, g.n, g.k, scalars.data(), a.data(), g.lda,
                        b.data(), g.ldb, scalars.data() + 1, c.data(), g.ldc),
            CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(matches(c.to_vector(), reference(g, x), g.ldc));
}

TEST(CublasSgemmStridedBatched, DevicePointerModeAppliesToEveryEntry) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const DeviceBuffer<float> scalars = upload({0.25f, -2.0f});
  ASSERT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  // The reference uses the Gemm's scalars; the call below passes the device copies.
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 17, 13, 11, 0.25f, -2.0f);
  const Operands x{
      batched_matrix(g.a_rows(), g.a_cols(), g.lda, 0, 3, 103, kNaN),
      batched_matrix(g.b_rows(), g.b_cols(), g.ldb, static_cast<long long>(g.b_size()), 3, 107,
                     kNaN),
      batched_matrix(g.m, g.n, g.ldc, static_cast<long long>(g.c_size()), 3, 109, kCPadding)};
  Expected want{std::vector<double>(x.c.size()), std::vector<double>(x.c.size())};
  for (std::size_t e = 0; e < 3; ++e) {
    reference_into(g, x.a.data(), x.b.data() + e * g.b_size(), x.c.data() + e * g.c_size(),
                   want.value.data() + e * g.c_size(), want.tolerance.data() + e * g.c_size());
  }
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  ASSERT_EQ(cublasSgemmStridedBatched(handle, g.transa, g.transb, g.m, g.n, g.k, scalars.data(),
                                      a.data(), g.lda, 0, b.data(), g.ldb,
                                      static_cast<long long>(g.b_size()), scalars.data() + 1,
                                      c.data(), g.ldc, static_cast<long long>(g.c_size()), 3),
            CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(c.to_vector(), want, g.ldc));
}

// ------------------------------------------------------------------------------------------------
// Sim only: what real cuBLAS leaves undefined or undocumented, or cannot show safely
// ------------------------------------------------------------------------------------------------

#if GPULAB_BACKEND_SIM

TEST(SimCublas, DestroyedHandleIsNotInitialized) {
  GPULAB_REQUIRE_DEVICE();
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  std::vector<float> data(16, 1.0f);
  const float one = 1.0f;
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, data.data(), 2,
                        data.data(), 2, &one, data.data(), 2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, data.data(),
                                      2, 4, data.data(), 2, 4, &one, data.data(), 2, 4, 2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(data, std::vector<float>(16, 1.0f));
}

TEST(SimCublas, ConjugateOperationAndUnknownModesAreInvalid) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  DeviceBuffer<float> buffer = upload(std::vector<float>(16, 1.0f));
  float* data = buffer.data();
  const float one = 1.0f;
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_CONJG, CUBLAS_OP_N, 2, 2, 2, &one, data, 2, data, 2, &one,
                        data, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSetPointerMode(handle, static_cast<cublasPointerMode_t>(7)),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
  ASSERT_EQ(cublasGetPointerMode(handle, &pointer_mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(pointer_mode, CUBLAS_POINTER_MODE_HOST) << "a rejected mode changes nothing";
  EXPECT_EQ(cublasSetMathMode(handle, static_cast<cublasMath_t>(5)), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSetMathMode(handle, static_cast<cublasMath_t>(32)), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasGetPointerMode(handle, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasGetMathMode(handle, nullptr), CUBLAS_STATUS_INVALID_VALUE);
}

// On a GPU, a TF32 math mode rounds the inputs to 10 mantissa bits. The sim computes in FP32
// whatever the mode: 1 + 2^-12 survives (TF32 would make it 1).
TEST(SimCublas, Tf32MathModeStillComputesInFp32) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  ASSERT_EQ(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  const float fine = 1.0f + std::ldexp(1.0f, -12);
  const DeviceBuffer<float> a = upload({fine});
  const DeviceBuffer<float> b = upload({1.0f});
  DeviceBuffer<float> c = upload({0.0f});
  const float one = 1.0f;
  const float zero = 0.0f;
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a.data(), 1, b.data(), 1,
                        &zero, c.data(), 1),
            CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(c.to_vector(), std::vector<float>{fine});
}

TEST(SimCublas, WorkOnADestroyedStreamFailsToExecute) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  const std::vector<float> original(16, 1.0f);
  DeviceBuffer<float> buffer = upload(original);
  float* data = buffer.data();
  const float one = 1.0f;
  EXPECT_EQ(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, data, 2, data, 2, &one, data, 2),
      CUBLAS_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(buffer.to_vector(), original);
}

// Entries that write the same C (strideC 0) are undefined in cuBLAS. The sim runs them one after
// another, in order, so with beta == 1 they accumulate: C + A0*B0 + A1*B1 + ... Run concurrently,
// the many small entries on one tile of C would lose updates.
TEST(SimCublas, BatchEntriesSharingCRunInOrder) {
  GPULAB_REQUIRE_DEVICE();
  CublasHandle handle;
  const Gemm g = padded(CUBLAS_OP_N, CUBLAS_OP_N, 40, 30, 64, 1.0f, 1.0f);
  constexpr int kCount = 64;
  const Operands x{batched_matrix(g.a_rows(), g.a_cols(), g.lda, static_cast<long long>(g.a_size()),
                                  kCount, 113, kNaN),
                   batched_matrix(g.b_rows(), g.b_cols(), g.ldb, static_cast<long long>(g.b_size()),
                                  kCount, 127, kNaN),
                   matrix(g.m, g.n, g.ldc, 131, kCPadding)};
  Expected want{std::vector<double>(x.c.begin(), x.c.end()), std::vector<double>(x.c.size())};
  for (std::size_t e = 0; e < kCount; ++e) {
    Expected step{std::vector<double>(x.c.size()), std::vector<double>(x.c.size())};
    const std::vector<float> zero_c(x.c.size(), 0.0f);
    Gemm product = g;
    product.beta = 0.0f;
    reference_into(product, x.a.data() + e * g.a_size(), x.b.data() + e * g.b_size(), zero_c.data(),
                   step.value.data(), step.tolerance.data());
    for (int j = 0; j < g.n; ++j) {
      for (int i = 0; i < g.m; ++i) {
        const std::size_t at = Gemm::index(i, j, g.ldc);
        want.value[at] += step.value[at];
        // Each accumulation rounds C once more; allow one sum's bound per entry plus one fp32
        // rounding of C (the policy's base tolerance).
        want.tolerance[at] +=
            step.tolerance[at] + gpulab::tolerance_for(gpulab::DType::fp32).allowed(want.value[at]);
      }
    }
  }
  const DeviceBuffer<float> a = upload(x.a);
  const DeviceBuffer<float> b = upload(x.b);
  DeviceBuffer<float> c = upload(x.c);
  ASSERT_EQ(cublasSgemmStridedBatched(handle, g.transa, g.transb, g.m, g.n, g.k, &g.alpha, a.data(),
                                      g.lda, static_cast<long long>(g.a_size()), b.data(), g.ldb,
                                      static_cast<long long>(g.b_size()), &g.beta, c.data(), g.ldc,
                                      0, kCount),
            CUBLAS_STATUS_SUCCESS);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(c.to_vector(), want, g.ldc));
}

#endif  // GPULAB_BACKEND_SIM

}  // namespace
