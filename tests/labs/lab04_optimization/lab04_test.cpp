// Lab 04 autograder: the three attention cores a student writes (level 1 fused softmax, level 3
// flash attention, level 4 flash attention on tensor cores) and optimize_attention, which runs a
// whole layer at a level. What is checked:
// - correctness: each core's attn and each level's y against the CPU reference
//   (kernels::attention_reference_stages, accumulated in double) on shapes that are not
//   multiples of any tile, causal and not, head dims from 16 to 128, several seeds, outputs
//   poisoned with NaN first; level 4's error must not grow from 128 to 2048 tokens (FP16 sums
//   grow it with the square root of the number of additions);
// - errors: what a level cannot run (a missing intermediate, a head_dim it cannot tile, buffers
//   of another config, a level outside 0..4) throws std::invalid_argument before any work;
// - memory: the device memory a level holds while it runs (its buffers and anything it
//   allocates) against the sequence length: levels 3 and 4 grow linearly, as level 0, measured in
//   the same run, grows quadratically;
// - traffic (sim, counted from a cold modeled L2): level 1 moves at least one S x S tensor fewer
//   DRAM bytes than level 0's core; level 3 at most 1.5x the bytes of reading Q, K, V and writing O
//   once in FP32, and causal at most 0.65x the L2 reads of the full one (skipped key tiles);
//   level 4 at most 0.65x those DRAM bytes (Q, K, V in FP16);
// - speed: each student core faster than the one it improves on (1 than 0, 3 than 1, 4 than 3)
//   by the harness's noise-aware comparison, measured on a GPU at 2048 tokens; on sim by the
//   modeled clock (from counted traffic and instructions, deterministic) at 128 tokens, on grids
//   that fill the modeled GPU (level 4's gain there: its FP32 arithmetic moved to the tensor
//   cores).
//
// Tolerances: kernels::level_tolerance (the numeric policy applied to the layer's chain, plus FP16
// rounding for level 4) at the scale (rms) of the tensor compared; for attn that is looser than
// needed by the output projection's share, which no mistake the tests look for hides in.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/numeric.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "graded_test.hpp"
#include "lab04.hpp"
#include "numeric_check.hpp"
#include "sanitize.hpp"
#include "slow_lines.hpp"
#include "test_device.hpp"

#if !GPULAB_BACKEND_CUDA
#include "gpulab/core/counters.hpp"
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

namespace kernels = gpulab::kernels;
namespace lab04 = gpulab::lab04;
using gpulab::testing::all_close;
using kernels::AttentionBuffers;
using kernels::AttentionConfig;

std::string describe(const AttentionConfig& c) {
  std::ostringstream text;
  text << "{batch " << c.batch << ", seq_len " << c.seq_len << ", d_model " << c.d_model
       << ", heads " << c.heads << " (head_dim " << c.head_dim() << ")"
       << (c.causal ? ", causal}" : "}");
  return text.str();
}

struct Case {
  AttentionConfig config;
  unsigned seed;
};

// Shapes of the correctness tests: no tile (16, 32 or 64 rows or keys) divides most sequence
// lengths; head dims 16 to 128.
const Case kCases[] = {
    {{1, 1, 16, 1, false}, 2},    // one token, head_dim 16
    {{2, 37, 64, 2, true}, 3},    // two sequences, causal, head_dim 32
    {{1, 70, 128, 2, false}, 5},  // head_dim 64: two K/V tiles of 32 and a part
    {{1, 67, 128, 2, true}, 7},   // causal across several query tiles
    {{1, 20, 256, 2, true}, 11},  // head_dim 128
    {{1, 45, 96, 1, false}, 13},  // head_dim 96: a partial 32-column group per lane
};

// Levels 1 and 3 also take head dims that are not multiples of 16, nor of 4 (rows of an odd
// length, where no 16-byte load is aligned), and sequence lengths that are not multiples of 4.
const Case kOddHeadDims[] = {
    {{1, 37, 48, 2, true}, 17},    // head_dim 24
    {{1, 29, 120, 3, false}, 19},  // head_dim 40
    {{1, 33, 30, 2, true}, 31},    // head_dim 15
};

