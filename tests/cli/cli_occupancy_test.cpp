// `gpulab occupancy`, run as a user would: the report and its block-size table, one-line errors
// with exit code 2 for bad input, --help, and kernels looked up in the build's kernel table.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run_command.hpp"

namespace {

using gpulab::testing::Outcome;

Outcome gpulab_occupancy(const std::string& args) {
  return gpulab::testing::run_command(gpulab::testing::shell_quote(GPULAB_EXE) + " occupancy " +
                                      args);
}

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (const char c : text) {
    lines += c == '\n' ? 1 : 0;
  }
  return lines;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The block-size table's row for `block` threads ("" when there is none).
std::string table_row(const std::string& out, int block) {
  const std::string table = out.substr(out.find("Occupancy by block size"));
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    if (words >> first && first == std::to_string(block)) {
      return line;
    }
  }
  return "";
}

TEST(CliOccupancy, H100With64RegistersIsHalfFullLimitedByRegisters) {
  const Outcome run = gpulab_occupancy("--spec h100-sxm --regs 64 --smem 0 --block 256");
  if (contains(run.err, "no cuda_occupancy.h")) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: " << run.err;
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  EXPECT_TRUE(contains(run.out, "GPU: H100 SXM (h100-sxm), compute capability 9.0")) << run.out;
  EXPECT_TRUE(contains(run.out, "64 registers per thread, 0 B static shared memory")) << run.out;
  EXPECT_TRUE(contains(run.out, "Launch: 256 threads (8 warps) per block")) << run.out;
  // Hand-worked: 2048 registers per warp x 8 warps = 16384 per block; 65536 / 16384 = 4 blocks.
  EXPECT_TRUE(contains(run.out, "16384 registers (2048 per warp)")) << run.out;
  EXPECT_TRUE(contains(run.out,
                       "Result: 4 blocks/SM x 8 warps = 32 of 64 warps per SM = 50.0% "
                       "occupancy, limited by registers"))
      << run.out;
  // The table: 32..1024 in steps of 32, every row limited by registers here.
  for (int block = 32; block <= 1024; block += 32) {
    const std::string row = table_row(run.out, block);
    EXPECT_FALSE(row.empty()) << "no row for " << block << " in\n" << run.out;
    EXPECT_TRUE(contains(row, "registers")) << row;
  }
  EXPECT_TRUE(table_row(run.out, 1056).empty());
  const std::string row256 = table_row(run.out, 256);
  EXPECT_TRUE(contains(row256, " 4 ") && contains(row256, " 32 ") && contains(row256, "50.0"))
      << row256;
  EXPECT_TRUE(contains(row256, "<- shown above")) << row256;
  // 544 threads = 17 warps: registers allow 32 / 17 = 1 block, 17 of 64 warps = 26.6%.
  EXPECT_TRUE(contains(table_row(run.out, 544), "26.6")) << table_row(run.out, 544);
}

TEST(CliOccupancy, WithoutBlockItPicksTheLargestBlockWithTheHighestOccupancy) {
  // 16 registers, 1 KiB static on the L4 (48 warps, 24 blocks per SM): blocks of 32 threads stop
  // at 24 blocks (24 of 48 warps); 64 threads reach 24 x 2 = 48 warps, 100%, and so does every
  // block of w warps with 48 / w whole and at most 24 blocks, up to 768 threads (24 warps x 2
  // blocks). 1024 threads = 32 warps fit once: 32 of 48. The largest at 100% is 768, as
  // cudaOccupancyMaxPotentialBlockSize would pick.
  const Outcome run = gpulab_occupancy("--spec l4 --regs 16 --smem 1024");
  if (contains(run.err, "no cuda_occupancy.h")) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: " << run.err;
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "Launch: 768 threads (24 warps) per block")) << run.out;
  EXPECT_TRUE(contains(run.out, "48 of 48 warps per SM = 100.0% occupancy")) << run.out;
  EXPECT_TRUE(contains(table_row(run.out, 768), "<- shown above")) << run.out;
}

TEST(CliOccupancy, DynamicSharedMemoryCountsAgainstTheSM) {
  // T4: 32 KiB dynamic per block in a 64 KiB carveout: 2 blocks of 256 threads, 16 of 32 warps.
  const Outcome run =
      gpulab_occupancy("--spec t4 --regs 32 --smem 0 --block 256 --dynamic-smem 32768");
  if (contains(run.err, "no cuda_occupancy.h")) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: " << run.err;
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "50.0% occupancy, limited by shared memory")) << run.out;
}

