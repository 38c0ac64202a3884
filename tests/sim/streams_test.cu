// Streams are asynchronous on both backends: a launch returns before the kernel has run, queries
// say "not ready", and a result read without synchronizing is not there yet. Events time the
// queued work.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "gpulab/core/cuda_check.hpp"
#include "gpulab/core/memory.hpp"
#include "gpulab/core/stream.hpp"
#include "test_device.hpp"

namespace {

using gpulab::DeviceBuffer;

// One thread spins for `cycles` of the device clock, then writes `value`.
__global__ void spin_then_write(long long cycles, int* out, int value) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  *out = value;
}

long long cycles_for_ms(double ms) {
  int khz = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  return static_cast<long long>(ms * khz);
}

TEST(Streams, LaunchReturnsBeforeTheKernelRuns) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  DeviceBuffer<int> out(1);
  out.fill_bytes_async(0, stream);  // on the stream: a non-blocking one does not wait for stream 0
  const auto start = std::chrono::steady_clock::now();
  spin_then_write<<<1, 1, 0, stream.get()>>>(cycles_for_ms(200.0), out.data(), 7);
  GPULAB_CHECK_LAUNCH();
  const auto launched = std::chrono::steady_clock::now();
  const double launch_ms = std::chrono::duration<double, std::milli>(launched - start).count();
  EXPECT_LT(launch_ms, 100.0);
  EXPECT_EQ(cudaStreamQuery(stream.get()), cudaErrorNotReady);
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(cudaStreamQuery(stream.get()), cudaSuccess);
  EXPECT_EQ(out.to_vector(), std::vector<int>{7});
}

TEST(Streams, AResultReadWithoutSynchronizingIsNotThereYet) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  DeviceBuffer<int> out(1);
  gpulab::PinnedBuffer<int> host(1);
  host.data()[0] = -1;
  spin_then_write<<<1, 1, 0, stream.get()>>>(cycles_for_ms(200.0), out.data(), 7);
  GPULAB_CHECK_LAUNCH();
  GPULAB_CHECK(
      cudaMemcpyAsync(host.data(), out.data(), sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
  EXPECT_EQ(host.data()[0], -1);  // the forgotten synchronization, made visible
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(host.data()[0], 7);
}

TEST(Streams, EventsTimeTheQueuedWork) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  gpulab::Event start;
  gpulab::Event stop;
  DeviceBuffer<int> out(1);
  GPULAB_CHECK(cudaEventRecord(start.get(), stream.get()));
  spin_then_write<<<1, 1, 0, stream.get()>>>(cycles_for_ms(50.0), out.data(), 1);
  GPULAB_CHECK_LAUNCH();
  GPULAB_CHECK(cudaEventRecord(stop.get(), stream.get()));
  float ms = 0.0f;
  EXPECT_EQ(cudaEventQuery(stop.get()), cudaErrorNotReady);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start.get(), stop.get()), cudaErrorNotReady);
  cudaGetLastError();
  GPULAB_CHECK(cudaEventSynchronize(stop.get()));
  GPULAB_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  EXPECT_GE(ms, 49.0f);  // the spin's clock may run below its maximum, never above
  EXPECT_LT(ms, 5000.0f);
}

TEST(Streams, TheLegacyDefaultStreamWaitsForOtherStreams) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream(cudaStreamDefault);  // a blocking stream
  DeviceBuffer<int> out(1);
  out.fill_bytes(0);
  spin_then_write<<<1, 1, 0, stream.get()>>>(cycles_for_ms(50.0), out.data(), 9);
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(out.to_vector(), std::vector<int>{9});  // cudaMemcpy on the legacy stream
}

TEST(Streams, WorkOnOneStreamRunsInOrder) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  DeviceBuffer<int> out(1);
  for (int value = 1; value <= 20; ++value) {
    spin_then_write<<<1, 1, 0, stream.get()>>>(value == 1 ? cycles_for_ms(20.0) : 0, out.data(),
                                               value);
  }
  GPULAB_CHECK_LAUNCH();
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(out.to_vector(), std::vector<int>{20});
}

}  // namespace
