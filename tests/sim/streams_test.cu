// Streams are asynchronous on both backends: a launch returns before the kernel has run, queries
// say "not ready", and a result read without synchronizing is not there yet. Events time the
// queued work.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "stream_gate.hpp"
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

TEST(Streams, AHostFunctionHoldsTheWorkQueuedAfterItUntilItReturns) {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  DeviceBuffer<int> out(1);
  out.fill_bytes(0);
  cudaEvent_t done = nullptr;
  GPULAB_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  // The kernel's first launch in this process, before the gate (see StreamGate: a kernel loaded
  // lazily behind a closed gate would wait for it).
  spin_then_write<<<1, 1, 0, stream.get()>>>(0, out.data(), 0);
  GPULAB_CHECK_LAUNCH();
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  {
    gpulab::testing::StreamGate gate;
    gate.close(stream.get());
    spin_then_write<<<1, 1, 0, stream.get()>>>(0, out.data(), 7);
    GPULAB_CHECK_LAUNCH();
    GPULAB_CHECK(cudaEventRecord(done, stream.get()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(cudaEventQuery(done), cudaErrorNotReady);  // the kernel waits behind the gate
    EXPECT_EQ(cudaStreamQuery(stream.get()), cudaErrorNotReady);
    gate.open();
    GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
    EXPECT_FALSE(gate.timed_out());
  }
  EXPECT_EQ(cudaEventQuery(done), cudaSuccess);
  EXPECT_EQ(out.to_vector(), std::vector<int>{7});
  GPULAB_CHECK(cudaEventDestroy(done));
#if GPULAB_BACKEND_SIM
  EXPECT_EQ(cudaLaunchHostFunc(stream.get(), nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
#endif
}

#if GPULAB_BACKEND_SIM
__global__ void write_one(int* out) {
  *out = 1;
}

// The record of what each stream was given, in order, as a GPU's timeline would show it.
TEST(StreamRecord, NotesEachOperationOnItsStreamInOrderWhileOn) {
  GPULAB_REQUIRE_DEVICE();
  using gpulab::sim::StreamEntry;
  using gpulab::sim::StreamOp;
  gpulab::Stream first;
  gpulab::Stream second;
  DeviceBuffer<int> out(1);
  std::vector<int> host(1, 0);
  cudaEvent_t event = nullptr;
  GPULAB_CHECK(cudaEventCreate(&event));
  write_one<<<1, 1, 0, first.get()>>>(out.data());  // before recording: not noted
  gpulab::sim::set_stream_recording(true);
  GPULAB_CHECK(cudaEventRecord(event, first.get()));
  write_one<<<1, 1, 0, first.get()>>>(out.data());
  GPULAB_CHECK(cudaMemsetAsync(out.data(), 0, sizeof(int), first.get()));
  GPULAB_CHECK(cudaStreamWaitEvent(second.get(), event, 0));
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2(second.get()));
  GPULAB_CHECK(cudaMemcpy(host.data(), out.data(), sizeof(int), cudaMemcpyDeviceToHost));
  write_one<<<1, 2048, 0, first.get()>>>(out.data());  // refused: not noted
  EXPECT_NE(cudaGetLastError(), cudaSuccess);
  GPULAB_CHECK(cudaDeviceSynchronize());
  gpulab::sim::set_stream_recording(false);
  write_one<<<1, 1, 0, first.get()>>>(out.data());  // after recording: not noted
  GPULAB_CHECK(cudaDeviceSynchronize());

  // The synchronous copy waited for every stream's work: one host wait on each (the device
  // synchronization after it found nothing new to wait for).
  EXPECT_EQ(gpulab::sim::stream_entries(first.get()),
            (std::vector<StreamEntry>{{StreamOp::event_record, ""},
                                      {StreamOp::kernel, "write_one"},
                                      {StreamOp::memset, ""},
                                      {StreamOp::host_wait, ""}}));
  EXPECT_EQ(gpulab::sim::stream_entries(second.get()),
            (std::vector<StreamEntry>{
                {StreamOp::event_wait, ""}, {StreamOp::l2_reset, ""}, {StreamOp::host_wait, ""}}));
  EXPECT_EQ(gpulab::sim::stream_entries(nullptr),
            (std::vector<StreamEntry>{{StreamOp::memcpy, ""}, {StreamOp::host_wait, ""}}));
  EXPECT_EQ(gpulab::sim::describe({StreamOp::kernel, "write_one"}), "kernel write_one");
  EXPECT_EQ(gpulab::sim::describe({StreamOp::event_record, ""}), "event record");
  EXPECT_EQ(gpulab::sim::describe({StreamOp::host_function, ""}), "host function");

  gpulab::sim::set_stream_recording(true);  // starting again forgets the last record
  EXPECT_TRUE(gpulab::sim::stream_entries(first.get()).empty());
  gpulab::sim::set_stream_recording(false);
  GPULAB_CHECK(cudaEventDestroy(event));
}

TEST(StreamRecord, AHostWaitIsNotedOnlyWhereItCoversTheStreamsLastOperation) {
  GPULAB_REQUIRE_DEVICE();
  using gpulab::sim::StreamEntry;
  using gpulab::sim::StreamOp;
  gpulab::Stream stream;
  DeviceBuffer<int> out(1);
  gpulab::Event event;
  gpulab::sim::set_stream_recording(true);
  write_one<<<1, 1, 0, stream.get()>>>(out.data());
  event.record(stream.get());
  write_one<<<1, 1, 0, stream.get()>>>(out.data());
  event.synchronize();  // waits for the first kernel and the event, not the second kernel
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  GPULAB_CHECK(cudaStreamSynchronize(stream.get()));  // nothing new: not noted again
  // Polling counts as waiting once it finds the work done.
  write_one<<<1, 1, 0, stream.get()>>>(out.data());
  while (cudaStreamQuery(stream.get()) == cudaErrorNotReady) {
  }
  gpulab::sim::set_stream_recording(false);
  EXPECT_EQ(gpulab::sim::stream_entries(stream.get()),
            (std::vector<StreamEntry>{{StreamOp::kernel, "write_one"},
                                      {StreamOp::event_record, ""},
                                      {StreamOp::kernel, "write_one"},
                                      {StreamOp::host_wait, ""},
                                      {StreamOp::kernel, "write_one"},
                                      {StreamOp::host_wait, ""}}));
  EXPECT_EQ(gpulab::sim::describe({StreamOp::host_wait, ""}), "host wait");
}
#endif

}  // namespace