// One attention core on the device: the inputs uploaded, qkv computed by the framework's
// projection (and converted to FP16 for level 4), then x and attn poisoned with NaN: a core
// reads qkv, so one that runs the layer again (the projection from x) computes NaN.
struct Core {
  // qkv from the layer's projection of x, or (`projected` false, where only the core's time and
  // its agreement with another level's matter) uniform in [-1, 1]: the projection of a large
  // layer is most of the simulation's time on sim.
  Core(const AttentionConfig& c, int level, unsigned seed, bool projected = true)
      : config(c),
        inputs(kernels::make_attention_inputs(c, seed)),
        buffers(c, kernels::attention_workspace(level)) {
    kernels::upload(inputs, buffers);
    if (projected) {
      kernels::run_component(kernels::Component::qkv_projection, config, buffers, stream);
    } else {
      std::mt19937 random(seed);
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      std::vector<float> qkv(buffers.qkv.size());
      for (float& value : qkv) {
        value = uniform(random);
      }
      buffers.qkv.copy_from(qkv);
    }
    if (level == 4) {
      kernels::convert_qkv_to_half(config, buffers, stream);
    }
    buffers.x.fill_bytes_async(0xff, stream);
    buffers.attn.fill_bytes_async(0xff, stream);
    stream.synchronize();
  }

  AttentionConfig config;
  kernels::AttentionInputs inputs;
  AttentionBuffers buffers;
  gpulab::Stream stream;
};

using CoreFunction = void (*)(const AttentionConfig&, AttentionBuffers&, cudaStream_t);

// Level 0's core, the framework's: the scores, softmax and weighted sum components.
void unfused_core(const AttentionConfig& config, AttentionBuffers& buffers, cudaStream_t stream) {
  for (const auto component : {kernels::Component::scores, kernels::Component::softmax,
                               kernels::Component::weighted_sum}) {
    kernels::run_component(component, config, buffers, stream);
  }
}

CoreFunction core_of(int level) {
  return level == 0   ? unfused_core
         : level == 1 ? lab04::fused_softmax_attention
         : level == 3 ? lab04::flash_attention
                      : lab04::flash_attention_tensor_cores;
}

// attn of `level`'s core, the reference's and the level's tolerance.
struct CoreResult {
  std::vector<float> expected;
  std::vector<float> got;
  gpulab::Tolerance tolerance;
};

CoreResult run_core(int level, const Case& c) {
  const gpulab::testing::SanitizeOnSim sanitize;
  Core core(c.config, level, c.seed);
  core_of(level)(core.config, core.buffers, core.stream);
  core.stream.synchronize();
  CoreResult result{kernels::attention_reference_stages(c.config, core.inputs).attn,
                    core.buffers.attn.to_vector(),
                    {}};
  result.tolerance = kernels::level_tolerance(c.config, level, gpulab::rms(result.expected));
  return result;
}

// The message names the shape first, on one line, so that every failing shape is listed.
::testing::AssertionResult matches(const CoreResult& r, int level, const Case& c) {
  return all_close(r.expected, r.got, r.tolerance,
                   "attn of level " + std::to_string(level) + "'s core, " + describe(c.config) +
                       ", seed " + std::to_string(c.seed),
                   kernels::heads_shape(c.config));
}

// attn of `level`'s core against the reference's.
::testing::AssertionResult core_matches(int level, const Case& c) {
  return matches(run_core(level, c), level, c);
}

// y of optimize_attention(level) against the reference's, from buffers with only the level's
// workspace and a poisoned output.
::testing::AssertionResult level_matches(int level, const Case& c) {
  const gpulab::testing::SanitizeOnSim sanitize;
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(c.config, c.seed);
  AttentionBuffers buffers(c.config, kernels::attention_workspace(level));
  kernels::upload(inputs, buffers);
  gpulab::Stream stream;
  buffers.y.fill_bytes_async(0xff, stream);
  buffers.attn.fill_bytes_async(0xff, stream);
  lab04::optimize_attention(c.config, buffers, level, stream);
  stream.synchronize();
  const std::vector<float> expected = kernels::attention_reference(c.config, inputs);
  const gpulab::Tolerance tolerance =
      kernels::level_tolerance(c.config, level, gpulab::rms(expected));
  return all_close(expected, buffers.y.to_vector(), tolerance,
                   "y of optimize_attention(level " + std::to_string(level) + "), " +
                       describe(c.config) + ", seed " + std::to_string(c.seed),
                   kernels::output_shape(c.config));
}

// ------------------------------------------------------------------------------------------------
// Correctness
// ------------------------------------------------------------------------------------------------

