#include "gpulab/core/gemm_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace gpulab {

std::string GemmTiling::describe() const {
  return std::to_string(block_m) + " x " + std::to_string(block_n) + " tiles, " +
         std::to_string(thread_m) + " x " + std::to_string(thread_n) + " per thread";
}

namespace {

using U64 = std::uint64_t;

U64 ceil_div(U64 a, U64 b) {
  return (a + b - 1) / b;
}

// A dimension cut into tiles: how many tiles have how many valid elements (the full ones, then
// the last, partial one if any).
struct TileRun {
  U64 count;
  U64 valid;
};

std::vector<TileRun> tile_runs(U64 size, U64 tile) {
  std::vector<TileRun> runs;
  if (size / tile > 0) {
    runs.push_back({size / tile, tile});
  }
  if (size % tile > 0) {
    runs.push_back({1, size % tile});
  }
  return runs;
}

// Sectors of a contiguous run of `bytes`: exact when it starts on a sector, else at most one more.
U64 run_sectors(U64 bytes, bool aligned) {
  return bytes == 0 ? 0 : ceil_div(bytes, 32) + (aligned ? 0 : 1);
}

}  // namespace

MemoryCounters gemm_tiling_counters(const GemmTiling& t, const GemmShape& shape, U64 l2_bytes,
                                    U64 resident_blocks, U64 operand_sectors_in_l2) {
  if (shape.m < 0 || shape.n < 0 || shape.k < 0 || shape.batch < 0) {
    throw std::invalid_argument("gemm model: sizes must not be negative");
  }
  if (shape.m == 0 || shape.n == 0 || shape.batch == 0) {
    throw std::invalid_argument("gemm model: the problem has no output");
  }
  const auto m = static_cast<U64>(shape.m);
  const auto n = static_cast<U64>(shape.n);
  const auto k = static_cast<U64>(shape.k);
  const auto batch = static_cast<U64>(shape.batch);
  const auto bm = static_cast<U64>(t.block_m);
  const auto bn = static_cast<U64>(t.block_n);
  const auto bk = static_cast<U64>(t.block_k);
  const auto tm = static_cast<U64>(t.thread_m);
  const auto tn = static_cast<U64>(t.thread_n);
  const U64 threads = static_cast<U64>(t.threads());
  const U64 warps = ceil_div(threads, 32);
  const U64 rows_per_a_request = 32 / bk;  // a warp's load of A: rows of BK floats
  const bool a_aligned = k % 8 == 0;       // every row of A starts on a sector
  const bool b_aligned = n % 8 == 0;
  const U64 grid_x = ceil_div(n, bn);
  const U64 grid_y = ceil_div(m, bm);
  const U64 blocks = grid_x * grid_y * batch;
  const U64 k_tiles = ceil_div(k, bk);

  MemoryCounters c;
  // Per tile of C (rows valid x columns valid) and per k-tile (depth valid).
  for (const TileRun& rows : tile_runs(m, bm)) {
    for (const TileRun& cols : tile_runs(n, bn)) {
      const U64 tiles = rows.count * cols.count * batch;
      for (const TileRun& depth : tile_runs(k, bk)) {
        const U64 n_k = tiles * depth.count;
        // A: one request per group of 32 / BK rows with a valid row, a run of `depth` floats per
        // valid row. B: per valid row of the k-tile, one request per 32 columns with a valid one.
        c.global_load.requests += n_k * ceil_div(rows.valid, rows_per_a_request);
        c.global_load.sectors += n_k * rows.valid * run_sectors(4 * depth.valid, a_aligned);
        c.global_load.requests += n_k * depth.valid * ceil_div(cols.valid, 32);
        c.global_load.sectors += n_k * depth.valid * run_sectors(4 * cols.valid, b_aligned);
        c.global_load.lanes += n_k * (rows.valid + cols.valid) * depth.valid;
        c.global_load.bytes_requested += n_k * 4 * (rows.valid + cols.valid) * depth.valid;
      }
      // The sums: 128 floats per warp-wide 16-byte store of full tiles; with reads_c, the same
      // tile of C loaded the same way first (the epilogue's beta * C).
      const U64 c_requests = tiles * ceil_div(rows.valid * cols.valid, 128);
      const U64 c_sectors = tiles * rows.valid * run_sectors(4 * cols.valid, b_aligned);
      const U64 c_lanes = tiles * ceil_div(rows.valid * cols.valid, 4);
      const U64 c_bytes = tiles * 4 * rows.valid * cols.valid;
      c.global_store.requests += c_requests;
      c.global_store.sectors += c_sectors;
      c.global_store.lanes += c_lanes;
      c.global_store.bytes_requested += c_bytes;
      if (shape.reads_c) {
        c.global_load.requests += c_requests;
        c.global_load.sectors += c_sectors;
        c.global_load.lanes += c_lanes;
        c.global_load.bytes_requested += c_bytes;
      }
    }
  }

  // Shared memory: every thread stages its share of both tiles (zeros outside the matrices), one
  // conflict-free wavefront a request; then (TM + TN) / 4 16-byte loads a step, 4 wavefronts each.
  const U64 staged_per_block = (bm + bn) * bk / 32;
  c.shared_store.requests = blocks * k_tiles * staged_per_block;
  c.shared_store.wavefronts = c.shared_store.requests;
  c.shared_store.lanes = 32 * c.shared_store.requests;
  const U64 fragment_loads = bk * (tm + tn) / 4;
  c.shared_load.requests = blocks * k_tiles * warps * fragment_loads;
  c.shared_load.wavefronts = 4 * c.shared_load.requests;
  c.shared_load.lanes = 32 * c.shared_load.requests;

  c.fp32_fma_instructions = blocks * k_tiles * warps * bk * tm * tn;
  c.fp32_flop = blocks * k_tiles * threads * bk * tm * tn * 2;
  c.barrier_instructions = blocks * k_tiles * warps * 2;

  // L2 sees every sector (the sim has no L1); DRAM the compulsory traffic: A and B once, or B once
  // per wave of resident blocks (rows of tiles at once) when it does not fit in L2 beside one
  // panel of A, C once when it is read, and C written back.
  c.l2_sector_reads = c.global_load.sectors;
  c.l2_sector_writes = c.global_store.sectors;
  const bool b_stays = 4 * (k * n + bm * k) <= l2_bytes;
  const U64 rows_at_once =
      resident_blocks == 0 ? grid_y : std::max<U64>(1, resident_blocks / grid_x);
  const U64 a_sectors = ceil_div(4 * m * k, 32);
  const U64 b_sectors = ceil_div(4 * k * n, 32);
  const U64 b_reads = b_stays ? 1 : ceil_div(grid_y, rows_at_once);
  const U64 c_read_sectors = shape.reads_c ? c.global_store.sectors : 0;
  const U64 compulsory = batch * (a_sectors + b_sectors) + c_read_sectors;
  const U64 dram_read_sectors =
      std::min(c.l2_sector_reads, batch * (a_sectors + b_reads * b_sectors) + c_read_sectors -
                                      std::min(operand_sectors_in_l2, compulsory));
  c.dram_bytes_read = 32 * dram_read_sectors;
  c.l2_sector_hits = c.l2_sector_reads - dram_read_sectors;
  c.dram_bytes_written = 32 * c.global_store.sectors;

  // A block's critical path: per k-tile a phase that loads and stages, then one that computes;
  // the stores after the last barrier.
  c.path_phases = blocks * (2 * k_tiles + 1);
  c.path_global_phases = blocks * k_tiles;
  c.path_shared_phases = blocks * 2 * k_tiles;
  c.path_shared_requests = blocks * k_tiles * ((bm + bn) * bk / threads + fragment_loads);
  c.path_arithmetic = blocks * k_tiles * bk * tm * tn;
  return c;
}

