// GPULAB_CHECK_LAUNCH on real launches: a good launch passes and computes; a bad configuration
// is reported by the check after the launch, with the CUDA error name. Runs on both backends; on
// sim, a kernel that failed is explained in the error the next check throws.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "test_device.hpp"

#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

__global__ void scale(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {  // the last block may run past the end
    data[i] *= factor;
  }
}

TEST(LaunchCheck, GoodLaunchPassesAndComputes) {
  GPULAB_REQUIRE_DEVICE();
  const int n = 1000;
  std::vector<float> host(n, 2.0f);
  gpulab::DeviceBuffer<float> data(n);
  data.copy_from(host);
  scale<<<(n + 255) / 256, 256>>>(data.data(), 3.0f, n);
  EXPECT_NO_THROW(GPULAB_CHECK_LAUNCH());
  for (float value : data.to_vector()) {
    ASSERT_EQ(value, 6.0f);
  }
}

TEST(LaunchCheck, TooManyThreadsPerBlockFailsTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::DeviceBuffer<float> data(1);
  scale<<<1, 2048>>>(data.data(), 1.0f, 1);  // the limit is 1024 threads per block
  try {
    GPULAB_CHECK_LAUNCH();
    FAIL() << "a 2048-thread block was not reported";
  } catch (const gpulab::CudaError& e) {
    EXPECT_EQ(e.code(), gpulab::testing::kImpossibleLaunchError) << e.what();
  }
}

TEST(LaunchCheck, TooMuchDynamicSharedMemoryIsReported) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::DeviceBuffer<float> data(1);
  // 1 MiB is more than any GPU's shared memory per block.
  scale<<<1, 32, 1 << 20>>>(data.data(), 1.0f, 1);
  EXPECT_THROW(GPULAB_CHECK_LAUNCH(), gpulab::CudaError);
}

#if GPULAB_BACKEND_SIM
// Half the block leaves before the barrier the other half waits at (undefined on a GPU).
__global__ void leaves_before_the_barrier(float* data) {
  if (threadIdx.x >= 16) {
    return;
  }
  __syncthreads();
  data[threadIdx.x] = 1.0f;
}

TEST(LaunchCheck, OnSimTheErrorAfterAFailedKernelSaysWhyAndWhere) {
  gpulab::DeviceBuffer<float> data(32);
  leaves_before_the_barrier<<<1, 32>>>(data.data());
  std::string what;
  std::string diagnosis;
  try {
    GPULAB_CHECK(cudaDeviceSynchronize());
  } catch (const gpulab::CudaError& e) {
    what = e.what();
    diagnosis = e.diagnosis();
  }
  EXPECT_EQ(diagnosis, gpulab::sim::kernel_failure());
  EXPECT_NE(diagnosis.find("kernel leaves_before_the_barrier (launched at launch_check_test.cu:"),
            std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("divergent __syncthreads"), std::string::npos) << diagnosis;
  // The message: the failed call first, then the diagnosis on its own line.
  EXPECT_TRUE(what.starts_with("CUDA error cudaErrorLaunchFailure")) << what;
  EXPECT_TRUE(what.ends_with("\ngpulab sim: " + diagnosis)) << what;
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);  // the error is sticky until a reset
  // Once the device works again, an error says nothing of the old failure.
  bool threw = false;
  try {
    GPULAB_CHECK(cudaSetDevice(1000));
  } catch (const gpulab::CudaError& e) {
    threw = true;
    EXPECT_TRUE(e.diagnosis().empty()) << e.what();
  }
  EXPECT_TRUE(threw);
}
#endif

}  // namespace
