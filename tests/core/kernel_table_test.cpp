// The kernel table (gpulab/core/kernel_table.hpp), as this build generated it from ptxas: every
// kernel of kernels/ is there for every architecture of GPULAB_KERNEL_TABLE_ARCHITECTURES, the
// static shared memory matches the kernels' declarations, and find_kernel picks the architecture
// a GPU would run. A build without nvcc has an empty table: those tests skip with the reason.
#include "gpulab/core/kernel_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {
namespace {

// The architectures this build's table has (GPULAB_KERNEL_TABLE_SMS at configure time).
std::vector<int> built_sms() {
  std::vector<int> sms;
  std::istringstream in(GPULAB_TEST_KERNEL_TABLE_SMS);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) {
      sms.push_back(std::stoi(item));
    }
  }
  return sms;
}

bool built(int sm) {
  const std::vector<int> sms = built_sms();
  return std::find(sms.begin(), sms.end(), sm) != sms.end();
}

#define GPULAB_REQUIRE_KERNEL_TABLE()                                             \
  do {                                                                            \
    if (kernel_table().empty()) {                                                 \
      GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status(); \
    }                                                                             \
  } while (false)

// Every __global__ function of kernels/*/*.cu, with its file and the static shared memory it
// declares (computed here by hand from the __shared__ declarations; extern __shared__ arrays are
// dynamic and count 0).
struct ExpectedKernel {
  std::string_view name;
  std::string_view source;
  std::uint64_t static_shared_bytes;
};

constexpr ExpectedKernel kExpected[] = {
    {"vector_add_kernel", "kernels/vector/vector_add.cu", 0},
    {"gemm_naive_kernel", "kernels/gemm/gemm.cu", 0},
    {"gemm_tiled_kernel", "kernels/gemm/gemm.cu", 0},  // extern __shared__ float tiles[]
    // A's tile 8 x (BM + 4) and B's 8 x BN floats.
    {"gemm_blocked_128x128_kernel", "kernels/gemm/gemm.cu", 8 * 132 * 4 + 8 * 128 * 4},
    {"gemm_blocked_64x64_kernel", "kernels/gemm/gemm.cu", 8 * 68 * 4 + 8 * 64 * 4},
    {"gemm_blocked_32x32_kernel", "kernels/gemm/gemm.cu", 8 * 36 * 4 + 8 * 32 * 4},
    {"histogram_global_kernel", "kernels/histogram/histogram.cu", 0},
    {"histogram_shared_kernel", "kernels/histogram/histogram.cu", 0},  // extern __shared__
    // __shared__ float partial[kReduceBlock], kReduceBlock = 256.
    {"block_sum_shared_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    // __shared__ float warp_sums[kReduceBlock / 32].
    {"block_sum_warp_kernel", "kernels/reduction/reduction.cu", 256 / 32 * 4},
    // The reduction ladder: __shared__ float partial[kReduceBlock] each.
    {"ladder_divergent_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_interleaved_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_sequential_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_add_on_load_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_last_warp_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_unrolled_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    {"ladder_many_per_thread_kernel", "kernels/reduction/reduction.cu", 256 * 4},
    // __shared__ float a_tile[16][16] and b_tile[16][16 + 1] (one float of padding per row).
    {"batched_gemm_kernel", "kernels/attention/attention.cu", 16 * 16 * 4 + 16 * 17 * 4},
    // __shared__ float max_partials[256 / 32] and sum_partials[256 / 32].
    {"softmax_rows_kernel", "kernels/attention/attention.cu", 2 * (256 / 32) * 4},
    {"softmax_rows_inplace_kernel", "kernels/attention/attention.cu", 2 * (256 / 32) * 4},
    // __shared__ float p_tile[16][16] and v_tile[16][16].
    {"softmax_weighted_sum_kernel", "kernels/attention/attention.cu", 2 * 16 * 16 * 4},
    // __shared__ float tile[64][head dims + 1].
    {"flash_attention_hd32_kernel", "kernels/attention/flash.cu", 64 * 33 * 4},
    {"flash_attention_hd64_kernel", "kernels/attention/flash.cu", 64 * 65 * 4},
    {"flash_attention_hd128_kernel", "kernels/attention/flash.cu", 64 * 129 * 4},
    {"flash_attention_wmma_kernel", "kernels/attention/flash.cu", 0},  // extern __shared__
    {"convert_to_half_kernel", "kernels/attention/flash.cu", 0},
    {"spin_wait_kernel", "kernels/timing/spin.cu", 0},
    {"transpose_copy_kernel", "kernels/transpose/transpose.cu", 0},
    {"transpose_naive_kernel", "kernels/transpose/transpose.cu", 0},
    // __shared__ float tile[32][32] and tile[32][33].
    {"transpose_coalesced_kernel", "kernels/transpose/transpose.cu", 32 * 32 * 4},
    {"transpose_conflict_free_kernel", "kernels/transpose/transpose.cu", 32 * 33 * 4},
};

TEST(KernelTable, StatusSaysWhyTheTableIsEmpty) {
  if (kernel_table().empty()) {
    EXPECT_FALSE(kernel_table_status().empty());
    EXPECT_EQ(kernel_table_status().find('\n'), std::string_view::npos);  // one line
    EXPECT_TRUE(built_sms().empty());
  } else {
    EXPECT_EQ(kernel_table_status(), "");
    EXPECT_FALSE(built_sms().empty());
  }
}

TEST(KernelTable, EveryKernelIsThereForEveryArchitecture) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  for (const ExpectedKernel& expected : kExpected) {
    for (const int sm : built_sms()) {
      const auto found = std::find_if(
          kernel_table().begin(), kernel_table().end(),
          [&](const KernelTableEntry& e) { return e.name == expected.name && e.sm == sm; });
      ASSERT_NE(found, kernel_table().end()) << expected.name << " for sm_" << sm;
      EXPECT_EQ(found->source, expected.source) << expected.name;
      EXPECT_NE(found->signature.find(expected.name), std::string_view::npos) << found->signature;
    }
  }
}

TEST(KernelTable, HasNoKernelTheTestDoesNotKnow) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  // A new kernel in kernels/ belongs in kExpected above (with its shared memory by hand).
  for (const KernelTableEntry& entry : kernel_table()) {
    if (!entry.source.starts_with("kernels/")) {
      continue;  // a lab's reference kernel (solutions/)
    }
    const bool known = std::any_of(std::begin(kExpected), std::end(kExpected),
                                   [&](const ExpectedKernel& e) { return e.name == entry.name; });
    EXPECT_TRUE(known) << entry.name << " (" << entry.source << ") is not in kExpected";
  }
  for (const KernelTableEntry& entry : kernel_table()) {
    EXPECT_TRUE(built(entry.sm)) << entry.name << " has sm_" << entry.sm;
  }
}

