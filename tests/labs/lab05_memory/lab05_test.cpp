// Lab 05 autograder: memory tracking. What is checked, against the framework's memory accounting
// (gpulab/core/memory_stats.hpp), which the tests read themselves around each call:
// - measure_memory_usage: peaks equal to what was held at once, with nested and overlapping
//   allocations and memory held before; each call starts from its own peak; leaks named with
//   their size and line; the device waited for;
// - the caching allocator: bins; a second identical run takes nothing new from the device (the
//   accounting's reserve events, not the allocator's own statistics); statistics that agree with
//   the accounting; a block freed on one stream never handed to another while the work queued
//   before its free is still waiting (a gate holds that work, so the check is deterministic),
//   and handed to it once that work is done; bad frees refused;
// - growth: the fitted exponent of exact power laws; attention's memory measured (equal to the
//   level's buffers, and really allocated); level 0 (unfused) grows within 0.15 of S^2 and
//   level 3 (flash) within 0.15 of S^1;
// - checkpointing: store-all against the CPU reference; every k gives the bit-identical output
//   and gradient, a peak within (ceil(N/k) + k + 1) activations and at most 2N - ceil(N/k)
//   forwards, and reports both truthfully; the k chosen for a budget.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/memory_stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/layer_stack.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "graded_test.hpp"
#include "lab05.hpp"
#include "numeric_check.hpp"
#include "stream_gate.hpp"
#include "test_device.hpp"

#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

namespace kernels = gpulab::kernels;
namespace lab05 = gpulab::lab05;
using gpulab::DeviceBuffer;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The most allocated at once while `work` runs, above what was allocated before: the test's own
// reading, from the memory history (which no reset of the peak touches, so the lab code's own
// resets cannot hide anything from it).
template <class Work>
std::size_t peak_while(Work&& work) {
  GPULAB_CHECK(cudaDeviceSynchronize());
  const std::size_t before = gpulab::memory_stats().allocated_bytes;
  gpulab::start_memory_history();
  work();
  GPULAB_CHECK(cudaDeviceSynchronize());
  gpulab::stop_memory_history();
  EXPECT_EQ(gpulab::dropped_memory_events(), 0U) << "the history was too short";
  std::size_t peak = before;
  for (const gpulab::MemoryEvent& event : gpulab::memory_history()) {
    peak = std::max(peak, event.allocated_after);
  }
  return peak - before;
}

// ------------------------------------------------------------------------------------------------
// Part 1: measure_memory_usage
// ------------------------------------------------------------------------------------------------

GPULAB_GRADED_TEST(Lab05Measure, PeakIsWhatWasHeldAtOnceIncludingNestedAndOverlapping, 8,
                   "measure_memory_usage",
                   "the peak above what was held before, with nested and overlapping "
                   "allocations, and the allocations counted") {
  GPULAB_REQUIRE_DEVICE();
  const DeviceBuffer<char> held_before(3 * kMiB);  // not the function's: not in its peak
  const lab05::MemoryUsage nested = lab05::measure_memory_usage([] {
    const DeviceBuffer<char> outer(1 * kMiB);
    {
      const DeviceBuffer<char> inner(2 * kMiB);  // 3 MiB at once
    }
    const DeviceBuffer<char> after(512 * 1024);  // 1.5 MiB: below the peak
  });
  EXPECT_EQ(nested.peak_allocated_bytes, 3 * kMiB) << "1 MiB held while 2 MiB came and went";
  EXPECT_EQ(nested.peak_reserved_bytes, 3 * kMiB) << "plain allocations are reserved too";
  EXPECT_EQ(nested.allocations, 3U);
  EXPECT_EQ(nested.leaked_bytes, 0U);
  EXPECT_TRUE(nested.leaks.empty());

  // Overlapping lifetimes: a, then b while a lives, a freed, c while b lives.
  const lab05::MemoryUsage overlapping = lab05::measure_memory_usage([] {
    auto a = std::make_unique<DeviceBuffer<char>>(700 * 1024);
    const DeviceBuffer<char> b(900 * 1024);  // a + b = 1.6 MB
    a.reset();
    const DeviceBuffer<char> c(600 * 1024);  // b + c = 1.5 MB
  });
  EXPECT_EQ(overlapping.peak_allocated_bytes, std::size_t{1600} * 1024);
  EXPECT_EQ(overlapping.allocations, 3U);

  // A function that allocates nothing costs nothing, whatever is held around it.
  const lab05::MemoryUsage nothing = lab05::measure_memory_usage([] {});
  EXPECT_EQ(nothing.peak_allocated_bytes, 0U);
  EXPECT_EQ(nothing.allocations, 0U);
}

