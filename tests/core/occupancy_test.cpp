// Unit tests of occupancy.hpp: hand-worked cases on compute capabilities 7.5, 8.0, 8.6, 8.9 and
// 9.0, the checks of invalid configurations, the sweeps, and the limiter's names.
//
// Every expected number below was worked out by hand from the CUDA occupancy rules, as written in
// the CUDA Occupancy Calculator / the toolkit's cuda_occupancy.h (CUDA 13.0), never by calling the
// module. The rules, per block of B threads, R registers per thread and S bytes of shared memory:
//
//   warps per block        W = ceil(B / 32)
//   warps limit            max warps per SM / W                  (64 on 8.0/9.0, 48 on 8.6/8.9,
//                                                                  32 on 7.5)
//   registers per warp     RW = R x 32 rounded up to 256         (allocation unit: 256 on 7.x-9.x)
//   registers limit        floor(16384 / RW) x 4 warps / W       (the 65536-register file is split
//                                                                  among 4 sub-partitions; a warp's
//                                                                  registers come from one)
//                          unlimited when R = 0; no block at all when RW x ceil4(W) > 65536
//   shared memory per block  S + reserved rounded up to the granularity (256 on 7.x, 128 on
//                          8.x/9.x; reserved 0 on 7.5, 1 KiB on 8.x/9.0)
//   shared memory limit    carveout / that (unlimited when it is 0). With no carveout preference
//                          the calculator takes the largest carveout of the architecture:
//                          64 KiB on 7.5, 164 KiB on 8.0, 100 KiB on 8.6/8.9, 228 KiB on 9.0
//   blocks limit           16 on 7.5 and 8.6, 24 on 8.9, 32 on 8.0 and 9.0
//   active blocks          the smallest limit; limiter: that resource, ties in the order warps,
//                          registers, shared memory, blocks
//   occupancy              active blocks x W / max warps per SM
//
// Spec database figures used (CUDA C++ Programming Guide, "Compute Capabilities"):
//   t4 (7.5)            1024 threads = 32 warps, 16 blocks, 64 KiB per SM, opt-in 64 KiB, reserved
//   0 a100-sxm-80gb (8.0) 2048 threads = 64 warps, 32 blocks, 164 KiB per SM, opt-in 163 KiB, 1 KiB
//   rtx-3090 (8.6)      1536 threads = 48 warps, 16 blocks, 100 KiB per SM, opt-in 99 KiB, 1 KiB
//   l4, rtx-4090 (8.9)  1536 threads = 48 warps, 24 blocks, 100 KiB per SM, opt-in 99 KiB, 1 KiB
//   h100-sxm (9.0)      2048 threads = 64 warps, 32 blocks, 228 KiB per SM, opt-in 227 KiB, 1 KiB
#include "gpulab/core/occupancy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/specs.hpp"
#include "test_specs.hpp"