TEST(KernelTable, RegistersArePlausible) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  for (const KernelTableEntry& entry : kernel_table()) {
    EXPECT_GE(entry.registers, 1) << entry.name << " sm_" << entry.sm;
    EXPECT_LE(entry.registers, 255) << entry.name << " sm_" << entry.sm;
    // None of the reference kernels spills: one that starts to is worth a look.
    if (entry.source.starts_with("kernels/")) {
      EXPECT_EQ(entry.spill_store_bytes, 0u) << entry.name << " sm_" << entry.sm;
    }
  }
}

TEST(KernelTable, StaticSharedMemoryIsWhatTheKernelsDeclare) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  for (const ExpectedKernel& expected : kExpected) {
    for (const KernelTableEntry& entry : kernel_table()) {
      if (entry.name == expected.name) {
        // The same on every architecture: ptxas reports the kernel's own bytes, without the
        // 1 KiB per block that CUDA reserves on CC 8.0 and newer.
        EXPECT_EQ(entry.static_shared_bytes, expected.static_shared_bytes)
            << entry.name << " sm_" << entry.sm;
      }
    }
  }
}

TEST(KernelTable, IsSortedByNameThenArchitecture) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  const auto table = kernel_table();
  for (std::size_t i = 1; i < table.size(); ++i) {
    const bool ordered = table[i - 1].name < table[i].name ||
                         (table[i - 1].name == table[i].name && table[i - 1].sm < table[i].sm);
    EXPECT_TRUE(ordered) << table[i - 1].name << " sm_" << table[i - 1].sm << " before "
                         << table[i].name << " sm_" << table[i].sm;
  }
}

