// Counted memory figures (gpulab/core/counters.hpp): sums, derived ratios, metric names, and the
// GPULAB_SIM_COUNTERS line format with its reader.
#include "gpulab/core/counters.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.hpp"

namespace {

using gpulab::CountedLaunch;
using gpulab::MemoryCounters;

MemoryCounters sample() {
  MemoryCounters c;
  c.global_load = {10, 40, 1280, 320};
  c.global_store = {5, 20, 640, 160, 3};
  c.global_atomic = {1, 1, 4, 32};
  c.shared_load = {8, 64, 56, 256};
  c.shared_store = {8, 8, 0, 256};
  c.shared_atomic = {1, 32, 31, 32};
  c.l2_sector_reads = 41;
  c.l2_sector_writes = 21;
  c.l2_sector_hits = 31;
  c.dram_bytes_read = 320;
  c.dram_bytes_written = 640;
  c.local_accesses = 3;
  c.other_accesses = 4;
  c.l2_atomic_busiest_sector = 5;
  return c;
}

TEST(Counters, DerivedRatios) {
  const MemoryCounters c = sample();
  EXPECT_DOUBLE_EQ(c.sectors_per_load_request(), 4.0);
  EXPECT_DOUBLE_EQ(c.sectors_per_store_request(), 4.0);
  EXPECT_DOUBLE_EQ(c.l2_hit_rate_pct(), 50.0);  // 31 of 62 lookups
  // (320 + 160 + 32 + 256 + 256 + 32) lanes over 33 requests = 32.
  EXPECT_DOUBLE_EQ(c.lanes_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(c.global_load_efficiency_pct(), 100.0);  // 1280 of 40 x 32 bytes
  const MemoryCounters empty;
  EXPECT_EQ(empty.sectors_per_load_request(), 0.0);
  EXPECT_EQ(empty.l2_hit_rate_pct(), 0.0);
  EXPECT_EQ(empty.lanes_per_request(), 0.0);
}

TEST(Counters, SumsEveryField) {
  MemoryCounters total = sample();
  total += sample();
  EXPECT_EQ(total.global_load.sectors, 80u);
  EXPECT_EQ(total.global_store.partial_sectors, 6u);
  EXPECT_EQ(total.shared_atomic.wavefronts, 64u);
  EXPECT_EQ(total.dram_bytes_written, 1280u);
  EXPECT_EQ(total.other_accesses, 8u);
  EXPECT_EQ(total.l2_atomic_busiest_sector, 10u);  // serial chains of two launches add up
}

TEST(Counters, MetricNamesAreUniqueAndNcuNamesExcludeOurOwn) {
  const auto metrics = gpulab::counter_metrics(sample());
  std::set<std::string_view> names;
  for (const auto& m : metrics) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_FALSE(m.description.empty()) << m.name;
  }
  EXPECT_TRUE(gpulab::is_counter_metric("dram__bytes_read.sum"));
  EXPECT_TRUE(gpulab::is_counter_metric("gpulab__global_st_partial_sectors.sum"));
  EXPECT_FALSE(gpulab::is_counter_metric("dram__bytes_read"));
  for (const std::string_view name : gpulab::ncu_metric_names()) {
    EXPECT_FALSE(name.starts_with("gpulab__")) << name;
  }
  EXPECT_LT(gpulab::ncu_metric_names().size(), metrics.size());
}

TEST(Counters, ResultsNamesKeepTheMetricNameAsStemAndAddAUnit) {
  const MemoryCounters c = sample();
  const std::vector<gpulab::Metric> metrics =
      gpulab::counter_results_metrics(c, gpulab::Provenance::counted);
  ASSERT_EQ(metrics.size(), gpulab::counter_metrics(c).size());
  for (const gpulab::Metric& m : metrics) {
    EXPECT_TRUE(gpulab::has_unit_suffix(m.name)) << m.name;
    EXPECT_TRUE(gpulab::is_counter_metric(gpulab::metric_stem(m.name))) << m.name;
    EXPECT_EQ(m.provenance, gpulab::Provenance::counted) << m.name;
  }
  const auto named = [&](std::string_view name) {
    return std::find_if(metrics.begin(), metrics.end(),
                        [&](const gpulab::Metric& m) { return m.name == name; });
  };
  ASSERT_NE(named("dram__bytes_read.sum_bytes"), metrics.end());
  EXPECT_EQ(*named("dram__bytes_read.sum_bytes")->value, static_cast<double>(c.dram_bytes_read));
  EXPECT_NE(named("lts__t_sector_hit_rate.pct_percent"), metrics.end());
  EXPECT_NE(named("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio_ratio"),
            metrics.end());
  EXPECT_NE(named("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum_count"), metrics.end());
}

TEST(NcuCsv, LaunchesAndTheirCountersFromNcuOutput) {
  // What `ncu --metrics ... --csv` prints: its own ==PROF== lines and the program's output, then a
  // table with one row per launch and metric. Values as ncu writes them: thousands separators,
  // a decimal prefix on bytes (without --print-units base), derived figures (ratio, hit rate).
  const std::string header =
      R"("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",)"
      R"("Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",)"
      R"("Metric Value")";
  const auto row = [](const char* id, const char* kernel, const char* block, const char* grid,
                      const char* metric, const char* unit, const char* value) {
    return std::string("\"") + id + R"(","4242","prog","127.0.0.1",")" + kernel + R"(","1","7",")" +
           block + "\",\"" + grid +
           R"(","0","9.0","Command line profiler )"
           R"(metrics",")" +
           metric + "\",\"" + unit + "\",\"" + value + "\"\n";
  };
  const auto copy_row = [&](const char* metric, const char* unit, const char* value) {
    return row("0", "copy_float4(const float4 *, float4 *)", "(32, 1, 1)", "(1, 1, 1)", metric,
               unit, value);
  };
  const auto softmax_row = [&](const char* metric, const char* unit, const char* value) {
    return row("1", "softmax_rows_kernel", "(256, 1, 1)", "(128, 4, 1)", metric, unit, value);
  };
  const std::string csv =
      "==PROF== Connected to process 4242 (/tmp/prog)\n"
      "the program's own line, with \"quotes\", and commas\n"
      "==PROF== Profiling \"copy_float4\": 0%....50%....100% - 9 passes\n" +
      header + "\n" + copy_row("dram__bytes_read.sum", "byte", "512") +
      copy_row("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", "1") +
      copy_row("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "16") +
      copy_row("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", "sector",
               "16") +
      copy_row("lts__t_sectors_srcunit_tex_op_read.sum", "sector", "16") +
      copy_row("lts__t_sectors_srcunit_tex_op_write.sum", "sector", "16") +
      copy_row("lts__t_sector_hit_rate.pct", "%", "25") +
      softmax_row("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "1,024") +
      softmax_row("dram__bytes_write.sum", "Kbyte", "1.5");
  const std::vector<CountedLaunch> launches = gpulab::parse_ncu_csv(csv);
  ASSERT_EQ(launches.size(), 2u);
  const CountedLaunch& copy = launches[0];
  EXPECT_EQ(copy.kernel, "copy_float4(const float4 *, float4 *)");
  EXPECT_EQ(copy.block, (std::array<std::uint32_t, 3>{32, 1, 1}));
  EXPECT_EQ(copy.grid, (std::array<std::uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(copy.counters.dram_bytes_read, 512u);
  EXPECT_EQ(copy.counters.global_load.requests, 1u);
  EXPECT_EQ(copy.counters.global_load.sectors, 16u);
  EXPECT_EQ(copy.counters.l2_sector_reads, 16u);
  EXPECT_EQ(copy.counters.l2_sector_hits, 8u);  // 25% of 32 lookups
  const CountedLaunch& softmax = launches[1];
  EXPECT_EQ(softmax.grid, (std::array<std::uint32_t, 3>{128, 4, 1}));
  EXPECT_EQ(softmax.counters.shared_load.bank_conflicts, 1024u);
  EXPECT_EQ(softmax.counters.dram_bytes_written, 1500u);
}

// The message parse_ncu_csv throws for `text`; empty when it does not throw.
std::string ncu_error(const std::string& text) {
  try {
    (void)gpulab::parse_ncu_csv(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(NcuCsv, OutputThatIsNotNcusTableIsAnErrorSayingWhy) {
  EXPECT_EQ(ncu_error("==PROF== nothing profiled\n"),
            "ncu CSV: no table (a header line starting with \"ID\")");
  EXPECT_EQ(ncu_error("\"ID\",\"Kernel Name\"\n\"0\",\"k\"\n"),
            "ncu CSV: no \"Block Size\" column");
  const std::string header =
      R"("ID","Kernel Name","Block Size","Grid Size","Metric Name","Metric Unit","Metric Value")";
  EXPECT_EQ(ncu_error(header + "\n\"0\",\"k\",\"(1, 1, 1)\"\n"),
            "ncu CSV line 2: 3 fields, the header has 7");
  EXPECT_EQ(ncu_error(header + "\n\"0\",\"k\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"dram__bytes_read.sum\","
                               "\"byte\",\"n/a\"\n"),
            "ncu CSV: 'n/a' is not a number");
}

TEST(Counters, MeasuredResultsMetricsLeaveOutGpulabsOwnFigures) {
  const std::vector<gpulab::Metric> metrics =
      gpulab::counter_results_metrics(sample(), gpulab::Provenance::measured);
  EXPECT_EQ(metrics.size(), gpulab::ncu_metric_names().size());
  for (const gpulab::Metric& m : metrics) {
    EXPECT_FALSE(m.name.starts_with("gpulab__")) << m.name;
    EXPECT_EQ(m.provenance, gpulab::Provenance::measured);
  }
}

TEST(Counters, LineRoundTrips) {
  CountedLaunch launch;
  launch.launch_id = 7;
  launch.kernel = "transpose<\"x\">";
  launch.where = "k.cu:12";
  launch.spec = "h100-sxm";
  launch.grid = {4, 2, 1};
  launch.block = {32, 8, 1};
  launch.dynamic_shared_bytes = 1024;
  launch.counters = sample();
  const std::string line = gpulab::counted_launch_to_json_line(launch);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(gpulab::counted_launch_from_json_line(line), launch);
  // With the kernel's own resources and a clock64() wait.
  launch.registers_per_thread = 40;
  launch.static_shared_bytes = 4096;
  launch.longest_wait_cycles = 123456;
  EXPECT_EQ(gpulab::counted_launch_from_json_line(gpulab::counted_launch_to_json_line(launch)),
            launch);
}

TEST(Counters, FiguresPerSourceLineRoundTripAndOnlyTheirNonZeroFieldsAreWritten) {
  CountedLaunch launch;
  launch.counters = sample();
  gpulab::SourceLineCounters strided{"/src/k.cu", 37, {}};
  strided.counters.global_load = {.requests = 2, .sectors = 64, .bytes_requested = 256};
  strided.counters.l2_sector_reads = 64;
  strided.counters.dram_bytes_read = 2048;
  gpulab::SourceLineCounters tile{"/src/k.cu", 40, {}};
  tile.counters.shared_store = {.requests = 1, .wavefronts = 32, .bank_conflicts = 31, .lanes = 32};
  launch.lines = {strided, tile};
  const std::string line = gpulab::counted_launch_to_json_line(launch);
  EXPECT_NE(line.find(R"({"counters":{"dram_bytes_read":2048,"global_load_bytes_requested":256,)"
                      R"("global_load_requests":2,"global_load_sectors":64,"l2_sector_reads":64},)"
                      R"("file":"/src/k.cu","line":37})"),
            std::string::npos)
      << line;
  EXPECT_EQ(gpulab::counted_launch_from_json_line(line), launch);
  // A line without "lines" (not counted by line) reads as none; a bad figure is refused.
  launch.lines.clear();
  EXPECT_EQ(gpulab::counted_launch_from_json_line(gpulab::counted_launch_to_json_line(launch)),
            launch);
  nlohmann::json j = nlohmann::json::parse(line);
  j["lines"][0]["counters"]["global_load_sectors"] = -1;
  try {
    static_cast<void>(gpulab::counted_launch_from_json_line(j.dump()));
    FAIL() << "a negative count was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("global_load_sectors"), std::string::npos) << e.what();
  }
}

TEST(Counters, SourceLinesAddUpByFileAndLineInOrder) {
  const auto line = [](std::string file, unsigned number, std::uint64_t requests) {
    gpulab::SourceLineCounters l{std::move(file), number, {}};
    l.counters.global_load.requests = requests;
    return l;
  };
  std::vector<gpulab::SourceLineCounters> into;
  gpulab::add_source_lines(into, {line("b.cu", 3, 1), line("a.cu", 9, 2)});
  gpulab::add_source_lines(into, {line("a.cu", 9, 5), line("a.cu", 10, 1), line("a.cu", 2, 4)});
  ASSERT_EQ(into.size(), 4u);
  EXPECT_EQ(into[0], line("a.cu", 2, 4));
  EXPECT_EQ(into[1], line("a.cu", 9, 7));
  EXPECT_EQ(into[2], line("a.cu", 10, 1));
  EXPECT_EQ(into[3], line("b.cu", 3, 1));
}

TEST(Counters, ExcessSectorsAreThoseBeyondTheBytesAskedFor) {
  MemoryCounters c;
  // 32 lanes reading 4 bytes each 128 bytes apart: 32 sectors where 4 would do.
  c.global_load = {.requests = 1, .sectors = 32, .bytes_requested = 128, .lanes = 32};
  EXPECT_EQ(gpulab::excess_sectors(c), 28u);
  // A broadcast (every lane the same word) moves fewer sectors than the lanes' bytes: no excess.
  c.global_load = {.requests = 1, .sectors = 1, .bytes_requested = 128, .lanes = 32};
  EXPECT_EQ(gpulab::excess_sectors(c), 0u);
  // Stores and atomics count too; 33 bytes need 2 sectors.
  c.global_store = {.requests = 1, .sectors = 5, .bytes_requested = 33, .lanes = 1};
  c.global_atomic = {.requests = 1, .sectors = 2, .bytes_requested = 8, .lanes = 2};
  EXPECT_EQ(gpulab::excess_sectors(c), 4u);
}

TEST(Counters, LinesWrittenBeforeTheBusiestSectorReadItAsZero) {
  CountedLaunch launch;
  launch.counters = sample();
  std::string line = gpulab::counted_launch_to_json_line(launch);
  const std::string field = ",\"l2_atomic_busiest_sector\":5";
  ASSERT_NE(line.find(field), std::string::npos) << line;
  line.erase(line.find(field), field.size());
  EXPECT_EQ(gpulab::counted_launch_from_json_line(line).counters.l2_atomic_busiest_sector, 0u);
  // Every other field is still required.
  const std::string other = ",\"other_accesses\":4";
  ASSERT_NE(line.find(other), std::string::npos) << line;
  line.erase(line.find(other), other.size());
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line(line)), std::runtime_error);
}

TEST(Counters, LinesWithoutResourcesOrWaitsReadThemAsUnknown) {
  CountedLaunch launch;
  launch.registers_per_thread = 40;
  launch.static_shared_bytes = 4096;
  launch.longest_wait_cycles = 7;
  nlohmann::json j = nlohmann::json::parse(gpulab::counted_launch_to_json_line(launch));
  j.erase("registers_per_thread");
  j.erase("static_shared_bytes");
  j.erase("longest_wait_cycles");
  const CountedLaunch read = gpulab::counted_launch_from_json_line(j.dump());
  EXPECT_EQ(read.registers_per_thread, 0);
  EXPECT_EQ(read.static_shared_bytes, 0u);
  EXPECT_EQ(read.longest_wait_cycles, 0u);
  j["registers_per_thread"] = 300;
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line(j.dump())),
               std::runtime_error);
  j["registers_per_thread"] = "many";
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line(j.dump())),
               std::runtime_error);
}

TEST(Counters, BadLinesAreRejectedWithTheReason) {
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line("{")), std::runtime_error);
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line("[1]")), std::runtime_error);
  CountedLaunch launch;
  std::string line = gpulab::counted_launch_to_json_line(launch);
  std::string bad = line;
  bad.replace(bad.find("\"grid\":[1,1,1]"), 14, "\"grid\":[1,0,1]");
  try {
    static_cast<void>(gpulab::counted_launch_from_json_line(bad));
    FAIL() << "a zero grid dimension was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("grid"), std::string::npos) << e.what();
  }
  bad = line;
  bad.replace(bad.find("\"schema_version\":1"), 18, "\"schema_version\":9");
  EXPECT_THROW(static_cast<void>(gpulab::counted_launch_from_json_line(bad)), std::runtime_error);
}

TEST(Counters, FileReaderNamesTheBadLine) {
  const gpulab::testing::TempDir dir("counters");
  const auto path = dir.path() / "c.jsonl";
  {
    std::ofstream out(path);
    out << gpulab::counted_launch_to_json_line(CountedLaunch{}) << "\n\nnot json\n";
  }
  try {
    static_cast<void>(gpulab::read_counted_launches(path));
    FAIL() << "a bad line was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("c.jsonl:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(static_cast<void>(gpulab::read_counted_launches(dir.path() / "missing")),
               std::runtime_error);
}

}  // namespace