LaunchShape gemm_tiling_launch(const GemmTiling& t, const GemmShape& shape,
                               const std::optional<KernelResources>& resources) {
  LaunchShape launch;
  launch.grid = {static_cast<std::uint32_t>(ceil_div(static_cast<U64>(shape.n), t.block_n)),
                 static_cast<std::uint32_t>(ceil_div(static_cast<U64>(shape.m), t.block_m)),
                 static_cast<std::uint32_t>(shape.batch)};
  launch.block = {static_cast<std::uint32_t>(t.threads()), 1, 1};
  launch.resources_known = resources.has_value();
  if (resources) {
    launch.resources = *resources;
  } else {
    launch.resources.static_shared_bytes = 4 * static_cast<U64>(t.shared_floats());
  }
  return launch;
}

ModeledGemm model_gemm_tiling(const GemmTiling& tiling, const GemmShape& shape, const GpuSpec& spec,
                              const std::optional<KernelResources>& resources,
                              U64 operand_sectors_in_l2) {
  const LaunchShape launch = gemm_tiling_launch(tiling, shape, resources);
  // The model's occupancy for the launch decides the blocks resident at once, and with them how
  // often B comes from DRAM.
  const ModeledTime first =
      model_time(gemm_tiling_counters(tiling, shape, spec.l2_bytes), launch, spec);
  const auto resident =
      static_cast<U64>(first.active_blocks_per_sm) * static_cast<U64>(spec.sm_count);
  MemoryCounters counters =
      gemm_tiling_counters(tiling, shape, spec.l2_bytes, resident, operand_sectors_in_l2);
  const ModeledTime time = model_time(counters, launch, spec);
  return {tiling, std::move(counters), launch, time};
}

}  // namespace gpulab
