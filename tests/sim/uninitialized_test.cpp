// The sanitizer's check of reads of shared memory no thread wrote, on its own
// (framework/sim/src/uninitialized.hpp): which reads a write puts a value before, across phases and
// within one, and that the answer does not depend on how the threads' accesses interleave.
#include "uninitialized.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace {

using gpulab::sim::detail::SharedAccess;
using gpulab::sim::detail::SharedWrites;
using gpulab::sim::detail::UninitializedRead;

constexpr std::uint64_t kBase = 0x1000;  // the window's first byte

SharedAccess load(std::uint32_t thread, std::uint64_t offset, std::uint32_t bytes = 4,
                  std::uint32_t epoch = 0) {
  return {kBase + offset, 0x100 + thread, thread, epoch, bytes, false, false, false};
}
SharedAccess store(std::uint32_t thread, std::uint64_t offset, std::uint32_t bytes = 4,
                   std::uint32_t epoch = 0) {
  return {kBase + offset, 0x200 + thread, thread, epoch, bytes, true, false, false};
}
SharedAccess atomic(std::uint32_t thread, std::uint64_t offset) {
  return {kBase + offset, 0x300 + thread, thread, 0, 4, true, true, false};
}
SharedAccess exchange(std::uint32_t thread, std::uint64_t offset) {
  return {kBase + offset, 0x400 + thread, thread, 0, 4, true, true, true};
}

// A block of 256 bytes of shared memory at kBase, then `phases` one after the other: the first
// phase's report, or none.
std::optional<UninitializedRead> first_report(
    const std::vector<std::vector<SharedAccess>>& phases) {
  SharedWrites writes;
  writes.begin_block({{kBase, 256}});
  for (const std::vector<SharedAccess>& phase : phases) {
    if (std::optional<UninitializedRead> read = writes.end_phase(phase)) {
      return read;
    }
  }
  return std::nullopt;
}

bool reported(const std::vector<std::vector<SharedAccess>>& phases) {
  return first_report(phases).has_value();
}

TEST(SharedWrites, AReadOfBytesNoThreadWroteIsReported) {
  EXPECT_TRUE(reported({{load(0, 0)}}));
  EXPECT_TRUE(reported({{store(0, 0, 2), load(0, 0)}}));       // two of its four bytes written
  EXPECT_TRUE(reported({{store(3, 0)}, {load(0, 4)}}));        // the next word
  EXPECT_TRUE(reported({{atomic(0, 8)}}));                     // an atomic reads what it updates
  EXPECT_FALSE(reported({{store(0, 0, 16)}, {load(5, 12)}}));  // a 16-byte store's last word
  EXPECT_FALSE(reported({{store(0, 56, 16)}, {load(5, 64, 8)}}));  // across 64 bytes
  EXPECT_TRUE(reported({{store(0, 56, 8)}, {load(5, 60, 8)}}));    // bytes 64-67 unwritten
  EXPECT_FALSE(reported({{store(0, 0, 1), store(1, 1, 1), store(2, 2, 2)}, {load(9, 0)}}));
  EXPECT_FALSE(reported({{store(0, 0)}, {}, {load(40, 0), load(41, 0)}}));
  EXPECT_FALSE(reported({{}}));
}

TEST(SharedWrites, WithinAPhaseAThreadsOwnWriteCountsOnlyBeforeItsRead) {
  EXPECT_FALSE(reported({{store(7, 32), load(7, 32)}}));
  // A thread adding to its element before anything set it: the read comes first.
  EXPECT_TRUE(reported({{load(7, 32), store(7, 32)}}));
}

TEST(SharedWrites, WithinAPhaseALaneOfTheWarpCountsWhenASyncwarpPutsItsWriteBefore) {
  EXPECT_FALSE(reported({{store(1, 0, 4, 0), load(0, 0, 4, 1)}}));
  EXPECT_FALSE(reported({{load(0, 0, 4, 1), store(1, 0, 4, 0)}}));  // in any interleaving
  // The write after the __syncwarp() that follows the read.
  EXPECT_TRUE(reported({{load(0, 0, 4, 0), store(1, 0, 4, 1)}}));
}

