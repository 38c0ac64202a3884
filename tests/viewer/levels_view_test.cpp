// Tests of the Optimization levels panel's views (levels_view.cpp): rows by level with their
// speed-up, memory curves with their growth exponent, and lab 04 output on sim.
#include "gpulab/viewer/views.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "test_specs.hpp"
#include "views_support.hpp"

namespace gpulab::viewer {
namespace {

using namespace views_test;  // the views tests' helpers (views_support.hpp)

// ---------------------------------------------------------------------------------------------
// levels_views
// ---------------------------------------------------------------------------------------------

// An attention_level result as lab 04 writes it, at seq_len 256.
Result level_result(int level, std::string name, double time, double memory,
                    std::map<std::string, std::string> shape = {{"seq_len", "256"},
                                                                {"d_model", "128"}}) {
  shape["level"] = std::to_string(level);
  shape["level_name"] = std::move(name);
  shape["bound"] = "memory-bound";
  return result("attention_level", std::move(shape),
                {measured("time_ms", time), measured("memory_bytes", memory),
                 Metric{"dram_bytes", 1000.0 * (level + 1), Provenance::counted, {}, {}}});
}

// An attention_level_memory result: the buffers of `level` at `seq_len`.
Result level_memory(int level, int seq_len, double bytes, std::string d_model = "128") {
  return result("attention_level_memory",
                {{"seq_len", std::to_string(seq_len)},
                 {"d_model", std::move(d_model)},
                 {"level", std::to_string(level)},
                 {"level_name", "name"}},
                {modeled("memory_bytes", bytes)});
}

TEST(LevelsViews, RowsAreByLevelWithTheSpeedupOverLevelZeroAndTheFastest) {
  const std::vector<LevelsView> views = levels_views(
      file_of("cuda", {level_result(3, "flash", 2, 30), level_result(0, "unfused", 8, 90),
                       level_result(1, "fused softmax", 4, 60)}));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  EXPECT_EQ(v.shape, "d_model=128, seq_len=256");
  ASSERT_TRUE(v.seq_len);
  EXPECT_EQ(*v.seq_len, 256);
  ASSERT_EQ(v.rows.size(), 3U);
  EXPECT_EQ(v.rows[0].name, "L0 unfused");
  EXPECT_EQ(v.rows[1].name, "L1 fused softmax");
  EXPECT_EQ(v.rows[2].name, "L3 flash");
  expect_close(*v.rows[0].speedup, 1, "L0");
  expect_close(*v.rows[1].speedup, 2, "L1: 8 / 4");
  expect_close(*v.rows[2].speedup, 4, "L3: 8 / 2");
  EXPECT_EQ(v.fastest, 2U);
  EXPECT_EQ(*v.rows[2].memory_bytes, 30);
  EXPECT_EQ(*v.rows[2].dram_bytes, 4000);
  EXPECT_EQ(v.rows[2].dram_provenance, Provenance::counted);
  EXPECT_EQ(v.rows[2].bound, "memory-bound");
  EXPECT_FALSE(v.cpu_times);
  EXPECT_TRUE(v.memory.empty());
}

TEST(LevelsViews, WithoutLevelZeroThereIsNoSpeedupAndOnTheHostClockNoFastest) {
  const std::vector<LevelsView> views = levels_views(
      file_of("sim", {level_result(1, "fused softmax", 4, 60), level_result(3, "flash", 2, 30)}));
  ASSERT_EQ(views.size(), 1U);
  EXPECT_TRUE(views[0].cpu_times);
  EXPECT_FALSE(views[0].fastest) << "CPU time of the simulation ranks nothing on a GPU";
  for (const LevelRow& row : views[0].rows) {
    EXPECT_FALSE(row.speedup) << row.name;
    EXPECT_TRUE(row.time_ms) << row.name;
  }
}

TEST(LevelsViews, MemoryCurvesJoinTheShapeWithoutItsSeqLenSortedWithTheirExponent) {
  std::vector<Result> results = {level_result(0, "unfused", 8, 90),
                                 level_result(3, "flash", 2, 30)};
  // Level 0 holds 4 S^2 bytes, level 3 100 S: given out of order, with a length twice (the first
  // counts) and a family of another d_model (a view of its own).
  for (const int s : {1024, 256, 4096}) {
    results.push_back(level_memory(0, s, 4.0 * s * s));
    results.push_back(level_memory(3, s, 100.0 * s));
  }
  results.push_back(level_memory(3, 1024, 1));
  results.push_back(level_memory(3, 256, 7, "512"));
  results.push_back(level_memory(3, 512, 14, "512"));
  const std::vector<LevelsView> views = levels_views(file_of("cuda", std::move(results)));
  ASSERT_EQ(views.size(), 2U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.memory.size(), 2U);
  EXPECT_EQ(v.memory[0].level, 0);
  EXPECT_EQ(v.memory[0].seq_len, (std::vector<double>{256, 1024, 4096}));
  EXPECT_EQ(v.memory[0].bytes,
            (std::vector<double>{4.0 * 256 * 256, 4.0 * 1024 * 1024, 4.0 * 4096 * 4096}));
  EXPECT_EQ(v.memory[1].bytes, (std::vector<double>{25600, 102400, 409600}));
  EXPECT_EQ(v.memory[1].name, "L3 name");
  EXPECT_NEAR(*v.memory[0].exponent, 2, 1e-12);
  EXPECT_NEAR(*v.memory[1].exponent, 1, 1e-12);
  EXPECT_FALSE(v.memory[0].measured) << "computed from the shape";

  const LevelsView& other = views[1];
  EXPECT_EQ(other.shape, "d_model=512");
  EXPECT_TRUE(other.rows.empty());
  EXPECT_FALSE(other.seq_len);
  ASSERT_EQ(other.memory.size(), 1U);
  EXPECT_NEAR(*other.memory[0].exponent, 1, 1e-12);
}

TEST(LevelsViews, MemoryMeasuredAtEveryLengthMakesAMeasuredCurve) {
  // Lab 05 measures each level's memory at each length: no level rows, measured metrics.
  std::vector<Result> results;
  for (const int s : {128, 256}) {
    for (const int level : {0, 3}) {
      Result r = level_memory(level, s, 1);
      r.metrics = {measured("memory_bytes", level == 0 ? 8.0 * s * s : 400.0 * s)};
      results.push_back(std::move(r));
    }
  }
  results.push_back(level_memory(4, 128, 1000));  // computed: its curve is not measured
  results.push_back(level_memory(4, 256, 2000));
  const std::vector<LevelsView> views = levels_views(file_of("sim", std::move(results)));
  ASSERT_EQ(views.size(), 1U);
  ASSERT_EQ(views[0].memory.size(), 3U);
  EXPECT_TRUE(views[0].rows.empty());
  EXPECT_TRUE(views[0].memory[0].measured);
  EXPECT_TRUE(views[0].memory[1].measured);
  EXPECT_FALSE(views[0].memory[2].measured);
  EXPECT_NEAR(*views[0].memory[0].exponent, 2, 1e-12);
  EXPECT_NEAR(*views[0].memory[1].exponent, 1, 1e-12);
}

TEST(LevelsViews, OddResultsAreSkippedWithoutACrash) {
  Result no_level = level_result(1, "x", 1, 1);
  no_level.params.erase("level");
  Result bad_level = level_result(1, "x", 1, 1);
  bad_level.params["level"] = "one";
  Result negative = level_result(1, "x", 1, 1);
  negative.params["level"] = "-1";
  Result zero_time = level_result(2, "cuBLAS", 0, 0);
  Result bad_seq = level_memory(0, 256, 10);
  bad_seq.params["seq_len"] = "abc";
  const std::vector<LevelsView> views = levels_views(
      file_of("cuda", {no_level, bad_level, negative, zero_time, level_result(2, "second", 5, 5),
                       bad_seq, level_memory(0, 256, 0), level_memory(1, 256, 10)}));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.rows.size(), 1U) << "level 2 twice: the first counts";
  EXPECT_EQ(v.rows[0].name, "L2 cuBLAS");
  EXPECT_FALSE(v.rows[0].time_ms) << "a zero time is no time";
  EXPECT_FALSE(v.rows[0].memory_bytes);
  EXPECT_FALSE(v.fastest);
  ASSERT_EQ(v.memory.size(), 1U) << "zero bytes and an unreadable seq_len are left out";
  EXPECT_EQ(v.memory[0].level, 1);
  EXPECT_FALSE(v.memory[0].exponent) << "one length has no slope";