TEST(CliOccupancy, HelpDescribesTheOptions) {
  const Outcome run = gpulab_occupancy("--help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* part :
       {"Usage", "--spec", "--kernel", "--regs", "--smem", "--block", "--dynamic-smem"}) {
    EXPECT_TRUE(contains(run.out, part)) << part << " missing from\n" << run.out;
  }
  // The top-level help lists the command.
  const Outcome top =
      gpulab::testing::run_command(gpulab::testing::shell_quote(GPULAB_EXE) + " --help");
  EXPECT_TRUE(contains(top.out, "occupancy")) << top.out;
}

TEST(CliOccupancy, BadArgumentsGiveOneLineAndExitCode2) {
  struct BadCase {
    const char* args;
    const char* says;  // part of the one line
  };
  const std::vector<BadCase> cases = {
      {"", "--spec"},
      {"--spec h100-sxm", "--kernel NAME, or --regs N and --smem BYTES"},
      {"--spec h100-sxm --regs 64", "--regs and --smem go together"},
      {"--spec h100-sxm --smem 0", "--regs and --smem go together"},
      {"--spec h100-sxm --kernel k --regs 64 --smem 0", "excludes"},
      {"--spec no-such-gpu --regs 64 --smem 0", "unknown GPU 'no-such-gpu'; known: "},
      {"--spec h100-sxm --regs 64 --smem 0 --block 0", "block size must be at least 1"},
      {"--spec h100-sxm --regs 64 --smem 0 --block 2048", "limit of 1024 threads per block"},
      {"--spec h100-sxm --regs 300 --smem 0", "registers per thread must be 0..255 (got 300)"},
      {"--spec h100-sxm --regs -1 --smem 0", "registers"},
      {"--spec h100-sxm --regs abc --smem 0", "--regs"},
      {"--spec h100-sxm --regs 64 --smem lots", "--smem"},
      {"--spec h100-sxm --regs 64 --smem -5", "--smem"},
      {"--spec h100-sxm --regs 64 --smem 0 --dynamic-smem -1", "--dynamic-smem"},
      {"--spec h100-sxm --regs 64 --smem 300000", "opt-in limit of 232448 B"},
      {"--spec t4 --regs 64 --smem 0 --dynamic-smem 65537", "opt-in limit of 65536 B"},
      {"--spec h100-sxm --regs 65 --smem 0 --block 1024", "needs 73728 registers"},
      {"--spec h100-sxm --regs 64 --smem 0 --no-such-flag", "no-such-flag"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.args);
    const Outcome run = gpulab_occupancy(c.args);
    if (contains(run.err, "no cuda_occupancy.h")) {
      GTEST_SKIP() << "this build has no cuda_occupancy.h: " << run.err;
    }
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(count_lines(run.err), 1u) << run.err;
    EXPECT_EQ(run.err.rfind("gpulab: error: ", 0), 0u) << run.err;
    EXPECT_TRUE(contains(run.err, c.says)) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

TEST(CliOccupancy, KernelsComeFromTheBuildsKernelTable) {
  const Outcome unknown = gpulab_occupancy("--spec h100-sxm --kernel no_such_kernel");
  EXPECT_EQ(count_lines(unknown.err), 1u) << unknown.err;
  EXPECT_EQ(unknown.err.rfind("gpulab: error: ", 0), 0u) << unknown.err;
  if (unknown.exit_code == 1) {
    // An empty table is a failure of this build, not bad input; the line says why.
    EXPECT_TRUE(contains(unknown.err, "no kernel table")) << unknown.err;
    GTEST_SKIP() << "this build's kernel table is empty: " << unknown.err;
  }
  ASSERT_EQ(unknown.exit_code, 2) << unknown.err;
  const std::string marker = "unknown kernel 'no_such_kernel'; known: ";
  const std::size_t at = unknown.err.find(marker);
  ASSERT_NE(at, std::string::npos) << unknown.err;
  // The first known name, e.g. "batched_gemm_kernel".
  std::string name = unknown.err.substr(at + marker.size());
  name = name.substr(0, name.find_first_of(", \n"));
  ASSERT_FALSE(name.empty()) << unknown.err;

  const Outcome known = gpulab_occupancy("--spec h100-sxm --kernel " + name + " --block 128");
  if (contains(known.err, "no cuda_occupancy.h")) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: " << known.err;
  }
  if (known.exit_code == 2 && contains(known.err, "was built only for")) {
    GTEST_SKIP() << known.err;
  }
  ASSERT_EQ(known.exit_code, 0) << known.err;
  EXPECT_TRUE(contains(known.out, "Kernel:\n  " + name + ", sm_")) << known.out;
  EXPECT_TRUE(contains(known.out, "from the build's ptxas report")) << known.out;
  EXPECT_TRUE(contains(known.out, "Launch: 128 threads (4 warps) per block")) << known.out;
  EXPECT_TRUE(contains(known.out, "Occupancy by block size")) << known.out;
}

}  // namespace
