// The sanitizer's race check on shared memory on its own (framework/sim/src/races.hpp): which
// pairs of accesses race, and that the answer does not depend on the accesses' order.
#include "races.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace {

using gpulab::sim::detail::find_shared_race;
using gpulab::sim::detail::SharedAccess;
using gpulab::sim::detail::SharedRace;

SharedAccess load(std::uint32_t thread, std::uint64_t address, std::uint32_t bytes = 4,
                  std::uint32_t epoch = 0) {
  return {address, 0x100 + thread, thread, epoch, bytes, false, false, false};
}
SharedAccess store(std::uint32_t thread, std::uint64_t address, std::uint32_t bytes = 4,
                   std::uint32_t epoch = 0) {
  return {address, 0x200 + thread, thread, epoch, bytes, true, false, false};
}
SharedAccess atomic(std::uint32_t thread, std::uint64_t address) {
  return {address, 0x300 + thread, thread, 0, 4, true, true, false};
}

bool races(const std::vector<SharedAccess>& accesses) {
  return find_shared_race(accesses).has_value();
}

TEST(SharedRaces, AWriteAndAnotherThreadsAccessOfTheSameBytesRace) {
  EXPECT_TRUE(races({store(0, 64), load(40, 64)}));
  EXPECT_TRUE(races({store(0, 64), store(40, 64)}));
  EXPECT_TRUE(races({store(0, 64), load(40, 66, 2)}));             // a part of the word
  EXPECT_TRUE(races({store(0, 60, 16), load(40, 72, 4)}));         // a 16-byte store's last word
  EXPECT_FALSE(races({load(0, 64), load(40, 64)}));                // reads alone never race
  EXPECT_FALSE(races({store(0, 64), load(0, 64), store(0, 64)}));  // one thread's own
  EXPECT_FALSE(races({store(0, 64), load(40, 68)}));               // the next word
  EXPECT_FALSE(races({store(0, 64, 1), store(1, 65, 1), load(40, 66, 2)}));  // other bytes
  EXPECT_FALSE(races({}));
}

TEST(SharedRaces, AtomicsRaceWithPlainAccessesOnly) {
  EXPECT_FALSE(races({atomic(0, 64), atomic(1, 64), atomic(40, 64)}));
  EXPECT_TRUE(races({atomic(0, 64), atomic(1, 64), load(40, 64)}));
  EXPECT_TRUE(races({atomic(3, 64), store(40, 64)}));
  EXPECT_FALSE(races({atomic(3, 64), load(3, 64)}));  // the same thread
}

TEST(SharedRaces, LanesOfOneWarpAreOrderedByASyncwarpBetweenThem) {
  // Lanes 1 and 0 of warp 0: the same epoch races, another does not.
  EXPECT_TRUE(races({store(1, 64, 4, 2), load(0, 64, 4, 2)}));
  EXPECT_FALSE(races({store(1, 64, 4, 1), load(0, 64, 4, 2)}));
  // Threads 1 and 33 are in different warps: a __syncwarp() orders nothing between them.
  EXPECT_TRUE(races({store(1, 64, 4, 1), load(33, 64, 4, 2)}));
}

TEST(SharedRaces, TheRaceAtTheLowestAddressIsReportedWithHowManyWordsRaced) {
  std::vector<SharedAccess> accesses = {store(5, 200), load(6, 200), store(0, 64),
                                        load(1, 64),   load(2, 64),  store(9, 128, 8),
                                        load(8, 132),  load(7, 300)};
  const std::optional<SharedRace> race = find_shared_race(accesses);
  ASSERT_TRUE(race.has_value());
  EXPECT_EQ(race->write.thread, 0u);
  EXPECT_EQ(race->write.address, 64u);
  EXPECT_EQ(race->other.thread, 1u);
  EXPECT_EQ(race->words, 3u);  // 64, 132 and 200
  // The same answer in every order of the accesses.
  std::sort(accesses.begin(), accesses.end(),
            [](const SharedAccess& a, const SharedAccess& b) { return a.pc < b.pc; });
  do {
    const std::optional<SharedRace> again = find_shared_race(accesses);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->write.pc, race->write.pc);
    EXPECT_EQ(again->other.pc, race->other.pc);
    EXPECT_EQ(again->words, 3u);
  } while (std::next_permutation(
      accesses.begin(), accesses.end(),
      [](const SharedAccess& a, const SharedAccess& b) { return a.pc < b.pc; }));
}

TEST(SharedRaces, ManyRepeatsOfOneThreadsAccessesAreCheckedOnce) {
  // 1024 threads each adding to their own element 100 times, and to one counter atomically: no
  // race, and quick (each word's repeats count once).
  std::vector<SharedAccess> accesses;
  for (std::uint32_t t = 0; t < 1024; ++t) {
    for (int i = 0; i < 100; ++i) {
      accesses.push_back(load(t, 4096 + 4 * t));
      accesses.push_back(store(t, 4096 + 4 * t));
      accesses.push_back(atomic(t, 0));
    }
  }
  EXPECT_FALSE(races(accesses));
}

}  // namespace