GPULAB_GRADED_TEST(Lab04Level1, MatchesTheCpuReference, 10, "fused_softmax_attention",
                   "the fused softmax core matches the CPU reference on every shape") {
  GPULAB_REQUIRE_DEVICE();
  for (const Case& c : kCases) {
    EXPECT_TRUE(core_matches(1, c));
  }
  for (const Case& c : kOddHeadDims) {
    EXPECT_TRUE(core_matches(1, c));
  }
}

GPULAB_GRADED_TEST(Lab04Level3, MatchesTheCpuReference, 15, "flash_attention",
                   "flash attention matches the CPU reference on every shape and seed") {
  GPULAB_REQUIRE_DEVICE();
  for (const Case& c : kCases) {
    EXPECT_TRUE(core_matches(3, c));
  }
  for (const Case& c : kOddHeadDims) {
    EXPECT_TRUE(core_matches(3, c));
  }
  EXPECT_TRUE(core_matches(3, {{1, 70, 128, 2, false}, 23})) << "another seed";
  EXPECT_TRUE(core_matches(3, {{1, 130, 64, 1, true}, 29})) << "several causal query tiles";
}

GPULAB_GRADED_TEST(Lab04Level4, MatchesTheCpuReference, 10, "flash_attention_tensor_cores",
                   "flash attention on tensor cores matches the CPU reference on every shape") {
  GPULAB_REQUIRE_DEVICE();
  for (const Case& c : kCases) {
    EXPECT_TRUE(core_matches(4, c));
  }
  EXPECT_TRUE(core_matches(4, {{1, 130, 64, 1, true}, 29})) << "several causal query tiles";
}

// The largest error of level 4's attn on `config`, each element's as a fraction of |expected| +
// rms(expected) (the scale the numeric policy measures both tolerance parts against); after
// checking it against the level's tolerance.
double level4_error(const AttentionConfig& config) {
  const Case c{config, 31};
  const CoreResult r = run_core(4, c);
  EXPECT_TRUE(matches(r, 4, c));
  const double scale = gpulab::rms(r.expected);
  double worst = 0;
  for (std::size_t i = 0; i < r.got.size(); ++i) {
    const double e = static_cast<double>(r.expected[i]);
    worst = std::max(worst, std::abs(static_cast<double>(r.got[i]) - e) / (std::abs(e) + scale));
  }
  return worst;
}

GPULAB_GRADED_TEST(Lab04Level4, StaysAccurateOverLongSequences, 10, "flash_attention_tensor_cores",
                   "the error of level 4 does not grow from 128 to 2048 tokens: FP32 sums") {
  GPULAB_REQUIRE_DEVICE();
  // With FP16 inputs and FP32 sums the error comes from rounding the inputs, whatever the number
  // of keys (kernels::level_tolerance does not grow with seq_len). Summed in FP16, every addition
  // rounds at the size of the running sum, and the error grows with the square root of the
  // number of additions: 4x from 128 to 2048 keys, where FP32 sums stay within the noise of
  // which element is worst (on sim, keeping the running output in FP16 gives 2.5x).
  const double short_error = level4_error({1, 128, 16, 1, false});
  const double long_error = level4_error({1, 2048, 16, 1, false});
  constexpr double kFp16UnitRoundoff = 0x1p-11;  // the floor of a meaningful error
  EXPECT_LE(long_error, 2 * std::max(short_error, kFp16UnitRoundoff))
      << "the largest error of attn, as a fraction of |expected| + rms(expected), grew from "
      << short_error << " at 128 tokens to " << long_error
      << " at 2048 (head_dim 16): accumulate in FP32 (float accumulator fragments, an FP32 "
         "running output), not FP16";
}

