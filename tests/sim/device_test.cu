// The device built-ins a kernel uses, on both backends: built-in variables, shared memory,
// barriers and their reductions, warp collectives, atomics, vector types, intrinsics, printf and
// assert, and the launch checks a GPU makes. On cuda these tests pin down the GPU's behaviour
// that the sim backend copies.
#undef NDEBUG  // device assert() is a subject of these tests
#include <gtest/gtest.h>

#include <cassert>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "run_command.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

namespace {

using gpulab::DeviceBuffer;
using gpulab::testing::for_each_schedule;
#if defined(GPULAB_BACKEND_SIM)
using gpulab::testing::failure_of;
#endif

// ---------------------------------------------------------------------------------------------
// Built-in variables
// ---------------------------------------------------------------------------------------------

__global__ void record_indices(uint4* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned global = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  out[global] = make_uint4(threadIdx.x + 100 * threadIdx.y + 10000 * threadIdx.z,
                           blockIdx.x + 100 * blockIdx.y + 10000 * blockIdx.z,
                           blockDim.x + 100 * blockDim.y + 10000 * blockDim.z,
                           gridDim.x + 100 * gridDim.y + 10000 * gridDim.z + warpSize * 1000000);
}

TEST(DeviceBuiltins, ThreeDimensionalIndicesAndDimensions) {
  GPULAB_REQUIRE_DEVICE();
  const dim3 grid(2, 3, 2);
  const dim3 block(4, 2, 3);
  const unsigned total = 2 * 3 * 2 * 4 * 2 * 3;
  DeviceBuffer<uint4> out(total);
  out.fill_bytes(0xff);
  record_indices<<<grid, block>>>(out.data());
  GPULAB_CHECK_LAUNCH();
  const std::vector<uint4> got = out.to_vector();
  unsigned global = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 3; ++by)
      for (unsigned bx = 0; bx < 2; ++bx)
        for (unsigned tz = 0; tz < 3; ++tz)
          for (unsigned ty = 0; ty < 2; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx, ++global) {
              SCOPED_TRACE("thread " + std::to_string(global));
              ASSERT_EQ(got[global].x, tx + 100 * ty + 10000 * tz);
              ASSERT_EQ(got[global].y, bx + 100 * by + 10000 * bz);
              ASSERT_EQ(got[global].z, 4u + 100 * 2 + 10000 * 3);
              ASSERT_EQ(got[global].w, 2u + 100 * 3 + 10000 * 2 + 32u * 1000000);
            }
}

// ---------------------------------------------------------------------------------------------
// Shared memory and barriers
// ---------------------------------------------------------------------------------------------

constexpr unsigned kBlock = 128;

// Reverses each block's slice through static shared memory.
__global__ void reverse_static(const int* in, int* out) {
  __shared__ int tile[kBlock];
  const unsigned i = blockIdx.x * kBlock + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[kBlock - 1 - threadIdx.x];
}

// The same through dynamic shared memory sized at launch.
__global__ void reverse_dynamic(const int* in, int* out) {
  extern __shared__ int slice[];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  slice[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = slice[blockDim.x - 1 - threadIdx.x];
}

TEST(DeviceBuiltins, StaticAndDynamicSharedMemoryArePerBlock) {
  GPULAB_REQUIRE_DEVICE();
  const unsigned blocks = 6;
  std::vector<int> input(blocks * kBlock);
  for (unsigned i = 0; i < input.size(); ++i) {
    input[i] = static_cast<int>(i * 7 + 3);
  }
  std::vector<int> expected(input.size());
  for (unsigned b = 0; b < blocks; ++b) {
    for (unsigned t = 0; t < kBlock; ++t) {
      expected[b * kBlock + t] = input[b * kBlock + kBlock - 1 - t];
    }
  }
  DeviceBuffer<int> in(input.size()), out(input.size());
  in.copy_from(input);
  out.fill_bytes(0xff);
  reverse_static<<<blocks, kBlock>>>(in.data(), out.data());
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(out.to_vector(), expected);
  out.fill_bytes(0xff);
  reverse_dynamic<<<blocks, kBlock, kBlock * sizeof(int)>>>(in.data(), out.data());
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(out.to_vector(), expected);
}

__global__ void barrier_reductions(int* out) {
  const int predicate = threadIdx.x % 3 == 0;
  const int count = __syncthreads_count(predicate);
  const int all = __syncthreads_and(threadIdx.x < 1000);
  const int none = __syncthreads_and(predicate);
  const int any = __syncthreads_or(threadIdx.x == 77);
  const int nothing = __syncthreads_or(0);
  if (threadIdx.x == 5) {
    out[0] = count;
    out[1] = all;
    out[2] = none;
    out[3] = any;
    out[4] = nothing;
  }
}

TEST(DeviceBuiltins, SyncthreadsCountAndOr) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<int> out(5);
  out.fill_bytes(0xff);
  barrier_reductions<<<1, 200>>>(out.data());
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(out.to_vector(), (std::vector<int>{67, 1, 0, 1, 0}));  // 0, 3, ..., 198: 67 threads
}