GPULAB_GRADED_TEST(Lab05Measure, EachCallStartsFromItsOwnPeak, 6, "measure_memory_usage",
                   "a small function measured after a large one reports its own peak, not the "
                   "earlier one") {
  GPULAB_REQUIRE_DEVICE();
  {
    const DeviceBuffer<char> spike(16 * kMiB);  // a peak before any measurement
  }
  const lab05::MemoryUsage large =
      lab05::measure_memory_usage([] { const DeviceBuffer<char> big(8 * kMiB); });
  EXPECT_EQ(large.peak_allocated_bytes, 8 * kMiB)
      << "the peak of what ran before leaked into this call: reset the peak first";
  const lab05::MemoryUsage small =
      lab05::measure_memory_usage([] { const DeviceBuffer<char> one(1 * kMiB); });
  EXPECT_EQ(small.peak_allocated_bytes, 1 * kMiB)
      << "the peak of the call before leaked into this one: reset the peak first";
  EXPECT_EQ(small.allocations, 1U) << "count only this call's allocations";
}

GPULAB_GRADED_TEST(Lab05Measure, LeaksAreReportedWithTheirSizeAndLine, 6, "measure_memory_usage",
                   "what the function allocated and did not free, with size and source line, "
                   "and the device waited for") {
  GPULAB_REQUIRE_DEVICE();
  void* leaked = nullptr;
  unsigned line = 0;
  const DeviceBuffer<char> held(4096);
  DeviceBuffer<char> freed_inside(3000);  // made before, freed inside: not a leak
  gpulab::Stream stream;
  DeviceBuffer<int> out(1 << 16);
  gpulab::testing::StreamGate gate(std::chrono::milliseconds(500));  // opens by itself
  const lab05::MemoryUsage usage = lab05::measure_memory_usage([&] {
    { const DeviceBuffer<char> temporary(1000); }
    freed_inside.reset();
    leaked = gpulab::device_malloc(3000);  // often where freed_inside was: a leak all the same
    line = __LINE__ - 1;
    gate.close(stream.get());
    out.fill_bytes_async(0x01, stream);  // queued behind the gate: done half a second later
  });
  EXPECT_EQ(cudaStreamQuery(stream.get()), cudaSuccess)
      << "measure_memory_usage returned before the work fn queued was done: wait for the device";
  EXPECT_EQ(usage.leaked_bytes, 3000U);
  ASSERT_EQ(usage.leaks.size(), 1U) << "only the allocation made inside and not freed leaks";
  EXPECT_EQ(usage.leaks[0].bytes, 3000U);
  EXPECT_EQ(usage.leaks[0].address, reinterpret_cast<std::uintptr_t>(leaked));
  EXPECT_NE(usage.leaks[0].file.find("lab05_test.cpp"), std::string::npos) << usage.leaks[0].file;
  EXPECT_EQ(usage.leaks[0].line, line);
  EXPECT_EQ(usage.peak_allocated_bytes, 1000U) << "3000 bytes freed, then 3000 allocated";
  gpulab::device_free(leaked);

  const lab05::MemoryUsage two = lab05::measure_memory_usage([&] {
    leaked = gpulab::device_malloc(100);
    void* larger = gpulab::device_malloc(5000);
    static_cast<void>(larger);  // freed below through the report
  });
  ASSERT_EQ(two.leaks.size(), 2U);
  EXPECT_EQ(two.leaks[0].bytes, 5000U) << "largest first";
  EXPECT_EQ(two.leaked_bytes, 5100U);
  for (const gpulab::LiveAllocation& leak : two.leaks) {
    gpulab::device_free(reinterpret_cast<void*>(leak.address));
  }
}

// ------------------------------------------------------------------------------------------------
// Part 2: the caching allocator
// ------------------------------------------------------------------------------------------------

// Events of `kind` in the memory history recorded while `work` ran.
template <class Work>
std::size_t events_while(gpulab::MemoryEventKind kind, Work&& work) {
  gpulab::start_memory_history();
  work();
  gpulab::stop_memory_history();
  const std::vector<gpulab::MemoryEvent> events = gpulab::memory_history();
  return static_cast<std::size_t>(std::count_if(
      events.begin(), events.end(), [&](const gpulab::MemoryEvent& e) { return e.kind == kind; }));
}

