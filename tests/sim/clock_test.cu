// The modeled clock of the sim backend (framework/sim/src/clock.hpp): events read a device clock
// that advances by each operation's modeled duration, the same on every run and however busy the
// machine is. Sim only.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/gemm_model.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/traffic_model.hpp"
#include "gpulab/kernels/spin.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "run_command.hpp"
#include "test_device.hpp"

namespace {

using gpulab::DeviceBuffer;
using gpulab::Event;
using gpulab::Stream;

using gpulab::testing::ModeledClock;

#define GPULAB_REQUIRE_MODELED_CLOCK(clock)                       \
  do {                                                            \
    if (!(clock).ok()) {                                          \
      GTEST_SKIP() << gpulab::sim::counting_unavailable_reason(); \
    }                                                             \
  } while (false)

const gpulab::GpuSpec& spec() {
  static const gpulab::GpuSpec value = [] {
    const std::string requested = gpulab::sim_spec_request();
    return requested.empty() ? gpulab::default_spec() : *gpulab::find_spec(requested);
  }();
  return value;
}

TEST(ModeledClock, AKernelTakesItsCountedTrafficModel) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const std::size_t n = std::size_t{1} << 18;
  DeviceBuffer<float> a(n);
  DeviceBuffer<float> b(n);
  DeviceBuffer<float> c(n);
  a.fill_bytes(0);
  b.fill_bytes(0);
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
  double ms = 0;
  const std::vector<gpulab::CountedLaunch> launches = gpulab::sim::count_launches([&] {
    ms = gpulab::event_timed_ms(
        nullptr, [&] { gpulab::kernels::vector_add(a.data(), b.data(), c.data(), n); });
  });
  ASSERT_EQ(launches.size(), 1u);
  // The one rule for a counted launch's time, the one `gpulab profile` prints (vector_add_kernel's
  // registers from the kernel table when nvcc built it; otherwise both sides assume the same).
  const double model_ms = gpulab::model_launch(launches[0], spec()).time_s * 1e3;
  EXPECT_NEAR(ms, model_ms, 1e-6 * model_ms + 1e-6);
  // 3 x 1 MiB through DRAM at 3.35 TB/s is about 1 us: far below a millisecond, above the launch.
  EXPECT_GT(ms, spec().launch_overhead_us * 1e-3);
  EXPECT_LT(ms, 0.1);
}

TEST(ModeledClock, TheSameWorkGivesTheSameTimeEveryRun) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const std::size_t n = std::size_t{1} << 16;
  DeviceBuffer<float> a(n);
  DeviceBuffer<float> b(n);
  DeviceBuffer<float> c(n);
  a.fill_bytes(0);
  b.fill_bytes(0);
  std::vector<double> times;
  for (int run = 0; run < 4; ++run) {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
    times.push_back(gpulab::event_timed_ms(
        nullptr, [&] { gpulab::kernels::vector_add(a.data(), b.data(), c.data(), n); }));
  }
  for (const double t : times) {
    EXPECT_EQ(t, times.front());
  }
}

TEST(ModeledClock, ASpinKernelTakesItsRequestedTime) {
  // spin_kernel waits on clock64(): under the modeled clock each read advances the thread's
  // modeled cycles, and the kernel lasts at least its longest wait.
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream stream;
  for (const double wanted_ms : {0.5, 2.0}) {
    const double ms = gpulab::event_timed_ms(
        stream.get(), [&] { gpulab::kernels::spin_kernel(wanted_ms, stream.get()); });
    EXPECT_GE(ms, wanted_ms);
    EXPECT_LE(ms, wanted_ms * 1.01 + 0.01) << wanted_ms;
  }
}

TEST(ModeledClock, AWaitingKernelsCountedLaunchGivesTheClocksTime) {
  // What `gpulab profile` prints for a launch is model_launch on its counted record: for a kernel
  // bounded by a clock64() wait too, the same time the modeled clock gave it.
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream stream;
  double ms = 0;
  const std::vector<gpulab::CountedLaunch> launches = gpulab::sim::count_launches([&] {
    ms = gpulab::event_timed_ms(stream.get(),
                                [&] { gpulab::kernels::spin_kernel(0.5, stream.get()); });
  });
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_GT(launches[0].longest_wait_cycles, 0u);
  const gpulab::ModeledTime m = gpulab::model_launch(launches[0], spec());
  EXPECT_EQ(m.bound, gpulab::ModelBound::clock_wait);
  EXPECT_NEAR(ms, m.time_s * 1e3, 1e-6 * ms);
  // And through the file format `gpulab profile` reads.
  const gpulab::CountedLaunch read =
      gpulab::counted_launch_from_json_line(gpulab::counted_launch_to_json_line(launches[0]));
  EXPECT_EQ(read, launches[0]);
}