namespace gpulab {
namespace {

constexpr int kU = kUnlimitedBlocks;

using gpulab::testing::spec;

// Skips the calling test, with the reason, in a build without cuda_occupancy.h.
#define GPULAB_REQUIRE_OCCUPANCY()                                                         \
  do {                                                                                     \
    if (!occupancy_available()) {                                                          \
      GTEST_SKIP() << "this build found no cuda_occupancy.h (CUDA toolkit): occupancy is " \
                      "unavailable";                                                       \
    }                                                                                      \
  } while (false)

// One hand-worked configuration and everything the module must report for it.
struct Case {
  const char* name;                // what the case shows
  const char* spec;                // spec database key
  int registers;                   // registers per thread
  std::uint64_t static_shared;     // static shared memory per block, bytes
  int block;                       // threads per block
  std::uint64_t dynamic_shared;    // dynamic shared memory per block, bytes
  int limit_warps;                 // blocks the warp limit allows
  int limit_registers;             // blocks the register file allows
  int limit_shared;                // blocks shared memory allows
  int limit_blocks;                // the resident-block limit
  int registers_per_block;         // allocated registers per block
  std::uint64_t shared_per_block;  // allocated shared memory per block, bytes
  int active_blocks;               // resident blocks per SM
  int active_warps;                // resident warps per SM
  double occupancy_percent;        // active / max warps, percent
  OccupancyLimiter limiter;        // the tightest limit
};

// gtest prints a case by its name rather than its bytes.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

using L = OccupancyLimiter;

// clang-format off
const std::vector<Case> kCases = {
    // ---------------------------------------------------------------------------------------
    // CC 9.0, H100 SXM: 64 warps, 32 blocks, 228 KiB = 233472 B carveout, 1 KiB reserved,
    // granularity 128.
    // ---------------------------------------------------------------------------------------
    // 64 regs x 32 = 2048 per warp (a multiple of 256); 16384 / 2048 = 8 warps per quarter,
    // 32 per SM; W = 8: 32 / 8 = 4 blocks (= 65536 / (8 x 2048)). Warps 64 / 8 = 8. Shared
    // 0 + 1024 = 1024: 233472 / 1024 = 228. -> 4 blocks, 32 warps, 32/64 = 50%, registers.
    {"h100 64 regs x 256", "h100-sxm", 64, 0, 256, 0,
     8, 4, 228, 32, 16384, 1024, 4, 32, 50.0, L::registers},
    // 16 regs x 32 = 512 per warp; 16384 / 512 = 32 per quarter, 128 per SM; W = 32: 128 / 32 =
    // 4. Warps 64 / 32 = 2. Shared 228. -> 2 blocks, 64 warps, 100%, warps. 32 x 512 = 16384 regs.
    {"h100 16 regs x 1024", "h100-sxm", 16, 0, 1024, 0,
     2, 4, 228, 32, 16384, 1024, 2, 64, 100.0, L::warps},
    // Shared 49152 + 1024 = 50176 (392 x 128); 233472 / 50176 = 4.65 -> 4. W = 4: warps 16;
    // 32 regs -> 1024 per warp, 16 per quarter, 64 per SM / 4 = 16. -> 4 blocks, 16 warps, 25%,
    // shared memory. 4 x 1024 = 4096 regs.
    {"h100 48 KiB static x 128", "h100-sxm", 32, 49152, 128, 0,
     16, 16, 4, 32, 4096, 50176, 4, 16, 25.0, L::shared_memory},
    // W = 1: warps 64; 512 per warp -> 128 warps per SM / 1 = 128; shared 228; blocks 32.
    // -> 32 blocks, 32 warps, 50%, blocks per SM.
    {"h100 16 regs x 32", "h100-sxm", 16, 0, 32, 0,
     64, 128, 228, 32, 512, 1024, 32, 32, 50.0, L::blocks},
    // The sub-partition rule: 96 x 32 = 3072 per warp; 16384 / 3072 = 5.33 -> 5 per quarter,
    // 20 per SM; W = 3: 20 / 3 = 6 blocks (65536 / (3 x 3072) = 7.1 would say 7). Warps
    // 64 / 3 = 21. -> 6 blocks, 18 warps, 18/64 = 28.125%, registers. 3 x 3072 = 9216 regs.
    {"h100 96 regs x 96 (sub-partitions)", "h100-sxm", 96, 0, 96, 0,
     21, 6, 228, 32, 9216, 1024, 6, 18, 28.125, L::registers},
    // Register rounding: 33 x 32 = 1056 -> 1280 (5 x 256); 16384 / 1280 = 12.8 -> 12 per
    // quarter, 48 per SM / 8 = 6 blocks. Warps 8. -> 6 blocks, 48 warps, 75%, registers.
    // 8 x 1280 = 10240 regs. (32 registers would give 8 blocks, 100%.)
    {"h100 33 regs x 256 (rounding)", "h100-sxm", 33, 0, 256, 0,
     8, 6, 228, 32, 10240, 1024, 6, 48, 75.0, L::registers},
    // 40 x 32 = 1280: the same allocation as 33 registers, so the same answer.
    {"h100 40 regs x 256", "h100-sxm", 40, 0, 256, 0,
     8, 6, 228, 32, 10240, 1024, 6, 48, 75.0, L::registers},
    // Shared rounding: 1000 + 1024 + 3000 = 5024 -> 5120 (40 x 128); 233472 / 5120 = 45.6 -> 45.
    // 32 regs: 64 warps / 8 = 8; warps 8. Tie warps = registers = 8 -> named warps (enum order).
    // -> 8 blocks, 64 warps, 100%.
    {"h100 static+dynamic rounding, tie", "h100-sxm", 32, 1000, 256, 3000,
     8, 8, 45, 32, 8192, 5120, 8, 64, 100.0, L::warps},
    // The whole opt-in: 232448 + 1024 = 233472 = the carveout -> 1. W = 32: warps 2, registers
    // 64 / 32 = 2. -> 1 block, 32 warps, 50%, shared memory. 32 x 1024 = 32768 regs.
    {"h100 227 KiB dynamic x 1024", "h100-sxm", 32, 0, 1024, 232448,
     2, 2, 1, 32, 32768, 233472, 1, 32, 50.0, L::shared_memory},
    // 255 x 32 = 8160 -> 8192; 16384 / 8192 = 2 per quarter, 8 per SM / 8 = 1. The block uses
    // 8 x 8192 = 65536, all of it. -> 1 block, 8 warps, 12.5%, registers.
    {"h100 255 regs x 256", "h100-sxm", 255, 0, 256, 0,
     8, 1, 228, 32, 65536, 1024, 1, 8, 12.5, L::registers},

    // ---------------------------------------------------------------------------------------
    // CC 8.0, A100 SXM 80GB: 64 warps, 32 blocks, 164 KiB = 167936 B carveout, 1 KiB
    // reserved, granularity 128.
    // ---------------------------------------------------------------------------------------
    // As on H100: registers allow 4 of 8 warps; shared 167936 / 1024 = 164. -> 4, 32, 50%.
    {"a100 64 regs x 256", "a100-sxm-80gb", 64, 0, 256, 0,
     8, 4, 164, 32, 16384, 1024, 4, 32, 50.0, L::registers},
    // Warps 64 / 32 = 2; 16 regs: 128 warps / 32 = 4. -> 2 blocks, 64 warps, 100%, warps.
    {"a100 16 regs x 1024", "a100-sxm-80gb", 16, 0, 1024, 0,
     2, 4, 164, 32, 16384, 1024, 2, 64, 100.0, L::warps},
    // 49152 + 1024 = 50176; 167936 / 50176 = 3.35 -> 3. Warps 16, registers 16.
    // -> 3 blocks, 12 warps, 12/64 = 18.75%, shared memory.
    {"a100 48 KiB static x 128", "a100-sxm-80gb", 32, 49152, 128, 0,
     16, 16, 3, 32, 4096, 50176, 3, 12, 18.75, L::shared_memory},
    // W = 1: warps 64, registers 128, shared 164, blocks 32. -> 32 blocks, 32 warps, 50%, blocks.
    {"a100 16 regs x 32", "a100-sxm-80gb", 16, 0, 32, 0,
     64, 128, 164, 32, 512, 1024, 32, 32, 50.0, L::blocks},
    // Opt-in 166912 + 1024 = 167936 = the carveout -> 1. Warps 16, registers 16.
    // -> 1 block, 4 warps, 6.25%, shared memory.
    {"a100 163 KiB dynamic x 128", "a100-sxm-80gb", 32, 0, 128, 166912,
     16, 16, 1, 32, 4096, 167936, 1, 4, 6.25, L::shared_memory},
    // 100 + 1024 = 1124 -> 1152 (9 x 128); 167936 / 1152 = 145.8 -> 145. W = 2: warps 32,
    // registers 64 / 2 = 32, blocks 32: a three-way tie -> warps. -> 32 blocks, 64 warps, 100%.
    {"a100 three-way tie", "a100-sxm-80gb", 32, 0, 64, 100,
     32, 32, 145, 32, 2048, 1152, 32, 64, 100.0, L::warps},

    // ---------------------------------------------------------------------------------------
    // CC 8.6, RTX 3090: 48 warps, 16 blocks, 100 KiB = 102400 B carveout, 1 KiB reserved,
    // granularity 128.
    // ---------------------------------------------------------------------------------------
    // W = 16: warps 48 / 16 = 3; 32 regs: 64 warps / 16 = 4; shared 102400 / 1024 = 100.
    // -> 3 blocks, 48 warps, 100%, warps.
    {"rtx3090 32 regs x 512", "rtx-3090", 32, 0, 512, 0,
     3, 4, 100, 16, 16384, 1024, 3, 48, 100.0, L::warps},
    // Registers 32 warps / 8 = 4; warps 48 / 8 = 6. -> 4 blocks, 32 warps, 32/48 = 66.667%,
    // registers.
    {"rtx3090 64 regs x 256", "rtx-3090", 64, 0, 256, 0,
     6, 4, 100, 16, 16384, 1024, 4, 32, 66.6667, L::registers},
    // 32768 + 1024 = 33792 (264 x 128); 102400 / 33792 = 3.03 -> 3. Warps 12, registers 16.
    // -> 3 blocks, 12 warps, 25%, shared memory.
    {"rtx3090 32 KiB static x 128", "rtx-3090", 32, 32768, 128, 0,
     12, 16, 3, 16, 4096, 33792, 3, 12, 25.0, L::shared_memory},
    // W = 2: warps 24, registers 64 / 2 = 32, shared 100, blocks 16.
    // -> 16 blocks, 32 warps, 66.667%, blocks per SM.
    {"rtx3090 32 regs x 64", "rtx-3090", 32, 0, 64, 0,
     24, 32, 100, 16, 2048, 1024, 16, 32, 66.6667, L::blocks},
    // 1024-thread blocks on a 1536-thread SM: warps 48 / 32 = 1 (1.5 rounds down); registers
    // 64 / 32 = 2. -> 1 block, 32 warps, 66.667%, warps: a third of the SM idles.
    {"rtx3090 32 regs x 1024", "rtx-3090", 32, 0, 1024, 0,
     1, 2, 100, 16, 32768, 1024, 1, 32, 66.6667, L::warps},
    // 48 x 32 = 1536 per warp; 16384 / 1536 = 10.67 -> 10 per quarter, 40 per SM / 4 = 10.
    // Warps 48 / 4 = 12. -> 10 blocks, 40 warps, 40/48 = 83.333%, registers.
    {"rtx3090 48 regs x 128", "rtx-3090", 48, 0, 128, 0,
     12, 10, 100, 16, 6144, 1024, 10, 40, 83.3333, L::registers},

    // ---------------------------------------------------------------------------------------
    // CC 8.9, L4 and RTX 4090: 48 warps, 24 blocks, 100 KiB = 102400 B carveout, 1 KiB
    // reserved, granularity 128.
    // ---------------------------------------------------------------------------------------
    // W = 1: warps 48, registers 64 / 1 = 64, shared 100, blocks 24.
    // -> 24 blocks, 24 warps, 50%, blocks per SM.
    {"l4 32 regs x 32", "l4", 32, 0, 32, 0,
     48, 64, 100, 24, 1024, 1024, 24, 24, 50.0, L::blocks},
    // W = 8: warps 6, registers 64 / 8 = 8. -> 6 blocks, 48 warps, 100%, warps.
    {"l4 32 regs x 256", "l4", 32, 0, 256, 0,
     6, 8, 100, 24, 8192, 1024, 6, 48, 100.0, L::warps},
    // 128 x 32 = 4096 per warp; 16384 / 4096 = 4 per quarter, 16 per SM / 4 = 4. Warps 12.
    // -> 4 blocks, 16 warps, 16/48 = 33.333%, registers.
    {"l4 128 regs x 128", "l4", 128, 0, 128, 0,
     12, 4, 100, 24, 16384, 1024, 4, 16, 33.3333, L::registers},
    // 40960 + 1024 = 41984 (328 x 128); 102400 / 41984 = 2.44 -> 2. Warps 6, registers 8.
    // -> 2 blocks, 16 warps, 33.333%, shared memory.
    {"l4 40 KiB dynamic x 256", "l4", 32, 0, 256, 40960,
     6, 8, 2, 24, 8192, 41984, 2, 16, 33.3333, L::shared_memory},
    // The whole opt-in: 101376 + 1024 = 102400 -> 1. -> 1 block, 1 warp, 1/48 = 2.0833%, shared.
    {"l4 99 KiB dynamic x 32", "l4", 32, 0, 32, 101376,
     48, 64, 1, 24, 1024, 102400, 1, 1, 2.08333, L::shared_memory},
    // Same CC, another board: W = 2: warps 24, registers 32, shared 100, blocks 24. Tie warps =
    // blocks = 24 -> warps. -> 24 blocks, 48 warps, 100%.
    {"rtx4090 32 regs x 64, tie", "rtx-4090", 32, 0, 64, 0,
     24, 32, 100, 24, 2048, 1024, 24, 48, 100.0, L::warps},

    // ---------------------------------------------------------------------------------------
    // CC 7.5, T4: 32 warps, 16 blocks, 64 KiB = 65536 B carveout, nothing reserved,
    // granularity 256.
    // ---------------------------------------------------------------------------------------
    // W = 32: warps 32 / 32 = 1; registers 64 / 32 = 2; no shared memory at all -> unlimited.
    // -> 1 block, 32 warps, 100%, warps.
    {"t4 32 regs x 1024", "t4", 32, 0, 1024, 0,
     1, 2, kU, 16, 32768, 0, 1, 32, 100.0, L::warps},
    // 96 x 32 = 3072; 16384 / 3072 = 5 per quarter, 20 per SM / 4 = 5. Warps 32 / 4 = 8.
    // -> 5 blocks, 20 warps, 20/32 = 62.5%, registers.
    {"t4 96 regs x 128", "t4", 96, 0, 128, 0,
     8, 5, kU, 16, 12288, 0, 5, 20, 62.5, L::registers},
    // 20000 -> 20224 (79 x 256; on 8.x it would be 20000 + 1024 -> 21120); 65536 / 20224 = 3.24
    // -> 3. Warps 8, registers 16. -> 3 blocks, 12 warps, 37.5%, shared memory.
    {"t4 20000 B static x 128 (granularity 256)", "t4", 32, 20000, 128, 0,
     8, 16, 3, 16, 4096, 20224, 3, 12, 37.5, L::shared_memory},
    // W = 1: warps 32, registers 64, shared unlimited, blocks 16.
    // -> 16 blocks, 16 warps, 50%, blocks per SM.
    {"t4 32 regs x 32", "t4", 32, 0, 32, 0,
     32, 64, kU, 16, 1024, 0, 16, 16, 50.0, L::blocks},
    // 4096 B, no reservation: 65536 / 4096 = 16. Warps 32 / 2 = 16, registers 32, blocks 16:
    // warps, shared and blocks tie -> warps. -> 16 blocks, 32 warps, 100%.
    {"t4 4 KiB static x 64, tie", "t4", 32, 4096, 64, 0,
     16, 32, 16, 16, 2048, 4096, 16, 32, 100.0, L::warps},
    // 64 KiB dynamic is allowed with the opt-in (48 KiB without): 65536 / 65536 = 1. Warps 4,
    // registers 8. -> 1 block, 8 warps, 25%, shared memory.
    {"t4 64 KiB dynamic x 256", "t4", 32, 0, 256, 65536,
     4, 8, 1, 16, 8192, 65536, 1, 8, 25.0, L::shared_memory},
    // No registers at all: the register limit does not apply. Warps 32 / 8 = 4.
    // -> 4 blocks, 32 warps, 100%, warps.
    {"t4 0 regs x 256", "t4", 0, 0, 256, 0,
     4, kU, kU, 16, 0, 0, 4, 32, 100.0, L::warps},
};
// clang-format on

// One test per case, named after it (e.g. HandWorked/OccupancyCase.Matches/h100_64_regs_x_256).
class OccupancyCase : public ::testing::TestWithParam<Case> {};

TEST_P(OccupancyCase, Matches) {
  GPULAB_REQUIRE_OCCUPANCY();
  const Case& c = GetParam();
  const KernelResources kernel{c.registers, c.static_shared, 0};
  const Occupancy o = compute_occupancy(spec(c.spec), kernel, c.block, c.dynamic_shared);
  EXPECT_EQ(o.block_size, c.block);
  EXPECT_EQ(o.dynamic_shared_bytes, c.dynamic_shared);
  EXPECT_EQ(o.warps_per_block, (c.block + 31) / 32);
  EXPECT_EQ(o.blocks_limit_warps, c.limit_warps);
  EXPECT_EQ(o.blocks_limit_registers, c.limit_registers);
  EXPECT_EQ(o.blocks_limit_shared, c.limit_shared);
  EXPECT_EQ(o.blocks_limit_blocks, c.limit_blocks);
  EXPECT_EQ(o.allocated_registers_per_block, c.registers_per_block);
  EXPECT_EQ(o.allocated_shared_bytes_per_block, c.shared_per_block);
  EXPECT_EQ(o.active_blocks_per_sm, c.active_blocks);
  EXPECT_EQ(o.active_warps_per_sm, c.active_warps);
  EXPECT_NEAR(o.occupancy_fraction * 100.0, c.occupancy_percent, 1e-3);
  EXPECT_EQ(to_string(o.limiter), to_string(c.limiter));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name;
  for (const char ch : std::string(info.param.name)) {
    const bool alnum =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (alnum) {
      name += ch;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') {
    name.pop_back();
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(HandWorked, OccupancyCase, ::testing::ValuesIn(kCases), case_name);

TEST(Occupancy, AtLeastThirtyHandWorkedCases) {
  EXPECT_GE(kCases.size(), 30u);
}

TEST(Occupancy, EveryComputeCapabilityHasACaseForEachLimiter) {
  // The table above is the evidence: each of the five compute capabilities has a warp-,
  // register-, shared-memory- and block-limited case.
  for (const char* cc : {"7.5", "8.0", "8.6", "8.9", "9.0"}) {
    for (const L limiter : {L::warps, L::registers, L::shared_memory, L::blocks}) {
      bool found = false;
      for (const Case& c : kCases) {
        found = found || (spec(c.spec).compute_capability() == cc && c.limiter == limiter);
      }
      EXPECT_TRUE(found) << "no " << to_string(limiter) << "-limited case on CC " << cc;
    }
  }
}

TEST(Occupancy, MaxWarpsComeFromTheSpec) {
  GPULAB_REQUIRE_OCCUPANCY();
  const KernelResources kernel{32, 0, 0};
  EXPECT_EQ(compute_occupancy(spec("t4"), kernel, 128).max_warps_per_sm, 32);
  EXPECT_EQ(compute_occupancy(spec("a100-sxm-80gb"), kernel, 128).max_warps_per_sm, 64);
  EXPECT_EQ(compute_occupancy(spec("rtx-3090"), kernel, 128).max_warps_per_sm, 48);
  EXPECT_EQ(compute_occupancy(spec("l4"), kernel, 128).max_warps_per_sm, 48);
  EXPECT_EQ(compute_occupancy(spec("h100-sxm"), kernel, 128).max_warps_per_sm, 64);
}

TEST(Occupancy, TheCarveoutIsTheLargestTheArchitectureSupports) {
  GPULAB_REQUIRE_OCCUPANCY();
  // cuda_occupancy.h, cudaOccSMemPreferenceVoltaPlus: with no carveout preference the preferred
  // size is sharedMemPerMultiprocessor, aligned up to a supported carveout; it is used whenever
  // one block fits in it, which the opt-in limit guarantees. So even a kernel with no shared
  // memory is computed against the full carveout.
  const KernelResources kernel{32, 0, 0};
  EXPECT_EQ(compute_occupancy(spec("t4"), kernel, 128).shared_memory_per_sm_bytes, 64u * 1024);
  EXPECT_EQ(compute_occupancy(spec("a100-sxm-80gb"), kernel, 128).shared_memory_per_sm_bytes,
            164u * 1024);
  EXPECT_EQ(compute_occupancy(spec("rtx-3090"), kernel, 128).shared_memory_per_sm_bytes,
            100u * 1024);
  EXPECT_EQ(compute_occupancy(spec("rtx-4090"), kernel, 128).shared_memory_per_sm_bytes,
            100u * 1024);
  EXPECT_EQ(compute_occupancy(spec("h100-sxm"), kernel, 128).shared_memory_per_sm_bytes,
            228u * 1024);
  EXPECT_EQ(compute_occupancy(spec("h100-sxm"), kernel, 128, 100 * 1024).shared_memory_per_sm_bytes,
            228u * 1024);
}

TEST(Occupancy, RegisterRoundingChangesTheAnswerAtTheUnitBoundary) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  // 32 x 32 = 1024 per warp: 16 per quarter, 64 warps: 8 blocks of 256 threads (100%).
  // 33..40 registers all take 1280 per warp: 12 per quarter, 48 warps: 6 blocks (75%).
  // 41 x 32 = 1312 -> 1536: 16384 / 1536 = 10.67 -> 10 per quarter, 40 warps: 5 blocks (62.5%).
  EXPECT_EQ(compute_occupancy(h100, {32, 0, 0}, 256).active_blocks_per_sm, 8);
  for (int registers = 33; registers <= 40; ++registers) {
    SCOPED_TRACE(registers);
    const Occupancy o = compute_occupancy(h100, {registers, 0, 0}, 256);
    EXPECT_EQ(o.allocated_registers_per_block, 8 * 1280);
    EXPECT_EQ(o.active_blocks_per_sm, 6);
  }
  EXPECT_EQ(compute_occupancy(h100, {41, 0, 0}, 256).allocated_registers_per_block, 8 * 1536);
  EXPECT_EQ(compute_occupancy(h100, {41, 0, 0}, 256).active_blocks_per_sm, 5);
}

TEST(Occupancy, AKernelLaunchBoundAllowsBlocksUpToIt) {
  GPULAB_REQUIRE_OCCUPANCY();
  // __launch_bounds__(256): 256 threads are fine and give the same answer as without the bound.
  const Occupancy bounded = compute_occupancy(spec("h100-sxm"), {64, 0, 256}, 256);
  EXPECT_EQ(bounded.active_blocks_per_sm, 4);
  EXPECT_EQ(bounded.limiter, L::registers);
}

// ---------------------------------------------------------------------------------------------
// Configurations that cannot launch
// ---------------------------------------------------------------------------------------------

// The std::invalid_argument message of compute_occupancy, or "" when it does not throw one.
std::string invalid_message(const GpuSpec& s, const KernelResources& kernel, int block,
                            std::uint64_t dynamic = 0) {
  try {
    (void)compute_occupancy(s, kernel, block, dynamic);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

void expect_one_line_containing(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos)
      << "\"" << message << "\" lacks \"" << part << "\"";
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(OccupancyInvalid, BlockSizes) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  expect_one_line_containing(invalid_message(h100, {32, 0, 0}, 0),
                             "block size must be at least 1 thread (got 0)");
  expect_one_line_containing(invalid_message(h100, {32, 0, 0}, -32), "(got -32)");
  expect_one_line_containing(invalid_message(h100, {32, 0, 0}, 1025),
                             "block size 1025 is above H100 SXM's limit of 1024 threads per block");
  expect_one_line_containing(invalid_message(h100, {32, 0, 256}, 288),
                             "block size 288 is above the kernel's __launch_bounds__ limit of 256");
  expect_one_line_containing(invalid_message(h100, {32, 0, -1}, 256),
                             "max threads per block must be 0 (no limit) or positive (got -1)");
}

TEST(OccupancyInvalid, RegistersPerThread) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  expect_one_line_containing(invalid_message(h100, {256, 0, 0}, 32),
                             "registers per thread must be 0..255 (got 256)");
  expect_one_line_containing(invalid_message(h100, {-1, 0, 0}, 32),
                             "registers per thread must be 0..255 (got -1)");
  EXPECT_EQ(invalid_message(h100, {255, 0, 0}, 32), "");
  EXPECT_EQ(invalid_message(h100, {0, 0, 0}, 32), "");
}

TEST(OccupancyInvalid, RegistersPerBlock) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  // 65 x 32 = 2080 -> 2304 per warp x 32 warps = 73728 > 65536.
  expect_one_line_containing(invalid_message(h100, {65, 0, 0}, 1024),
                             "needs 73728 registers (2304 per warp x 32 warps");
  // 64 x 32 = 2048 x 32 warps = 65536: exactly fits.
  EXPECT_EQ(invalid_message(h100, {64, 0, 0}, 1024), "");
  // The hardware check rounds the warps up to a multiple of the 4 sub-partitions: 200 x 32 =
  // 6400 per warp (a multiple of 256) x 10 warps = 64000 would fit, but x 12 = 76800 does not.
  expect_one_line_containing(invalid_message(h100, {200, 0, 0}, 320),
                             "needs 76800 registers (6400 per warp x 12 warps");
  // 8 warps: 8 x 6400 = 51200 fits.
  EXPECT_EQ(invalid_message(h100, {200, 0, 0}, 256), "");
}

TEST(OccupancyInvalid, SharedMemoryAboveTheOptInLimit) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  // 227 KiB = 232448 B is the most a block may have; one byte more fails.
  EXPECT_EQ(invalid_message(h100, {32, 0, 0}, 128, 232448), "");
  expect_one_line_containing(invalid_message(h100, {32, 0, 0}, 128, 232449),
                             "(static 0 B + dynamic 232449 B) is above H100 SXM's opt-in limit "
                             "of 232448 B per block");
  expect_one_line_containing(invalid_message(h100, {32, 1024, 0}, 128, 231425),
                             "(static 1024 B + dynamic 231425 B)");
  expect_one_line_containing(invalid_message(h100, {32, 232449, 0}, 128, 0), "opt-in limit");
  // T4: 64 KiB.
  expect_one_line_containing(invalid_message(spec("t4"), {32, 0, 0}, 128, 65537),
                             "T4's opt-in limit of 65536 B");
}

TEST(OccupancyInvalid, AnUnknownComputeCapabilityIsARuntimeError) {
  GPULAB_REQUIRE_OCCUPANCY();
  GpuSpec future = spec("h100-sxm");
  future.cc_major = 99;
  EXPECT_THROW((void)compute_occupancy(future, {32, 0, 0}, 128), std::runtime_error);
  try {
    (void)compute_occupancy(future, {32, 0, 0}, 128);
  } catch (const std::runtime_error& e) {
    expect_one_line_containing(e.what(), "does not know compute capability 99.0");
  }
}

TEST(OccupancyAvailability, MatchesTheConfigureTimeSearch) {
  EXPECT_EQ(occupancy_available(), GPULAB_TEST_EXPECT_OCCUPANCY != 0);
}

TEST(OccupancyAvailability, WithoutTheHeaderComputingSaysWhy) {
  if (occupancy_available()) {
    GTEST_SKIP() << "this build has cuda_occupancy.h; the unavailable path is not compiled in";
  }
  try {
    (void)compute_occupancy(spec("h100-sxm"), {32, 0, 0}, 128);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    expect_one_line_containing(e.what(), "no cuda_occupancy.h");
  }
  EXPECT_THROW((void)sweep_block_size(spec("h100-sxm"), {32, 0, 0}), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Sweeps
// ---------------------------------------------------------------------------------------------

// Each point equals compute_occupancy at its configuration, or carries its error.
void expect_matches_pointwise(const std::vector<OccupancyPoint>& points, const GpuSpec& s,
                              const KernelResources& kernel, int block, std::uint64_t dynamic,
                              char swept) {
  for (const OccupancyPoint& point : points) {
    SCOPED_TRACE(point.x);
    KernelResources k = kernel;
    int b = block;
    std::uint64_t d = dynamic;
    if (swept == 'b') {
      b = point.x;
    } else if (swept == 'r') {
      k.registers_per_thread = point.x;
    } else {
      d = static_cast<std::uint64_t>(point.x);
    }
    const std::string error = invalid_message(s, k, b, d);
    if (!error.empty()) {
      EXPECT_FALSE(point.occupancy.has_value());
      EXPECT_EQ(point.error, error);
      continue;
    }
    ASSERT_TRUE(point.occupancy.has_value()) << point.error;
    EXPECT_TRUE(point.error.empty());
    const Occupancy expected = compute_occupancy(s, k, b, d);
    EXPECT_EQ(point.occupancy->block_size, expected.block_size);
    EXPECT_EQ(point.occupancy->active_blocks_per_sm, expected.active_blocks_per_sm);
    EXPECT_EQ(point.occupancy->active_warps_per_sm, expected.active_warps_per_sm);
    EXPECT_EQ(point.occupancy->limiter, expected.limiter);
    EXPECT_EQ(point.occupancy->allocated_registers_per_block,
              expected.allocated_registers_per_block);
    EXPECT_EQ(point.occupancy->allocated_shared_bytes_per_block,
              expected.allocated_shared_bytes_per_block);
    EXPECT_EQ(point.occupancy->dynamic_shared_bytes, d);
  }
}

TEST(OccupancySweep, BlockSizesAreWarpMultiplesUpToTheLimit) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  const std::vector<OccupancyPoint> points = sweep_block_size(h100, {64, 0, 0});
  ASSERT_EQ(points.size(), 32u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].x, 32 * static_cast<int>(i + 1));
    EXPECT_TRUE(points[i].occupancy.has_value()) << points[i].error;
  }
  expect_matches_pointwise(points, h100, {64, 0, 0}, 0, 0, 'b');
  // At 256 threads: the hand-worked 4 blocks, 50%.
  EXPECT_EQ(points[7].occupancy->active_blocks_per_sm, 4);
}

TEST(OccupancySweep, BlockSizesStopAtTheKernelsLaunchBound) {
  GPULAB_REQUIRE_OCCUPANCY();
  const std::vector<OccupancyPoint> points = sweep_block_size(spec("l4"), {32, 0, 256});
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points.front().x, 32);
  EXPECT_EQ(points.back().x, 256);
  // A bound below one warp gives the one block size there is.
  const std::vector<OccupancyPoint> tiny = sweep_block_size(spec("l4"), {32, 0, 16});
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_EQ(tiny.front().x, 16);
  ASSERT_TRUE(tiny.front().occupancy.has_value());
  EXPECT_EQ(tiny.front().occupancy->warps_per_block, 1);
}