TEST(KernelTable, KernelNamesAreSortedAndDistinct) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  const std::vector<std::string_view> names = kernel_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  for (const ExpectedKernel& expected : kExpected) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), expected.name)) << expected.name;
  }
}

// The newest built architecture not newer than major.minor; 0 when none.
int expected_sm(int major, int minor) {
  int best = 0;
  for (const int sm : built_sms()) {
    if (sm <= major * 10 + minor && sm > best) {
      best = sm;
    }
  }
  return best;
}

TEST(KernelTable, FindKernelPicksTheClosestArchitectureNotNewer) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  if (built(89)) {
    ASSERT_TRUE(find_kernel("vector_add_kernel", 8, 9).has_value());
    EXPECT_EQ(find_kernel("vector_add_kernel", 8, 9)->sm, 89);
  }
  if (built(86) && !built(87)) {
    ASSERT_TRUE(find_kernel("vector_add_kernel", 8, 7).has_value());
    EXPECT_EQ(find_kernel("vector_add_kernel", 8, 7)->sm, 86);  // 8.7 (Jetson Orin) runs sm_86
  }
  // Every capability from 5.0 to 12.1 against the rule itself.
  for (int major = 5; major <= 12; ++major) {
    for (int minor = 0; minor <= 9; ++minor) {
      const auto found = find_kernel("gemm_tiled_kernel", major, minor);
      const int sm = expected_sm(major, minor);
      if (sm == 0) {
        EXPECT_FALSE(found.has_value()) << major << "." << minor;  // older than every build
      } else {
        ASSERT_TRUE(found.has_value()) << major << "." << minor;
        EXPECT_EQ(found->sm, sm) << major << "." << minor;
        EXPECT_EQ(found->name, "gemm_tiled_kernel");
      }
    }
  }
  EXPECT_FALSE(find_kernel("no_such_kernel", 9, 0).has_value());
  EXPECT_FALSE(find_kernel("vector_add", 9, 0).has_value());  // names match whole
  EXPECT_FALSE(find_kernel("vector_add_kernel", 1, 0).has_value());
}

TEST(KernelTable, ResourcesOfGivesTheOccupancyInput) {
  GPULAB_REQUIRE_KERNEL_TABLE();
  for (const KernelTableEntry& entry : kernel_table()) {
    const KernelResources resources = resources_of(entry);
    EXPECT_EQ(resources.registers_per_thread, entry.registers);
    EXPECT_EQ(resources.static_shared_bytes, entry.static_shared_bytes);
    EXPECT_EQ(resources.max_threads_per_block, 0);  // no __launch_bounds__ in the table
  }
  KernelTableEntry made_up;
  made_up.name = "k";
  made_up.sm = 80;
  made_up.registers = 40;
  made_up.static_shared_bytes = 4096;
  const KernelResources resources = resources_of(made_up);
  EXPECT_EQ(resources.registers_per_thread, 40);
  EXPECT_EQ(resources.static_shared_bytes, 4096u);
}

TEST(KernelTable, ALaunchsShapeHasTheResourcesTheLaunchRecorded) {
  const GpuSpec spec = *find_spec("h100-sxm");
  CountedLaunch launch;
  // A project kernel's name: the table is not searched by name alone, only the launch's record
  // counts (the sim records the figures of the launched kernel itself: find_launched_kernel).
  launch.kernel = "vector_add_kernel";
  launch.grid = {132, 1, 1};
  launch.block = {256, 1, 1};
  EXPECT_FALSE(launch_shape(launch).resources_known);
  launch.registers_per_thread = 128;
  launch.static_shared_bytes = 8192;
  const LaunchShape shape = launch_shape(launch);
  EXPECT_TRUE(shape.resources_known);
  EXPECT_EQ(shape.resources.registers_per_thread, 128);
  EXPECT_EQ(shape.resources.static_shared_bytes, 8192u);
  // 128 registers x 256 threads: 2 blocks of 65,536 registers per SM.
  EXPECT_EQ(model_launch(launch, spec).active_blocks_per_sm, 2);
}