GPULAB_GRADED_TEST(Lab05Allocator, RoundsRequestsIntoBins, 4, "round_block_size",
                   "multiples of 512 bytes up to 1 MiB, of 2 MiB above, and overflow refused") {
  EXPECT_EQ(lab05::round_block_size(0), 0U);
  EXPECT_EQ(lab05::round_block_size(1), 512U);
  EXPECT_EQ(lab05::round_block_size(512), 512U);
  EXPECT_EQ(lab05::round_block_size(513), 1024U);
  EXPECT_EQ(lab05::round_block_size(5000), 5120U);
  EXPECT_EQ(lab05::round_block_size(kMiB), kMiB);
  EXPECT_EQ(lab05::round_block_size(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(lab05::round_block_size(3 * kMiB), 4 * kMiB);
  EXPECT_EQ(lab05::round_block_size(4 * kMiB), 4 * kMiB);
  EXPECT_THROW((void)lab05::round_block_size(std::numeric_limits<std::size_t>::max() - 5),
               std::length_error);
}

// A workload of mixed sizes on one stream, each block written by the device.
void run_workload(lab05::CachingAllocator& allocator, cudaStream_t stream) {
  const std::size_t sizes[] = {100, 5000, 70000, kMiB, 3 * kMiB, 100, 5000, 250000};
  std::vector<void*> blocks;
  for (const std::size_t bytes : sizes) {
    blocks.push_back(allocator.allocate(bytes, stream));
    ASSERT_NE(blocks.back(), nullptr) << bytes << " bytes";
    GPULAB_CHECK(cudaMemsetAsync(blocks.back(), 0x11, bytes, stream));
  }
  allocator.free(blocks[1]);  // freed in the middle: the next request of its bin reuses it
  void* again = allocator.allocate(4700, stream);  // 5000's bin: 5120 bytes
  GPULAB_CHECK(cudaMemsetAsync(again, 0x22, 4700, stream));
  allocator.free(again);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i != 1) {
      allocator.free(blocks[i]);
    }
  }
}

GPULAB_GRADED_TEST(Lab05Allocator, ASecondIdenticalRunMakesNoNewDeviceAllocation, 8,
                   "CachingAllocator::allocate CachingAllocator::free",
                   "after one run of a workload, the same run again is served from the cache: "
                   "no block taken from the device") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  lab05::CachingAllocator allocator;
  gpulab::start_memory_history();
  run_workload(allocator, stream.get());
  gpulab::stop_memory_history();
  std::size_t first = 0;
  for (const gpulab::MemoryEvent& event : gpulab::memory_history()) {
    if (event.kind == gpulab::MemoryEventKind::reserve) {
      ++first;
      EXPECT_FALSE(event.file.empty())
          << "a block of " << event.bytes << " bytes without a source line: take blocks with "
          << "gpulab::device_malloc (a bare cudaMalloc is invisible to the accounting on a GPU)";
    }
  }
  ASSERT_EQ(first, 8U) << "eight blocks held at once: the first run takes each from the device, "
                          "reserved (device_malloc inside a CacheReservation)";
  const gpulab::MemoryStats before = gpulab::memory_stats();
  gpulab::start_memory_history();
  run_workload(allocator, stream.get());
  gpulab::stop_memory_history();
  std::size_t taken = 0;
  std::size_t handed_out = 0;
  for (const gpulab::MemoryEvent& event : gpulab::memory_history()) {
    taken += event.kind == gpulab::MemoryEventKind::reserve ? 1 : 0;
    handed_out += event.kind == gpulab::MemoryEventKind::allocate ? 1 : 0;
  }
  EXPECT_EQ(taken, 0U) << "the second run took " << taken << " new block(s) from the device";
  EXPECT_EQ(handed_out, 9U) << "nine pieces handed out, each reported (note_cache_allocate), and "
                               "nothing else allocated";
  stream.synchronize();
  const gpulab::MemoryStats after = gpulab::memory_stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "every block was freed";
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes) << "and kept: reserved stays";
  EXPECT_EQ(after.allocations, before.allocations + 9) << "nine pieces handed out, each reported";
  const lab05::AllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.requests, 18U);
  EXPECT_EQ(stats.device_allocations, 8U);
  EXPECT_EQ(stats.cache_hits, 10U)
      << "one in the first run (5000's bin again), all 9 of the second";
  EXPECT_EQ(stats.allocated_bytes, 0U);
  EXPECT_EQ(stats.cached_bytes, stats.reserved_bytes);
}

