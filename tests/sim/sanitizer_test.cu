// The sim's sanitizer (gpulab/sim/runtime.hpp, docs/sim.md "The sanitizer"): races on shared
// memory and reads of shared memory no thread wrote, found from what the threads did, under any
// schedule, each named with its kernel, block, threads, shared variable and byte, and the source
// line of each access. Sim only: on a GPU,
// compute-sanitizer's racecheck is the tool.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "block_sum.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/sim/sanitizer.hpp"
#include "run_command.hpp"
#include "schedules.hpp"

namespace {

using gpulab::DeviceBuffer;
using gpulab::testing::failure_of;

constexpr unsigned kBlock = gpulab::testing::kSumBlock;
using gpulab::testing::block_sum;

// The sanitizer checks counted launches: not in a build that cannot count (the asan preset).
#define REQUIRE_SANITIZER()                                        \
  if (!gpulab::sim::counting_available()) {                        \
    GTEST_SKIP() << "the sanitizer needs a build that can count: " \
                 << gpulab::sim::counting_unavailable_reason();    \
  }

// Device memory for a launch that failure_of makes fail: the cudaDeviceReset after it frees the
// memory (a DeviceBuffer alive after the reset would free it again).
template <class T>
T* scratch(std::size_t count) {
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, count * sizeof(T)), cudaSuccess);
  return static_cast<T*>(memory);
}

// Line `line` of `file`, as the sanitizer names it.
std::string line_of(int line, const char* file = "sanitizer_test.cu") {
  return file + (":" + std::to_string(line));
}

// Sums 4 blocks of ones; the launch's error.
template <bool barrier_in_loop>
cudaError_t sum_ones(std::vector<float>* sums = nullptr) {
  DeviceBuffer<float> in(4 * kBlock), out(4);
  in.copy_from(std::vector<float>(4 * kBlock, 1.0f));
  block_sum<barrier_in_loop><<<4, kBlock>>>(in.data(), out.data());
  const cudaError_t error = cudaDeviceSynchronize();
  if (error == cudaSuccess && sums != nullptr) {
    *sums = out.to_vector();
  }
  return error;
}

TEST(Sanitizer, AMissingSyncthreadsIsARaceNamedWithItsThreadsVariableAndLines) {
  REQUIRE_SANITIZER();
  const gpulab::sim::ScopedSanitizing sanitize;
  std::vector<float> sums;
  ASSERT_EQ(sum_ones<true>(&sums), cudaSuccess) << gpulab::sim::kernel_failure();
  EXPECT_EQ(sums, std::vector<float>(4, static_cast<float>(kBlock)));
  // Every block races; the lowest is reported, whichever ran first. Its lowest raced word is
  // partial[1]: thread 1 adds to it, and thread 0 reads it (stride 1).
  gpulab::testing::for_each_schedule([] {
    const std::string why = failure_of([] { (void)sum_ones<false>(); });
    const std::string line = line_of(gpulab::testing::kSumRaceLine, "block_sum.hpp");
    for (const std::string& part :
         {std::string("kernel "), std::string("block_sum"), std::string("failed in block (0,0,0)"),
          "a race on shared memory: thread (1,0,0) wrote 4 bytes of partial, byte 4 of its 1024 "
          "(static __shared__ of gpulab::testing::block_sum<false>(float const*, float*)), at " +
              line + ", and thread (0,0,0) read them at " + line +
              ", with no __syncwarp() or __syncthreads() between the two; ",
          std::string(" words (4 bytes) of shared memory raced between these two barriers")}) {
      EXPECT_NE(why.find(part), std::string::npos) << "missing: " << part << "\nin: " << why;
    }
  });
}

TEST(Sanitizer, IsOffUnlessAskedFor) {
  REQUIRE_SANITIZER();
  ASSERT_FALSE(gpulab::sim::sanitizing());
  EXPECT_EQ(sum_ones<false>(), cudaSuccess) << gpulab::sim::kernel_failure();
  {
    const gpulab::sim::ScopedSanitizing sanitize;
    EXPECT_TRUE(gpulab::sim::sanitizing());
  }
  EXPECT_FALSE(gpulab::sim::sanitizing());
}

