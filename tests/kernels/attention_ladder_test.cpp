// The attention ladder (kernels/attention/, attention_levels()): every level from the same inputs
// to the same output as the unfused forward pass, within its level_tolerance, on several shapes
// (causal, sizes that are not multiples of any tile, head dimensions in each of level 3's buckets,
// several seeds), each from buffers holding only the intermediates its level needs. On sim also
// under the reverse and a shuffled schedule, and with the counted traffic of each level.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "numeric_check.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {
namespace {

using gpulab::testing::all_close;
using gpulab::testing::for_each_schedule;

struct LadderCase {
  AttentionConfig config;
  unsigned seed;
};

// y of `level` from poisoned outputs.
std::vector<float> run_level(const Level<AttentionLaunch>& level, const AttentionConfig& config,
                             AttentionBuffers& buffers) {
  for (DeviceBuffer<float>* out :
       {&buffers.qkv, &buffers.scores, &buffers.probs, &buffers.attn, &buffers.y}) {
    out->fill_bytes(0xff);
  }
  buffers.qkv_half.fill_bytes(0xff);
  level.launch(config, buffers, nullptr);
  GPULAB_CHECK(cudaDeviceSynchronize());
  return buffers.y.to_vector();
}

TEST(AttentionLadder, EveryLevelMatchesTheReferenceOnEveryShape) {
  GPULAB_REQUIRE_DEVICE();
  const LadderCase cases[] = {
      {{1, 1, 16, 1, false}, 2},     // one token, head_dim 16
      {{2, 37, 64, 2, true}, 3},     // causal, 37 tokens: no tile divides it; head_dim 32
      {{1, 70, 128, 2, false}, 5},   // head_dim 64, two K/V tiles and a part
      {{1, 67, 128, 2, true}, 7},    // causal across two blocks of level 4's 64 rows
      {{1, 20, 256, 2, true}, 11},   // head_dim 128: level 4 opts in to more shared memory
      {{1, 37, 48, 2, true}, 13},    // head_dim 24: partial tiles of the head dimension
      {{1, 29, 120, 3, false}, 17},  // head_dim 40 (level 4 refuses both)
  };
  for (const LadderCase& c : cases) {
    const AttentionInputs inputs = make_attention_inputs(c.config, c.seed);
    const std::vector<float> expected = attention_reference(c.config, inputs);
    for (const Level<AttentionLaunch>& level : attention_levels()) {
      SCOPED_TRACE("level " + std::to_string(level.number) + " (" + std::string(level.name) +
                   "), batch " + std::to_string(c.config.batch) + ", seq_len " +
                   std::to_string(c.config.seq_len) + ", head_dim " +
                   std::to_string(c.config.head_dim()) + (c.config.causal ? ", causal" : "") +
                   ", seed " + std::to_string(c.seed));
      AttentionBuffers buffers(c.config, attention_workspace(level.number));
      upload(inputs, buffers);
      if (level.number == 4 && c.config.head_dim() % 16 != 0) {
        EXPECT_THROW(level.launch(c.config, buffers, nullptr), std::invalid_argument);
        continue;
      }
      const Tolerance tolerance = level_tolerance(c.config, level.number, rms(expected));
      for_each_schedule([&] {
        EXPECT_TRUE(all_close(expected, run_level(level, c.config, buffers), tolerance));
      });
    }
  }
}

TEST(AttentionLadder, EachLevelsBuffersHoldOnlyWhatItNeeds) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{1, 48, 64, 2, false};
  const std::size_t s2 = 2u * 48u * 48u * sizeof(float);  // one [B, H, S, S] tensor
  const std::size_t qkv_half = 48u * 3u * 64u * 2u;
  const std::size_t linear = AttentionBuffers(config, attention_workspace(3)).bytes();
  EXPECT_EQ(AttentionBuffers(config, attention_workspace(0)).bytes(), linear + 2 * s2);
  EXPECT_EQ(AttentionBuffers(config, attention_workspace(1)).bytes(), linear + s2);
  EXPECT_EQ(AttentionBuffers(config, attention_workspace(2)).bytes(), linear + s2);
  EXPECT_EQ(AttentionBuffers(config, attention_workspace(4)).bytes(), linear + qkv_half);
  EXPECT_EQ(AttentionBuffers(config).bytes(), linear + 2 * s2 + qkv_half) << "by default, all";
  for (int level = 0; level <= 4; ++level) {
    EXPECT_EQ(AttentionBuffers::bytes_for(config, attention_workspace(level)),
              AttentionBuffers(config, attention_workspace(level)).bytes())
        << "level " << level;
  }
  EXPECT_EQ(AttentionBuffers::bytes_for({1, 4096, 1024, 16, false}, attention_workspace(3)),
            4096u * 1024u * 6u * 4u + 1024u * 1024u * 4u * 4u)
      << "x, qkv (3), attn, y; w_qkv (3) and w_out";
  EXPECT_THROW((void)AttentionBuffers::bytes_for({1, 8, 10, 3, false}), std::invalid_argument);
  EXPECT_THROW((void)attention_workspace(5), std::invalid_argument);
  EXPECT_THROW((void)attention_workspace(-1), std::invalid_argument);
}