GPULAB_GRADED_TEST(Lab05Allocator, StatisticsAgreeWithTheMemoryAccounting, 5,
                   "CachingAllocator::allocate CachingAllocator::free "
                   "CachingAllocator::empty_cache CachingAllocator::stats",
                   "allocated, reserved and cached bytes, device allocations and frees, in the "
                   "allocator and in the accounting, through empty_cache and the destructor") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  const gpulab::MemoryStats start = gpulab::memory_stats();
  {
    lab05::CachingAllocator allocator;
    void* small = allocator.allocate(1000, stream.get());
    void* large = allocator.allocate(3 * kMiB + 1, stream.get());
    lab05::AllocatorStats s = allocator.stats();
    EXPECT_EQ(s.requests, 2U);
    EXPECT_EQ(s.cache_hits, 0U);
    EXPECT_EQ(s.device_allocations, 2U);
    EXPECT_EQ(s.allocated_bytes, 1000 + 3 * kMiB + 1);
    EXPECT_EQ(s.reserved_bytes, 1024 + 4 * kMiB);
    EXPECT_EQ(s.cached_bytes, 0U);
    gpulab::MemoryStats m = gpulab::memory_stats();
    EXPECT_EQ(m.allocated_bytes - start.allocated_bytes, 1000 + 3 * kMiB + 1);
    EXPECT_EQ(m.reserved_bytes - start.reserved_bytes, 1024 + 4 * kMiB);
    const std::vector<gpulab::LiveAllocation> live = gpulab::live_allocations();
    const auto piece = std::find_if(live.begin(), live.end(), [&](const auto& a) {
      return a.address == reinterpret_cast<std::uintptr_t>(large);
    });
    ASSERT_NE(piece, live.end()) << "the piece handed out is in the accounting";
    EXPECT_EQ(piece->bytes, 3 * kMiB + 1);
    EXPECT_EQ(piece->stream, reinterpret_cast<std::uintptr_t>(stream.get()));

    // The memory is the device's: written there and read back.
    GPULAB_CHECK(cudaMemsetAsync(large, 0x5a, 3 * kMiB + 1, stream.get()));
    std::vector<unsigned char> back(16);
    GPULAB_CHECK(cudaMemcpyAsync(back.data(), static_cast<char*>(large) + 3 * kMiB - 15, 16,
                                 cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    EXPECT_EQ(back, std::vector<unsigned char>(16, 0x5a));

    allocator.free(small);
    s = allocator.stats();
    EXPECT_EQ(s.allocated_bytes, 3 * kMiB + 1);
    EXPECT_EQ(s.cached_bytes, 1024U);
    EXPECT_EQ(s.reserved_bytes, 1024 + 4 * kMiB) << "a freed block stays reserved";
    m = gpulab::memory_stats();
    EXPECT_EQ(m.allocated_bytes - start.allocated_bytes, 3 * kMiB + 1);
    EXPECT_EQ(m.reserved_bytes - start.reserved_bytes, 1024 + 4 * kMiB);

    allocator.empty_cache();
    s = allocator.stats();
    EXPECT_EQ(s.device_frees, 1U);
    EXPECT_EQ(s.cached_bytes, 0U);
    EXPECT_EQ(s.reserved_bytes, 4 * kMiB) << "the block handed out stays";
    m = gpulab::memory_stats();
    EXPECT_EQ(m.reserved_bytes - start.reserved_bytes, 4 * kMiB);
  }
  const gpulab::MemoryStats end = gpulab::memory_stats();
  EXPECT_EQ(end.allocated_bytes, start.allocated_bytes) << "the destructor gives everything back";
  EXPECT_EQ(end.reserved_bytes, start.reserved_bytes) << "the destructor gives everything back";
}

GPULAB_GRADED_TEST(Lab05Allocator, ABlockIsNotHandedToAnotherStreamWhileItsWorkIsQueued, 10,
                   "CachingAllocator::allocate CachingAllocator::free",
                   "a block freed on stream A while A still has work on it queued is not handed "
                   "to stream B, and allocate does not wait for the device") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream a;
  gpulab::Stream b;
  lab05::CachingAllocator allocator;
  cudaEvent_t work_done = nullptr;
  GPULAB_CHECK(cudaEventCreateWithFlags(&work_done, cudaEventDisableTiming));
  {
    gpulab::testing::StreamGate gate(std::chrono::seconds(5));
    void* block = allocator.allocate(6000, a.get());
    gate.close(a.get());  // what A is given from here waits: an event allocate recorded does not
#if GPULAB_BACKEND_SIM
    gpulab::sim::set_stream_recording(true);
#endif
    GPULAB_CHECK(cudaMemsetAsync(block, 0x33, 6000, a.get()));  // A's work on the block
    GPULAB_CHECK(cudaEventRecord(work_done, a.get()));
    allocator.free(block);
#if GPULAB_BACKEND_SIM
    // The sim runs every stream through one queue, so an event recorded on another stream would
    // wait behind the gate too: check where free recorded it.
    const std::vector<gpulab::sim::StreamEntry> on_a = gpulab::sim::stream_entries(a.get());
    gpulab::sim::set_stream_recording(false);
    EXPECT_GE(std::count(on_a.begin(), on_a.end(),
                         gpulab::sim::StreamEntry{gpulab::sim::StreamOp::event_record, ""}),
              2)
        << "free must record an event on the block's stream (A), after the work queued there";
#endif
    const auto start = std::chrono::steady_clock::now();
    void* other = allocator.allocate(6000, b.get());
    const double waited_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool done = cudaEventQuery(work_done) == cudaSuccess;
    EXPECT_FALSE(other == block && !done)
        << "stream B was handed the block stream A's queued memset still writes: a race";
    EXPECT_LT(waited_s, 2.0) << "allocate waited " << waited_s
                             << " s for the device; query the event instead";
    gate.open();
    GPULAB_CHECK(cudaDeviceSynchronize());
    allocator.free(other);
    GPULAB_CHECK(cudaDeviceSynchronize());
  }
  GPULAB_CHECK(cudaEventDestroy(work_done));
}

