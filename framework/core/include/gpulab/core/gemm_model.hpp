// A register-blocked SGEMM as the time model sees it: the tilings of the catalog's
// gemm_register_blocked kernels (kernels/gemm), what a launch of one counts on sim in closed form,
// and its modeled time. The sim's cuBLAS (framework/sim/src/cublas.cpp) is modeled this way: as
// the fastest of these kernels on the problem, its counts fed to the same time model as every
// counted kernel (traffic_model.hpp), never at the FP32 peak.
//
// The kernel, for row-major C (M x N) = A (M x K) B (K x N), one block per BM x BN tile of C:
//   per k-tile of BK:  each thread loads (BM + BN) BK / threads floats of A and B with coalesced
//                      4-byte loads (a warp reads 32 consecutive floats of B's row, or 4 rows of
//                      8 floats of A: 4 sectors each), stores them to shared memory (A transposed,
//                      its rows padded by 4 floats: conflict-free), barrier;
//                      then BK steps of TM / 4 + TN / 4 16-byte shared loads (conflict-free:
//                      4 wavefronts each) and TM x TN FP32 multiply-adds per thread, barrier;
//   at the end:        each thread stores its TM x TN sums with 16-byte stores.
// The closed form below is exact, for the memory requests, sectors, shared wavefronts, barriers,
// multiply-adds, FLOPs and the critical path's phases, when M and N are multiples of the tile and
// K and N of 8 (tests/kernels/gemm_blocked_test.cpp compares it with the sim's counts of the
// kernels); otherwise the edge tiles' figures are estimates. Not in it: the integer and branch
// instructions the sim counts beside the multiply-adds (the staging loops' control and addressing,
// 15% as many as the multiply-adds at 512^3: nvcc folds most of it into the loads), and L2 misses
// beyond compulsory traffic: when B does not fit in L2 beside one panel of A, it is read once per
// wave of resident blocks, as blocks that run together share its k-slabs on a GPU (the sim, which
// runs one block after another, would count it once per row of tiles).
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/traffic_model.hpp"

namespace gpulab {

/// One tiling of the register-blocked SGEMM: a block of (BM / TM) x (BN / TN) threads computes a
/// BM x BN tile of C, each thread a TM x TN sub-tile in registers, walking K in steps of BK.
struct GemmTiling {
  int block_m;
  int block_n;
  int block_k;
  int thread_m;
  int thread_n;
  std::string_view kernel;  ///< the kernel's name (kernels/gemm, the kernel table)

  [[nodiscard]] constexpr int threads() const {
    return (block_m / thread_m) * (block_n / thread_n);
  }
  /// Floats of A's tile (transposed, rows padded by 4) and of B's tile.
  [[nodiscard]] constexpr int shared_floats() const {
    return block_k * (block_m + 4) + block_k * block_n;
  }
  /// "128 x 128 tiles, 8 x 8 per thread".
  [[nodiscard]] std::string describe() const;
};

/// The tilings the catalog builds, largest first. Each keeps the layout the closed form assumes:
/// 32 threads per warp divide the tiles' loads evenly, TM and TN are multiples of 4, and BM / TM
/// times 4 floats of a fragment row cover 32 banks.
/// A plain array: kernels read it in device code, at compile time.
inline constexpr GemmTiling kGemmTilings[] = {
    {128, 128, 8, 8, 8, "gemm_blocked_128x128_kernel"},
    {64, 64, 8, 4, 4, "gemm_blocked_64x64_kernel"},
    {32, 32, 8, 4, 4, "gemm_blocked_32x32_kernel"},
};

/// A GEMM problem: `batch` independent row-major products of M x K by K x N; with reads_c, each
/// adds to the C it reads (cuBLAS's beta != 0: C = alpha A B + beta C), else C is only written.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  bool reads_c = false;
};

/// What one launch of `tiling`'s kernel on `shape` counts (grid: N / BN x M / BM x batch, rounded
/// up), in closed form. `l2_bytes` decides whether B stays in L2, and `resident_blocks` (the blocks
/// a GPU runs at once; 0: all of them) how often it is read when it does not (the header's
/// comment); `operand_sectors_in_l2` of the operands' sectors (A's, B's and, with reads_c, C's) are
/// in L2 when the launch starts (an earlier kernel left them), so their first reads do not come
/// from DRAM. Throws
/// std::invalid_argument for a negative size or an empty problem.
[[nodiscard]] MemoryCounters gemm_tiling_counters(const GemmTiling& tiling, const GemmShape& shape,
                                                  std::uint64_t l2_bytes,
                                                  std::uint64_t resident_blocks = 0,
                                                  std::uint64_t operand_sectors_in_l2 = 0);

/// The launch configuration of `tiling` on `shape`, with the kernel's registers and static shared
/// memory when known (from the kernel table: resources_known), else the model's assumption.
[[nodiscard]] LaunchShape gemm_tiling_launch(const GemmTiling& tiling, const GemmShape& shape,
                                             const std::optional<KernelResources>& resources);

/// A modeled register-blocked GEMM: the tiling, what its launch counts (closed form), the launch,
/// and the time model on them.
struct ModeledGemm {
  GemmTiling tiling;
  MemoryCounters counters;
  LaunchShape launch;
  ModeledTime time;
};

/// The time model on `tiling`'s closed form for `shape` on `spec`, with the blocks the model finds
/// resident at once. Throws std::invalid_argument as gemm_tiling_counters() and model_time() do.
[[nodiscard]] ModeledGemm model_gemm_tiling(const GemmTiling& tiling, const GemmShape& shape,
                                            const GpuSpec& spec,
                                            const std::optional<KernelResources>& resources,
                                            std::uint64_t operand_sectors_in_l2 = 0);

/// The fastest tiling of kGemmTilings on `shape` under the time model for `spec` (what a GEMM
/// library's heuristic aims for), with each kernel's resources from `resources_of` (nullopt:
/// unknown). Throws std::invalid_argument as gemm_tiling_counters() does.
template <class ResourcesOf>
[[nodiscard]] ModeledGemm model_fastest_gemm(const GemmShape& shape, const GpuSpec& spec,
                                             ResourcesOf resources_of,
                                             std::uint64_t operand_sectors_in_l2 = 0) {
  std::optional<ModeledGemm> best;
  for (const GemmTiling& tiling : kGemmTilings) {
    ModeledGemm gemm =
        model_gemm_tiling(tiling, shape, spec, resources_of(tiling.kernel), operand_sectors_in_l2);
    if (!best || gemm.time.time_s < best->time.time_s) {
      best = std::move(gemm);
    }
  }
  return *best;
}

}  // namespace gpulab