GPULAB_GRADED_TEST(Lab04Levels, RefuseWhatTheyCannotRun, 5,
                   "fused_softmax_attention flash_attention flash_attention_tensor_cores",
                   "a missing buffer, an untileable head_dim or foreign buffers throw, untouched") {
  GPULAB_REQUIRE_DEVICE();
  // Each call must throw std::invalid_argument and leave attn as it was (no work enqueued).
  const auto refuses = [](const char* what, const AttentionConfig& config, int workspace,
                          CoreFunction core, const AttentionConfig& buffers_for) {
    Core problem(buffers_for, workspace, 2);
    try {
      core(config, problem.buffers, problem.stream);
      ADD_FAILURE() << what << ": no exception";
    } catch (const std::invalid_argument&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw something other than std::invalid_argument: " << e.what();
    }
    problem.stream.synchronize();
    const std::vector<float> attn = problem.buffers.attn.to_vector();
    EXPECT_TRUE(std::all_of(attn.begin(), attn.end(), [](float v) { return std::isnan(v); }))
        << what << ": attn was written before the error";
  };
  const AttentionConfig small{1, 16, 64, 2, false};
  refuses("level 1 without buffers.scores", small, 3, lab04::fused_softmax_attention, small);
  refuses("level 4 without buffers.qkv_half", small, 3, lab04::flash_attention_tensor_cores, small);
  const AttentionConfig dh24{1, 16, 48, 2, false};
  refuses("level 4 at head_dim 24", dh24, 4, lab04::flash_attention_tensor_cores, dh24);
  const AttentionConfig dh256{1, 8, 256, 1, false};
  refuses("level 1 at head_dim 256", dh256, 1, lab04::fused_softmax_attention, dh256);
  refuses("level 3 at head_dim 256", dh256, 3, lab04::flash_attention, dh256);
  refuses("level 4 at head_dim 256", dh256, 4, lab04::flash_attention_tensor_cores, dh256);
  const AttentionConfig longer{1, 24, 64, 2, false};
  for (const int level : {1, 3, 4}) {
    refuses(
        ("level " + std::to_string(level) + " with buffers for 16 tokens, asked for 24").c_str(),
        longer, level, core_of(level), small);
  }
  refuses("level 3 with an invalid config (64 % 3 != 0)", {1, 16, 64, 3, false}, 3,
          lab04::flash_attention, small);
  // And what they can run, they run.
  for (const int level : {1, 3, 4}) {
    EXPECT_TRUE(core_matches(level, {small, 2})) << "level " << level << " on a valid call";
  }
}

GPULAB_GRADED_TEST(
    Lab04Optimize, EveryLevelComputesTheLayer, 10, "optimize_attention",
    "optimize_attention gives the reference layer at every level, from its workspace") {
  GPULAB_REQUIRE_DEVICE();
  for (const Case& c : {Case{{2, 37, 64, 2, true}, 3}, Case{{1, 70, 128, 2, false}, 5}}) {
    for (int level = 0; level <= 4; ++level) {
      EXPECT_TRUE(level_matches(level, c));
    }
  }
  const AttentionConfig config{1, 16, 64, 2, false};
  AttentionBuffers buffers(config);
  for (const int level : {-1, 5}) {
    EXPECT_THROW(lab04::optimize_attention(config, buffers, level, nullptr), std::invalid_argument)
        << "level " << level;
  }
  AttentionBuffers flash_only(config, kernels::attention_workspace(3));
  for (const int level : {0, 1, 2, 4}) {
    EXPECT_THROW(lab04::optimize_attention(config, flash_only, level, nullptr),
                 std::invalid_argument)
        << "level " << level << " without its intermediate";
  }
  GPULAB_CHECK(cudaDeviceSynchronize());
}

// ------------------------------------------------------------------------------------------------
// Memory
// ------------------------------------------------------------------------------------------------

#if GPULAB_BACKEND_CUDA
// Device memory in use now, in bytes: the driver's free memory is all a GPU offers, so there the
// peak below is what is held when the level returns (the sim counts every allocation).
std::size_t device_bytes_in_use() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPULAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return total_bytes - free_bytes;
}
#endif