TEST(KernelTable, ModelLaunchIsTheTrafficModelOrTheClockWaitWhicheverIsLonger) {
  const GpuSpec spec = *find_spec("h100-sxm");
  CountedLaunch launch;
  launch.kernel = "k";
  launch.counters.dram_bytes_read = 3'350'000'000;  // about 1 ms at 3.35 TB/s
  launch.counters.global_load = {1'000'000, 100'000'000, 3'200'000'000, 32'000'000};
  launch.grid = {1024, 1, 1};
  launch.block = {256, 1, 1};
  const ModeledTime traffic = model_time(launch.counters, launch_shape(launch), spec);
  EXPECT_EQ(model_launch(launch, spec).time_s, traffic.time_s);
  EXPECT_EQ(model_launch(launch, spec).bound, traffic.bound);
  launch.longest_wait_cycles = 1980 * 1000 * 5;  // 5 ms at 1980 MHz
  const ModeledTime waiting = model_launch(launch, spec);
  EXPECT_EQ(waiting.bound, ModelBound::clock_wait);
  EXPECT_NEAR(waiting.time_s, spec.launch_overhead_us * 1e-6 + 5e-3, 1e-12);
  EXPECT_EQ(to_string(waiting.bound), "clock64() wait");
}

TEST(KernelTable, ShortNameDropsQualifiersTemplateArgumentsAndSignature) {
  // As the sim names launches, and as Nsight Compute's CSV names them (seen on an H200 with the
  // ncu of CUDA 13.0: "unnamed>::batched_gemm_kernel(unnamed>::GemmArgs)").
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gemm_tiled_kernel", "gemm_tiled_kernel"},
      {"gpulab::kernels::gemm_tiled_kernel<16>", "gemm_tiled_kernel"},
      {"void gpulab::kernels::gemm_tiled_kernel<16>(const float *, float *, int)",
       "gemm_tiled_kernel"},
      {"unnamed>::batched_gemm_kernel(unnamed>::GemmArgs)", "batched_gemm_kernel"},
      {"<unnamed>::batched_gemm_kernel(<unnamed>::GemmArgs)", "batched_gemm_kernel"},
      {"(anonymous namespace)::softmax_rows_kernel(const float *, float *, int, int, bool)",
       "softmax_rows_kernel"},
      {"void reduce<float, std::plus<float>>(const float *, float *)", "reduce"},
      {"ns::k<(int)4>(float *) ", "k"},
  };
  for (const auto& [launch, want] : cases) {
    EXPECT_EQ(kernel_short_name(launch), want) << launch;
  }
}

TEST(KernelTable, CanonicalNamesAgreeAcrossTheCompilerAndTheDemangler) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // __PRETTY_FUNCTION__ (GCC) against abi::__cxa_demangle, as the table has them.
      {"ns::{anonymous}::k<3, true, float>", "ns::(anonymous namespace)::k<3, true, float>"},
      {"void ns::(anonymous namespace)::k<3u, true, float>(float*)",
       "ns::(anonymous namespace)::k<3, true, float>"},
      {"gpulab::kernels::(anonymous namespace)::vector_add_kernel(float const*, float*, "
       "unsigned long)",
       "gpulab::kernels::(anonymous namespace)::vector_add_kernel"},
      {"k<4ul, 5LL, -2, 0x1f>", "k<4, 5, -2, 0x1f>"},
      {"f32u<2>", "f32u<2>"},  // a name's digits and letters are not a literal
      {"  plain  ", "plain"},
  };
  for (const auto& [name, want] : cases) {
    EXPECT_EQ(canonical_kernel_name(name), want) << name;
  }
}

// Entries of a made-up program's own files, registered as a generated program table does.
constexpr KernelTableEntry kTileOneSm80{
    .name = "tile<1>",
    .signature = "void ns::(anonymous namespace)::tile<1>(float*)",
    .source = "labs/lab99_made_up/tiles.cu",
    .sm = 80,
    .registers = 20,
    .static_shared_bytes = 128};
constexpr KernelTableEntry kTileOneSm90{
    .name = "tile<1>",
    .signature = "void ns::(anonymous namespace)::tile<1>(float*)",
    .source = "labs/lab99_made_up/tiles.cu",
    .sm = 90,
    .registers = 22,
    .static_shared_bytes = 128};