// ---------------------------------------------------------------------------------------------
// Warp collectives
// ---------------------------------------------------------------------------------------------

// Per lane (64 threads = 2 warps): the results of every collective.
__global__ void warp_collectives(int* out) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int value = static_cast<int>(threadIdx.x) * 10;
  int* row = out + threadIdx.x * 10;
  row[0] = __shfl_sync(0xffffffffu, value, 5);             // broadcast lane 5
  row[1] = __shfl_up_sync(0xffffffffu, value, 3);          // lanes < 3 keep theirs
  row[2] = __shfl_down_sync(0xffffffffu, value, 4);        // lanes > 27 keep theirs
  row[3] = __shfl_xor_sync(0xffffffffu, value, 1);         // swap neighbours
  row[4] = __shfl_down_sync(0xffffffffu, value, 2, 8);     // within groups of 8
  row[5] = __shfl_sync(0xffffffffu, value, lane + 1, 16);  // rotate within 16
  row[6] = static_cast<int>(__ballot_sync(0xffffffffu, lane % 4 == 1));
  row[7] = __any_sync(0xffffffffu, lane == 31) + 2 * __all_sync(0xffffffffu, lane < 32) +
           4 * __all_sync(0xffffffffu, lane < 31);
  __syncwarp();
  row[8] = static_cast<int>(__activemask());
  const float f = __shfl_xor_sync(0xffffffffu, static_cast<float>(lane) + 0.5f, 16);
  row[9] = static_cast<int>(f * 2.0f);
}

