// <mma.h>'s warp matrix functions (nvcuda::wmma) against a CPU reference. Built for both backends:
// on a GPU the same kernels run on its tensor cores. The inputs are multiples of 1/2 small enough
// that every product and sum is exact in float and in half, so the result is exact whatever order
// a GPU's tensor cores add in, and both backends must give it bit for bit. The sim-only tests check
// what a GPU leaves undefined (a WMMA call that not all 32 lanes make) and the counted traffic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "test_device.hpp"

namespace {

namespace wmma = nvcuda::wmma;

// ---- d = a * b + c for one tile, on the device and on the CPU -----------------------------------

// a is M x (K * steps), b (K * steps) x N: the tile's product takes `steps` mma_sync calls, each
// accumulating into the same fragment (d is c), as a GEMM's inner loop does.
template <int M, int N, int K, class T, class LayoutA, class LayoutB, class Acc>
__global__ void multiply_tile(const T* a, unsigned lda, const T* b, unsigned ldb, const Acc* c,
                              Acc* d, unsigned ldc, int steps, bool column_major_c) {
  const wmma::layout_t c_layout = column_major_c ? wmma::mem_col_major : wmma::mem_row_major;
  wmma::fragment<wmma::matrix_a, M, N, K, T, LayoutA> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, T, LayoutB> fb;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> acc;
  wmma::load_matrix_sync(acc, c, ldc, c_layout);
  for (int s = 0; s < steps; ++s) {
    // Step s's slice of a: columns s*K.. (row_major) are K elements along each row.
    const T* a_slice = std::is_same_v<LayoutA, wmma::row_major> ? a + s * K : a + s * K * lda;
    const T* b_slice = std::is_same_v<LayoutB, wmma::row_major> ? b + s * K * ldb : b + s * K;
    wmma::load_matrix_sync(fa, a_slice, lda);
    wmma::load_matrix_sync(fb, b_slice, ldb);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d, acc, ldc, c_layout);
}

// Small multiples of 1/2, different in each position.
float input_value(int row, int col, int salt) {
  return static_cast<float>((row * 7 + col * 3 + salt) % 9 - 4) * 0.5f;
}

// An R x C matrix with leading dimension `ld` (elements between rows, or columns when
// `column_major`), padded positions NaN.
template <class T>
std::vector<T> lay_out(int rows, int cols, unsigned ld, bool column_major, int salt) {
  std::vector<T> memory((column_major ? cols : rows) * static_cast<std::size_t>(ld),
                        static_cast<T>(NAN));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      memory[column_major ? c * ld + r : r * ld + c] = static_cast<T>(input_value(r, c, salt));
    }
  }
  return memory;
}