TEST(ModeledClock, CopiesTakeBytesOverTheHostLink) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const std::size_t bytes = std::size_t{64} << 20;
  DeviceBuffer<unsigned char> device(bytes);
  std::vector<unsigned char> host(bytes);
  const double ms = gpulab::event_timed_ms(nullptr, [&] {
    GPULAB_CHECK(cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice));
  });
  const double want_ms = (spec().launch_overhead_us * 1e-6 +
                          static_cast<double>(bytes) / (spec().host_link_gb_s * 1e9)) *
                         1e3;
  EXPECT_NEAR(ms, want_ms, 1e-6 * want_ms);
}

TEST(ModeledClock, AnSgemmTakesTheFastestRegisterBlockedKernelsModel) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  // Column-major C (m x n) = A (m x k) B (k x n), 3 times: the row-major product of n x k by
  // k x m, as gpulab/core/gemm_model.hpp models it, with the kernels' registers from the table.
  const int m = 96;
  const int n = 200;
  const int k = 64;
  const int batch = 3;
  DeviceBuffer<float> a(std::size_t(m) * k * batch);
  DeviceBuffer<float> b(std::size_t(k) * n * batch);
  DeviceBuffer<float> c(std::size_t(m) * n * batch);
  a.fill_bytes(0);
  b.fill_bytes(0);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f;
  const float zero = 0.0f;
  const auto sgemm_ms = [&] {
    return gpulab::event_timed_ms(nullptr, [&] {
      EXPECT_EQ(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a.data(),
                                          m, std::int64_t(m) * k, b.data(), k, std::int64_t(k) * n,
                                          &zero, c.data(), m, std::int64_t(m) * n, batch),
                CUBLAS_STATUS_SUCCESS);
    });
  };
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());  // A and B start in DRAM
  const double ms = sgemm_ms();
  // Run again, its operands are in the modeled L2 from the first run: no slower.
  EXPECT_LE(sgemm_ms(), ms);
  const gpulab::ModeledGemm want = gpulab::model_fastest_gemm(
      {n, m, k, batch}, spec(),
      [](std::string_view kernel) { return gpulab::table_resources(kernel, spec()); });
  EXPECT_NEAR(ms, want.time.time_s * 1e3, 1e-6 * want.time.time_s * 1e3);
  // With counting on, the call is a counted launch of that kernel, and its time the one rule's
  // (what `gpulab profile` prints for it).
  if (gpulab::sim::counting_available()) {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
    double counted_ms = 0;
    const std::vector<gpulab::CountedLaunch> launches =
        gpulab::sim::count_launches([&] { counted_ms = sgemm_ms(); });
    ASSERT_EQ(launches.size(), 1u);
    const gpulab::CountedLaunch& launch = launches[0];
    EXPECT_EQ(launch.kernel, "cublasSgemm as " + std::string(want.tiling.kernel));
    EXPECT_EQ(launch.where, gpulab::sim::kCublasWhere);
    EXPECT_EQ(launch.grid, want.launch.grid);
    EXPECT_EQ(launch.block, want.launch.block);
    EXPECT_EQ(launch.counters, want.counters);
    EXPECT_NEAR(counted_ms, ms, 1e-6 * ms);
    EXPECT_NEAR(gpulab::model_launch(launch, spec()).time_s * 1e3, ms, 1e-6 * ms);
  }
  ASSERT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  // Never the FP32 peak's time: 2 m n k x 3 FLOPs at the peak, plus the launch.
  const double peak_ms =
      (2.0 * m * n * k * batch / (spec().fp32_tflop_s * 1e12) + spec().launch_overhead_us * 1e-6) *
      1e3;
  EXPECT_GT(ms, peak_ms);
}