// The most device memory held while optimize_attention(level) runs, above what was held before:
// the level's buffers and anything it allocates. Checks y against the reference on the way. On a
// GPU, cudaMemGetInfo reads the whole device: another process allocating meanwhile (ctest -j)
// adds to a reading and never takes from one, so the least of three runs against one baseline is
// the level's (memory a level keeps from one call to the next stays in every reading).
double level_memory(int level, const AttentionConfig& config) {
  const kernels::AttentionInputs inputs = kernels::make_attention_inputs(config, 2);
  GPULAB_CHECK(cudaDeviceSynchronize());
#if GPULAB_BACKEND_CUDA
  constexpr int kRuns = 3;
  const std::size_t before = device_bytes_in_use();
#else
  constexpr int kRuns = 1;            // the accounting counts this process alone
  gpulab::reset_peak_memory_stats();  // on sim every cudaMalloc is accounted
  const std::size_t before = gpulab::memory_stats().allocated_bytes;
#endif
  double least = std::numeric_limits<double>::infinity();
  for (int run = 0; run < kRuns; ++run) {
    AttentionBuffers buffers(config, kernels::attention_workspace(level));
    kernels::upload(inputs, buffers);
    buffers.y.fill_bytes(0xff);
    lab04::optimize_attention(config, buffers, level, nullptr);
    GPULAB_CHECK(cudaDeviceSynchronize());
#if GPULAB_BACKEND_CUDA
    // The driver hands out memory in pages of megabytes: never less than the buffers themselves.
    const double used =
        std::max(static_cast<double>(buffers.bytes()),
                 static_cast<double>(device_bytes_in_use()) - static_cast<double>(before));
#else
    const auto used = static_cast<double>(gpulab::memory_stats().peak_allocated_bytes - before);
#endif
    least = std::min(least, used);
    if (run == 0) {
      const std::vector<float> expected = kernels::attention_reference(config, inputs);
      EXPECT_TRUE(all_close(expected, buffers.y.to_vector(),
                            kernels::level_tolerance(config, level, gpulab::rms(expected)), "y",
                            kernels::output_shape(config)))
          << "level " << level << ", " << describe(config);
    }
  }
  return least;
}

GPULAB_GRADED_TEST(
    Lab04Memory, FlashMemoryGrowsLinearlyWithTheSequence, 10,
    "flash_attention flash_attention_tensor_cores optimize_attention",
    "levels 3 and 4 hold memory linear in seq_len where level 0 grows as its square") {
  GPULAB_REQUIRE_DEVICE();
#if GPULAB_BACKEND_CUDA
  const std::vector<double> lengths = {512, 1024, 2048, 4096};
  const int d_model = 64;  // one head of 64: the S x S tensors are megabytes, above page sizes
#else
  const std::vector<double> lengths = {64, 128, 256, 512};
  const int d_model = 16;  // one head of 16: the CPU simulation stays quick
#endif
  std::ostringstream table;
  std::vector<double> exponents;
  for (const int level : {0, 3, 4}) {
    std::vector<double> bytes;
    table << "\n  level " << level << ":";
    for (const double s : lengths) {
      bytes.push_back(level_memory(level, {1, static_cast<int>(s), d_model, 1, false}));
      table << " " << s << " tokens " << bytes.back() << " B;";
    }
    exponents.push_back(gpulab::growth_exponent(lengths, bytes));
    table << " exponent " << exponents.back();
  }
  ASSERT_GE(exponents[0], 1.5) << "level 0 (given) must grow quadratically:" << table.str();
  EXPECT_LE(exponents[1], 1.15) << "level 3 must hold O(seq_len) memory:" << table.str();
  EXPECT_LE(exponents[2], 1.15) << "level 4 must hold O(seq_len) memory:" << table.str();
}

// ------------------------------------------------------------------------------------------------
// Counted traffic (sim)
// ------------------------------------------------------------------------------------------------

#if !GPULAB_BACKEND_CUDA
// What everything `level`'s core launched on `core` moved, counted from an empty modeled L2: DRAM
// bytes (read and written) and bytes read through L2.
struct Traffic {
  double dram = 0;
  double l2_read = 0;
};

Traffic core_traffic(int level, Core& core) {
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2(core.stream));
  core.stream.synchronize();
  gpulab::MemoryCounters counted;
  for (const gpulab::CountedLaunch& launch : gpulab::sim::count_launches([&] {
         core_of(level)(core.config, core.buffers, core.stream);
         core.stream.synchronize();
       })) {
    counted += launch.counters;
  }
  return {static_cast<double>(counted.dram_bytes_read + counted.dram_bytes_written),
          32.0 * static_cast<double>(counted.l2_sector_reads)};
}

// The traffic tests' layer: one head of 64 (the head dim flash attention is tuned for), 256 tokens.
constexpr AttentionConfig kTrafficConfig{1, 256, 64, 1, false};
// Q, K and V read and O written once, in FP32.
constexpr double kQkvoBytes = 4.0 * 256 * 64 * 4;
// One [B, H, S, S] float tensor.
constexpr double kScoresBytes = 256.0 * 256 * 4;

