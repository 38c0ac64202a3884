// Unit tests of memory_stats.hpp: the accounting of device allocations as the allocation paths
// report them. The addresses are made up (nothing here touches device memory); every test works
// on differences from the state it starts in, since the accounting is one per process.
#include "gpulab/core/memory_stats.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpulab {
namespace {

// A distinct fake device address per call.
const void* fake_address() {
  static std::uintptr_t next = 0x7000'0000'0000;
  next += 0x10'0000;
  return reinterpret_cast<const void*>(next);
}

TEST(MemoryStats, AllocationsAndFreesMoveCurrentPeakAndCounts) {
  reset_peak_memory_stats();
  const MemoryStats before = memory_stats();
  const void* a = fake_address();
  const void* b = fake_address();
  note_device_malloc(a, 1000);
  note_device_malloc(b, 500);
  note_device_free(a);
  const MemoryStats s = memory_stats();
  EXPECT_EQ(s.allocated_bytes, before.allocated_bytes + 500);
  EXPECT_EQ(s.reserved_bytes, before.reserved_bytes + 500);
  EXPECT_EQ(s.peak_allocated_bytes, before.allocated_bytes + 1500) << "both were held at once";
  EXPECT_EQ(s.peak_reserved_bytes, before.reserved_bytes + 1500);
  EXPECT_EQ(s.allocations, 2U);
  EXPECT_EQ(s.frees, 1U);
  EXPECT_EQ(s.live_allocations, before.live_allocations + 1);
  note_device_free(b);
  EXPECT_EQ(memory_stats().allocated_bytes, before.allocated_bytes);
}

TEST(MemoryStats, ResetStartsThePeakFromWhatIsHeldNowAndZeroesTheCounts) {
  const void* a = fake_address();
  const void* b = fake_address();
  note_device_malloc(a, 4096);
  note_device_malloc(b, 1);
  reset_peak_memory_stats();
  const MemoryStats s = memory_stats();
  EXPECT_EQ(s.peak_allocated_bytes, s.allocated_bytes);
  EXPECT_EQ(s.peak_reserved_bytes, s.reserved_bytes);
  EXPECT_EQ(s.allocations, 0U);
  EXPECT_EQ(s.frees, 0U);
  note_device_free(a);
  EXPECT_EQ(memory_stats().peak_allocated_bytes, s.allocated_bytes) << "a free raises no peak";
  note_device_free(b);
}

TEST(MemoryStats, NestedAndOverlappingAllocationsPeakAtTheirLargestSum) {
  reset_peak_memory_stats();
  const std::size_t base = memory_stats().allocated_bytes;
  const void* a = fake_address();
  const void* b = fake_address();
  const void* c = fake_address();
  note_device_malloc(a, 100);  // a: [0, 3)
  note_device_malloc(b, 200);  // b: [1, 2), inside a
  note_device_free(b);
  note_device_malloc(c, 250);  // c: [2, 4), overlapping a's end
  note_device_free(a);
  note_device_free(c);
  EXPECT_EQ(memory_stats().peak_allocated_bytes, base + 350) << "a with c, not a with b (300)";
  EXPECT_EQ(memory_stats().allocated_bytes, base);
}

TEST(MemoryStats, UnknownFreesAndNullAllocationsAreIgnored) {
  const MemoryStats before = memory_stats();
  note_device_free(fake_address());
  note_device_free(nullptr);
  note_device_malloc(nullptr, 100);
  note_cache_free(fake_address());
  EXPECT_EQ(memory_stats(), before);
}

TEST(MemoryStats, AnAddressReportedTwiceWithoutAFreeIsFreedFirst) {
  const std::size_t base = memory_stats().allocated_bytes;
  const void* a = fake_address();
  note_device_malloc(a, 100);
  note_device_malloc(a, 300);  // the device reused the address: the first free went unreported
  EXPECT_EQ(memory_stats().allocated_bytes, base + 300);
  note_device_free(a);
  EXPECT_EQ(memory_stats().allocated_bytes, base);
}

TEST(MemoryStats, ACachingAllocatorsBlocksAreReservedAndItsPiecesAllocated) {
  reset_peak_memory_stats();
  const MemoryStats before = memory_stats();
  const void* block = fake_address();
  {
    const CacheReservation reservation;
    note_device_malloc(block, 1 << 20);
  }
  MemoryStats s = memory_stats();
  EXPECT_EQ(s.reserved_bytes, before.reserved_bytes + (1 << 20));
  EXPECT_EQ(s.allocated_bytes, before.allocated_bytes) << "a reserve is not an allocation";
  EXPECT_EQ(s.peak_allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(s.allocations, 0U);

  const auto* piece = static_cast<const char*>(block) + 512;
  note_cache_allocate(block, 512);
  note_cache_allocate(piece, 1000);
  note_cache_free(block);
  s = memory_stats();
  EXPECT_EQ(s.allocated_bytes, before.allocated_bytes + 1000);
  EXPECT_EQ(s.peak_allocated_bytes, before.allocated_bytes + 1512);
  EXPECT_EQ(s.reserved_bytes, before.reserved_bytes + (1 << 20)) << "freed pieces stay cached";
  EXPECT_EQ(s.allocations, 2U);
  EXPECT_EQ(s.frees, 1U);

  note_cache_free(piece);
  note_device_free(block);  // the cache gives its block back
  s = memory_stats();
  EXPECT_EQ(s.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(s.allocated_bytes, before.allocated_bytes);
}

TEST(MemoryStats, OnlyPiecesOfAReservedBlockAreCounted) {
  // Lab code reports its caching allocator's pieces: not memory outside a block it reserved, nor
  // a piece of a plain allocation, nor one that runs past its block's end.
  const MemoryStats before = memory_stats();
  const std::size_t refused = refused_cache_pieces();
  const void* reserved = fake_address();
  const void* plain = fake_address();
  {
    const CacheReservation reservation;
    note_device_malloc(reserved, 4096);
  }
  note_device_malloc(plain, 4096);
  note_cache_allocate(static_cast<const char*>(reserved) + 4000, 200);  // past the end
  note_cache_allocate(static_cast<const char*>(plain) + 16, 16);        // not a reserve
  note_cache_allocate(fake_address(), 64);                              // nobody's memory
  EXPECT_EQ(refused_cache_pieces(), refused + 3);
  EXPECT_EQ(memory_stats().allocated_bytes, before.allocated_bytes + 4096) << "the plain one";
  note_cache_allocate(static_cast<const char*>(reserved) + 4000, 96);  // the last 96 bytes
  EXPECT_EQ(refused_cache_pieces(), refused + 3);
  EXPECT_EQ(memory_stats().allocated_bytes, before.allocated_bytes + 4096 + 96);
  note_device_free(reserved);
  note_device_free(plain);
  EXPECT_EQ(memory_stats().allocated_bytes, before.allocated_bytes);
}

TEST(MemoryStats, ABlockGivenBackTakesThePiecesStillHandedOutWithIt) {
  const MemoryStats before = memory_stats();
  const void* block = fake_address();
  {
    const CacheReservation reservation;
    note_device_malloc(block, 4096);
  }
  note_cache_allocate(static_cast<const char*>(block) + 1024, 100);
  note_device_free(block);  // cudaFree of the block while a piece is still out
  EXPECT_EQ(memory_stats().allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(memory_stats().reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(memory_stats().live_allocations, before.live_allocations);
}

TEST(MemoryStats, AllocationsCarryTheInnermostSiteOfTheirThread) {
  const void* outer_block = fake_address();
  const void* inner_block = fake_address();
  const void* bare = fake_address();
  unsigned outer_line = 0;
  unsigned inner_line = 0;
  {
    const AllocationSite outer;
    outer_line = __LINE__ - 1;
    {
      const AllocationSite inner;
      inner_line = __LINE__ - 1;
      note_device_malloc(inner_block, 3 << 20);
    }
    note_device_malloc(outer_block, 2 << 20);
  }
  note_device_malloc(bare, 1 << 20);
  std::vector<LiveAllocation> mine;
  for (const LiveAllocation& l : live_allocations()) {
    if (l.address == reinterpret_cast<std::uintptr_t>(outer_block) ||
        l.address == reinterpret_cast<std::uintptr_t>(inner_block) ||
        l.address == reinterpret_cast<std::uintptr_t>(bare)) {
      mine.push_back(l);
    }
  }
  ASSERT_EQ(mine.size(), 3U);
  EXPECT_EQ(mine[0].bytes, 3U << 20) << "largest first";
  EXPECT_EQ(mine[0].line, inner_line);
  EXPECT_NE(mine[0].file.find("memory_stats_test.cpp"), std::string::npos) << mine[0].file;
  EXPECT_EQ(mine[1].line, outer_line);
  EXPECT_TRUE(mine[2].file.empty());
  EXPECT_EQ(mine[2].line, 0U);
  EXPECT_LT(mine[0].id, mine[1].id) << "ids in the order they were made";
  for (const void* p : {outer_block, inner_block, bare}) {
    note_device_free(p);
  }
}

TEST(MemoryHistory, RecordsEveryEventWithTheTotalsAfterItUpToItsLimit) {
  start_memory_history(3);
  const std::size_t base = memory_stats().allocated_bytes;
  const std::size_t reserved = memory_stats().reserved_bytes;
  const void* a = fake_address();
  const void* block = fake_address();
  note_device_malloc(a, 100, 7);
  {
    const CacheReservation reservation;
    note_device_malloc(block, 1000);
  }
  note_device_free(a);
  note_device_free(block);  // the fourth event: over the limit
  stop_memory_history();
  note_device_malloc(a, 5);  // not recording
  note_device_free(a);
  const std::vector<MemoryEvent> events = memory_history();
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(dropped_memory_events(), 1U);
  EXPECT_EQ(events[0].kind, MemoryEventKind::allocate);
  EXPECT_EQ(events[0].bytes, 100U);
  EXPECT_EQ(events[0].stream, 7U);
  EXPECT_EQ(events[0].allocated_after, base + 100);
  EXPECT_EQ(events[1].kind, MemoryEventKind::reserve);
  EXPECT_EQ(events[1].reserved_after, reserved + 1100);
  EXPECT_EQ(events[1].allocated_after, base + 100);
  EXPECT_EQ(events[2].kind, MemoryEventKind::free);
  EXPECT_EQ(events[2].id, events[0].id);
  EXPECT_EQ(events[2].allocated_after, base);
  EXPECT_LE(events[0].time_ms, events[2].time_ms);
  EXPECT_STREQ(to_string(MemoryEventKind::release), "release");

  start_memory_history();
  EXPECT_TRUE(memory_history().empty()) << "a new history starts empty";
  EXPECT_EQ(dropped_memory_events(), 0U);
  stop_memory_history();
}

TEST(OutOfMemory, TheExplanationNamesTheRequestTheDeviceTheTotalsAndTheLargestAllocations) {
  const void* big = fake_address();
  unsigned line = 0;
  {
    const AllocationSite site;
    line = __LINE__ - 1;
    note_device_malloc(big, 3'000'000'000);
  }
  std::vector<const void*> small;
  for (int i = 0; i < 6; ++i) {
    small.push_back(fake_address());
    note_device_malloc(small.back(), 1000 + i);
  }
  const std::string text = explain_out_of_memory(2'000'000'000, 4'000'000'000, 500'000'000, 3);
  const MemoryStats s = memory_stats();
  EXPECT_NE(text.find("asked for 2.0 GB (2000000000 bytes)"), std::string::npos) << text;
  EXPECT_NE(text.find("device of 4.0 GB with 500.0 MB free"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(s.live_allocations) + " allocation(s)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reserved"), std::string::npos) << text;
  EXPECT_NE(text.find("peak"), std::string::npos) << text;
  EXPECT_NE(text.find("3.0 GB  "), std::string::npos) << text;
  EXPECT_NE(text.find("memory_stats_test.cpp:" + std::to_string(line)), std::string::npos) << text;
  EXPECT_NE(text.find("(no source line: a bare cudaMalloc)"), std::string::npos) << text;
  EXPECT_NE(text.find("smaller"), std::string::npos) << "only the 3 largest are listed: " << text;
  // 3.5 GB in use, about 3 GB of it accounted: the rest is named as held elsewhere.
  EXPECT_NE(text.find("in use is not accounted here"), std::string::npos) << text;
  EXPECT_EQ(text.find("larger than the device"), std::string::npos) << text;
  const std::string too_big = explain_out_of_memory(5'000'000'000, 4'000'000'000, 4'000'000'000);
  EXPECT_NE(too_big.find("the request alone is larger than the device"), std::string::npos)
      << too_big;
  EXPECT_EQ(too_big.find("not accounted"), std::string::npos) << too_big;
  note_device_free(big);
  for (const void* p : small) {
    note_device_free(p);
  }
}

}  // namespace
}  // namespace gpulab