TEST(SharedWrites, AnAtomicUpdateReadsAndOnlyAnExchangeSetsAValue) {
  // Counters nobody zeroed: every update reads a value nobody chose, in any order.
  EXPECT_TRUE(reported({{atomic(0, 8), atomic(40, 8)}}));
  EXPECT_TRUE(reported({{atomic(0, 8)}, {load(3, 8)}}));
  EXPECT_FALSE(reported({{store(0, 8)}, {atomic(0, 8), atomic(40, 8)}, {load(3, 8)}}));
  // An atomicExch sets a value whatever was there: it is not reported, and what it set counts.
  EXPECT_FALSE(reported({{exchange(0, 8)}, {atomic(3, 8)}, {load(4, 8)}}));
  EXPECT_FALSE(reported({{exchange(0, 8), atomic(40, 8)}}));  // unordered atomics: benefit of doubt
}

TEST(SharedWrites, EveryBlockStartsWithNothingWritten) {
  SharedWrites writes;
  writes.begin_block({{kBase, 256}});
  EXPECT_FALSE(writes.end_phase({store(0, 0)}).has_value());
  EXPECT_FALSE(writes.end_phase({load(0, 0)}).has_value());
  writes.begin_block({{kBase, 256}});
  EXPECT_TRUE(writes.end_phase({load(0, 0)}).has_value());
}

TEST(SharedWrites, AccessesOutsideEveryWindowAreNotChecked) {
  EXPECT_FALSE(reported({{load(0, 256), load(0, 4096)}}));
  SharedWrites writes;
  writes.begin_block({{kBase, 256}, {0x9000, 64}});
  EXPECT_TRUE(writes.end_phase({{0x9000 + 60, 0x10, 0, 0, 4, false, false, false}}).has_value());
}

TEST(SharedWrites, TheReadAtTheLowestAddressIsReportedWithHowManyWordsWereRead) {
  // Thread 3 reads word 2 (bytes 8-11); thread 1, after a __syncwarp() that puts thread 2's write
  // of bytes 4-5 before, reads bytes 4-7 and then 6-9: the lowest unwritten byte (6) is in both of
  // thread 1's reads, and the first of them is reported. Words 1 and 2 were read unwritten, and
  // word 9 (twice).
  std::vector<SharedAccess> accesses = {load(3, 8),       store(2, 4, 2), load(1, 4, 4, 1),
                                        load(1, 6, 4, 1), load(4, 36),    load(5, 36),
                                        store(6, 64, 16), load(6, 64)};
  const std::optional<UninitializedRead> read = first_report({accesses});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->read.thread, 1u);
  EXPECT_EQ(read->read.address, kBase + 4);
  EXPECT_EQ(read->address, kBase + 6);
  EXPECT_EQ(read->words, 3u);  // words 1, 2 and 9
  // The same answer in every interleaving that keeps each thread's own order (thread 1 makes two
  // accesses, thread 6 two): all orders of the accesses, those that keep them counted.
  std::vector<int> order(accesses.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    order[i] = i;
  }
  int checked = 0;
  do {
    const auto at = [&](int i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
    if (at(2) > at(3) || at(6) > at(7)) {
      continue;
    }
    std::vector<SharedAccess> interleaved;
    for (const int i : order) {
      interleaved.push_back(accesses[i]);
    }
    const std::optional<UninitializedRead> again = first_report({interleaved});
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->read.thread, 1u);
    EXPECT_EQ(again->read.address, kBase + 4);
    EXPECT_EQ(again->address, kBase + 6);
    EXPECT_EQ(again->words, 3u);
    ++checked;
  } while (std::next_permutation(order.begin(), order.end()) && checked < 2000);
  EXPECT_EQ(checked, 2000);
}

}  // namespace