TEST(OccupancySweep, BlockSizesThatCannotLaunchCarryTheReason) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  // 65 registers: 2304 per warp; 28 warps x 2304 = 64512 fits, 29 x 2304 = 66816 does not.
  const std::vector<OccupancyPoint> points = sweep_block_size(h100, {65, 0, 0}, 2048);
  ASSERT_EQ(points.size(), 32u);
  for (const OccupancyPoint& point : points) {
    SCOPED_TRACE(point.x);
    EXPECT_EQ(point.occupancy.has_value(), point.x <= 896);
    EXPECT_EQ(point.error.empty(), point.x <= 896);
  }
  expect_matches_pointwise(points, h100, {65, 0, 0}, 0, 2048, 'b');
}

TEST(OccupancySweep, RegistersRunFrom1To255) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec a100 = spec("a100-sxm-80gb");
  const KernelResources kernel{7, 1024, 0};  // the 7 is replaced
  const std::vector<OccupancyPoint> points = sweep_registers(a100, kernel, 256, 512);
  ASSERT_EQ(points.size(), 255u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].x, static_cast<int>(i + 1));
    // 256 threads x 255 registers is exactly 65536: every point launches.
    EXPECT_TRUE(points[i].occupancy.has_value()) << points[i].error;
  }
  expect_matches_pointwise(points, a100, kernel, 256, 512, 'r');
  // At 1024 threads only up to 64 registers fit (64 x 32 x 32 = 65536).
  const std::vector<OccupancyPoint> big = sweep_registers(a100, kernel, 1024);
  ASSERT_EQ(big.size(), 255u);
  EXPECT_TRUE(big[63].occupancy.has_value());
  EXPECT_FALSE(big[64].occupancy.has_value());
  EXPECT_NE(big[64].error.find("registers"), std::string::npos) << big[64].error;
  expect_matches_pointwise(big, a100, kernel, 1024, 0, 'r');
}

