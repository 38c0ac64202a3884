// `gpulab profile`, run as a user would, on a small sim program (the counting test binary with a
// filter): the per-kernel table, --metrics, --kernel, and one-line errors for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpulab/core/results.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace {

using gpulab::testing::Outcome;
using gpulab::testing::shell_quote;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Profiles the counting test's float4 copy (one launch of 32 threads).
Outcome profile(const std::string& args) {
  return gpulab::testing::run_command(
      shell_quote(GPULAB_EXE) + " profile " + shell_quote(GPULAB_SIM_PROGRAM) + " " + args +
      " -- --gtest_filter=CountingGlobal.Float4ContiguousIsSixteenSectors");
}

#define GPULAB_REQUIRE_COUNTING_BUILD()                                        \
  do {                                                                         \
    if (!GPULAB_TEST_COUNTING) {                                               \
      GTEST_SKIP() << "this build cannot count (AddressSanitizer or not GCC)"; \
    }                                                                          \
  } while (false)

TEST(CliProfile, HelpNamesTheOptions) {
  const Outcome run = gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " profile --help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* option : {"--kernel", "--metrics", "--spec", "--cache-control", "--launches"}) {
    EXPECT_TRUE(contains(run.out, option)) << option;
  }
}

TEST(CliProfile, ListMetricsGivesNsightComputesNamesThenTheSimsOwn) {
  const Outcome run =
      gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " profile --list-metrics");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::size_t measured = run.out.find("\nl1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\n");
  const std::size_t own = run.out.find("\ngpulab__inst_executed_ffma.sum\n");
  ASSERT_NE(measured, std::string::npos) << run.out;
  ASSERT_NE(own, std::string::npos) << run.out;
  EXPECT_LT(measured, own) << run.out;
}

TEST(CliProfile, WithoutATargetItSaysWhatItNeeds) {
  const Outcome run = gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " profile");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(contains(run.err, "profile needs a lab or a program")) << run.err;
}

TEST(CliProfile, TableOfTheProgramsKernels) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const Outcome run = profile("");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "copy_float4")) << run.out;
  EXPECT_TRUE(contains(run.out, "modeled (H100 SXM)")) << run.out;
  // 16 sectors per request each way: the row shows 16.00 twice.
  EXPECT_TRUE(contains(run.out, "16.00")) << run.out;
}

TEST(CliProfile, SourceGivesEachLineOfTheKernelItsFiguresAndCode) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const Outcome run = profile("--source");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "Source of copy_float4 (1 launch), counted per line:")) << run.out;
  // The kernel's one line: a load and a store request of 16 sectors each, no excess, the whole of
  // the kernel's L1 traffic; its code read from counting_test.cu.
  const std::size_t row = run.out.find("\ncounting_test.cu:");
  ASSERT_NE(row, std::string::npos) << run.out;
  const std::string line = run.out.substr(row + 1, run.out.find('\n', row + 1) - row - 1);
  EXPECT_TRUE(contains(line, "out[threadIdx.x] = in[threadIdx.x];")) << line;
  const std::size_t load = line.find("16.00");
  ASSERT_NE(load, std::string::npos) << line;
  EXPECT_NE(line.find("16.00", load + 1), std::string::npos) << line;  // and the store's
  EXPECT_TRUE(contains(line, "100.0")) << line;
  EXPECT_TRUE(contains(run.out, "Hottest lines by their share of the kernel's L1 traffic"))
      << run.out;
}

TEST(CliProfile, SourceWithJsonSavesTheLinesAndTheProblemsForTheViewer) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const gpulab::testing::TempDir dir("gpulab-cli-profile-source");
  const std::string file = (dir.path() / "source.json").string();
  const Outcome run = profile("--source --json " + shell_quote(file));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const gpulab::ResultsFile results = gpulab::load_results(file);
  std::size_t lines = 0;
  for (const gpulab::Result& r : results.results) {
    if (r.name == gpulab::result_kind::counted_line) {
      ++lines;
      EXPECT_EQ(r.params.at("kernel"), "copy_float4");
      EXPECT_TRUE(r.params.at("file").ends_with("counting_test.cu")) << r.params.at("file");
      EXPECT_EQ(r.params.at("code"), "out[threadIdx.x] = in[threadIdx.x];");
    }
  }
  EXPECT_EQ(lines, 1u);
}

TEST(CliProfile, SourceIsForTheSimBackend) {
  const Outcome run =
      gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " profile " +
                                   shell_quote(GPULAB_SIM_PROGRAM) + " --source --backend cuda");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.err, "--source counts by line on the sim backend only")) << run.err;
}

TEST(CliSanitize, AProgramThatRunsCleanSaysWhatWasChecked) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const Outcome run = gpulab::testing::run_command(
      shell_quote(GPULAB_EXE) + " sanitize " + shell_quote(GPULAB_SIM_PROGRAM) +
      " -- --gtest_filter=CountingGlobal.Float4ContiguousIsSixteenSectors");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out,
                       "gpulab sanitize: 1 launch of 1 kernel (copy_float4) checked: no "
                       "race on shared memory"))
      << run.out;
  const Outcome missing =
      gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " sanitize ./no/such/program");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "no program at './no/such/program'")) << missing.err;
}

TEST(CliProfile, MetricsByNcuName) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const Outcome run =
      profile("--metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum --spec a100");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")) << run.out;
  EXPECT_TRUE(contains(run.out, "A100")) << run.out;
}

