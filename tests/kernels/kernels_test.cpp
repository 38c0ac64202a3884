// The reference kernels against their CPU references, on both backends; on sim also under the
// reverse and a shuffled thread schedule, so a missing barrier cannot pass by luck. Outputs are
// poisoned (0xff bytes: NaN for floats) before every run, so an unwritten element fails.
// Tolerances follow the numeric policy (gpulab/core/numeric.hpp, docs/grading.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/gemm.hpp"
#include "gpulab/kernels/histogram.hpp"
#include "gpulab/kernels/reduction.hpp"
#include "gpulab/kernels/transpose.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "numeric_check.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {
namespace {

using gpulab::testing::all_close;
using gpulab::testing::for_each_schedule;
using gpulab::testing::poison;

// The tolerance of a float result accumulated over k terms, for a tensor whose typical
// magnitude is `scale`: fp32's, times sqrt(k), atol times scale.
Tolerance fp32_sum_tolerance(std::int64_t k, double scale) {
  return scaled(tolerance_for(DType::fp32, k), scale);
}

class VectorAdd : public ::testing::TestWithParam<std::size_t> {};

TEST_P(VectorAdd, MatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const std::size_t n = GetParam();
  const auto a = random_floats(n, 1);
  const auto b = random_floats(n, 2);
  std::vector<float> expected(n);
  vector_add_reference(a, b, expected);
  DeviceBuffer<float> da(n), db(n), dc(n);
  da.copy_from(a);
  db.copy_from(b);
  for (const unsigned block : {32u, 256u, 1024u}) {
    SCOPED_TRACE("block size " + std::to_string(block));
    poison(dc);
    vector_add(da.data(), db.data(), dc.data(), n, nullptr, block);
    // a + b is one correctly rounded float operation on both sides: bit-identical.
    EXPECT_TRUE(all_close(expected, dc.to_vector(), Tolerance{0.0, 0.0}));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, VectorAdd, ::testing::Values(1, 255, 256, 1000, 1 << 16));

// The inputs VectorAddProblem documents, on the host.
std::vector<float> problem_input_a(std::size_t n) {
  std::vector<float> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.5F;
  }
  return a;
}
std::vector<float> problem_input_b(std::size_t n) {
  std::vector<float> b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = 1.0F - static_cast<float>(i % 77);
  }
  return b;
}

TEST(VectorAddProblem, HoldsItsDocumentedInputsAndVerifiesACorrectLaunch) {
  GPULAB_REQUIRE_DEVICE();
  // Above the reference's chunk of 2^20 elements, and not a multiple of any block size.
  const std::size_t n = (std::size_t{1} << 20) + 1001;
  VectorAddProblem problem(n);
  EXPECT_EQ(problem.size(), n);
  const std::vector<float> a = problem_input_a(n);
  const std::vector<float> b = problem_input_b(n);
  EXPECT_EQ(problem.a().to_vector(), a);
  EXPECT_EQ(problem.b().to_vector(), b);
  Stream stream;  // non-blocking, as the lab and the viewer use
  for (const unsigned block : {32u, 256u, 1024u}) {
    SCOPED_TRACE("block size " + std::to_string(block));
    EXPECT_NO_THROW(problem.verify(stream, block));
  }
  std::vector<float> expected(n);
  vector_add_reference(a, b, expected);
  EXPECT_TRUE(all_close(expected, problem.c().to_vector(), Tolerance{0.0, 0.0}));
}

TEST(VectorAddProblem, VerifyCatchesAResultThatDiffersFromTheReference) {
  GPULAB_REQUIRE_DEVICE();
  // The kernel runs correctly on inputs that are not the problem's: element 1234 of b becomes 0,
  // so c[1234] = a[1234] + 0 = 117, where the reference of the documented inputs is
  // (1234 % 1000) / 2 + (1 - 1234 % 77) = 117 + (1 - 2) = 116.
  const std::size_t n = 5000;
  VectorAddProblem problem(n);
  std::vector<float> b = problem_input_b(n);
  b[1234] = 0.0F;
  problem.b().copy_from(b);
  Stream stream;
  try {
    problem.verify(stream, 128);
    FAIL() << "verify accepted a wrong c[1234]";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("index 1234 of 5000"), std::string::npos) << message;
    EXPECT_NE(message.find("expected 116"), std::string::npos) << message;
    EXPECT_NE(message.find("got 117"), std::string::npos) << message;
    EXPECT_NE(message.find("128 threads per block"), std::string::npos) << message;
  }
}