GPULAB_GRADED_TEST(Lab05Allocator, ABlockIsHandedToAnotherStreamOnceItsWorkIsDone, 4,
                   "CachingAllocator::allocate CachingAllocator::free",
                   "a block freed on stream A is reused on stream B once A's work before the "
                   "free has finished, and on A at once") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream a;
  gpulab::Stream b;
  lab05::CachingAllocator allocator;
  void* block = allocator.allocate(6000, a.get());
  GPULAB_CHECK(cudaMemsetAsync(block, 0x44, 6000, a.get()));
  allocator.free(block);
  a.synchronize();  // A's work is done
  void* reused = nullptr;
  EXPECT_EQ(events_while(gpulab::MemoryEventKind::reserve,
                         [&] { reused = allocator.allocate(5800, b.get()); }),
            0U)
      << "the cached block of the same bin was safe to reuse";
  EXPECT_EQ(reused, block);
  allocator.free(reused);
  void* same_stream = allocator.allocate(6000, b.get());  // freed on B just now: B may reuse it
  EXPECT_EQ(same_stream, block) << "the same stream reuses its own block at once";
  allocator.free(same_stream);
  EXPECT_EQ(allocator.stats().device_allocations, 1U);
  EXPECT_EQ(allocator.stats().cache_hits, 2U);
}

GPULAB_GRADED_TEST(Lab05Allocator, BadFreesAreRefusedAndChangeNothing, 4,
                   "CachingAllocator::allocate CachingAllocator::free",
                   "freeing a pointer never handed out or freed twice throws "
                   "std::invalid_argument and changes nothing, 0 bytes is a null pointer") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::Stream stream;
  lab05::CachingAllocator allocator;
  EXPECT_EQ(allocator.allocate(0, stream.get()), nullptr);
  allocator.free(nullptr);
  void* block = allocator.allocate(10, stream.get());
  const lab05::AllocatorStats held = allocator.stats();
  EXPECT_EQ(held.requests, 1U) << "a request for 0 bytes is not one";
  int host = 0;
  EXPECT_THROW(allocator.free(&host), std::invalid_argument);
  EXPECT_THROW(allocator.free(static_cast<char*>(block) + 1), std::invalid_argument);
  const lab05::AllocatorStats after_bad = allocator.stats();
  EXPECT_EQ(after_bad.allocated_bytes, held.allocated_bytes);
  EXPECT_EQ(after_bad.cached_bytes, held.cached_bytes);
  allocator.free(block);
  const lab05::AllocatorStats freed = allocator.stats();
  EXPECT_THROW(allocator.free(block), std::invalid_argument) << "freed twice";
  const lab05::AllocatorStats after_double = allocator.stats();
  EXPECT_EQ(after_double.cached_bytes, freed.cached_bytes);
  EXPECT_EQ(after_double.allocated_bytes, 0U);
  void* first = allocator.allocate(10, stream.get());
  void* second = allocator.allocate(10, stream.get());
  EXPECT_NE(first, second) << "a block freed twice must not be handed out twice";
  allocator.free(first);
  allocator.free(second);
}