constexpr KernelTableEntry kTileFourSm90{
    .name = "tile<4u>",
    .signature = "void ns::(anonymous namespace)::tile<4u>(float*)",
    .source = "labs/lab99_made_up/tiles.cu",
    .sm = 90,
    .registers = 40,
    .static_shared_bytes = 512};
constexpr KernelTableEntry kPlainSm90{.name = "plain",
                                      .signature = "ns::(anonymous namespace)::plain(float*)",
                                      .source = "labs/lab99_made_up/tiles.cu",
                                      .sm = 90,
                                      .registers = 16};
// The same name in another file (a solution's): never the figures of a launch from tiles.cu.
constexpr KernelTableEntry kOtherPlainSm90{.name = "plain",
                                           .signature = "ns::(anonymous namespace)::plain(float*)",
                                           .source = "solutions/lab99_made_up/tiles.cu",
                                           .sm = 90,
                                           .registers = 99};
constexpr KernelTableEntry kEntries[] = {kTileOneSm80, kTileOneSm90, kTileFourSm90, kPlainSm90,
                                         kOtherPlainSm90};
constexpr KernelSourceFailure kFailures[] = {
    {.source = "labs/lab99_made_up/broken.cu", .why = "broken.cu(3): error: identifier x"}};

void register_made_up_program() {
  static const bool registered = (register_program_kernels(kEntries, kFailures), true);
  (void)registered;
}

constexpr std::string_view kTiles = "/home/student/gpulab/labs/lab99_made_up/tiles.cu";

TEST(KernelTable, FindLaunchedKernelFindsTheInstantiationOfTheLaunchsFile) {
  register_made_up_program();
  const auto four = find_launched_kernel("ns::{anonymous}::tile<4>", kTiles, 9, 0);
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->registers, 40);
  EXPECT_EQ(four->static_shared_bytes, 512u);
  // The closest architecture not newer than the device's.
  const auto one_on_a100 = find_launched_kernel("ns::{anonymous}::tile<1>", kTiles, 8, 6);
  ASSERT_TRUE(one_on_a100.has_value());
  EXPECT_EQ(one_on_a100->sm, 80);
  EXPECT_EQ(one_on_a100->registers, 20);
  // No older architecture: the oldest newer one, an estimate.
  const auto four_on_a100 = find_launched_kernel("ns::{anonymous}::tile<4>", kTiles, 8, 0);
  ASSERT_TRUE(four_on_a100.has_value());
  EXPECT_EQ(four_on_a100->sm, 90);
  const auto one_on_t4 = find_launched_kernel("ns::{anonymous}::tile<1>", kTiles, 7, 5);
  ASSERT_TRUE(one_on_t4.has_value());
  EXPECT_EQ(one_on_t4->sm, 80);
  // An instantiation the file does not have, and a name the file does not have.
  EXPECT_FALSE(find_launched_kernel("ns::{anonymous}::tile<2>", kTiles, 9, 0).has_value());
  EXPECT_FALSE(find_launched_kernel("ns::{anonymous}::other", kTiles, 9, 0).has_value());
}

TEST(KernelTable, FindLaunchedKernelNeverTakesAnotherFilesKernel) {
  register_made_up_program();
  const auto plain = find_launched_kernel("ns::{anonymous}::plain", kTiles, 9, 0);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->registers, 16);
  const auto solution =
      find_launched_kernel("ns::{anonymous}::plain", "/x/solutions/lab99_made_up/tiles.cu", 9, 0);
  ASSERT_TRUE(solution.has_value());
  EXPECT_EQ(solution->registers, 99);
  // A file whose path merely ends in the same characters is another file.
  EXPECT_FALSE(
      find_launched_kernel("ns::{anonymous}::plain", "/x/mylabs/lab99_made_up/tiles.cu", 9, 0));
  EXPECT_FALSE(
      find_launched_kernel("ns::{anonymous}::plain", "/x/labs/lab99_made_up/other.cu", 9, 0));
}