class Reduction : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Reduction, EveryLevelMatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const std::size_t n = GetParam();
  const auto input = random_floats(n, 3);
  const std::vector<float> expected{static_cast<float>(reduce_sum_reference(input))};
  DeviceBuffer<float> in(n), out(1), workspace(reduce_sum_workspace(n) + 1);
  in.copy_from(input);
  // A sum of n terms. Its scale is the typical magnitude of such a sum, sqrt(n) * rms(input) (a
  // random walk of n steps), not |expected|, which cancellation can make arbitrarily small.
  const Tolerance tolerance = fp32_sum_tolerance(static_cast<std::int64_t>(n),
                                                 std::sqrt(static_cast<double>(n)) * rms(input));
  for (const auto& level : reduction_levels()) {
    SCOPED_TRACE("level " + std::to_string(level.number) + " (" + std::string(level.name) + ")");
    for_each_schedule([&] {
      poison(out);
      level.launch(in.data(), out.data(), n, workspace.data(), nullptr);
      EXPECT_TRUE(all_close(expected, out.to_vector(), tolerance));
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Reduction,
                         ::testing::Values(1, 31, 256, 257, 1000, 65536, 65536 * 4 + 3));

TEST(Reduction, BlockSumsAreOnePartialPer256Elements) {
  GPULAB_REQUIRE_DEVICE();
  const std::size_t n = 1000;  // 4 blocks, the last one partial
  const auto input = random_floats(n, 4);
  DeviceBuffer<float> in(n), partials(4);
  in.copy_from(input);
  poison(partials);
  block_sums_shared(in.data(), partials.data(), n);
  std::vector<float> expected;
  for (std::size_t first = 0; first < n; first += kReduceBlock) {
    const std::size_t count = std::min<std::size_t>(kReduceBlock, n - first);
    expected.push_back(static_cast<float>(
        reduce_sum_reference(std::span<const float>(input).subspan(first, count))));
  }
  // Each partial sums kReduceBlock terms (the last one fewer).
  const auto block = static_cast<double>(kReduceBlock);
  EXPECT_TRUE(all_close(expected, partials.to_vector(),
                        fp32_sum_tolerance(kReduceBlock, std::sqrt(block) * rms(input))));
}

struct GemmShape {
  int m, n, k;
};

class Gemm : public ::testing::TestWithParam<GemmShape> {};

TEST_P(Gemm, EveryLevelMatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const auto [m, n, k] = GetParam();
  const auto a = random_floats(std::size_t(m) * k, 5);
  const auto b = random_floats(std::size_t(k) * n, 6);
  std::vector<float> expected(std::size_t(m) * n);
  gemm_reference(a, b, expected, m, n, k);
  DeviceBuffer<float> da(a.size()), db(b.size()), dc(expected.size());
  da.copy_from(a);
  db.copy_from(b);
  // Each element sums k products; its scale is the rms of C.
  const Tolerance tolerance = fp32_sum_tolerance(k, rms(expected));
  for (const auto& level : gemm_levels()) {
    SCOPED_TRACE("level " + std::to_string(level.number) + " (" + std::string(level.name) + ")");
    for_each_schedule([&] {
      poison(dc);
      level.launch(da.data(), db.data(), dc.data(), m, n, k, nullptr);
      EXPECT_TRUE(all_close(expected, dc.to_vector(), tolerance));
    });
  }
  for_each_schedule([&] {  // 32 x 32 tiles: 1024-thread blocks, 8 KiB of shared memory
    poison(dc);
    gemm_tiled(da.data(), db.data(), dc.data(), m, n, k, nullptr, 32);
    EXPECT_TRUE(all_close(expected, dc.to_vector(), tolerance));
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, Gemm,
                         ::testing::Values(GemmShape{1, 1, 1}, GemmShape{16, 16, 16},
                                           GemmShape{37, 23, 51}, GemmShape{64, 96, 33}));

TEST(Launchers, RejectBadArguments) {
  EXPECT_THROW(vector_add(nullptr, nullptr, nullptr, 1, nullptr, 0), std::invalid_argument);
  EXPECT_THROW(reduce_sum_shared(nullptr, nullptr, 0, nullptr), std::invalid_argument);
  EXPECT_THROW(histogram_shared(nullptr, 1, nullptr, 20000), std::invalid_argument);
  EXPECT_THROW(gemm_naive(nullptr, nullptr, nullptr, -1, 1, 1), std::invalid_argument);
}

TEST(Reduction, WorkspaceHoldsThePartialSumsOfEveryPass) {
  EXPECT_EQ(reduce_sum_workspace(1), 0u);
  EXPECT_EQ(reduce_sum_workspace(256), 0u);
  EXPECT_EQ(reduce_sum_workspace(257), 2u);
  EXPECT_EQ(reduce_sum_workspace(65536), 256u);
  EXPECT_EQ(reduce_sum_workspace(65537), 257u + 2u);
}

TEST(Gemm, RejectsABadTileSize) {
  EXPECT_THROW(gemm_tiled(nullptr, nullptr, nullptr, 1, 1, 1, nullptr, 8), std::invalid_argument);
}

TEST(Gemm, RegisterBlockedRejectsAnUnknownTilingAndNegativeSizes) {
  EXPECT_THROW(gemm_register_blocked(nullptr, nullptr, nullptr, 1, 1, 1, nullptr, 3),
               std::invalid_argument);
  EXPECT_THROW(gemm_register_blocked(nullptr, nullptr, nullptr, 1, 1, 1, nullptr, 0, -1),
               std::invalid_argument);
  EXPECT_THROW(gemm_register_blocked(nullptr, nullptr, nullptr, 1, -1, 1), std::invalid_argument);
  // Nothing to compute: no launch, no error.
  EXPECT_NO_THROW(gemm_register_blocked(nullptr, nullptr, nullptr, 0, 4, 4, nullptr, 1, 2));
}

class Histogram : public ::testing::TestWithParam<unsigned> {};

TEST_P(Histogram, EveryLevelMatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const unsigned bins = GetParam();
  const std::size_t n = 100000;
  std::mt19937 random(8);
  // Skewed keys (many hits on few bins, as in real data) plus some out of range.
  std::geometric_distribution<unsigned> skewed(0.05);
  std::vector<unsigned> keys(n);
  for (unsigned& key : keys) {
    key = skewed(random) % (bins + 3);
  }
  std::vector<unsigned> expected(bins);
  histogram_reference(keys, expected);
  DeviceBuffer<unsigned> dkeys(n), dcounts(bins);
  dkeys.copy_from(keys);
  for (const auto& level : histogram_levels()) {
    // Any block size gives the same counts: a warp, a part-warp, the default and the maximum.
    for (const unsigned block_size : {32u, 96u, 256u, 1024u}) {
      SCOPED_TRACE("level " + std::to_string(level.number) + " (" + std::string(level.name) +
                   "), " + std::to_string(block_size) + " threads per block");
      for_each_schedule([&] {
        poison(dcounts);
        level.launch(dkeys.data(), n, dcounts.data(), bins, nullptr, block_size);
        EXPECT_EQ(dcounts.to_vector(), expected);
      });
    }
  }
}

TEST(HistogramLaunch, ABlockOfNoneOrMoreThan1024ThreadsIsRefused) {
  for (const unsigned block_size : {0u, 1025u}) {
    EXPECT_THROW(histogram_global(nullptr, 1, nullptr, 1, nullptr, block_size),
                 std::invalid_argument);
    EXPECT_THROW(histogram_shared(nullptr, 1, nullptr, 1, nullptr, block_size),
                 std::invalid_argument);
  }
}

INSTANTIATE_TEST_SUITE_P(Bins, Histogram, ::testing::Values(1u, 256u, 4096u));

struct Shape {
  int rows;
  int cols;
};

class Transpose : public ::testing::TestWithParam<Shape> {};

TEST_P(Transpose, EveryLevelMatchesTheCpuReference) {
  GPULAB_REQUIRE_DEVICE();
  const auto [rows, cols] = GetParam();
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::vector<float> in = random_floats(n, 5);
  std::vector<float> expected(n);
  transpose_reference(in, expected, rows, cols);
  DeviceBuffer<float> d_in(n);
  DeviceBuffer<float> d_out(n);
  d_in.copy_from(in);
  for (const auto& level : transpose_levels()) {
    SCOPED_TRACE(std::string(level.name));
    for_each_schedule([&] {
      poison(d_out);
      level.launch(d_in.data(), d_out.data(), rows, cols, nullptr);
      GPULAB_CHECK(cudaDeviceSynchronize());
      // Moving values changes no bits: exact, the copy against the input itself.
      EXPECT_EQ(d_out.to_vector(), level.number == 0 ? in : expected);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Transpose,
                         ::testing::Values(Shape{1, 1}, Shape{32, 32}, Shape{64, 32}, Shape{33, 65},
                                           Shape{100, 37}),
                         [](const auto& shape) {
                           return std::to_string(shape.param.rows) + "x" +
                                  std::to_string(shape.param.cols);
                         });

TEST(Transpose, RejectsEmptyShapesAndNullPointers) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<float> buffer(4);
  for (const auto& level : transpose_levels()) {
    EXPECT_THROW(level.launch(buffer.data(), buffer.data(), 0, 4, nullptr), std::invalid_argument);
    EXPECT_THROW(level.launch(nullptr, buffer.data(), 2, 2, nullptr), std::invalid_argument);
  }
}

}  // namespace
}  // namespace gpulab::kernels