TEST(DeviceBuiltins, WarpShufflesVotesAndMasks) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<int> out(64 * 10);
  out.fill_bytes(0xff);
  warp_collectives<<<1, 64>>>(out.data());
  GPULAB_CHECK_LAUNCH();
  const std::vector<int> got = out.to_vector();
  for (int t = 0; t < 64; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    const int lane = t % 32;
    const int warp_base = t - lane;
    const int* row = &got[static_cast<std::size_t>(t) * 10];
    EXPECT_EQ(row[0], (warp_base + 5) * 10);
    EXPECT_EQ(row[1], (lane < 3 ? t : t - 3) * 10);
    EXPECT_EQ(row[2], (lane > 27 ? t : t + 4) * 10);
    EXPECT_EQ(row[3], (t ^ 1) * 10);
    EXPECT_EQ(row[4], (lane % 8 + 2 >= 8 ? t : t + 2) * 10);
    EXPECT_EQ(row[5], (warp_base + lane / 16 * 16 + (lane + 1) % 16) * 10);
    EXPECT_EQ(static_cast<unsigned>(row[6]), 0x22222222u);
    EXPECT_EQ(row[7], 1 + 2 + 0);
    EXPECT_EQ(static_cast<unsigned>(row[8]), 0xffffffffu);
    EXPECT_EQ(row[9], 2 * (lane ^ 16) + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Atomics
// ---------------------------------------------------------------------------------------------

struct Counters {
  int add_int;
  unsigned add_unsigned;
  unsigned long long add_ull;
  float add_float;
  double add_double;
  int sub_int;
  unsigned sub_unsigned;
  int max_int;
  unsigned min_unsigned;
  unsigned long long max_ull;
  int and_int;
  unsigned or_unsigned;
  unsigned xor_unsigned;
  unsigned inc_unsigned;
  unsigned dec_unsigned;
  int cas_winners;
  int cas_target;
  float exch_float;
};

__global__ void atomics(Counters* c) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);  // 0 .. 1023
  atomicAdd(&c->add_int, t);
  atomicAdd(&c->add_unsigned, 2u);
  atomicAdd(&c->add_ull, 1ull << 33);
  atomicAdd(&c->add_float, 0.5f);
  atomicAdd(&c->add_double, 0.25);
  atomicSub(&c->sub_int, 1);
  atomicSub(&c->sub_unsigned, 1u);
  atomicMax(&c->max_int, t - 500);
  atomicMin(&c->min_unsigned, static_cast<unsigned>(t + 17));
  atomicMax(&c->max_ull, static_cast<unsigned long long>(t) << 40);
  atomicAnd(&c->and_int, ~(1 << (t % 8)));
  atomicOr(&c->or_unsigned, 1u << (t % 16));
  atomicXor(&c->xor_unsigned, 1u << (t % 2));  // 512 flips of each bit: back to 0
  atomicInc(&c->inc_unsigned, 99u);            // wraps to 0 after 99: 1024 % 100
  atomicDec(&c->dec_unsigned, 1000u);
  if (atomicCAS(&c->cas_target, 0, t + 1) == 0) {
    atomicAdd(&c->cas_winners, 1);  // exactly one thread swaps 0 out
  }
  atomicExch(&c->exch_float, 2.5f);
}

TEST(DeviceBuiltins, AtomicsOnEveryType) {
  GPULAB_REQUIRE_DEVICE();
  Counters init{};
  init.min_unsigned = 0xffffffffu;
  init.max_int = -100000;
  init.and_int = 0xff;
  init.dec_unsigned = 5;
  DeviceBuffer<Counters> counters(1);
  counters.copy_from(std::vector<Counters>{init});
  atomics<<<4, 256>>>(counters.data());
  GPULAB_CHECK_LAUNCH();
  const Counters c = counters.to_vector()[0];
  EXPECT_EQ(c.add_int, 1023 * 1024 / 2);
  EXPECT_EQ(c.add_unsigned, 2048u);
  EXPECT_EQ(c.add_ull, 1024ull << 33);
  EXPECT_EQ(c.add_float, 512.0f);  // exact: every partial sum is a multiple of 0.5 below 2^24
  EXPECT_EQ(c.add_double, 256.0);
  EXPECT_EQ(c.sub_int, -1024);
  EXPECT_EQ(c.sub_unsigned, 0u - 1024u);
  EXPECT_EQ(c.max_int, 523);
  EXPECT_EQ(c.min_unsigned, 17u);
  EXPECT_EQ(c.max_ull, 1023ull << 40);
  EXPECT_EQ(c.and_int, 0);
  EXPECT_EQ(c.or_unsigned, 0xffffu);
  EXPECT_EQ(c.xor_unsigned, 0u);
  // 1024 applications of the same update, in any order: the same result as in a loop.
  unsigned inc = 0;
  unsigned dec = 5;
  for (int i = 0; i < 1024; ++i) {
    inc = inc >= 99u ? 0u : inc + 1u;
    dec = (dec == 0u || dec > 1000u) ? 1000u : dec - 1u;
  }
  EXPECT_EQ(c.inc_unsigned, inc);
  EXPECT_EQ(c.dec_unsigned, dec);
  EXPECT_EQ(c.cas_winners, 1);
  EXPECT_NE(c.cas_target, 0);
  EXPECT_EQ(c.exch_float, 2.5f);
}

// ---------------------------------------------------------------------------------------------
// Vector types and intrinsics
// ---------------------------------------------------------------------------------------------