// The DRAM bytes of `level`'s core (level 0: the scores, softmax and weighted sum components),
// after checking its attn against the reference.
double core_dram_bytes(int level) {
  const Case c{kTrafficConfig, 2};
  if (level != 0) {
    EXPECT_TRUE(core_matches(level, c)) << "the traffic of a wrong result earns nothing";
  }
  Core core(c.config, level, c.seed);
  return core_traffic(level, core).dram;
}

// The blocks of a level's kernel on `config`: every (batch, head)'s query rows over the blocks of
// the smallest grid its core launched (a core that also converts its inputs launches a larger
// grid for that), and that launch's warps per block. The tests derive their bounds from it, so
// that any tiling is judged by what it does, not by the solution's tile size.
struct CoreBlocks {
  int rows = 0;   // query rows per block
  int warps = 0;  // warps per block
};

CoreBlocks core_blocks(const AttentionConfig& config, int level) {
  Core core(config, level, 2, false);
  std::uint64_t blocks = 0;
  int warps = 1;
  for (const gpulab::CountedLaunch& launch : gpulab::sim::count_launches([&] {
         core_of(level)(core.config, core.buffers, core.stream);
         core.stream.synchronize();
       })) {
    const std::uint64_t grid = std::uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
    if (blocks == 0 || grid < blocks) {
      blocks = grid;
      warps = static_cast<int>((launch.block[0] * launch.block[1] * launch.block[2] + 31) / 32);
    }
  }
  const auto rows = static_cast<std::uint64_t>(config.batch) * config.heads * config.seq_len;
  return {blocks == 0 ? config.seq_len : static_cast<int>((rows + blocks - 1) / blocks), warps};
}

// The query rows per block of a flash level's kernel (3 or 4) on `config`.
int flash_rows_per_block(const AttentionConfig& config, int level = 3) {
  return core_blocks(config, level).rows;
}
#endif

GPULAB_COUNTED_TEST(
    Lab04Traffic, FusedSoftmaxSavesAScoreMatrixOfDramTraffic, 5, "fused_softmax_attention",
    "counted on sim, level 1 moves one S x S tensor fewer DRAM bytes than level 0") {
#if GPULAB_BACKEND_CUDA
  GTEST_SKIP() << "counted on sim: a cuda grading runs it from the sim build of the same code";
#else
  GPULAB_REQUIRE_COUNTING();
  const double unfused = core_dram_bytes(0);
  const double fused = core_dram_bytes(1);
  // A few percent of slack for a kernel that rereads a row from DRAM here and there.
  EXPECT_LE(fused, unfused - 0.95 * kScoresBytes)
      << "level 0's core moves " << unfused << " DRAM bytes, level 1's " << fused
      << ": P must never be written (one [S, S] tensor is " << kScoresBytes << " bytes), "
      << describe(kTrafficConfig);
#endif
}

GPULAB_COUNTED_TEST(Lab04Traffic, FlashReadsQkvAndWritesOOnce, 5, "flash_attention",
                    "counted on sim, level 3 moves at most 1.5x the bytes of Q, K, V and O") {
#if GPULAB_BACKEND_CUDA
  GTEST_SKIP() << "counted on sim: a cuda grading runs it from the sim build of the same code";
#else
  GPULAB_REQUIRE_COUNTING();
  const double flash = core_dram_bytes(3);
  EXPECT_LE(flash, 1.5 * kQkvoBytes)
      << "level 3's core moves " << flash << " DRAM bytes; reading Q, K, V and writing O once is "
      << kQkvoBytes << ": no S x S tensor may reach memory, " << describe(kTrafficConfig);
#endif
}

