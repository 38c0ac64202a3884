#include "gpulab/core/heavy_hitters.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>

namespace {

using gpulab::HeavyHitters;

TEST(HeavyHitters, ExactWithFewDistinctKeys) {
  HeavyHitters h(4);
  EXPECT_EQ(h.largest(), 0u);
  for (int i = 0; i < 10; ++i) {
    h.add(7);
  }
  for (int i = 0; i < 3; ++i) {
    h.add(1);
  }
  h.add(2);
  EXPECT_EQ(h.largest(), 10u);
  EXPECT_EQ(h.estimate(7), 10u);
  EXPECT_EQ(h.estimate(1), 3u);
  EXPECT_EQ(h.estimate(2), 1u);
  EXPECT_EQ(h.estimate(99), 0u);
  EXPECT_EQ(h.added(), 14u);
  h.clear();
  EXPECT_EQ(h.largest(), 0u);
  EXPECT_EQ(h.added(), 0u);
}

TEST(HeavyHitters, KeepsAHotKeyAmongManyColdOnesWithinTheBound) {
  // One key in four is the hot one; the rest are spread over 100,000 keys, far more than the
  // 64 the summary keeps.
  constexpr std::size_t kCapacity = 64;
  HeavyHitters h(kCapacity);
  std::mt19937_64 random(1);
  std::map<std::uint64_t, std::uint64_t> truth;
  for (int i = 0; i < 400000; ++i) {
    const std::uint64_t key = i % 4 == 0 ? 123456789 : random() % 100000;
    h.add(key);
    ++truth[key];
  }
  const std::uint64_t n = h.added();
  const std::uint64_t slack = n / (kCapacity + 1);
  EXPECT_LE(h.estimate(123456789), truth[123456789]);
  EXPECT_GE(h.estimate(123456789), truth[123456789] - slack);
  EXPECT_EQ(h.largest(), h.estimate(123456789));
  for (const auto& [key, count] : truth) {
    ASSERT_LE(h.estimate(key), count) << key;  // never above a true count
  }
}

TEST(HeavyHitters, SpreadKeysGiveNoPhantomHotKey) {
  // Every key once: no estimate may exceed 1.
  HeavyHitters h(16);
  for (std::uint64_t key = 0; key < 10000; ++key) {
    h.add(key);
  }
  EXPECT_LE(h.largest(), 1u);
}

TEST(HeavyHitters, RefusesZeroCapacity) {
  EXPECT_THROW(HeavyHitters(0), std::invalid_argument);
}

}  // namespace