TEST(KernelTable, FindLaunchedKernelTakesAnExpressionsNameOnlyWhenOneKernelHasIt) {
  register_made_up_program();
  // A launch whose expression names no one function gives its text: "plain" is one kernel...
  const auto plain = find_launched_kernel("plain", kTiles, 9, 0);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->registers, 16);
  // ...but "tile<kTile>" could be either instantiation of tile.
  EXPECT_FALSE(find_launched_kernel("tile<kTile>", kTiles, 9, 0).has_value());
  EXPECT_FALSE(find_launched_kernel("kernel", kTiles, 9, 0).has_value());
}

TEST(KernelTable, FindKernelSymbolTakesTheProgramsOwnKernelOfThatFileName) {
  register_made_up_program();
  // The demangler's spelling, and the file name a file-local symbol's file entry gives.
  const auto four =
      find_kernel_symbol("void ns::(anonymous namespace)::tile<4u>(float*)", "tiles.cu", 9, 0);
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->registers, 40);
  const auto one_on_a100 =
      find_kernel_symbol("void ns::(anonymous namespace)::tile<1>(float*)", "tiles.cu", 8, 6);
  ASSERT_TRUE(one_on_a100.has_value());
  EXPECT_EQ(one_on_a100->sm, 80);
  // An external symbol names no file: its name alone, when one file has it.
  EXPECT_EQ(find_kernel_symbol("ns::(anonymous namespace)::tile<4>(float*)", "", 9, 0)
                .value_or(KernelTableEntry{})
                .registers,
            40);
  // Another file name, another instantiation: nothing.
  EXPECT_FALSE(
      find_kernel_symbol("void ns::(anonymous namespace)::tile<4u>(float*)", "other.cu", 9, 0));
  EXPECT_FALSE(
      find_kernel_symbol("void ns::(anonymous namespace)::tile<2>(float*)", "tiles.cu", 9, 0));
  // Two files named tiles.cu (labs/ and solutions/) both have plain: it could be either.
  EXPECT_FALSE(find_kernel_symbol("ns::(anonymous namespace)::plain(float*)", "tiles.cu", 9, 0));
}

std::string_view file_name(std::string_view path) {
  return path.substr(path.rfind('/') + 1);
}

// A program whose own copy of the project's first kernel file nvcc could not compile.
std::string_view register_failed_copy_of_a_project_file() {
  static const std::string source =
      "labs/lab99_made_up/" + std::string(file_name(kernel_table().front().source));
  static const KernelSourceFailure failure{.source = source, .why = "error: x"};
  static const bool registered = (register_program_kernels({}, {&failure, 1}), true);
  (void)registered;
  return file_name(source);
}

TEST(KernelTable, FindKernelSymbolFindsTheProjectsKernelsByTheirOwnSymbols) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << kernel_table_status();
  }
  for (const KernelTableEntry& entry : kernel_table()) {
    SCOPED_TRACE(std::string(entry.signature) + " of " + std::string(entry.source));
    const std::string_view file = file_name(entry.source);
    const auto found = find_kernel_symbol(entry.signature, file, entry.sm / 10, entry.sm % 10);
    if (kernel_source_failure("/x/labs/lab99_made_up/" + std::string(file))) {
      EXPECT_FALSE(found.has_value());  // the next test's failed copy
      continue;
    }
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->source, entry.source);
    EXPECT_EQ(found->sm, entry.sm);
    EXPECT_EQ(found->registers, entry.registers);
  }
}

TEST(KernelTable, FindKernelSymbolNeverGivesAFailedFileAnotherFilesFigures) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << kernel_table_status();
  }
  const std::string_view failed = register_failed_copy_of_a_project_file();
  // The program's own file of that name has no figures: the project's file of the same name must
  // not lend it its kernels'.
  const KernelTableEntry& project = kernel_table().front();
  EXPECT_FALSE(find_kernel_symbol(project.signature, failed, project.sm / 10, project.sm % 10));
}

TEST(KernelTable, KernelSourceFailureSaysWhyAFileHasNoFigures) {
  register_made_up_program();
  EXPECT_EQ(kernel_source_failure("/x/labs/lab99_made_up/broken.cu").value_or(""),
            "broken.cu(3): error: identifier x");
  EXPECT_FALSE(kernel_source_failure(kTiles).has_value());
}

}  // namespace
}  // namespace gpulab