GPULAB_COUNTED_TEST(Lab04Traffic, CausalFlashSkipsTheKeysNoRowSees, 5, "flash_attention",
                    "counted on sim, causal flash attention reads at most halfway between skipping "
                    "every key tile after a block's last row and reading them all, for its tile") {
#if GPULAB_BACKEND_CUDA
  GTEST_SKIP() << "counted on sim: a cuda grading runs it from the sim build of the same code";
#else
  GPULAB_REQUIRE_COUNTING();
  // With causal, the key tiles after a block's last query row hold nothing any of its rows sees.
  // A kernel of R query rows per block that skips them reads, of K and V, the share `ideal` of
  // the full reads (block b needs the keys before (b + 1) R); one that masks them reads them
  // all. The bound is halfway, for the tile the kernel actually uses, at a sequence of at least
  // four tiles (shorter, skipping saves too little to tell).
  AttentionConfig full = kTrafficConfig;
  int rows = flash_rows_per_block(full);
  if (4 * rows > full.seq_len) {
    full.seq_len = 4 * rows;
    rows = flash_rows_per_block(full);
  }
  AttentionConfig causal = full;
  causal.causal = true;
  EXPECT_TRUE(core_matches(3, {causal, 2})) << "the traffic of a wrong result earns nothing";
  const int tiles = (full.seq_len + rows - 1) / rows;
  double needed = 0;
  for (int b = 0; b < tiles; ++b) {
    needed += std::min(full.seq_len, (b + 1) * rows);
  }
  const double ideal = needed / (static_cast<double>(tiles) * full.seq_len);
  const double bound = (1 + ideal) / 2;
  const auto l2_read_bytes = [](const AttentionConfig& config) {
    Core core(config, 3, 2);
    return core_traffic(3, core).l2_read;
  };
  const double all = l2_read_bytes(full);
  const double masked = l2_read_bytes(causal);
  EXPECT_LE(masked, bound * all)
      << "causal level 3 reads " << masked << " bytes through L2, the full one " << all << " ("
      << masked / all << "x); with " << rows << " query rows per block, skipping the key tiles "
      << "after each block's last row reads " << ideal << "x of K and V, so at most " << bound
      << "x is expected: key tiles that start after a block's last query row must not be "
      << "loaded, " << describe(causal);
#endif
}

GPULAB_COUNTED_TEST(Lab04Traffic, TensorCoresReadHalfPrecision, 5, "flash_attention_tensor_cores",
                    "counted on sim, level 4 computes on tensor cores (WMMA) and moves at most "
                    "0.65x the FP32 bytes of Q, K, V and O") {
#if GPULAB_BACKEND_CUDA
  GTEST_SKIP() << "counted on sim: a cuda grading runs it from the sim build of the same code";
#else
  GPULAB_REQUIRE_COUNTING();
  const std::uint64_t mma_before = gpulab::sim::tensor_core_operations();
  const double tensor = core_dram_bytes(4);
  EXPECT_GT(gpulab::sim::tensor_core_operations(), mma_before)
      << "level 4 ran no tensor-core operation (nvcuda::wmma::mma_sync): its products must be "
         "computed on tensor cores, not on CUDA cores from FP16 inputs";
  EXPECT_LE(tensor, 0.65 * kQkvoBytes)
      << "level 4's core moves " << tensor << " DRAM bytes; Q, K, V in FP16 and O in FP32 once is "
      << 0.625 * kQkvoBytes << ", " << describe(kTrafficConfig);
#endif
}

// ------------------------------------------------------------------------------------------------
// Speed
// ------------------------------------------------------------------------------------------------

// The time of `level`'s attention core (level 0: the scores, softmax and weighted sum
// components) and the attn it computed. The projections around the core are the same kernels at
// every level but 2, so the cores decide which level is faster.
struct CoreTiming {
  gpulab::Summary time;
  std::vector<float> attn;
};

CoreTiming time_core(int level, const AttentionConfig& config,
                     const gpulab::BenchOptions& options) {
  Core core(config, level, 2, false);
  // Every run starts from a poisoned output, as the first does: a kernel that skips work it finds
  // already done (the output of an earlier run of the same inputs) is timed doing it. Both levels
  // of a comparison pay for the same fill.
  const auto run = [&](cudaStream_t s) {
    core.buffers.attn.fill_bytes_async(0xff, s);
    core_of(level)(core.config, core.buffers, s);
  };
  const gpulab::Summary time = gpulab::measure(run, core.stream, options).summary;
  return {time, core.buffers.attn.to_vector()};
}

// The comparisons: each optimized level's core against the one it improves, on one layer.
struct SpeedComparison {
  int before = 0;
  int after = 0;
  AttentionConfig config;
};