template <class T>
gpulab::DeviceBuffer<T> to_device(const std::vector<T>& host) {
  gpulab::DeviceBuffer<T> buffer(host.size());
  GPULAB_CHECK(
      cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

template <int M, int N, int K, class T, class LayoutA, class LayoutB, class Acc>
void check_tile(int steps, bool column_major_c, unsigned pad) {
  constexpr bool a_cols = std::is_same_v<LayoutA, wmma::col_major>;
  constexpr bool b_cols = std::is_same_v<LayoutB, wmma::col_major>;
  const int depth = K * steps;
  // Leading dimensions: the line length plus `pad` elements (a multiple of 16 bytes).
  const unsigned lda = static_cast<unsigned>(a_cols ? M : depth) + pad;
  const unsigned ldb = static_cast<unsigned>(b_cols ? depth : N) + pad;
  const unsigned ldc = static_cast<unsigned>(column_major_c ? M : N) + pad;
  const std::vector<T> a = lay_out<T>(M, depth, lda, a_cols, 1);
  const std::vector<T> b = lay_out<T>(depth, N, ldb, b_cols, 2);
  const std::vector<Acc> c = lay_out<Acc>(M, N, ldc, column_major_c, 3);
  const auto da = to_device(a);
  const auto db = to_device(b);
  const auto dc = to_device(c);
  auto dd = to_device(c);
  multiply_tile<M, N, K, T, LayoutA, LayoutB, Acc>
      <<<1, 32>>>(da.data(), lda, db.data(), ldb, dc.data(), dd.data(), ldc, steps, column_major_c);
  GPULAB_CHECK(cudaGetLastError());
  std::vector<Acc> d(c.size());
  GPULAB_CHECK(cudaMemcpy(d.data(), dd.data(), d.size() * sizeof(Acc), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int r = 0; r < M; ++r) {
    for (int col = 0; col < N; ++col) {
      auto expected = static_cast<double>(input_value(r, col, 3));
      for (int k = 0; k < depth; ++k) {
        expected +=
            static_cast<double>(input_value(r, k, 1)) * static_cast<double>(input_value(k, col, 2));
      }
      const auto got = static_cast<float>(d[column_major_c ? col * ldc + r : r * ldc + col]);
      if (static_cast<double>(got) != expected && ++wrong <= 5) {
        ADD_FAILURE() << "d(" << r << "," << col << ") = " << got << ", expected " << expected;
      }
    }
  }
  EXPECT_EQ(wrong, 0) << M << "x" << N << "x" << K << ", " << steps << " steps";
}

TEST(Wmma, HalfM16N16K16MatchesTheCpuInEveryLayout) {
  GPULAB_REQUIRE_DEVICE();
  check_tile<16, 16, 16, __half, wmma::row_major, wmma::col_major, float>(1, false, 0);
  check_tile<16, 16, 16, __half, wmma::row_major, wmma::row_major, float>(2, false, 8);
  check_tile<16, 16, 16, __half, wmma::col_major, wmma::col_major, float>(3, true, 0);
  check_tile<16, 16, 16, __half, wmma::col_major, wmma::row_major, float>(4, true, 8);
}

TEST(Wmma, EachWarpsMmaSyncIsOneTensorCoreOperation) {
#if defined(GPULAB_BACKEND_SIM)
  GPULAB_REQUIRE_DEVICE();
  const std::uint64_t before = gpulab::sim::tensor_core_operations();
  check_tile<16, 16, 16, __half, wmma::row_major, wmma::col_major, float>(3, false, 0);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(gpulab::sim::tensor_core_operations() - before, 3u)
      << "one warp, three mma_sync calls: three operations (not one per lane)";
#else
  GTEST_SKIP() << "the sim's count of tensor-core operations (Nsight Compute counts them on a GPU)";
#endif
}

TEST(Wmma, CountingSeesEachMmaSyncsFlopsByInputType) {
#if defined(GPULAB_BACKEND_SIM)
  GPULAB_REQUIRE_DEVICE();
  GPULAB_REQUIRE_COUNTING();
  gpulab::sim::clear_counted_launches();
  gpulab::sim::set_counting(true);
  check_tile<16, 16, 16, __half, wmma::row_major, wmma::col_major, float>(3, false, 0);
  check_tile<8, 32, 16, __nv_bfloat16, wmma::row_major, wmma::row_major, float>(2, false, 0);
  GPULAB_CHECK(cudaDeviceSynchronize());
  gpulab::sim::set_counting(false);
  gpulab::MemoryCounters total;
  for (const gpulab::CountedLaunch& launch : gpulab::sim::counted_launches()) {
    total += launch.counters;
  }
  gpulab::sim::clear_counted_launches();
  EXPECT_EQ(total.tensor_mma, 5u);
  EXPECT_EQ(total.tensor_fp16_flop, 3u * 2 * 16 * 16 * 16);
  EXPECT_EQ(total.tensor_bf16_flop, 2u * 2 * 8 * 32 * 16);
#else
  GTEST_SKIP() << "the sim's counts (Nsight Compute counts tensor instructions on a GPU)";
#endif
}

TEST(Wmma, HalfAccumulatorsAndTheOtherShapes) {
  GPULAB_REQUIRE_DEVICE();
  check_tile<16, 16, 16, __half, wmma::row_major, wmma::col_major, __half>(2, false, 0);
  check_tile<32, 8, 16, __half, wmma::row_major, wmma::col_major, float>(2, false, 0);
  check_tile<8, 32, 16, __half, wmma::col_major, wmma::row_major, float>(2, true, 8);
  check_tile<32, 8, 16, __half, wmma::row_major, wmma::row_major, __half>(1, true, 8);
}

TEST(Wmma, Bfloat16IntoFloat) {
  GPULAB_REQUIRE_DEVICE();
  check_tile<16, 16, 16, __nv_bfloat16, wmma::row_major, wmma::col_major, float>(2, false, 0);
  check_tile<8, 32, 16, __nv_bfloat16, wmma::row_major, wmma::row_major, float>(1, true, 8);
}

// fill_fragment, then the same operation on every element (allowed, whatever the mapping).
__global__ void fill_scale_store(float* out) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 1.5f);
  for (int i = 0; i < acc.num_elements; ++i) {
    acc.x[i] *= 2.0f;
  }
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

TEST(Wmma, FillAndElementwiseOperationsReachEveryElement) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::DeviceBuffer<float> out(256);
  fill_scale_store<<<1, 32>>>(out.data());
  GPULAB_CHECK(cudaGetLastError());
  std::vector<float> host(256);
  GPULAB_CHECK(cudaMemcpy(host.data(), out.data(), 256 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(host[i], 3.0f) << "element " << i;
  }
}

#if GPULAB_BACKEND_SIM
// ---- the sim's element mapping -----------------------------------------------------------------

TEST(WmmaMapping, EveryElementIsInOneLaneAndEachPhaseReadsEightLines) {
  struct Shape {
    int rows, cols, bytes;
  };
  for (const Shape shape :
       {Shape{16, 16, 2}, Shape{16, 16, 4}, Shape{32, 16, 2}, Shape{16, 8, 2}, Shape{32, 8, 4},
        Shape{32, 8, 2}, Shape{8, 16, 2}, Shape{16, 32, 2}, Shape{8, 32, 4}}) {
    for (const bool column_major : {false, true}) {
      SCOPED_TRACE(std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + " of " +
                   std::to_string(shape.bytes) + " bytes" + (column_major ? ", col_major" : ""));
      const int per_lane = shape.rows * shape.cols / 32;
      std::vector<int> owners(static_cast<std::size_t>(shape.rows * shape.cols), 0);
      for (unsigned lane = 0; lane < 32; ++lane) {
        for (int i = 0; i < per_lane; ++i) {
          const auto p = gpulab::sim::detail::fragment_position(shape.rows, shape.cols,
                                                                column_major, shape.bytes, lane, i);
          ASSERT_TRUE(p.row >= 0 && p.row < shape.rows && p.col >= 0 && p.col < shape.cols);
          ++owners[static_cast<std::size_t>(p.row * shape.cols + p.col)];
        }
      }
      EXPECT_EQ(std::count(owners.begin(), owners.end(), 1), shape.rows * shape.cols)
          << "each element in exactly one lane";
      // The first element of lanes 0-7 lies on 8 different lines (or on all, when fewer).
      std::vector<int> lines;
      for (unsigned lane = 0; lane < 8; ++lane) {
        const auto p = gpulab::sim::detail::fragment_position(shape.rows, shape.cols, column_major,
                                                              shape.bytes, lane, 0);
        lines.push_back(column_major ? p.col : p.row);
      }
      std::sort(lines.begin(), lines.end());
      EXPECT_EQ(std::unique(lines.begin(), lines.end()) - lines.begin(),
                std::min(8, column_major ? shape.cols : shape.rows));
    }
  }
}

// ---- what a GPU leaves undefined: the sim fails the launch and says why -------------------------

enum class Misuse { lane_31_skips, different_pointers, misaligned, bad_ldm, divergent_calls };

__global__ void misuse_wmma(const __half* a, float* d, Misuse misuse) {
  const unsigned lane = threadIdx.x % 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  switch (misuse) {
    case Misuse::lane_31_skips:
      if (lane == 31) {
        return;
      }
      break;
    case Misuse::different_pointers:
      wmma::load_matrix_sync(fa, a + lane * 16, 16);
      break;
    case Misuse::misaligned:
      wmma::load_matrix_sync(fa, a + 8, 16);
      break;
    case Misuse::bad_ldm:
      wmma::load_matrix_sync(fa, a, 12);
      break;
    case Misuse::divergent_calls:
      if (lane < 16) {
        wmma::load_matrix_sync(fa, a, 16);
      } else {
        wmma::load_matrix_sync(fb, a, 16);
      }
      break;
  }
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, a, 16);
  wmma::fill_fragment(acc, 0.0f);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// The launch's failure message. The reset that recovers the device frees the buffers.
std::string misuse_failure(unsigned threads, Misuse misuse) {
  __half* a = nullptr;
  float* d = nullptr;
  GPULAB_CHECK(cudaMalloc(&a, 16 * 16 * 32 * sizeof(__half)));
  GPULAB_CHECK(cudaMalloc(&d, 16 * 16 * sizeof(float)));
  misuse_wmma<<<1, threads>>>(a, d, misuse);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  std::string why = gpulab::sim::kernel_failure();
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  return why;
}

TEST(WmmaMisuse, AFragmentUsedBy31LanesFailsTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  const std::string why = misuse_failure(32, Misuse::lane_31_skips);
  EXPECT_NE(why.find("lanes 0-30 wait in wmma::load_matrix_sync (wmma_test.cu:"), std::string::npos)
      << why;
  EXPECT_NE(why.find("lane 31 has exited"), std::string::npos) << why;
  EXPECT_NE(why.find("Every lane of a warp must make each WMMA call"), std::string::npos) << why;
}

TEST(WmmaMisuse, AWarpOf31ThreadsFailsTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  const std::string why = misuse_failure(31, Misuse::lane_31_skips);
  EXPECT_NE(why.find("wmma::load_matrix_sync in warp 0, which has 31 threads"), std::string::npos)
      << why;
}

TEST(WmmaMisuse, LanesThatDisagreeOrCallDifferentFunctionsFailTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  std::string why = misuse_failure(64, Misuse::different_pointers);
  EXPECT_NE(why.find("passed different arguments (lane 0 mptr"), std::string::npos) << why;
  EXPECT_NE(why.find("; lane 1 mptr"), std::string::npos) << why;
  why = misuse_failure(32, Misuse::divergent_calls);
  EXPECT_NE(why.find("are in different WMMA calls: lanes 0-15 wait in wmma::load_matrix_sync"),
            std::string::npos)
      << why;
}

TEST(WmmaMisuse, MisalignedPointersAndLeadingDimensionsFailTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  std::string why = misuse_failure(32, Misuse::misaligned);
  EXPECT_NE(why.find("is not 32-byte (256-bit) aligned"), std::string::npos) << why;
  why = misuse_failure(32, Misuse::bad_ldm);
  EXPECT_NE(why.find("ldm 12 is not a multiple of 8 (16 bytes of __half)"), std::string::npos)
      << why;
}

// ---- counted traffic: loads and stores are wide accesses, as on a GPU ---------------------------

__global__ void load_store_global(const __half* a, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::fill_fragment(acc, 0.0f);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

TEST(WmmaCounting, AGlobalTileLoadIsOneRequestOfSixteenSectors) {
  GPULAB_REQUIRE_COUNTING();
  gpulab::DeviceBuffer<__half> a(256);
  gpulab::DeviceBuffer<float> d(256);
  const auto launches = gpulab::sim::count_launches([&] {
    load_store_global<<<1, 32>>>(a.data(), d.data());
    GPULAB_CHECK(cudaGetLastError());
  });
  ASSERT_EQ(launches.size(), 1u);
  const gpulab::MemoryCounters& c = launches.front().counters;
  EXPECT_EQ(c.global_load.requests, 1u) << "one 16-byte access per lane";
  EXPECT_EQ(c.global_load.bytes_requested, 512u);
  EXPECT_EQ(c.global_load.sectors, 16u) << "16 x 16 halves, contiguous";
  EXPECT_EQ(c.global_store.requests, 2u) << "32 bytes of float per lane: two 16-byte stores";
  EXPECT_EQ(c.global_store.bytes_requested, 1024u);
  EXPECT_EQ(c.global_store.sectors, 32u);
  EXPECT_EQ(c.local_accesses, 0u) << "fragments are registers, not local memory";
}

template <unsigned Ld>
__global__ void load_from_shared(const __half* a, float* out) {
  __shared__ __align__(32) __half tile[16 * Ld];
  for (unsigned i = threadIdx.x; i < 16 * Ld; i += 32) {
    tile[i] = a[i];
  }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::load_matrix_sync(fa, tile, Ld);
  out[threadIdx.x] = __half2float(fa.x[0]);
}

template <unsigned Ld>
gpulab::SharedAccessCounts shared_tile_load() {
  gpulab::DeviceBuffer<__half> a(16 * Ld);
  gpulab::DeviceBuffer<float> out(32);
  const auto launches = gpulab::sim::count_launches([&] {
    load_from_shared<Ld><<<1, 32>>>(a.data(), out.data());
    GPULAB_CHECK(cudaGetLastError());
  });
  EXPECT_EQ(launches.size(), 1u);
  return launches.empty() ? gpulab::SharedAccessCounts{} : launches.front().counters.shared_load;
}

TEST(WmmaCounting, SharedTileLoadsConflictUnlessTheRowsArePadded) {
  GPULAB_REQUIRE_COUNTING();
  // Rows of 64 halves (128 bytes): the 8 rows of a phase start in the same bank, 8-way conflicts.
  const gpulab::SharedAccessCounts unpadded = shared_tile_load<64>();
  EXPECT_EQ(unpadded.requests, 1u);
  EXPECT_EQ(unpadded.wavefronts, 32u) << "4 phases of 8 lanes, each 8 wavefronts";
  EXPECT_EQ(unpadded.bank_conflicts, 28u);
  // 8 halves (16 bytes) of padding per row: each row starts 4 banks further, no conflicts.
  const gpulab::SharedAccessCounts padded = shared_tile_load<72>();
  EXPECT_EQ(padded.requests, 1u);
  EXPECT_EQ(padded.wavefronts, 4u) << "512 bytes: 4 wavefronts of 128";
  EXPECT_EQ(padded.bank_conflicts, 0u);
}

__global__ void half_accumulator_rounds(__half* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
  wmma::fill_fragment(fa, __float2half(1.0f));
  wmma::fill_fragment(fb, __float2half(0.0625f));
  wmma::fill_fragment(acc, __float2half(2048.0f));
  wmma::mma_sync(acc, fa, fb, acc);  // 2048 + 16 * 0.0625 = 2049: a tie between 2048 and 2050
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

TEST(WmmaNumerics, EachSumIsRoundedOnceToTheAccumulatorsType) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::DeviceBuffer<__half> out(256);
  half_accumulator_rounds<<<1, 32>>>(out.data());
  GPULAB_CHECK(cudaGetLastError());
  std::vector<__half> host(256);
  GPULAB_CHECK(cudaMemcpy(host.data(), out.data(), 256 * sizeof(__half), cudaMemcpyDeviceToHost));
  EXPECT_EQ(__half2float(host[0]), 2048.0f) << "2049 rounds to the even 2048";
  EXPECT_EQ(__half2float(host[255]), 2048.0f);
}
#endif

}  // namespace