TEST(ModeledClock, AnSgemmWithBetaReadsC) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  if (!gpulab::sim::counting_available()) {
    GTEST_SKIP() << gpulab::sim::counting_unavailable_reason();
  }
  // C = A B + beta C reads C once more than C = A B: its sectors through L2, from DRAM when the
  // L2 model does not hold it.
  const int m = 256;
  const int n = 256;
  const int k = 64;
  DeviceBuffer<float> a(std::size_t(m) * k);
  DeviceBuffer<float> b(std::size_t(k) * n);
  DeviceBuffer<float> c(std::size_t(m) * n);
  a.fill_bytes(0);
  b.fill_bytes(0);
  c.fill_bytes(0);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  const auto sgemm = [&](float beta) {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
    const float one = 1.0f;
    const std::vector<gpulab::CountedLaunch> launches = gpulab::sim::count_launches([&] {
      EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a.data(), m, b.data(),
                            k, &beta, c.data(), m),
                CUBLAS_STATUS_SUCCESS);
    });
    EXPECT_EQ(launches.size(), 1u);
    return launches.empty() ? gpulab::MemoryCounters{} : launches[0].counters;
  };
  const gpulab::MemoryCounters overwrite = sgemm(0.0f);
  const gpulab::MemoryCounters accumulate = sgemm(1.0f);
  ASSERT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t c_sectors = std::uint64_t(m) * n * 4 / 32;
  EXPECT_EQ(accumulate.global_load.sectors, overwrite.global_load.sectors + c_sectors);
  EXPECT_EQ(accumulate.l2_sector_reads, overwrite.l2_sector_reads + c_sectors);
  EXPECT_EQ(accumulate.dram_bytes_read, overwrite.dram_bytes_read + 32 * c_sectors);
  EXPECT_EQ(accumulate.global_store, overwrite.global_store);
}

TEST(ModeledClock, StreamsRunSideBySideUntilTheyWaitForEachOther) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream first;  // non-blocking streams: independent of the legacy stream
  const Stream second;
  Event start;
  Event first_done;
  Event second_done;
  start.record(first.get());
  GPULAB_CHECK(cudaStreamWaitEvent(second.get(), start.get()));
  gpulab::kernels::spin_kernel(2.0, first.get());
  first_done.record(first.get());
  gpulab::kernels::spin_kernel(1.0, second.get());
  second_done.record(second.get());
  second_done.synchronize();
  first_done.synchronize();
  // Side by side: the 1 ms spin ends about 1 ms after the start, not after the 2 ms one.
  const double second_ms = static_cast<double>(Event::elapsed_ms(start, second_done));
  EXPECT_GE(second_ms, 1.0);
  EXPECT_LT(second_ms, 1.5);
  // Waiting: a third spin on `second` queued after a wait for first_done starts after 2 ms.
  Event third_done;
  GPULAB_CHECK(cudaStreamWaitEvent(second.get(), first_done.get()));
  gpulab::kernels::spin_kernel(1.0, second.get());
  third_done.record(second.get());
  third_done.synchronize();
  const double third_ms = static_cast<double>(Event::elapsed_ms(start, third_done));
  EXPECT_GE(third_ms, 3.0);
  EXPECT_LT(third_ms, 3.5);
}

TEST(ModeledClock, TheLegacyStreamWaitsForBlockingStreamsOnly) {
  // As on a GPU: work on a blocking stream is ordered with the legacy stream (stream 0), work on
  // a cudaStreamNonBlocking stream is not, so events on stream 0 around it do not time it.
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream blocking(cudaStreamDefault);
  const Stream non_blocking;  // gpulab::Stream's default: cudaStreamNonBlocking
  const double around_blocking =
      gpulab::event_timed_ms(nullptr, [&] { gpulab::kernels::spin_kernel(2.0, blocking.get()); });
  EXPECT_GE(around_blocking, 2.0) << "stream 0 waits for a blocking stream's 2 ms spin";
  const double around_non_blocking = gpulab::event_timed_ms(
      nullptr, [&] { gpulab::kernels::spin_kernel(2.0, non_blocking.get()); });
  EXPECT_LT(around_non_blocking, 0.5)
      << "stream 0 does not wait for a non-blocking stream's 2 ms spin";
  non_blocking.synchronize();
}

// The host's modeled time: what an idle stream waits for.

