// Bugs students make, planted on purpose, and how each is caught: on sim deterministically (two
// thread schedules, AddressSanitizer, the launch checks, the memory limit, barrier analysis); on
// cuda the checks a GPU itself makes. Where a GPU's behaviour is undefined (a race, a divergent
// barrier) the cuda build skips and says so: compute-sanitizer is the tool there.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpulab/core/cuda_check.hpp"
#include "gpulab/core/memory.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

namespace {

using gpulab::DeviceBuffer;
#if defined(GPULAB_BACKEND_SIM)
using gpulab::testing::failure_of;
#endif

#if defined(GPULAB_BACKEND_SIM)
constexpr unsigned kBlock = 256;

// Tree reduction of one block. With `barrier_in_loop` false it has the classic bug: no
// __syncthreads between the steps, so a thread may read a partial sum before it is written.
template <bool barrier_in_loop>
__global__ void block_sum(const float* in, float* out) {
  __shared__ float partial[kBlock];
  const unsigned t = threadIdx.x;
  partial[t] = in[blockIdx.x * kBlock + t];
  __syncthreads();
  for (unsigned stride = kBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      partial[t] += partial[t + stride];
    }
    if (barrier_in_loop) {
      __syncthreads();
    }
  }
  if (t == 0) {
    out[blockIdx.x] = partial[0];
  }
}

// Runs the reduction of 4 blocks of ones under `schedule`; returns the block sums.
template <bool barrier_in_loop>
std::vector<float> sums_under(const char* schedule) {
  gpulab::sim::Schedule order;
  std::string error;
  EXPECT_TRUE(gpulab::sim::Schedule::parse(schedule, order, error)) << error;
  const gpulab::sim::ScopedSchedule scope(order);
  DeviceBuffer<float> in(4 * kBlock), out(4);
  in.copy_from(std::vector<float>(4 * kBlock, 1.0f));
  out.fill_bytes(0xff);
  block_sum<barrier_in_loop><<<4, kBlock>>>(in.data(), out.data());
  GPULAB_CHECK_LAUNCH();
  return out.to_vector();
}
#endif  // GPULAB_BACKEND_SIM

TEST(PlantedBugs, AMissingSyncthreadsFailsUnderOneOfTwoSchedules) {
#if defined(GPULAB_BACKEND_SIM)
  const std::vector<float> right(4, static_cast<float>(kBlock));
  EXPECT_EQ(sums_under<true>("forward"), right);
  EXPECT_EQ(sums_under<true>("reverse"), right);
  const bool caught =
      sums_under<false>("forward") != right || sums_under<false>("reverse") != right;
  EXPECT_TRUE(caught) << "the reduction without a barrier gave the right sum under both schedules";
#else
  GTEST_SKIP() << "a race's outcome on a GPU depends on timing; the sim backend's schedules "
                  "make it deterministic";
#endif
}

#if defined(GPULAB_BACKEND_SIM) && defined(__SANITIZE_ADDRESS__)
__global__ void write_one_past_the_end(float* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) {  // the bug: <= instead of <
    data[i] = 1.0f;
  }
}
#endif

TEST(PlantedBugsDeathTest, AnOutOfBoundsWriteIsReportedByAddressSanitizer) {
#if defined(GPULAB_BACKEND_SIM) && defined(__SANITIZE_ADDRESS__)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        DeviceBuffer<float> data(100);
        write_one_past_the_end<<<1, 128>>>(data.data(), 100);
        cudaDeviceSynchronize();
      },
      "heap-buffer-overflow.*write_one_past_the_end.*planted_bugs_test.cu:[0-9]+");
#else
  GTEST_SKIP() << "needs the sim backend built with AddressSanitizer (cmake --preset asan); on a "
                  "GPU use compute-sanitizer";
#endif
}

__global__ void noop() {}

TEST(PlantedBugs, ABlockOf2048ThreadsIsAnInvalidConfiguration) {
  GPULAB_REQUIRE_DEVICE();
  noop<<<1, 2048>>>();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // a launch error is not sticky
}

TEST(PlantedBugs, AnAllocationLargerThanTheDeviceIsOutOfMemory) {
  GPULAB_REQUIRE_DEVICE();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPULAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, total_bytes + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMalloc(&memory, 1024), cudaSuccess);  // not sticky: the device is fine
  EXPECT_EQ(cudaFree(memory), cudaSuccess);
}

#if defined(GPULAB_BACKEND_SIM)
// The early-exit bug: threads past n return, the others wait at a barrier they never reach.
__global__ void early_exit_then_barrier(float* data, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= n) {
    return;
  }
  data[i] *= 2.0f;
  __syncthreads();
  data[i] += 1.0f;
}

// Two halves of a block wait at two different barriers.
__global__ void barriers_in_branches(float* data) {
  if (threadIdx.x < 32) {
    data[threadIdx.x] = 1.0f;
    __syncthreads();
  } else {
    data[threadIdx.x] = 2.0f;
    __syncthreads();
  }
}

// Warp 0 waits in a shuffle for lanes that wait at __syncthreads.
__global__ void shuffle_across_a_barrier(float* data) {
  float value = data[threadIdx.x];
  if (threadIdx.x % 32 < 16) {
    value = __shfl_down_sync(0xffffffffu, value, 1);
  } else {
    __syncthreads();
  }
  data[threadIdx.x] = value;
}

#endif

TEST(PlantedBugs, ADivergentBarrierIsAnErrorNotAHang) {
#if defined(GPULAB_BACKEND_SIM)
  DeviceBuffer<float> data(64);
  float* pointer = data.data();
  const std::string exited = failure_of([&] { early_exit_then_barrier<<<1, 64>>>(pointer, 40); });
  EXPECT_NE(exited.find("divergent __syncthreads"), std::string::npos) << exited;
  EXPECT_NE(exited.find("threads 0-39 wait at __syncthreads (planted_bugs_test.cu:"),
            std::string::npos)
      << exited;
  EXPECT_NE(exited.find("threads 40-63 have exited"), std::string::npos) << exited;

  DeviceBuffer<float> more(64);
  pointer = more.data();
  const std::string branches = failure_of([&] { barriers_in_branches<<<1, 64>>>(pointer); });
  EXPECT_NE(branches.find("wait at different barriers"), std::string::npos) << branches;

  DeviceBuffer<float> last(64);
  pointer = last.data();
  const std::string deadlock = failure_of([&] { shuffle_across_a_barrier<<<1, 64>>>(pointer); });
  EXPECT_NE(deadlock.find("deadlock"), std::string::npos) << deadlock;
  EXPECT_NE(deadlock.find("wait in __shfl_down_sync with mask 0xffffffff"), std::string::npos)
      << deadlock;
#else
  GTEST_SKIP() << "a divergent barrier is undefined behaviour on a GPU (it may hang or appear to "
                  "work); the sim backend reports it";
#endif
}

}  // namespace
