// The L2 model (gpulab/core/sector_cache.hpp): hits, misses, LRU eviction within a set, lookups
// without side effects, write-back of dirty sectors, and capacity rounding.
#include "gpulab/core/sector_cache.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace {

using gpulab::SectorCache;

TEST(SectorCache, MissThenHitOnTheSameSector) {
  SectorCache cache(4096, 4);  // 4096 / (128 x 4) = 8 sets
  EXPECT_FALSE(cache.read(10));
  EXPECT_TRUE(cache.read(10));
  EXPECT_EQ(cache.dram_sector_reads(), 1u);
}

TEST(SectorCache, SectorsOfOneLineAreFilledOneByOne) {
  // Sectors 0..3 share line 0: each is its own miss (a sector-granular fill), then all hit.
  SectorCache cache(4096, 4);
  for (std::uint64_t s = 0; s < 4; ++s) {
    EXPECT_FALSE(cache.read(s));
  }
  for (std::uint64_t s = 0; s < 4; ++s) {
    EXPECT_TRUE(cache.read(s));
  }
  EXPECT_EQ(cache.dram_sector_reads(), 4u);
}

TEST(SectorCache, LeastRecentlyUsedLineOfASetIsEvicted) {
  // One set of 2 ways (256 bytes): lines 0, 1, touch 0, then line 2 evicts line 1.
  SectorCache cache(256, 2);
  cache.read(0);  // line 0
  cache.read(4);  // line 1
  cache.read(0);  // line 0 is now the most recent
  cache.read(8);  // line 2 evicts line 1
  EXPECT_TRUE(cache.read(0));
  EXPECT_FALSE(cache.read(4));
}

TEST(SectorCache, HoldsLooksWithoutTouching) {
  // One set of 2 ways: lines 0 and 1 read, line 0 looked at (not used), then line 2 evicts the
  // least recently used line, 0: holds() moved nothing and read nothing from DRAM.
  SectorCache cache(256, 2);
  EXPECT_FALSE(cache.holds(0));
  cache.read(0);  // line 0, sector 0
  cache.read(4);  // line 1
  EXPECT_TRUE(cache.holds(0));
  EXPECT_FALSE(cache.holds(1));  // line 0's other sectors were not filled
  EXPECT_EQ(cache.dram_sector_reads(), 2u);
  cache.read(8);  // line 2 evicts line 0
  EXPECT_FALSE(cache.holds(0));
  EXPECT_TRUE(cache.holds(4));
  cache.write(12);  // a written sector is held too
  EXPECT_TRUE(cache.holds(12));
}

TEST(SectorCache, WritesNeedNoFillAndAreWrittenBackOnce) {
  SectorCache cache(4096, 4);
  EXPECT_FALSE(cache.write(3));
  EXPECT_TRUE(cache.write(3));
  EXPECT_TRUE(cache.read(3));  // written data is present
  EXPECT_EQ(cache.dram_sector_reads(), 0u);
  EXPECT_EQ(cache.dram_sector_writes(), 0u);
  cache.write_back();
  EXPECT_EQ(cache.dram_sector_writes(), 1u);
  cache.write_back();  // clean now: nothing more
  EXPECT_EQ(cache.dram_sector_writes(), 1u);
}

TEST(SectorCache, EvictingADirtyLineWritesItsDirtySectors) {
  SectorCache cache(128, 1);  // one line
  cache.write(0);
  cache.write(1);
  cache.read(4);  // another line: the dirty sectors 0 and 1 go to DRAM
  EXPECT_EQ(cache.dram_sector_writes(), 2u);
}

TEST(SectorCache, ClearEmptiesAfterWritingBack) {
  SectorCache cache(4096, 4);
  cache.write(7);
  cache.clear();
  EXPECT_EQ(cache.dram_sector_writes(), 1u);
  EXPECT_FALSE(cache.read(7));
}

TEST(SectorCache, CapacityRoundsToWholeSets) {
  const SectorCache cache(50ull * 1024 * 1024);  // H100's 50 MiB: 25600 sets of 16 ways
  EXPECT_EQ(cache.capacity_bytes(), 50ull * 1024 * 1024);
  EXPECT_EQ(cache.ways(), 16u);
  const SectorCache small(1000, 16);  // below one set: one set of 7 lines
  EXPECT_EQ(small.capacity_bytes(), 7u * 128);
  EXPECT_THROW(SectorCache(64), std::invalid_argument);
  EXPECT_THROW(SectorCache(4096, 0), std::invalid_argument);
}

}  // namespace