TEST(ModeledClock, AnIdleStreamStartsNoSoonerThanTheHostIssuesItsWork) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream busy;
  const Stream idle;
  Event start;
  Event issued;
  start.record(busy.get());
  gpulab::kernels::spin_kernel(2.0, busy.get());
  busy.synchronize();  // the host is now 2 ms on: it cannot queue anything earlier
  issued.record(idle.get());
  issued.synchronize();
  const double ms = static_cast<double>(Event::elapsed_ms(start, issued));
  EXPECT_GE(ms, 2.0);
  EXPECT_LT(ms, 2.5);
}

TEST(ModeledClock, ACudaMallocBetweenTwoOperationsOfAnIdleStreamIsAGap) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream stream;
  const std::size_t bytes = std::size_t{1} << 20;
  DeviceBuffer<unsigned char> kept(bytes);
  const auto memset = [&](void* pointer) {
    GPULAB_CHECK(cudaMemsetAsync(pointer, 0, bytes, stream.get()));
  };
  const double reused_ms = gpulab::event_timed_ms(stream.get(), [&] { memset(kept.data()); });
  void* fresh = nullptr;
  const double allocated_ms = gpulab::event_timed_ms(stream.get(), [&] {
    GPULAB_CHECK(cudaMalloc(&fresh, bytes));
    memset(fresh);
  });
  // 50 us a cudaMalloc of 4 KB or more (docs/sim.md, the modeled clock).
  EXPECT_NEAR(allocated_ms - reused_ms, 0.050, 1e-4);
  // cudaFree waits for the device, then takes as long again: a spin on another stream is in it.
  const Stream other;
  const double freed_ms = gpulab::event_timed_ms(stream.get(), [&] {
    gpulab::kernels::spin_kernel(1.0, other.get());
    GPULAB_CHECK(cudaFree(fresh));
    memset(kept.data());
  });
  EXPECT_GE(freed_ms, 1.0 + 0.050 + reused_ms - 1e-4);
  EXPECT_LT(freed_ms, 1.5);
}

TEST(ModeledClock, PinnedAllocationsCostMillisecondsOfHostTime) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream stream;
  Event start;
  Event stop;
  start.record(stream.get());
  stream.synchronize();
  void* pinned = nullptr;
  GPULAB_CHECK(cudaMallocHost(&pinned, 4096));
  stop.record(stream.get());
  stop.synchronize();
  GPULAB_CHECK(cudaFreeHost(pinned));
  // 2.3 ms a cudaMallocHost up to 1 MB (docs/sim.md, the modeled clock).
  EXPECT_NEAR(Event::elapsed_ms(start, stop), 2.3, 1e-3);
}

TEST(ModeledClock, AQueryThatFindsWorkDoneMovesTheHostToItsEnd) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  const Stream busy;
  const Stream idle;
  Event start;
  Event done;
  Event issued;
  start.record(busy.get());
  gpulab::kernels::spin_kernel(1.0, busy.get());
  done.record(busy.get());
  while (cudaEventQuery(done.get()) == cudaErrorNotReady) {
  }
  issued.record(idle.get());
  issued.synchronize();
  EXPECT_GE(Event::elapsed_ms(start, issued), 1.0);
}

TEST(ModeledClock, EventsOfTwoClocksCannotBeCompared) {
  Event host_event;
  host_event.record(nullptr);  // under the host clock
  host_event.synchronize();
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  Event modeled_event;
  modeled_event.record(nullptr);
  modeled_event.synchronize();
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, host_event.get(), modeled_event.get()),
            cudaErrorInvalidResourceHandle);
  static_cast<void>(cudaGetLastError());
}

TEST(ModeledClock, DescribesItselfForReports) {
  const ModeledClock clock;
  GPULAB_REQUIRE_MODELED_CLOCK(clock);
  EXPECT_NE(gpulab::sim::clock_description().find("modeled (" + spec().name + ")"),
            std::string::npos)
      << gpulab::sim::clock_description();
}

TEST(ModeledClock, ABadSettingMakesTheDeviceUnusable) {
  const std::filesystem::path self = gpulab::testing::self_program();
  const std::string command = "GPULAB_SIM_CLOCK=sometimes '" + self.string() +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=ModeledClock.DISABLED_DeviceIsUsable >/dev/null 2>&1";
  EXPECT_NE(std::system(command.c_str()), 0) << command;
}

// (Disabled: run only as the child of ABadSettingMakesTheDeviceUnusable.)
TEST(ModeledClock, DISABLED_DeviceIsUsable) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
}

}  // namespace