TEST(AttentionLadder, ALevelWithoutItsIntermediatesSaysWhichAllocationItNeeds) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{1, 16, 32, 2, false};
  AttentionBuffers flash_only(config, attention_workspace(3));
  for (const int level : {0, 1, 2, 4}) {
    SCOPED_TRACE("level " + std::to_string(level));
    try {
      attention_levels()[static_cast<std::size_t>(level)].launch(config, flash_only, nullptr);
      FAIL() << "ran without its intermediates";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("attention_workspace(" + std::to_string(level) + ")"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(flash_attention_forward(config, flash_only, nullptr));
  GPULAB_CHECK(cudaDeviceSynchronize());
}

TEST(AttentionLadder, TensorCoreLevelNeedsWholeWmmaTilesOfTheHeadDimension) {
  GPULAB_REQUIRE_DEVICE();
  for (const AttentionConfig config : {AttentionConfig{1, 8, 24, 1, false},      // 24
                                       AttentionConfig{1, 8, 288, 1, false}}) {  // 288 > 128
    AttentionBuffers buffers(config, attention_workspace(4));
    try {
      flash_attention_wmma_forward(config, buffers, nullptr);
      FAIL() << "head_dim " << config.head_dim() << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("multiple of 16"), std::string::npos) << e.what();
    }
  }
  AttentionBuffers buffers({1, 8, 288, 1, false}, attention_workspace(3));
  EXPECT_THROW(flash_attention_forward({1, 8, 288, 1, false}, buffers, nullptr),
               std::invalid_argument);
}

TEST(AttentionLadder, BuffersAreCheckedAgainstTheConfig) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{1, 16, 32, 2, false};
  const AttentionBuffers all(config);
  const AttentionBuffers flash_only(config, attention_workspace(3));
  EXPECT_NO_THROW(check_buffers(config, all));
  EXPECT_NO_THROW(check_buffers(config, flash_only)) << "absent intermediates are allowed";
  EXPECT_THROW(check_buffers({1, 17, 32, 2, false}, all), std::invalid_argument);
  EXPECT_THROW(check_buffers({1, 16, 32, 4, false}, all), std::invalid_argument)
      << "the same sizes but a head count whose scores tensors are larger";
  EXPECT_THROW(check_buffers({1, 16, 32, 3, false}, all), std::invalid_argument)
      << "an invalid config";
}

TEST(AttentionLadder, QkvIsConvertedToHalfRoundingToNearestEven) {
  GPULAB_REQUIRE_DEVICE();
  const AttentionConfig config{1, 2, 16, 1, false};
  AttentionBuffers buffers(config, attention_workspace(4));
  std::vector<float> qkv(buffers.qkv.size());
  for (std::size_t i = 0; i < qkv.size(); ++i) {
    qkv[i] = 1.0f + static_cast<float>(i) * 0x1p-12f;  // ulp(1) in FP16 is 2^-10
  }
  buffers.qkv.copy_from(qkv);
  buffers.qkv_half.fill_bytes(0xff);
  convert_qkv_to_half(config, buffers, nullptr);
  GPULAB_CHECK(cudaDeviceSynchronize());
  const std::vector<__half> half = buffers.qkv_half.to_vector();
  for (std::size_t i = 0; i < qkv.size(); ++i) {
    // i * 2^-12 rounded to a multiple of 2^-10, ties (i % 4 == 2) to an even multiple.
    const std::size_t quarter = i / 4 + (i % 4 == 3 || (i % 4 == 2 && (i / 4) % 2 == 1) ? 1 : 0);
    EXPECT_EQ(__half2float(half[i]), 1.0f + static_cast<float>(quarter) * 0x1p-10f)
        << "element " << i;
  }
  AttentionBuffers without(config, attention_workspace(3));
  EXPECT_THROW(convert_qkv_to_half(config, without, nullptr), std::invalid_argument);
  EXPECT_THROW(convert_qkv_to_half({1, 3, 16, 1, false}, buffers, nullptr), std::invalid_argument);
}