TEST(OccupancySweep, SharedMemoryRunsFromZeroToTheOptInLimitLessStatic) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  const KernelResources kernel{32, 1024, 0};
  // 0, 1024, ..., 232448 - 1024 = 231424: 227 points.
  const std::vector<OccupancyPoint> points = sweep_shared_memory(h100, kernel, 128);
  ASSERT_EQ(points.size(), 227u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].x, 1024 * static_cast<int>(i));
    EXPECT_TRUE(points[i].occupancy.has_value()) << points[i].error;
  }
  expect_matches_pointwise(points, h100, kernel, 128, 0, 's');
  // The last point fills the opt-in: 1024 + 231424 + 1024 reserved = 233472 -> 1 block.
  EXPECT_EQ(points.back().occupancy->active_blocks_per_sm, 1);
  // A step that does not divide the range stops at the last step inside it: 0..231000, 232.
  const std::vector<OccupancyPoint> odd = sweep_shared_memory(h100, kernel, 128, 1000);
  ASSERT_EQ(odd.size(), 232u);
  EXPECT_EQ(odd.back().x, 231000);
  // A huge step gives only 0.
  EXPECT_EQ(sweep_shared_memory(h100, kernel, 128, UINT64_MAX).size(), 1u);
}

TEST(OccupancySweep, SharedMemoryEdgeCases) {
  GPULAB_REQUIRE_OCCUPANCY();
  const GpuSpec h100 = spec("h100-sxm");
  EXPECT_THROW((void)sweep_shared_memory(h100, {32, 0, 0}, 128, 0), std::invalid_argument);
  // Static shared memory alone above the limit: one point at 0 that says why.
  const std::vector<OccupancyPoint> over = sweep_shared_memory(h100, {32, 300000, 0}, 128);
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over.front().x, 0);
  EXPECT_FALSE(over.front().occupancy.has_value());
  EXPECT_NE(over.front().error.find("opt-in limit"), std::string::npos) << over.front().error;
  // An invalid block size makes every point an error, not an exception.
  const std::vector<OccupancyPoint> bad_block = sweep_shared_memory(h100, {32, 0, 0}, 0, 65536);
  ASSERT_EQ(bad_block.size(), 4u);  // 0, 64 KiB, 128 KiB, 192 KiB
  for (const OccupancyPoint& point : bad_block) {
    EXPECT_FALSE(point.occupancy.has_value());
    EXPECT_NE(point.error.find("block size"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

TEST(OccupancyLimiter, Names) {
  EXPECT_EQ(to_string(L::warps), "warps");
  EXPECT_EQ(to_string(L::registers), "registers");
  EXPECT_EQ(to_string(L::shared_memory), "shared memory");
  EXPECT_EQ(to_string(L::blocks), "blocks per SM");
}

}  // namespace
}  // namespace gpulab