// ------------------------------------------------------------------------------------------------
// Part 3: growth
// ------------------------------------------------------------------------------------------------

GPULAB_GRADED_TEST(Lab05Growth, FitsTheExponentOfAPowerLaw, 6, "fit_growth_exponent",
                   "the slope of log bytes on log length for exact and noisy power laws, and "
                   "the inputs it cannot fit refused") {
  const std::vector<double> lengths = {64, 128, 256, 1024, 4096};
  for (const double p : {2.0, 1.0, 0.5, 0.0}) {
    std::vector<double> bytes;
    for (const double s : lengths) {
      bytes.push_back(37.5 * std::pow(s, p));
    }
    EXPECT_NEAR(lab05::fit_growth_exponent(lengths, bytes), p, 1e-9) << "bytes = 37.5 S^" << p;
  }
  // Least squares, not the two end points: a middle point off the line moves the slope.
  const std::vector<double> three = {1, 2, 4};
  EXPECT_NEAR(lab05::fit_growth_exponent(three, std::vector<double>{1, 4, 4}), 1.0, 1e-9);
  const std::vector<double> one = {5};
  EXPECT_THROW((void)lab05::fit_growth_exponent(one, one), std::invalid_argument);
  EXPECT_THROW((void)lab05::fit_growth_exponent(three, std::vector<double>{1, 2}),
               std::invalid_argument);
  EXPECT_THROW((void)lab05::fit_growth_exponent(three, std::vector<double>{1, 0, 4}),
               std::invalid_argument);
  EXPECT_THROW((void)lab05::fit_growth_exponent(std::vector<double>{1, -2, 4}, three),
               std::invalid_argument);
  EXPECT_THROW((void)lab05::fit_growth_exponent(
                   three, std::vector<double>{1, std::numeric_limits<double>::infinity(), 4}),
               std::invalid_argument);
  EXPECT_THROW((void)lab05::fit_growth_exponent(std::vector<double>{8, 8, 8}, three),
               std::invalid_argument);
}

GPULAB_GRADED_TEST(Lab05Growth, AttentionMemoryIsMeasuredWhileTheLevelRuns, 6,
                   "attention_memory_by_length",
                   "each length's peak equals the level's buffers, allocated for real, and a "
                   "level outside 0 to 4 is refused") {
  GPULAB_REQUIRE_DEVICE();
  const kernels::AttentionConfig config{1, 16, 16, 1, false};
  const std::vector<int> lengths = {24, 80};
  for (const int level : {0, 3}) {
    std::vector<std::size_t> got;
    const std::size_t peak =
        peak_while([&] { got = lab05::attention_memory_by_length(config, level, lengths); });
    ASSERT_EQ(got.size(), lengths.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      kernels::AttentionConfig at = config;
      at.seq_len = lengths[i];
      EXPECT_EQ(got[i],
                kernels::AttentionBuffers::bytes_for(at, kernels::attention_workspace(level)))
          << "level " << level << " at " << lengths[i] << " tokens";
    }
    EXPECT_GE(peak, got.back()) << "level " << level
                                << ": the memory must be allocated and measured, not computed";
  }
  EXPECT_THROW((void)lab05::attention_memory_by_length(config, 5, lengths), std::invalid_argument);
  EXPECT_THROW((void)lab05::attention_memory_by_length(config, -1, lengths), std::invalid_argument);
}