GPULAB_GRADED_TEST(
    Lab04Speed, EachOptimizedLevelIsFasterThanTheOneItImproves, 10,
    "fused_softmax_attention flash_attention flash_attention_tensor_cores",
    "level 1 beats 0, 3 beats 1 and 4 beats 3 (modeled clock on sim, measured on a GPU)") {
  GPULAB_REQUIRE_DEVICE();
  gpulab::BenchOptions options;
#if GPULAB_BACKEND_CUDA
  const AttentionConfig config{1, 2048, 1024, 16, false};  // head_dim 64
  const std::vector<SpeedComparison> comparisons = {{0, 1, config}, {1, 3, config}, {3, 4, config}};
#else
  GPULAB_REQUIRE_COUNTING();
  // CPU time of the simulation says nothing about a GPU's: the modeled clock (what graded runs
  // use), unless GPULAB_SIM_CLOCK asked for the host's.
  if (std::getenv("GPULAB_SIM_CLOCK") == nullptr) {
    gpulab::sim::set_clock_mode(gpulab::sim::ClockMode::modeled);
  }
  if (gpulab::sim::clock_mode() != gpulab::sim::ClockMode::modeled) {
    GTEST_SKIP() << "needs the sim's modeled clock (GPULAB_SIM_CLOCK=modeled)";
  }
  // 16 heads of 128 tokens (head_dim 64): grids that fill the modeled GPU's SMs, as a layer this
  // size would on a GPU. Level 3 against level 1 runs on as many sequences as it takes level 3's
  // own tiling to give every SM a block: a kernel of larger tiles has fewer blocks, and the model
  // would otherwise rank kernels by how few of them there are, not by the work.
  const AttentionConfig config{1, 128, 1024, 16, false};
  int sms = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // As many sequences as it takes the level of the largest tiles to give every SM a block, or,
  // with `issue`, the 16 warps an SM needs to issue every clock (4 schedulers, 4 clocks between a
  // warp's dependent instructions: docs/sim.md, section 10). Level 0's GEMMs have those at any
  // size; level 1's kernel, at one block per SM, would be bound by its warps' latency instead.
  const auto filled_for = [&](std::initializer_list<int> levels, bool issue = false) {
    int batch = 1;
    for (const int level : levels) {
      const CoreBlocks blocks = core_blocks(config, level);
      const int per_sm = issue ? (16 + blocks.warps - 1) / blocks.warps : 1;
      const int blocks_per_sequence =
          config.heads * ((config.seq_len + blocks.rows - 1) / blocks.rows);
      batch = std::max(batch, (sms * per_sm + blocks_per_sequence - 1) / blocks_per_sequence);
    }
    AttentionConfig filled = config;
    filled.batch = batch;
    return filled;
  };
  const std::vector<SpeedComparison> comparisons = {
      {0, 1, filled_for({1}, true)}, {1, 3, filled_for({3})}, {3, 4, filled_for({3, 4})}};
  // The modeled clock gives every run of the same work the same time: one warm-up, one sample.
  options.warmup_runs = 1;
  options.min_samples = 1;
  options.max_samples = 1;
  options.min_time_ms = 0;
#endif
  for (const SpeedComparison& c : comparisons) {
    const CoreTiming before = time_core(c.before, c.config, options);
    const CoreTiming after = time_core(c.after, c.config, options);
    // A fast wrong answer earns nothing: the two levels' attn agree within both tolerances (the
    // CPU reference of a layer this size would take longer than the whole test).
    const double scale = gpulab::rms(before.attn);
    EXPECT_TRUE(all_close(before.attn, after.attn,
                          kernels::level_tolerance(c.config, c.after, scale) +
                              kernels::level_tolerance(c.config, c.before, scale),
                          "attn", kernels::heads_shape(c.config)))
        << "level " << c.after << "'s attn against level " << c.before << "'s, "
        << describe(c.config);
    const gpulab::ComparisonResult result = gpulab::compare(before.time, after.time);
    EXPECT_EQ(result.verdict, gpulab::Comparison::faster)
        << "level " << c.after << "'s core (median " << after.time.median_ms
        << " ms) against level " << c.before << "'s (median " << before.time.median_ms
        << " ms): " << gpulab::to_string(result.verdict) << ", ratio " << result.ratio << ", noise "
        << result.noise << ", " << describe(c.config)
        << (gpulab::event_clock() == gpulab::TimingClock::modeled ? " (modeled clock)" : "")
        << (result.verdict == gpulab::Comparison::faster
                ? std::string()
                : gpulab::testing::where_time_goes([&] {
                    Core core(c.config, c.after, 2, false);
                    core_of(c.after)(core.config, core.buffers, core.stream);
                    GPULAB_CHECK(cudaStreamSynchronize(core.stream));
                  }));
  }
}

}  // namespace
