// `gpulab bench`, run as a user would: it lists the kernel catalog, verifies and times every level
// of an op on sim (the modeled clock where the build can count), saves results that load back, and
// refuses bad arguments with one line and exit code 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpulab/core/results.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/sim/runtime.hpp"
#include "run_command.hpp"

namespace {

using gpulab::testing::Outcome;

Outcome gpulab(const std::string& args) {
  return gpulab::testing::run_command(gpulab::testing::shell_quote(GPULAB_EXE) + " " + args);
}

TEST(CliBench, WithoutAnOpListsEveryOpAndLevelOfTheCatalog) {
  const Outcome run = gpulab("bench");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const gpulab::kernels::Op& op : gpulab::kernels::catalog()) {
    EXPECT_NE(run.out.find("\n" + std::string(op.name) + ": "), std::string::npos) << op.name;
    for (const gpulab::kernels::OpLevel& level : op.levels) {
      EXPECT_NE(run.out.find("level " + std::to_string(level.number) + "  " +
                             std::string(level.name) + ": "),
                std::string::npos)
          << op.name << " level " << level.number << "\n"
          << run.out;
    }
  }
}

TEST(CliBench, VerifiesAndTimesEveryLevelAndSavesThem) {
  const std::filesystem::path json = std::filesystem::temp_directory_path() /
                                     ("gpulab_cli_bench_" + std::to_string(::getpid()) + ".json");
  const Outcome run = gpulab("bench transpose --size 64 --backend sim --quick --json " +
                             gpulab::testing::shell_quote(json.string()));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // The modeled clock where this build can count memory traffic; else CPU time, labelled so.
  const bool counting = gpulab::sim::counting_available();
  EXPECT_NE(run.out.find(counting ? "times: modeled clock (H100 SXM)"
                                  : "CPU time of the simulation, NOT GPU time"),
            std::string::npos)
      << run.out;
  const gpulab::kernels::Op& op = *gpulab::kernels::find_op("transpose");
  const gpulab::ResultsFile file = gpulab::load_results(json.string());
  std::filesystem::remove(json);
  EXPECT_EQ(file.context.clock,
            counting ? gpulab::TimingClock::modeled : gpulab::TimingClock::host);
  ASSERT_EQ(file.results.size(), op.levels.size());
  for (std::size_t i = 0; i < op.levels.size(); ++i) {
    const gpulab::Result& result = file.results[i];
    EXPECT_EQ(result.name, gpulab::result_kind::kernel_bench);
    EXPECT_EQ(result.params.at("op"), "transpose");
    EXPECT_EQ(result.params.at("level"), std::to_string(op.levels[i].number));
    EXPECT_EQ(result.params.at("size"), "64");
    ASSERT_FALSE(result.metrics.empty());
    EXPECT_EQ(result.metrics.front().name, "time_ms");
    EXPECT_GT(result.metrics.front().value.value_or(0), 0);
    EXPECT_FALSE(result.samples_ms.empty());
    EXPECT_NE(run.out.find("  " + std::string(op.levels[i].name) + " "), std::string::npos)
        << run.out;
  }
}

TEST(CliBench, BadArgumentsGiveOneLineAndExitCode2) {
  for (const char* args : {"bench softmax", "bench transpose --level 9",
                           "bench transpose --block 64", "bench gemm --size 0",
                           "bench vector_add --spec no-such-gpu", "bench vector_add --block 0"}) {
    SCOPED_TRACE(args);
    const Outcome run = gpulab(args);
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_NE(run.err.find("error"), std::string::npos) << run.err;
  }
}

TEST(CliBench, HasHelp) {
  const Outcome run = gpulab("bench --help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("--level"), std::string::npos) << run.out;
}

}  // namespace