// A warp's tree reduction in shared memory: with __syncwarp() between each read and the write
// after it, as CUDA requires; without, lanes of one warp race.
constexpr int kWarpReadLine = __LINE__ + 9;    // `values[lane + stride]`
constexpr int kWarpWriteLine = __LINE__ + 13;  // `values[lane] += other`
template <bool syncwarp>
__global__ void warp_sum(const float* in, float* out) {
  __shared__ float values[32];
  const unsigned lane = threadIdx.x;
  values[lane] = in[lane];
  __syncwarp();
  for (unsigned stride = 16; stride > 0; stride /= 2) {
    const float other = lane < stride ? values[lane + stride] : 0.0f;
    if (syncwarp) {
      __syncwarp();
    }
    if (lane < stride) {
      values[lane] += other;
    }
    if (syncwarp) {
      __syncwarp();
    }
  }
  if (lane == 0) {
    *out = values[0];
  }
}

TEST(Sanitizer, LanesOfOneWarpAreOrderedBySyncwarpAndByNothingElse) {
  REQUIRE_SANITIZER();
  const gpulab::sim::ScopedSanitizing sanitize;
  {
    DeviceBuffer<float> in(32), out(1);
    in.copy_from(std::vector<float>(32, 1.0f));
    warp_sum<true><<<1, 32>>>(in.data(), out.data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << gpulab::sim::kernel_failure();
    EXPECT_EQ(out.to_vector(), std::vector<float>{32.0f});
  }
  float* values = scratch<float>(33);
  const std::string why = failure_of([&] { warp_sum<false><<<1, 32>>>(values, values + 32); });
  EXPECT_NE(why.find("a race on shared memory: thread (1,0,0) wrote 4 bytes of values"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("byte 4 of its 128"), std::string::npos) << why;
  EXPECT_NE(why.find("at " + line_of(kWarpWriteLine) + ", and thread (0,0,0) read them at " +
                     line_of(kWarpReadLine)),
            std::string::npos)
      << why;
}

// Every thread adds to one shared counter; `barrier`: thread 0 reads it after a __syncthreads().
template <bool barrier>
__global__ void count_in_shared(unsigned* out) {
  __shared__ unsigned count;
  if (threadIdx.x == 0) {
    count = 0;
  }
  __syncthreads();
  atomicAdd(&count, 1u);
  if (barrier) {
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *out = count;
  }
}

TEST(Sanitizer, AtomicsRaceOnlyWithPlainAccesses) {
  REQUIRE_SANITIZER();
  const gpulab::sim::ScopedSanitizing sanitize;
  {
    DeviceBuffer<unsigned> out(1);
    count_in_shared<true><<<2, kBlock>>>(out.data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << gpulab::sim::kernel_failure();
    EXPECT_EQ(out.to_vector(), std::vector<unsigned>{kBlock});
  }
  unsigned* count = scratch<unsigned>(1);
  const std::string why = failure_of([&] { count_in_shared<false><<<2, kBlock>>>(count); });
  EXPECT_NE(why.find("updated atomically 4 bytes of count"), std::string::npos) << why;
  EXPECT_NE(why.find("and thread (0,0,0) read them"), std::string::npos) << why;
  EXPECT_NE(why.find(", with no __syncwarp() or __syncthreads() between the two; 1 word (4 "
                     "bytes)"),
            std::string::npos)
      << why;
}

// Each thread writes its element of dynamic shared memory and reads its neighbour's, with or
// without a barrier between.
template <bool barrier>
__global__ void rotate(float* out) {
  extern __shared__ float buffer[];
  const unsigned t = threadIdx.x;
  buffer[t] = static_cast<float>(t);
  if (barrier) {
    __syncthreads();
  }
  out[t] = buffer[(t + 1) % blockDim.x];
}

TEST(Sanitizer, DynamicSharedMemoryIsNamedByItsByte) {
  REQUIRE_SANITIZER();
  const gpulab::sim::ScopedSanitizing sanitize;
  {
    DeviceBuffer<float> out(kBlock);
    rotate<true><<<1, kBlock, kBlock * sizeof(float)>>>(out.data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << gpulab::sim::kernel_failure();
  }
  float* rotated = scratch<float>(kBlock);
  const std::string why =
      failure_of([&] { rotate<false><<<1, kBlock, kBlock * sizeof(float)>>>(rotated); });
  EXPECT_NE(why.find("thread (0,0,0) wrote 4 bytes of dynamic shared memory (extern __shared__), "
                     "byte 0 of its 1024"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("thread (255,0,0) read them"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(kBlock) + " words (4 bytes)"), std::string::npos) << why;
}

// A block's shared memory starts uninitialized: a histogram whose bins nobody zeroed adds to
// whatever an earlier block left there. With `zeroed`, each thread zeroes a bin before a barrier.
constexpr int kBinsAddLine = __LINE__ + 11;  // atomicAdd(&bins[...], 1u)
template <bool zeroed>
__global__ void histogram(const unsigned* in, unsigned* out) {
  __shared__ unsigned bins[64];
  const unsigned t = threadIdx.x;
  if (zeroed) {
    if (t < 64) {
      bins[t] = 0;
    }
    __syncthreads();
  }
  atomicAdd(&bins[in[blockIdx.x * blockDim.x + t] % 64], 1u);
  __syncthreads();
  if (t < 64) {
    atomicAdd(&out[t], bins[t]);
  }
}

// A tile read one row further than it was staged: the last row of threads reads a row no thread
// wrote (in the tile's padding, inside the array).
constexpr int kTileReadLine = __LINE__ + 7;  // `tile[y + 1][x]`
__global__ void next_row(const float* in, float* out) {
  __shared__ float tile[17][16];
  const unsigned x = threadIdx.x;
  const unsigned y = threadIdx.y;
  tile[y][x] = in[y * 16 + x];
  __syncthreads();
  out[y * 16 + x] = tile[y + 1][x];
}

TEST(Sanitizer, AReadOfSharedMemoryNoThreadWroteIsNamedWithItsThreadVariableAndLine) {
  REQUIRE_SANITIZER();
  const gpulab::sim::ScopedSanitizing sanitize;
  {
    DeviceBuffer<unsigned> in(4 * kBlock), out(64);
    in.copy_from(std::vector<unsigned>(4 * kBlock, 3u));
    out.fill_bytes(0);
    histogram<true><<<4, kBlock>>>(in.data(), out.data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << gpulab::sim::kernel_failure();
    EXPECT_EQ(out.to_vector()[3], 4 * kBlock);
  }
  gpulab::testing::for_each_schedule([] {
    unsigned* in = scratch<unsigned>(4 * kBlock);
    unsigned* out = scratch<unsigned>(64);
    EXPECT_EQ(cudaMemset(in, 0, 4 * kBlock * sizeof(unsigned)), cudaSuccess);  // all to bins[0]
    const std::string why = failure_of([&] { histogram<false><<<4, kBlock>>>(in, out); });
    for (const std::string& part :
         {std::string(
              "failed in block (0,0,0): a read of shared memory that no thread wrote: "
              "thread (0,0,0) updated atomically 4 bytes of bins, byte 0 of its 256 "
              "(static __shared__ of (anonymous namespace)::histogram<false>(unsigned int const*, "
              "unsigned int*)), at " +
              line_of(kBinsAddLine) + ", before any thread"),
          std::string("; 1 word (4 bytes) of shared memory was read before any write between "
                      "these two barriers")}) {
      EXPECT_NE(why.find(part), std::string::npos) << "missing: " << part << "\nin: " << why;
    }
  });
  float* in = scratch<float>(256);
  float* out = scratch<float>(256);
  const std::string why = failure_of([&] { next_row<<<1, dim3(16, 16)>>>(in, out); });
  EXPECT_NE(why.find("thread (0,15,0) read 4 bytes of tile, byte 1024 of its 1088 (static "
                     "__shared__ of (anonymous namespace)::next_row(float const*, float*)), at " +
                     line_of(kTileReadLine)),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("; 16 words (4 bytes)"), std::string::npos) << why;
}

// GPULAB_SIM_SANITIZE=1 turns it on for a whole program (read once per process: child runs, with
// one worker and with seven, where blocks finish in other orders).
TEST(Sanitizer, TheEnvironmentTurnsItOnForAProgram) {
  REQUIRE_SANITIZER();
  for (const char* workers : {"1", "7"}) {
    const std::string command =
        std::string("GPULAB_SIM_SANITIZE=1 GPULAB_SIM_WORKERS=") + workers + " '" +
        gpulab::testing::self_program().string() +
        "' --gtest_also_run_disabled_tests --gtest_filter=Sanitizer.DISABLED_IsOn";
    const gpulab::testing::Outcome run = gpulab::testing::run_command(command);
    EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.out << run.err;
  }
}

// (Disabled: run only as the child of TheEnvironmentTurnsItOnForAProgram.) Every block races: the
// lowest is reported under every schedule, whatever the number of workers.
TEST(Sanitizer, DISABLED_IsOn) {
  EXPECT_TRUE(gpulab::sim::sanitizing());
  gpulab::testing::for_each_schedule([] {
    const std::string why = failure_of([] { (void)sum_ones<false>(); });
    EXPECT_NE(why.find("failed in block (0,0,0): a race on shared memory"), std::string::npos)
        << why;
  });
}

}  // namespace