__global__ void vectors(const float4* in, float4* out, int2* ints, double2* doubles) {
  const unsigned i = threadIdx.x;
  const float4 v = __ldg(&in[i]);
  out[i] = make_float4(v.w, v.z, v.y, v.x);
  ints[i] = make_int2(static_cast<int>(i), -static_cast<int>(i));
  doubles[i] = make_double2(0.5 * i, 0.25);
}

TEST(DeviceBuiltins, VectorTypesLoadAndStoreWhole) {
  GPULAB_REQUIRE_DEVICE();
  static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
  static_assert(sizeof(int2) == 8 && alignof(int2) == 8 && alignof(double2) == 16);
  std::vector<float4> input(32);
  for (unsigned i = 0; i < 32; ++i) {
    input[i] = make_float4(i + 0.0f, i + 0.25f, i + 0.5f, i + 0.75f);
  }
  DeviceBuffer<float4> in(32), out(32);
  DeviceBuffer<int2> ints(32);
  DeviceBuffer<double2> doubles(32);
  in.copy_from(input);
  vectors<<<1, 32>>>(in.data(), out.data(), ints.data(), doubles.data());
  GPULAB_CHECK_LAUNCH();
  const auto got = out.to_vector();
  const auto got_ints = ints.to_vector();
  const auto got_doubles = doubles.to_vector();
  for (unsigned i = 0; i < 32; ++i) {
    EXPECT_EQ(got[i].x, input[i].w);
    EXPECT_EQ(got[i].w, input[i].x);
    EXPECT_EQ(got_ints[i].y, -static_cast<int>(i));
    EXPECT_EQ(got_doubles[i].x, 0.5 * i);
  }
}

__global__ void intrinsics(const float* x, float* f, int* n) {
  const float v = x[threadIdx.x];
  float* row = f + threadIdx.x * 8;
  row[0] = __expf(v);
  row[1] = __fdividef(v, 3.0f);
  row[2] = rsqrtf(v + 2.0f);
  row[3] = fmaxf(v, 0.25f);
  row[4] = __fmaf_rn(v, 2.0f, 1.0f);
  row[5] = __saturatef(v);
  row[6] = min(v, 0.5f);
  row[7] = __int_as_float(__float_as_int(v));
  int* irow = n + threadIdx.x * 6;
  const unsigned u = static_cast<unsigned>(threadIdx.x) * 2654435761u;
  irow[0] = __popc(u);
  irow[1] = __clz(static_cast<int>(u));
  irow[2] = static_cast<int>(__brev(u));
  irow[3] = max(static_cast<int>(threadIdx.x), 5);
  irow[4] = __ffs(static_cast<int>(u));
  irow[5] = __float2int_rn(v * 10.0f);
}