TEST(AttentionLadder, Level4sToleranceAddsFp16RoundingToTheFp32Chain) {
  const AttentionConfig config{1, 256, 128, 2, false};
  const Tolerance fp32 = forward_tolerance(config, 2.0);
  for (const int level : {0, 1, 2, 3}) {
    EXPECT_EQ(level_tolerance(config, level, 2.0).rtol, fp32.rtol);
  }
  const Tolerance fp16 = level_tolerance(config, 4, 2.0);
  // Q and K through head_dim-term scores; V and P once (o / l is a weighted average), whatever
  // seq_len is.
  const double rounding = tolerance_for(DType::fp16, 64).rtol + tolerance_for(DType::fp16).rtol;
  EXPECT_DOUBLE_EQ(fp16.rtol, fp32.rtol + rounding);
  EXPECT_DOUBLE_EQ(fp16.atol, fp32.atol + rounding * 2.0) << "relative to the scale";
  EXPECT_DOUBLE_EQ(level_tolerance({1, 4096, 128, 2, false}, 4, 2.0).rtol -
                       forward_tolerance({1, 4096, 128, 2, false}, 2.0).rtol,
                   rounding)
      << "the FP16 part is independent of seq_len";
  EXPECT_THROW((void)level_tolerance(config, 5, 1.0), std::invalid_argument);
}

#if defined(GPULAB_BACKEND_SIM)
// The DRAM bytes (read and written) of everything `level` launches, and the bytes its kernel
// named `kernel` moves through L2 (sectors read and written, times 32).
struct Traffic {
  double dram = 0;
  double kernel_l2 = 0;
  double kernel_dram = 0;
  int kernel_launches = 0;
};

Traffic traffic(int level, const AttentionConfig& config, const char* kernel) {
  AttentionBuffers buffers(config, attention_workspace(level));
  upload(make_attention_inputs(config, 2), buffers);
  // A cold L2 for every level: the modeled L2 outlives a freed buffer, and new buffers can land
  // at the addresses of the last level's, hitting (or writing back) sectors that are not theirs.
  GPULAB_CHECK(sim::reset_modeled_l2(nullptr));
  const auto launches = sim::count_launches([&] {
    attention_levels()[static_cast<std::size_t>(level)].launch(config, buffers, nullptr);
    GPULAB_CHECK(cudaDeviceSynchronize());
  });
  Traffic t;
  for (const CountedLaunch& launch : launches) {
    const MemoryCounters& c = launch.counters;
    const auto dram = static_cast<double>(c.dram_bytes_read + c.dram_bytes_written);
    t.dram += dram;
    if (launch.kernel == kernel) {
      ++t.kernel_launches;
      t.kernel_dram += dram;
      t.kernel_l2 += 32.0 * static_cast<double>(c.l2_sector_reads + c.l2_sector_writes);
    }
  }
  return t;
}

TEST(AttentionLadderTraffic, FusingAndFlashRemoveTheScoreMatricesRoundTrips) {
  GPULAB_REQUIRE_COUNTING();
  const AttentionConfig config{1, 128, 128, 2, false};  // head_dim 64
  const double s2 = 2.0 * 128 * 128 * 4;                // one [B, H, S, S] float tensor
  const double qkvo = 4.0 * 128 * 128 * 4;              // Q, K, V read and O written once, FP32
  const Traffic unfused = traffic(0, config, "softmax_rows_kernel");
  const Traffic fused = traffic(1, config, "softmax_weighted_sum_kernel");
  const Traffic flash = traffic(3, config, "flash_attention_hd64_kernel");
  const Traffic tensor = traffic(4, config, "flash_attention_wmma_kernel");
  for (const Traffic* t : {&unfused, &fused, &flash, &tensor}) {
    ASSERT_EQ(t->kernel_launches, 1) << "the kernel each level is measured by ran once";
  }
  EXPECT_LE(fused.dram, unfused.dram - s2) << "level 1 never writes P";
  EXPECT_LE(flash.dram, fused.dram - s2) << "level 3 writes no S x S tensor at all";
  // K and V are read once per block of 64 query rows; L2 serves all but the first read.
  EXPECT_LE(flash.kernel_dram, 1.5 * qkvo);
  // Through L2, level 4 moves Q, K, V in half the bytes (O is still FP32).
  EXPECT_LE(tensor.kernel_l2, 0.65 * flash.kernel_l2);
}
#endif

}  // namespace
}  // namespace gpulab::kernels