  EXPECT_TRUE(levels_views(load("lab02_sim.json")).empty());
}

TEST(LevelsViews, Lab04OnSimHasFiveLevelsOnTheModeledClockAndLinearFlashMemory) {
  // lab04_sim.json: `gpulab run lab04 --quick --json FILE` on sim (modeled clock, H100 SXM).
  const std::vector<LevelsView> views = levels_views(load("lab04_sim.json"));
  ASSERT_EQ(views.size(), 1U);
  const LevelsView& v = views[0];
  ASSERT_EQ(v.rows.size(), 5U);
  EXPECT_FALSE(v.cpu_times);
  EXPECT_TRUE(v.fastest);
  for (const LevelRow& row : v.rows) {
    EXPECT_TRUE(row.time_ms && row.speedup && row.memory_bytes && row.dram_bytes) << row.name;
    EXPECT_EQ(row.dram_provenance, Provenance::counted) << row.name;
    // Each level's modeled bound and kernel differ, and it stays one shape.
    EXPECT_FALSE(row.model_bound.empty()) << row.name;
    EXPECT_FALSE(row.longest_kernel.empty()) << row.name;
  }
  EXPECT_EQ(v.rows[2].longest_kernel.rfind("cublasSgemm as ", 0), 0U) << v.rows[2].longest_kernel;
  EXPECT_LT(*v.rows[3].memory_bytes, *v.rows[0].memory_bytes) << "flash holds no S x S tensor";
  ASSERT_EQ(v.memory.size(), 5U);
  for (const LevelMemoryCurve& curve : v.memory) {
    ASSERT_TRUE(curve.exponent) << curve.name;
    if (curve.level <= 2) {
      EXPECT_GT(*curve.exponent, 1.5) << curve.name;
    } else {
      EXPECT_LT(*curve.exponent, 1.15) << curve.name;
    }
  }
}

}  // namespace
}  // namespace gpulab::viewer
