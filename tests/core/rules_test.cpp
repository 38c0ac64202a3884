// Rules with a modeled gain (rules.hpp): each rule finds its problem on the line that has it, its
// fix changes only that line's figures, and the gain is the model's.
#include "gpulab/core/rules.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/specs.hpp"

namespace {

using gpulab::CountedLaunch;
using gpulab::Finding;
using gpulab::Problem;
using gpulab::SourceLineCounters;

const gpulab::GpuSpec& h100() {
  static const gpulab::GpuSpec spec = *gpulab::find_spec("h100-sxm");
  return spec;
}

// A launch of `blocks` blocks of 256 threads, its counters the sum of `lines`.
CountedLaunch launch_of(std::uint32_t blocks, std::vector<SourceLineCounters> lines) {
  CountedLaunch launch;
  launch.kernel = "k";
  launch.spec = "h100-sxm";
  launch.grid = {blocks, 1, 1};
  launch.block = {256, 1, 1};
  for (const SourceLineCounters& l : lines) {
    launch.counters += l.counters;
  }
  launch.counters.path_phases = blocks;
  launch.lines = std::move(lines);
  return launch;
}

// A column store: each warp request writes 32 floats 4 KiB apart, 32 partial sectors.
SourceLineCounters column_store(std::uint64_t requests) {
  SourceLineCounters l{"/k.cu", 12, {}};
  l.counters.global_store = {requests, 32 * requests, 128 * requests, 32 * requests, 32 * requests};
  l.counters.l2_sector_writes = 32 * requests;
  return l;
}

// A row load: 4 sectors per request, every sector read from DRAM.
SourceLineCounters row_load(std::uint64_t requests) {
  SourceLineCounters l{"/k.cu", 11, {}};
  l.counters.global_load = {requests, 4 * requests, 128 * requests, 32 * requests, 0};
  l.counters.l2_sector_reads = 4 * requests;
  l.counters.dram_bytes_read = 128 * requests;
  return l;
}

TEST(Rules, AnUncoalescedStoreIsFoundOnItsLineAndItsFixIsWholeSectors) {
  const std::uint64_t requests = 4096 * 8;  // 4096 blocks of 8 warps, one request each
  const CountedLaunch launch = launch_of(4096, {row_load(requests), column_store(requests)});
  const std::vector<Finding> findings = gpulab::find_problems({launch}, h100());
  ASSERT_FALSE(findings.empty());
  const Finding& f = findings.front();
  EXPECT_EQ(f.problem, Problem::uncoalesced);
  EXPECT_EQ(f.file, "/k.cu");
  EXPECT_EQ(f.line, 12u);
  EXPECT_NE(f.what.find("global stores move 32.0 sectors per request where 4.0 would do"),
            std::string::npos)
      << f.what;

  const CountedLaunch fixed = gpulab::with_fix(launch, Problem::uncoalesced, launch.lines[1]);
  EXPECT_EQ(fixed.counters.global_store.sectors, 4 * requests);
  EXPECT_EQ(fixed.counters.global_store.partial_sectors, 0u);
  EXPECT_EQ(fixed.counters.l2_sector_writes, 4 * requests);
  EXPECT_EQ(fixed.counters.global_load, launch.counters.global_load);  // the other line's
  const double now = gpulab::model_launch(launch, h100()).time_s;
  EXPECT_DOUBLE_EQ(f.speedup, now / gpulab::model_launch(fixed, h100()).time_s);
  EXPECT_GT(f.speedup, 1.5);
}

TEST(Rules, BankConflictsAreFoundAndTheirFixLeavesTheIdealWavefronts) {
  const std::uint64_t requests = 4096 * 8 * 32;
  SourceLineCounters column{"/k.cu", 20, {}};
  column.counters.shared_load = {requests, 32 * requests, 31 * requests, 32 * requests};
  const CountedLaunch launch = launch_of(4096, {row_load(4096 * 8), column});
  const std::vector<Finding> findings = gpulab::find_problems({launch}, h100());
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().problem, Problem::bank_conflicts);
  EXPECT_EQ(findings.front().line, 20u);
  EXPECT_NE(findings.front().what.find("take 32.0 wavefronts per request where 1.0 would do"),
            std::string::npos)
      << findings.front().what;
  const CountedLaunch fixed = gpulab::with_fix(launch, Problem::bank_conflicts, column);
  EXPECT_EQ(fixed.counters.shared_load.wavefronts, requests);
  EXPECT_EQ(fixed.counters.shared_load.bank_conflicts, 0u);
}