GPULAB_GRADED_TEST(Lab05Growth, UnfusedGrowsAsTheSquareAndFlashLinearly, 8,
                   "attention_memory_by_length fit_growth_exponent",
                   "level 0 memory grows within 0.15 of S^2 and level 3 within 0.15 of S^1") {
  GPULAB_REQUIRE_DEVICE();
#if GPULAB_BACKEND_CUDA
  const std::vector<int> lengths = {1024, 2048, 4096};
  const kernels::AttentionConfig config{1, 1024, 64, 1, false};
#else
  const std::vector<int> lengths = {256, 512, 1024};  // the CPU simulation stays quick
  const kernels::AttentionConfig config{1, 256, 16, 1, false};
#endif
  const std::vector<double> x(lengths.begin(), lengths.end());
  std::ostringstream table;
  double exponents[2] = {};
  for (const int level : {0, 3}) {
    const std::vector<std::size_t> bytes =
        lab05::attention_memory_by_length(config, level, lengths);
    ASSERT_EQ(bytes.size(), lengths.size());
    const std::vector<double> y(bytes.begin(), bytes.end());
    exponents[level == 0 ? 0 : 1] = lab05::fit_growth_exponent(x, y);
    table << "\n  level " << level << ":";
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      table << " " << lengths[i] << " tokens " << bytes[i] << " B;";
    }
    table << " exponent " << exponents[level == 0 ? 0 : 1];
  }
  EXPECT_NEAR(exponents[0], 2.0, 0.15)
      << "level 0 holds S x S scores and probabilities:" << table.str();
  EXPECT_NEAR(exponents[1], 1.0, 0.15) << "level 3 (flash) holds O(S) memory:" << table.str();
}

// ------------------------------------------------------------------------------------------------
// Part 4: checkpointing
// ------------------------------------------------------------------------------------------------

// One pass through a stack on the device: the caller's buffers, and what the pass returned.
struct Pass {
  std::vector<float> output;
  std::vector<float> grad_input;
  lab05::CheckpointRun run;
  std::size_t peak = 0;        // the test's own reading
  std::uint64_t forwards = 0;  // the test's own count
};

constexpr int kStoreAll = 0;

Pass run_pass(const kernels::LayerStack& stack, int k) {
  const std::vector<float> input = kernels::layer_stack_input(stack.width, 21);
  const std::vector<float> grad = kernels::layer_stack_input(stack.width, 22);
  DeviceBuffer<float> x(stack.width);
  DeviceBuffer<float> y(stack.width);
  DeviceBuffer<float> g_out(stack.width);
  DeviceBuffer<float> g_in(stack.width);
  x.copy_from(input);
  g_out.copy_from(grad);
  y.fill_bytes(0xff);
  g_in.fill_bytes(0xff);
  gpulab::Stream stream;
  Pass pass;
  const std::uint64_t forwards = kernels::layer_forward_count();
  pass.peak = peak_while([&] {
    pass.run = k == kStoreAll
                   ? lab05::store_all_backward(stack, x.data(), y.data(), g_out.data(), g_in.data(),
                                               stream.get())
                   : lab05::checkpointed_backward(stack, k, x.data(), y.data(), g_out.data(),
                                                  g_in.data(), stream.get());
  });
  pass.forwards = kernels::layer_forward_count() - forwards;
  pass.output = y.to_vector();
  pass.grad_input = g_in.to_vector();
  return pass;
}

GPULAB_GRADED_TEST(Lab05Checkpoint, StoreAllMatchesTheCpuReference, 5, "store_all_backward",
                   "the output and input gradient of a 16-layer stack against the CPU "
                   "reference, N forwards, and the peak reported as measured") {
  GPULAB_REQUIRE_DEVICE();
  const kernels::LayerStack stack = kernels::layer_stack(16, 5000, 3);
  const Pass pass = run_pass(stack, kStoreAll);
  const kernels::LayerStackPass expected =
      kernels::layer_stack_reference(stack, kernels::layer_stack_input(stack.width, 21),
                                     kernels::layer_stack_input(stack.width, 22));
  EXPECT_TRUE(gpulab::testing::all_close(expected.output, pass.output, {1e-5, 1e-6}, "output"));
  EXPECT_TRUE(
      gpulab::testing::all_close(expected.grad_input, pass.grad_input, {1e-4, 1e-6}, "gradient"));
  EXPECT_EQ(pass.forwards, 16U) << "one forward per layer";
  EXPECT_EQ(pass.run.forward_layers, pass.forwards) << "the forwards reported are those made";
  EXPECT_EQ(pass.run.peak_bytes, pass.peak) << "the peak reported is the one measured";
  EXPECT_GE(pass.peak, 15 * stack.activation_bytes()) << "the inputs of layers 1 to 15 are kept";
}

