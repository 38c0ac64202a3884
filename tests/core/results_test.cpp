// Tests of the results model (results.cpp): metric names and their units, provenance, and the
// context a program's results are stamped with.
#include "gpulab/core/results.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <iomanip>
#include <regex>
#include <sstream>
#include <string>

#include "gpulab/core/version.hpp"

namespace {

using gpulab::Provenance;
using gpulab::ResultsContext;

// ---------------------------------------------------------------------------------------------
// Units and provenance
// ---------------------------------------------------------------------------------------------

TEST(ResultsUnits, AcceptsNamesEndingInAUnit) {
  for (const char* name : {"time_ms",
                           "time_us",
                           "time_ns",
                           "elapsed_s",
                           "bytes",
                           "read_bytes",
                           "size_kb",
                           "l2_mb",
                           "dram_gb",
                           "bandwidth_gb_s",
                           "bandwidth_tb_s",
                           "work_gflop",
                           "work_flop",
                           "throughput_gflop_s",
                           "throughput_tflop_s",
                           "intensity_flop_per_byte",
                           "peak_percent",
                           "speedup_ratio",
                           "hit_fraction",
                           "launch_count",
                           "clock_hz",
                           "clock_mhz",
                           "sm_clock_ghz",
                           "block_threads",
                           "grid_blocks",
                           "active_warps",
                           "used_registers",
                           "power_w",
                           "kernel_cycles",
                           "n_elements"}) {
    EXPECT_TRUE(gpulab::has_unit_suffix(name)) << name;
  }
}

TEST(ResultsUnits, RejectsNamesWithoutAUnit) {
  for (const char* name :
       {"time", "bandwidth", "", "_ms", "timems", "time_msec", "bandwidth_gbs", "time_MS",
        "time_ms ", "speedup", "gbs", "bytes_", "bytesx", "ms_time", "time_gib", "x_seconds"}) {
    EXPECT_FALSE(gpulab::has_unit_suffix(name)) << '"' << name << '"';
  }
}

TEST(ResultsUnits, LabelAndStemUseTheLongestSuffix) {
  EXPECT_EQ(gpulab::unit_label("bandwidth_gb_s"), "GB/s");
  EXPECT_EQ(gpulab::metric_stem("bandwidth_gb_s"), "bandwidth");
  EXPECT_EQ(gpulab::unit_label("throughput_gflop_s"), "GFLOP/s");
  EXPECT_EQ(gpulab::metric_stem("throughput_gflop_s"), "throughput");
  EXPECT_EQ(gpulab::unit_label("intensity_flop_per_byte"), "FLOP/byte");
  EXPECT_EQ(gpulab::unit_label("time_ms"), "ms");
  EXPECT_EQ(gpulab::metric_stem("time_ms"), "time");
  EXPECT_EQ(gpulab::unit_label("occupancy_percent"), "%");
  EXPECT_EQ(gpulab::unit_label("bytes"), "bytes");
  EXPECT_EQ(gpulab::metric_stem("bytes"), "");
  EXPECT_EQ(gpulab::unit_label("time"), "");
  EXPECT_EQ(gpulab::metric_stem("time"), "time");
}

TEST(ResultsProvenance, NamesEachKind) {
  EXPECT_EQ(gpulab::to_string(Provenance::measured), "measured");
  EXPECT_EQ(gpulab::to_string(Provenance::modeled), "modeled");
  EXPECT_EQ(gpulab::to_string(Provenance::unavailable), "unavailable");
  EXPECT_EQ(gpulab::to_string(Provenance::counted), "counted");
  EXPECT_EQ(gpulab::to_string(Provenance::modeled_clock), "modeled_clock");
}

// ---------------------------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------------------------

TEST(ResultsContext, MakeContextFillsVersionBackendAndUtcDate) {
  const auto before = std::chrono::system_clock::now();
  const ResultsContext context = gpulab::make_context("sim", "sim (4 CPU threads)", "H100 SXM");
  const auto after = std::chrono::system_clock::now();

  EXPECT_EQ(context.schema_version, gpulab::kResultsSchemaVersion);
  EXPECT_EQ(context.gpulab_version, gpulab::version());
  EXPECT_FALSE(context.gpulab_version.empty());
  EXPECT_EQ(context.git_revision, gpulab::git_revision());
  EXPECT_EQ(context.backend, "sim");
  EXPECT_EQ(context.device, "sim (4 CPU threads)");
  EXPECT_EQ(context.spec, "H100 SXM");
  EXPECT_EQ(context.clock, gpulab::TimingClock::host);  // sim times are CPU time unless modeled
  EXPECT_EQ(gpulab::make_context("cuda", "", "").clock, gpulab::TimingClock::gpu);

  ASSERT_TRUE(std::regex_match(context.date, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")))
      << context.date;
  std::tm utc{};
  std::istringstream(context.date) >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
  const auto stamp = std::chrono::system_clock::from_time_t(timegm(&utc));
  EXPECT_GE(stamp, std::chrono::floor<std::chrono::seconds>(before));
  EXPECT_LE(stamp, after);
}

}  // namespace
