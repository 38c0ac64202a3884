// GPULAB_CHECK_LAUNCH on real launches: a good launch passes and computes; a bad configuration
// is reported by the check after the launch, with the CUDA error name. Runs on both backends.
#include <gtest/gtest.h>

#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "test_device.hpp"

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

}  // namespace