TEST(CliProfile, JsonSavesTheCountsAsCountedMetricsThatLoadBack) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const gpulab::testing::TempDir dir;
  const std::string file = (dir.path() / "profile.json").string();
  const Outcome run = profile("--json " + shell_quote(file));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const gpulab::ResultsFile saved = gpulab::load_results(file);
  EXPECT_EQ(saved.context.backend, "sim");
  EXPECT_EQ(saved.context.spec, "H100 SXM");
  ASSERT_EQ(saved.results.size(), 1u);
  const gpulab::Result& kernel = saved.results[0];
  EXPECT_EQ(kernel.name, "counted_kernel");
  EXPECT_EQ(kernel.params.at("kernel"), "copy_float4");
  // One tiny launch: its time is the launch overhead, and the file says so.
  EXPECT_EQ(kernel.params.at("bound"), "launch");
  bool sectors = false;
  bool modeled = false;
  for (const gpulab::Metric& m : kernel.metrics) {
    if (m.name == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum_count") {
      sectors = true;
      EXPECT_EQ(m.provenance, gpulab::Provenance::counted);
      EXPECT_EQ(m.value, 16.0);  // one request of 32 float4s: 512 bytes
    }
    if (m.name == "time_ms" && m.provenance == gpulab::Provenance::modeled) {
      modeled = true;
      EXPECT_EQ(m.spec, "H100 SXM");
      EXPECT_GT(*m.value, 0.0);
    }
  }
  EXPECT_TRUE(sectors);
  EXPECT_TRUE(modeled);
}

// On a GPU, `gpulab profile --backend cuda` runs the program under Nsight Compute and reads its
// CSV. This machine may have neither: a stand-in `ncu` on PATH writes what ncu writes to its
// --log-file, so what gpulab does with it is checked everywhere.
TEST(CliProfile, OnAGpuNsightComputesFiguresFillTheSameTable) {
  const gpulab::testing::TempDir dir;
  const std::filesystem::path ncu = dir.path() / "ncu";
  {
    std::ofstream script(ncu);
    script << "#!/bin/sh\n"
              "while [ $# -gt 0 ]; do\n"
              "  if [ \"$1\" = --log-file ]; then log=\"$2\"; fi\n"
              "  shift\n"
              "done\n"
              "cat > \"$log\" <<'CSV'\n"
              "==PROF== Connected to process 1 (prog)\n"
              "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Metric Name\",\"Metric Unit\","
              "\"Metric Value\"\n"
              "\"0\",\"copy_rows\",\"(256, 1, 1)\",\"(4096, 1, 1)\","
              "\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"\",\"32768\"\n"
              "\"0\",\"copy_rows\",\"(256, 1, 1)\",\"(4096, 1, 1)\","
              "\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"sector\",\"131,072\"\n"
              "\"0\",\"copy_rows\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"dram__bytes_read.sum\","
              "\"byte\",\"4194304\"\n"
              "CSV\n";
  }
  std::filesystem::permissions(ncu, std::filesystem::perms::owner_all);
  const std::string json = (dir.path() / "gpu.json").string();
  const Outcome run = gpulab::testing::run_command(
      "PATH=" + shell_quote(dir.path().string()) + ":\"$PATH\" " + shell_quote(GPULAB_EXE) +
      " profile " + shell_quote(GPULAB_SIM_PROGRAM) + " --backend cuda --spec a100 --json " +
      shell_quote(json));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "under Nsight Compute")) << run.out;
  EXPECT_TRUE(contains(run.out, "Measured by Nsight Compute")) << run.out;
  EXPECT_TRUE(contains(run.out, "copy_rows")) << run.out;
  EXPECT_TRUE(contains(run.out, "4.00")) << run.out;  // 131072 sectors / 32768 requests
  const gpulab::ResultsFile saved = gpulab::load_results(json);
  EXPECT_EQ(saved.context.backend, "cuda");
  ASSERT_EQ(saved.results.size(), 1u);
  for (const gpulab::Metric& m : saved.results[0].metrics) {
    EXPECT_NE(m.provenance, gpulab::Provenance::counted) << m.name;  // measured, not counted
    EXPECT_FALSE(m.name.starts_with("gpulab__")) << m.name;          // not something ncu reports
  }
  // Without ncu, --backend cuda says what is missing.
  const Outcome without =
      gpulab::testing::run_command("PATH=/nonexistent " + shell_quote(GPULAB_EXE) + " profile " +
                                   shell_quote(GPULAB_SIM_PROGRAM) + " --backend cuda");
  EXPECT_NE(without.exit_code, 0);
  EXPECT_TRUE(contains(without.err, "no ncu on PATH")) << without.err;
}

TEST(CliProfile, AKernelRegexThatMatchesNothingIsAnError) {
  GPULAB_REQUIRE_COUNTING_BUILD();
  const Outcome run = profile("--kernel '^nothing_like_this$'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.err, "no counted launch matches --kernel")) << run.err;
  EXPECT_TRUE(contains(run.err, "copy_float4")) << run.err;  // what was launched
}

TEST(CliProfile, BadInputIsOneLineAndExitCode2) {
  for (const char* args : {"--metrics not_a_metric", "--kernel '('", "--spec no-such-gpu",
                           "--cache-control sometimes"}) {
    SCOPED_TRACE(args);
    const Outcome run = profile(args);
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.err.rfind("gpulab: error: ", 0), 0u) << run.err;
  }
  const Outcome missing =
      gpulab::testing::run_command(shell_quote(GPULAB_EXE) + " profile ./no/such/program");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST(CliProfile, ABuildThatCannotCountSaysSo) {
  if (GPULAB_TEST_COUNTING) {
    GTEST_SKIP() << "this build counts; the refusal is checked in AddressSanitizer builds";
  }
  const Outcome run = profile("");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(contains(run.err, "memory counting is not available")) << run.err;
}

}  // namespace