TEST(Rules, AtomicsOnOneSectorArePrivatizedPerBlock) {
  SourceLineCounters atomics{"/h.cu", 7, {}};
  const std::uint64_t requests = 1024 * 8 * 64;
  atomics.counters.global_atomic = {requests, requests, 4 * 32 * requests, 32 * requests, 0};
  atomics.counters.l2_sector_reads = requests;
  atomics.counters.l2_sector_writes = requests;
  CountedLaunch launch = launch_of(1024, {atomics});
  launch.counters.l2_atomic_busiest_sector = requests / 8;
  const std::vector<Finding> findings = gpulab::find_problems({launch}, h100());
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().problem, Problem::atomic_contention);
  EXPECT_EQ(findings.front().line, 7u);
  EXPECT_GT(findings.front().speedup, 10);
  const CountedLaunch fixed = gpulab::with_fix(launch, Problem::atomic_contention, atomics);
  EXPECT_EQ(fixed.counters.l2_atomic_busiest_sector, 1024u);  // one request per block
  EXPECT_EQ(fixed.counters.global_atomic.requests, 1024u);
  EXPECT_EQ(fixed.counters.shared_atomic.requests, requests);
}

TEST(Rules, TheKernelsTailAndItsLaunchOverheadAreProblemsOfTheWholeKernel) {
  // One block more than whole waves of a coalesced copy: an almost empty last wave.
  const gpulab::ModeledTime one =
      gpulab::model_launch(launch_of(132 * 8, {row_load(132 * 64)}), h100());
  ASSERT_GT(one.active_blocks_per_sm, 0);
  const auto wave = static_cast<std::uint32_t>(one.active_blocks_per_sm * h100().sm_count);
  const std::uint64_t requests = std::uint64_t{wave + 1} * 8 * 64;
  const std::vector<Finding> tail =
      gpulab::find_problems({launch_of(wave + 1, {row_load(requests)})}, h100(), 1.0);
  const auto has = [](const std::vector<Finding>& findings, Problem problem) {
    for (const Finding& f : findings) {
      if (f.problem == problem) {
        return f.line == 0 && f.file.empty() && f.speedup > 1;
      }
    }
    return false;
  };
  EXPECT_TRUE(has(tail, Problem::tail));
  // A launch of one tiny block: its time is mostly the launch's.
  const std::vector<Finding> tiny = gpulab::find_problems({launch_of(1, {row_load(1)})}, h100());
  EXPECT_TRUE(has(tiny, Problem::launch_bound));
  EXPECT_FALSE(has(tiny, Problem::uncoalesced));
}

TEST(Rules, AFindingIsAResultWithItsModeledSpeedup) {
  const Finding line{Problem::bank_conflicts, "/k.cu", 20, "pad it", 2.5};
  const gpulab::Result r = gpulab::finding_result("k", line, "H100 SXM");
  EXPECT_EQ(r.name, gpulab::result_kind::finding);
  EXPECT_EQ(r.params.at("kernel"), "k");
  EXPECT_EQ(r.params.at("problem"), "bank conflicts");
  EXPECT_EQ(r.params.at("file"), "/k.cu");
  EXPECT_EQ(r.params.at("line"), "20");
  EXPECT_EQ(r.params.at("what"), "pad it");
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.metrics[0], gpulab::Metric::modeled("speedup_ratio", 2.5, "H100 SXM"));
  const gpulab::Result whole =
      gpulab::finding_result("k", {Problem::tail, "", 0, "whole waves", 1.2}, "T4");
  EXPECT_EQ(whole.params.at("file"), "");
  EXPECT_EQ(whole.params.at("line"), "0");
}

TEST(Rules, SmallGainsAreLeftOutAndNoLaunchesHaveNoProblems) {
  const CountedLaunch launch = launch_of(4096, {row_load(4096 * 8), column_store(4096 * 8)});
  for (const Finding& f : gpulab::find_problems({launch}, h100(), 1000)) {
    ADD_FAILURE() << "a gain of " << f.speedup << " passed a minimum of 1000";
  }
  EXPECT_TRUE(gpulab::find_problems({}, h100()).empty());
  EXPECT_EQ(gpulab::to_string(Problem::bank_conflicts), "bank conflicts");
}

}  // namespace