TEST(DeviceBuiltins, IntrinsicsMatchTheirDefinitions) {
  GPULAB_REQUIRE_DEVICE();
  const unsigned n = 32;
  std::vector<float> input(n);
  for (unsigned i = 0; i < n; ++i) {
    input[i] = -1.5f + 0.1f * static_cast<float>(i);
  }
  DeviceBuffer<float> x(n), f(n * 8);
  DeviceBuffer<int> ints(n * 6);
  x.copy_from(input);
  intrinsics<<<1, n>>>(x.data(), f.data(), ints.data());
  GPULAB_CHECK_LAUNCH();
  const auto got = f.to_vector();
  const auto got_ints = ints.to_vector();
  for (unsigned i = 0; i < n; ++i) {
    SCOPED_TRACE("thread " + std::to_string(i));
    const float v = input[i];
    const float* row = &got[i * 8];
    EXPECT_NEAR(row[0], std::exp(v), 1e-5f * std::exp(v));  // fast exp: a few ulp
    EXPECT_NEAR(row[1], v / 3.0f, 1e-6f);
    EXPECT_NEAR(row[2], 1.0f / std::sqrt(v + 2.0f), 1e-6f);
    EXPECT_EQ(row[3], std::fmax(v, 0.25f));
    EXPECT_EQ(row[4], std::fma(v, 2.0f, 1.0f));
    EXPECT_EQ(row[5], v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
    EXPECT_EQ(row[6], std::fmin(v, 0.5f));
    EXPECT_EQ(row[7], v);
    const int* irow = &got_ints[i * 6];
    const unsigned u = i * 2654435761u;
    EXPECT_EQ(irow[0], __builtin_popcount(u));
    EXPECT_EQ(irow[1], u == 0 ? 32 : __builtin_clz(u));
    unsigned reversed = 0;
    for (int bit = 0; bit < 32; ++bit) {
      reversed |= ((u >> bit) & 1u) << (31 - bit);
    }
    EXPECT_EQ(static_cast<unsigned>(irow[2]), reversed);
    EXPECT_EQ(irow[3], std::max(static_cast<int>(i), 5));
    EXPECT_EQ(irow[4], __builtin_ffs(static_cast<int>(u)));
    EXPECT_EQ(irow[5], static_cast<int>(std::nearbyint(v * 10.0f)));
  }
}

// ---------------------------------------------------------------------------------------------
// printf and assert
// ---------------------------------------------------------------------------------------------

__global__ void greet(int value) {
  if (threadIdx.x == 1 && blockIdx.x == 0) {
    printf("hello from thread %d: %d\n", static_cast<int>(threadIdx.x), value);
  }
}

TEST(DeviceBuiltins, PrintfReachesStdout) {
  GPULAB_REQUIRE_DEVICE();
  ::testing::internal::CaptureStdout();
  greet<<<2, 4>>>(42);
  GPULAB_CHECK_LAUNCH();
  GPULAB_CHECK(cudaDeviceSynchronize());
  std::fflush(stdout);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "hello from thread 1: 42\n");
}

__global__ void check_positive(const int* values) {
  assert(values[threadIdx.x] > 0);
}

TEST(DeviceBuiltins, FailedAssertIsCudaErrorAssertAndSticky) {
  GPULAB_REQUIRE_DEVICE();
  DeviceBuffer<int> values(8);
  values.copy_from(std::vector<int>{1, 2, 3, -4, 5, 6, 7, 8});
  check_positive<<<1, 8>>>(values.data());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
  void* more = nullptr;
  EXPECT_EQ(cudaMalloc(&more, 16), cudaErrorAssert);  // sticky: the context is unusable
#if defined(GPULAB_BACKEND_SIM)
  const std::string why = gpulab::sim::kernel_failure();
  EXPECT_NE(why.find("check_positive"), std::string::npos) << why;
  EXPECT_NE(why.find("thread (3,0,0)"), std::string::npos) << why;
  EXPECT_NE(why.find("values[threadIdx.x] > 0"), std::string::npos) << why;
  EXPECT_NE(why.find("device_test.cu"), std::string::npos) << why;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // sim: a reset recovers the device
  EXPECT_EQ(cudaMalloc(&more, 16), cudaSuccess);
  EXPECT_EQ(cudaFree(more), cudaSuccess);
#endif
}

__global__ void trap_in_block_two() {
  if (blockIdx.x == 2 && threadIdx.x == 0) {
    __trap();
  }
}

TEST(DeviceBuiltins, TrapEndsTheLaunchWithAStickyError) {
  GPULAB_REQUIRE_DEVICE();
  trap_in_block_two<<<4, 32>>>();
  const cudaError_t error = cudaDeviceSynchronize();
  EXPECT_NE(error, cudaSuccess);
#if defined(GPULAB_BACKEND_SIM)
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(gpulab::sim::kernel_failure().find("block (2,0,0)"), std::string::npos)
      << gpulab::sim::kernel_failure();
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
#endif
}

#if defined(GPULAB_BACKEND_SIM)
__global__ void count_threads(unsigned* count) {
  atomicAdd(count, 1u);
}