GPULAB_GRADED_TEST(Lab05Checkpoint, EveryIntervalIsBitIdenticalWithinItsMemoryBound, 12,
                   "checkpointed_backward",
                   "for k = 1, 3, 4, 5 and 16 on 16 layers: output and gradient bit-identical "
                   "to store-all, peak at most ceil(N/k) + k + 1 activations, from 2N - "
                   "ceil(N/k) - k + 1 to 2N - ceil(N/k) forwards, both reported truthfully") {
  GPULAB_REQUIRE_DEVICE();
  const kernels::LayerStack stack = kernels::layer_stack(16, 5000, 3);
  const Pass all = run_pass(stack, kStoreAll);
  const std::size_t activation = stack.activation_bytes();
  for (const int k : {1, 3, 4, 5, 16}) {
    const Pass pass = run_pass(stack, k);
    const int segments = (16 + k - 1) / k;
    EXPECT_EQ(pass.output, all.output) << "k = " << k << ": output differs from store-all";
    EXPECT_EQ(pass.grad_input, all.grad_input)
        << "k = " << k << ": gradient differs from store-all (recomputed inputs must be the "
        << "same values, through the same layers)";
    EXPECT_LE(pass.peak, static_cast<std::size_t>(segments + k + 1) * activation)
        << "k = " << k << ": " << pass.peak / static_cast<double>(activation)
        << " activations at the peak, the bound is " << segments + k + 1;
    EXPECT_LE(pass.forwards, static_cast<std::uint64_t>(2 * 16 - segments)) << "k = " << k;
    // The inputs not kept are recomputed (a segment of L layers, L - 1 of them), save at most the
    // k - 1 of one segment still held from the forward pass within the bound: not copied out of
    // device memory and back.
    EXPECT_GE(pass.forwards, static_cast<std::uint64_t>(2 * 16 - segments - (k - 1)))
        << "k = " << k << ": " << pass.forwards << " forwards; the inputs not kept must be "
        << "recomputed with layer_forward, at least " << 2 * 16 - segments - (k - 1);
    EXPECT_EQ(pass.run.forward_layers, pass.forwards) << "k = " << k;
    EXPECT_EQ(pass.run.peak_bytes, pass.peak) << "k = " << k;
  }
  DeviceBuffer<float> buffer(stack.width);
  for (const int k : {0, 17, -1}) {
    EXPECT_THROW((void)lab05::checkpointed_backward(stack, k, buffer.data(), buffer.data(),
                                                    buffer.data(), buffer.data(), nullptr),
                 std::invalid_argument)
        << "k = " << k;
  }
}

GPULAB_GRADED_TEST(Lab05Checkpoint, ChoosesTheLeastRecomputationThatFitsTheBudget, 8,
                   "choose_checkpoint_interval",
                   "the smallest k whose bound fits the budget, for many layer counts and "
                   "budgets, and a budget nothing fits refused") {
  // The bound of k, in activations, and the answer by brute force.
  const auto bound = [](int n, int k) { return (n + k - 1) / k + k + 1; };
  for (const int n : {1, 2, 7, 16, 50, 100}) {
    int least = std::numeric_limits<int>::max();
    for (int k = 1; k <= n; ++k) {
      least = std::min(least, bound(n, k));
    }
    for (int budget = least; budget <= n + 3; ++budget) {
      int expected = 0;
      for (int k = 1; k <= n && expected == 0; ++k) {
        expected = bound(n, k) <= budget ? k : 0;
      }
      EXPECT_EQ(
          lab05::choose_checkpoint_interval(n, 4096, static_cast<std::size_t>(budget) * 4096 + 100),
          expected)
          << n << " layers, a budget of " << budget << " activations and 100 bytes";
    }
    EXPECT_THROW((void)lab05::choose_checkpoint_interval(
                     n, 4096, static_cast<std::size_t>(least) * 4096 - 1),
                 std::invalid_argument)
        << n << " layers: " << least << " activations is the least any k needs";
  }
  EXPECT_EQ(lab05::choose_checkpoint_interval(16, 1, std::numeric_limits<std::size_t>::max()), 1);
  EXPECT_THROW((void)lab05::choose_checkpoint_interval(0, 4096, kMiB), std::invalid_argument);
  EXPECT_THROW((void)lab05::choose_checkpoint_interval(16, 0, kMiB), std::invalid_argument);
}

}  // namespace
