// Unit tests of fidelity.hpp: the error, the worst ratio and the ladders' order, worked by hand;
// the corpus read, written, filled from results files and merged.
#include "gpulab/core/fidelity.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/results.hpp"

namespace gpulab {
namespace {

TEST(Fidelity, MeanErrorAndWorstRatioOfIssue37sFirstTwoKernels) {
  // Histogram: modeled 0.249 against measured 17.30 ms, ratio 0.0144: error 0.9856, 69.5x off.
  // Privatized: 0.120 against 0.120: error 0. Mean 0.4928; the worst is the global atomics.
  const FidelitySummary s = summarize_fidelity(
      {{"histogram", "global atomics", 17.30, 0.249}, {"histogram", "privatized", 0.120, 0.120}});
  EXPECT_NEAR(s.mean_abs_error, (1 - 0.249 / 17.30) / 2, 1e-12);
  EXPECT_NEAR(s.worst_ratio, 17.30 / 0.249, 1e-9);
  EXPECT_EQ(s.worst, "histogram: global atomics");
  ASSERT_EQ(s.ladders.size(), 1u);
  EXPECT_TRUE(s.ladders[0].kept);  // 17.3 > 0.12 and 0.249 > 0.120
}

TEST(Fidelity, AModelTooSlowCountsAsMuchAsOneTooFast) {
  // 2x too slow and 2x too fast: errors 1 and 0.5, mean 0.75; both 2x off, the first is named.
  const FidelitySummary s = summarize_fidelity({{"a", "slow", 1.0, 2.0}, {"b", "fast", 1.0, 0.5}});
  EXPECT_DOUBLE_EQ(s.mean_abs_error, 0.75);
  EXPECT_DOUBLE_EQ(s.worst_ratio, 2.0);
  EXPECT_EQ(s.worst, "a: slow");
}

TEST(Fidelity, ALadderWhoseModelSwapsTwoLevelsIsNotKeptAndSaysWhich) {
  // Measured: naive 0.98 > coalesced 0.31 > conflict-free 0.155. Modeled: coalesced 0.44 above
  // naive 0.40: the first pair ranked the other way is naive and coalesced. The other ladder
  // keeps its order.
  const FidelitySummary s = summarize_fidelity({{"transpose", "naive", 0.98, 0.40},
                                                {"reduction", "tree", 0.30, 0.14},
                                                {"transpose", "coalesced", 0.31, 0.44},
                                                {"transpose", "conflict-free", 0.155, 0.19},
                                                {"reduction", "shuffle", 0.21, 0.12}});
  ASSERT_EQ(s.ladders.size(), 2u);
  EXPECT_EQ(s.ladders[0].ladder, "transpose");
  EXPECT_FALSE(s.ladders[0].kept);
  EXPECT_EQ(s.ladders[0].first_swap, "naive and coalesced");
  EXPECT_EQ(s.ladders[1].ladder, "reduction");
  EXPECT_TRUE(s.ladders[1].kept);
}

TEST(Fidelity, ATieTheMeasurementsDoNotHaveBreaksTheOrder) {
  const FidelitySummary s = summarize_fidelity({{"x", "one", 1.0, 0.5}, {"x", "two", 2.0, 0.5}});
  EXPECT_FALSE(s.ladders[0].kept);
}

TEST(Fidelity, TimesWithinTheToleranceAreNotRanked) {
  // 1.00 and 1.04 ms measured: within 5%, a tie of the GPU's noise; either modeled order keeps
  // the ladder. 1.00 and 1.06: ranked.
  EXPECT_TRUE(
      summarize_fidelity({{"x", "one", 1.0, 0.7}, {"x", "two", 1.04, 0.5}}).ladders[0].kept);
  EXPECT_FALSE(
      summarize_fidelity({{"x", "one", 1.0, 0.7}, {"x", "two", 1.06, 0.5}}).ladders[0].kept);
}

TEST(Fidelity, ASweepOfBlockSizesIsOrderedApartFromTheLadders) {
  // Level 1 at 32 and 256 threads a block: each its own ladder of one level, and together one
  // sweep, whose order the model loses here (it gives both one time).
  const FidelitySummary s =
      summarize_fidelity({{"add, 32 threads", "level 1", 1.27, 0.25, "add level 1"},
                          {"add, 256 threads", "level 1", 0.24, 0.25, "add level 1"},
                          {"copy", "level 0", 0.15, 0.17, "copy level 0"}});
  ASSERT_EQ(s.ladders.size(), 3u);
  EXPECT_TRUE(s.ladders[0].kept);
  ASSERT_EQ(s.sweeps.size(), 1u);  // copy's sweep has one block size: it orders nothing
  EXPECT_EQ(s.sweeps[0].ladder, "add level 1");
  EXPECT_FALSE(s.sweeps[0].kept);
  EXPECT_EQ(s.sweeps[0].first_swap, "add, 32 threads and add, 256 threads");
}

TEST(Fidelity, NoPointsOrAnUnusableTimeIsRefusedNamingThePoint) {
  EXPECT_THROW(static_cast<void>(summarize_fidelity({})), std::invalid_argument);
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    try {
      static_cast<void>(summarize_fidelity({{"gemm", "tiled", 1.0, bad}}));
      ADD_FAILURE() << "accepted a modeled time of " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("gemm: tiled"), std::string::npos) << e.what();
    }
  }
}

CorpusEntry transpose_entry() {
  return {"H200 SXM",
          "transpose",
          2,
          8192,
          0,
          0.3117,
          "8192 x 8192 floats",
          "h200-sxm-2026-11-26/bench-transpose.json (revision 859fde140aac)",
          ""};
}