// CUDA_LAUNCH_BLOCKING=1, read once per process (so in a child run): a launch returns once its
// kernel has run, and a kernel's failure is the error of the call right after its launch.
TEST(DeviceBuiltins, CudaLaunchBlockingMakesEveryLaunchWaitForItsKernel) {
  const std::string command = "CUDA_LAUNCH_BLOCKING=1 '" +
                              gpulab::testing::self_program().string() +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=DeviceBuiltins.DISABLED_LaunchesBlock";
  const gpulab::testing::Outcome run = gpulab::testing::run_command(command);
  EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.out << run.err;
}

// (Disabled: run only as the child of CudaLaunchBlockingMakesEveryLaunchWaitForItsKernel.)
TEST(DeviceBuiltins, DISABLED_LaunchesBlock) {
  unsigned* count = nullptr;
  ASSERT_EQ(cudaMallocHost(&count, sizeof(unsigned)), cudaSuccess);
  *count = 0;
  count_threads<<<512, 256>>>(count);
  EXPECT_EQ(*count, 512u * 256u);  // no synchronization: the launch waited
  trap_in_block_two<<<4, 32>>>();
  try {
    GPULAB_CHECK_LAUNCH();
    ADD_FAILURE() << "the launch of a kernel that trapped did not report it";
  } catch (const gpulab::CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorLaunchFailure) << e.what();
    EXPECT_NE(e.diagnosis().find("trap_in_block_two"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
}
#endif

// ---------------------------------------------------------------------------------------------
// Launch checks and kernel attributes
// ---------------------------------------------------------------------------------------------

__global__ void noop() {}

cudaError_t launch_error(dim3 grid, dim3 block, std::size_t shared = 0) {
  noop<<<grid, block, shared>>>();
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) {
    GPULAB_CHECK(cudaDeviceSynchronize());
  }
  return error;
}

TEST(DeviceBuiltins, LaunchConfigurationsAreCheckedAsOnAGpu) {
  GPULAB_REQUIRE_DEVICE();
  EXPECT_EQ(launch_error(1, 1024), cudaSuccess);
  EXPECT_EQ(launch_error(1, 2048), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(launch_error(1, dim3(32, 32, 2)),
            gpulab::testing::kImpossibleLaunchError);  // 2048 threads
  EXPECT_EQ(launch_error(1, dim3(1, 1, 65)), gpulab::testing::kImpossibleLaunchError);  // z <= 64
  EXPECT_EQ(launch_error(1, dim3(1025, 1, 1)), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(launch_error(dim3(1, 65536, 1), 1), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(launch_error(dim3(1, 1, 65536), 1), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(launch_error(0, 32), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(launch_error(dim3(70000, 1, 1), 1), cudaSuccess);  // x goes beyond 65535
  EXPECT_EQ(launch_error(1, 32, 48 * 1024), cudaSuccess);
  EXPECT_EQ(launch_error(1, 32, 48 * 1024 + 1), cudaErrorInvalidValue);  // needs opt-in
}

__global__ void big_shared(float* out) {
  extern __shared__ float buffer[];
  buffer[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = buffer[(threadIdx.x + 1) % blockDim.x];
}

TEST(DeviceBuiltins, DynamicSharedMemoryAbove48KiBNeedsTheAttribute) {
  GPULAB_REQUIRE_DEVICE();
  int optin = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  ASSERT_GT(optin, 64 * 1024);  // every GPU gpulab targets (sm_80+) allows more than 64 KiB
  DeviceBuffer<float> out(64);
  big_shared<<<1, 64, 64 * 1024>>>(out.data());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(
      cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1),
      cudaErrorInvalidValue);
  cudaGetLastError();
  GPULAB_CHECK(
      cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  big_shared<<<1, 64, 64 * 1024>>>(out.data());
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(out.to_vector(), std::vector<float>(64, 1.0f));
  cudaFuncAttributes attributes{};
  GPULAB_CHECK(cudaFuncGetAttributes(&attributes, big_shared));
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 64 * 1024);
  EXPECT_EQ(attributes.maxThreadsPerBlock, 1024);
}

TEST(DeviceBuiltins, OccupancyOfAKernel) {
  GPULAB_REQUIRE_DEVICE();
  int blocks = 0;
  const cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, noop, 256, 0);
#if defined(GPULAB_BACKEND_SIM)
  if (error == cudaErrorNotSupported) {
    GTEST_SKIP() << "this sim build has no CUDA toolkit (cuda_occupancy.h)";
  }
#endif
  ASSERT_EQ(error, cudaSuccess);
  int threads_per_sm = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
  // An empty kernel is limited by threads per SM only.
  EXPECT_EQ(blocks, threads_per_sm / 256);
}

TEST(DeviceBuiltins, OccupancyOfLaunchesThatCannotRun) {
  GPULAB_REQUIRE_DEVICE();
  // A block of more threads than a block may have, or 64 KiB of dynamic shared memory (above the
  // 48 KiB a kernel may use without opting in): such a launch fails, so no block of it is ever
  // resident. The answer is 0, without an error (as cuda_occupancy.h gives it).
  for (const auto& [threads, dynamic_bytes] :
       {std::pair<int, std::size_t>{2048, 0}, std::pair<int, std::size_t>{256, 64 * 1024}}) {
    int blocks = -1;
    const cudaError_t error =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, noop, threads, dynamic_bytes);
#if defined(GPULAB_BACKEND_SIM)
    if (error == cudaErrorNotSupported) {
      GTEST_SKIP() << "this sim build has no CUDA toolkit (cuda_occupancy.h)";
    }
#endif
    ASSERT_EQ(error, cudaSuccess) << threads << " threads, " << dynamic_bytes << " bytes";
    EXPECT_EQ(blocks, 0) << threads << " threads, " << dynamic_bytes << " bytes";
  }
}

// ---------------------------------------------------------------------------------------------
// Constant and device variables
// ---------------------------------------------------------------------------------------------

__constant__ float scales[4];
__device__ int launches;

__global__ void scale_by_constant(float* data) {
  data[threadIdx.x] *= scales[threadIdx.x % 4];
  if (threadIdx.x == 0) {
    ++launches;
  }
}

TEST(DeviceVariables, CopiedToAndFromSymbols) {
  GPULAB_REQUIRE_DEVICE();
  const float host_scales[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  GPULAB_CHECK(cudaMemcpyToSymbol(scales, host_scales, sizeof host_scales));
  const int zero = 0;
  GPULAB_CHECK(cudaMemcpyToSymbol(launches, &zero, sizeof zero));
  DeviceBuffer<float> data(8);
  data.copy_from(std::vector<float>(8, 1.5f));
  scale_by_constant<<<1, 8>>>(data.data());
  GPULAB_CHECK_LAUNCH();
  scale_by_constant<<<1, 8>>>(data.data());
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(data.to_vector(),
            (std::vector<float>{1.5f, 6.0f, 13.5f, 24.0f, 1.5f, 6.0f, 13.5f, 24.0f}));
  int count = -1;
  GPULAB_CHECK(cudaMemcpyFromSymbol(&count, launches, sizeof count));
  EXPECT_EQ(count, 2);
  float last = 0.0f;
  GPULAB_CHECK(cudaMemcpyFromSymbol(&last, scales, sizeof last, 3 * sizeof(float)));
  EXPECT_EQ(last, 4.0f);
  EXPECT_EQ(cudaMemcpyToSymbol(scales, host_scales, sizeof host_scales, sizeof(float)),
            cudaErrorInvalidValue);  // past the end of the symbol
  cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------
// What the sim backend defines where a GPU's behaviour is undefined
// ---------------------------------------------------------------------------------------------

#if defined(GPULAB_BACKEND_SIM)
__global__ void read_outside_the_mask(float* out) {
  const float value = static_cast<float>(threadIdx.x);
  // Lanes 0-15 exchange among themselves but read lane 20, which does not take part.
  if (threadIdx.x < 16) {
    out[threadIdx.x] = __shfl_sync(0x0000ffffu, value, 20);
  }
}

__global__ void record_active_mask(unsigned* active) {
  if (threadIdx.x % 32 >= 20) {
    return;  // lanes 20-31 of each warp exit
  }
  if (threadIdx.x % 2 == 0) {
    active[threadIdx.x] = __activemask();  // the even lanes among 0-19
  } else {
    active[threadIdx.x] = 0;
  }
}

__global__ void bad_mask(float* out) {
  out[threadIdx.x] = __shfl_sync(0x1u, 1.0f, 0);  // lanes 1-31 are not in their own mask
}

__global__ void bad_width(float* out) {
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1.0f, 1, 3);
}

__global__ void child() {}

__global__ void parent() {
  child<<<1, 1>>>();
}

__global__ void throws() {
  if (threadIdx.x == 3) {
    throw std::runtime_error("not on a GPU");
  }
}

#endif

TEST(SimDefinedBehaviour, ReadsFromLanesNotTakingPartAreAllOnesBits) {
#if defined(GPULAB_BACKEND_SIM)
  DeviceBuffer<float> out(16);
  read_outside_the_mask<<<1, 32>>>(out.data());
  GPULAB_CHECK_LAUNCH();
  for (const float value : out.to_vector()) {
    EXPECT_TRUE(std::isnan(value)) << value;
  }
#else
  GTEST_SKIP() << "undefined on a GPU; the sim backend returns all-ones bits (NaN, -1)";
#endif
}

TEST(SimDefinedBehaviour, ActiveMaskNamesTheLanesThatExistAndHaveNotExited) {
#if defined(GPULAB_BACKEND_SIM)
  DeviceBuffer<unsigned> active(48);
  for_each_schedule([&] {
    active.fill_bytes(0xff);
    record_active_mask<<<1, 48>>>(active.data());  // the second warp has 16 lanes
    GPULAB_CHECK_LAUNCH();
    const std::vector<unsigned> masks = active.to_vector();
    for (unsigned t = 0; t < 48; ++t) {
      const unsigned lane = t % 32;
      const unsigned expected = lane >= 20      ? 0xffffffffu
                                : lane % 2 == 1 ? 0u
                                : t < 32        ? 0x00055555u
                                                : 0x00005555u;
      EXPECT_EQ(masks[t], expected) << "thread " << t;
    }
  });
#else
  GTEST_SKIP() << "on a GPU __activemask is the lanes converged at the call, which independent "
                  "thread scheduling (sm_70+) does not guarantee";
#endif
}

TEST(SimDefinedBehaviour, BadMasksWidthsAndExceptionsEndTheLaunch) {
#if defined(GPULAB_BACKEND_SIM)
  DeviceBuffer<float> out(32);
  float* pointer = out.data();
  const std::string mask = failure_of([&] { bad_mask<<<1, 32>>>(pointer); });
  EXPECT_NE(mask.find("__shfl_sync with mask 0x00000001, which does not include the calling lane"),
            std::string::npos)
      << mask;
  DeviceBuffer<float> again(32);
  pointer = again.data();
  const std::string width = failure_of([&] { bad_width<<<1, 32>>>(pointer); });
  EXPECT_NE(width.find("width 3: the width must be a power of 2"), std::string::npos) << width;
  const std::string nested = failure_of([] { parent<<<1, 1>>>(); });
  EXPECT_NE(nested.find("dynamic parallelism) is not simulated"), std::string::npos) << nested;
  const std::string thrown = failure_of([] { throws<<<1, 8>>>(); });
  EXPECT_NE(thrown.find("thread (3,0,0) threw a C++ exception: not on a GPU"), std::string::npos)
      << thrown;
#else
  GTEST_SKIP() << "undefined on a GPU (or not C++ there); the sim backend reports it";
#endif
}

TEST(SimDefinedBehaviourDeathTest, DeviceBuiltinsOutsideAKernelAbortWithTheLine) {
#if defined(GPULAB_BACKEND_SIM)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(__syncthreads(), "__syncthreads called outside a kernel at device_test.cu:[0-9]+");
#else
  GTEST_SKIP() << "nvcc rejects device functions in host code at compile time";
#endif
}

}  // namespace