TEST(FidelityCorpus, RoundTripsThroughJsonAndAFile) {
  CorpusEntry stale = transpose_entry();
  stale.level = 3;
  stale.block_size = 256;
  stale.stale = "rewritten since";
  const std::vector<CorpusEntry> entries = {transpose_entry(), stale};
  const nlohmann::json json = corpus_to_json(entries);
  EXPECT_TRUE(is_corpus(json));
  EXPECT_FALSE(json["measurements"][0].contains("stale"));  // only stale entries say so
  EXPECT_EQ(corpus_from_json(json, "corpus.json"), entries);

  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("gpulab-corpus-test-" + std::to_string(getpid()) + ".json");
  save_corpus(file, entries);
  EXPECT_EQ(corpus_from_json(load_results_json(file), file.string()), entries);
  std::filesystem::remove(file);
}

TEST(FidelityCorpus, AResultsFileIsNotACorpus) {
  EXPECT_FALSE(is_corpus(nlohmann::json{{"context", {}}, {"results", nlohmann::json::array()}}));
  EXPECT_FALSE(is_corpus(nlohmann::json::array()));
}

TEST(FidelityCorpus, EveryBadFieldIsRefusedNamingTheEntryAndTheField) {
  struct Case {
    const char* field;
    nlohmann::json value;  // null: the field removed
  };
  const Case cases[] = {{"spec", ""},         {"op", 3},           {"level", -1},
                        {"level", 1.5},       {"size", 0},         {"size", "8192"},
                        {"block_size", -256}, {"measured_ms", 0},  {"measured_ms", -1},
                        {"problem", ""},      {"source", nullptr}, {"stale", 1},
                        {"problems", "typo"}, {"problem", nullptr}};
  for (const Case& c : cases) {
    nlohmann::json json = corpus_to_json({transpose_entry(), transpose_entry()});
    nlohmann::json& entry = json["measurements"][1];
    if (c.value.is_null()) {
      entry.erase(c.field);
    } else {
      entry[c.field] = c.value;
    }
    try {
      static_cast<void>(corpus_from_json(json, "corpus.json"));
      ADD_FAILURE() << "accepted " << c.field << " = " << c.value.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("corpus.json: measurements[1].") + c.field),
                std::string::npos)
          << e.what();
    }
  }
  nlohmann::json other_version = corpus_to_json({});
  other_version["corpus_version"] = 2;
  EXPECT_THROW(static_cast<void>(corpus_from_json(other_version, "c")), std::invalid_argument);
  nlohmann::json extra = corpus_to_json({});
  extra["notes"] = "x";
  EXPECT_THROW(static_cast<void>(corpus_from_json(extra, "c")), std::invalid_argument);
}

ResultsFile bench_file(const std::string& backend) {
  ResultsFile file;
  file.context = make_context(backend, "NVIDIA H200", "H200 SXM");
  file.context.git_revision = "abc123";
  Result result{result_kind::kernel_bench,
                {{"op", "transpose"},
                 {"level", "2"},
                 {"level_name", "coalesced"},
                 {"size", "8192"},
                 {"block_size", "0"},
                 {"problem", "8192 x 8192 floats"}},
                {Metric::measured("time_ms", 0.3117), Metric::modeled("time_ms", 0.1, "H200 SXM")},
                {}};
  file.results.push_back(result);
  file.results.push_back({"vector_add", {}, {Metric::measured("time_ms", 1.0)}, {}});  // not bench
  return file;
}

TEST(FidelityCorpus, AGpuResultsFilesBenchTimesBecomeEntries) {
  const std::vector<CorpusEntry> entries = corpus_entries(bench_file("cuda"), "run/bench.json");
  ASSERT_EQ(entries.size(), 1u);
  CorpusEntry expected = transpose_entry();
  expected.source = "run/bench.json (revision abc123)";
  EXPECT_EQ(entries[0], expected);
}

TEST(FidelityCorpus, SimResultsOrABenchTimeWithoutItsProblemAreRefused) {
  EXPECT_THROW(static_cast<void>(corpus_entries(bench_file("sim"), "f.json")),
               std::invalid_argument);
  ResultsFile old = bench_file("cuda");
  old.results[0].params.erase("problem");
  try {
    static_cast<void>(corpus_entries(old, "f.json"));
    ADD_FAILURE() << "accepted a bench time without its problem";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: results[0] has no parameter \"problem\""),
              std::string::npos)
        << e.what();
  }
  ResultsFile bad = bench_file("cuda");
  bad.results[0].params["level"] = "two";
  EXPECT_THROW(static_cast<void>(corpus_entries(bad, "f.json")), std::invalid_argument);
}

TEST(FidelityCorpus, ANewTimeOfTheSameKernelReplacesTheOldOne) {
  CorpusEntry old = transpose_entry();
  old.stale = "rewritten since";
  CorpusEntry other = transpose_entry();
  other.spec = "H100 SXM";
  CorpusEntry again = transpose_entry();
  again.measured_ms = 0.30;
  CorpusEntry other_block = transpose_entry();
  other_block.block_size = 128;
  const std::vector<CorpusEntry> merged = merge_corpus({old, other}, {again, other_block});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0], again);  // in place of the stale time, and no longer stale
  EXPECT_EQ(merged[1], other);
  EXPECT_EQ(merged[2], other_block);
}

}  // namespace
}  // namespace gpulab
