// What the threads of one kernel launch did to the memory system, counted on the sim backend
// (framework/sim counts every load, store and atomic of a translated kernel; docs/sim.md).
//
// The figures are Nsight Compute's where the meaning is the same, and counter_metrics() lists them
// under its metric names, so a table from sim and one from `ncu --metrics` line up:
//   - a request is one warp-level memory instruction: the lanes of a warp that reach the same
//     instruction for the k-th time (exact for converged code; docs/sim.md on divergence);
//   - a sector is 32 bytes of global memory, aligned; a request moves every sector any of its
//     lanes touches, once;
//   - a shared-memory wavefront is one pass through the 32 banks of 4 bytes; a request needs as
//     many as its worst bank has distinct words (one word read by many lanes is a broadcast, not a
//     conflict), and 8- and 16-byte accesses are served in 2 or 4 phases of 16 or 8 lanes;
//   - L2 and DRAM figures come from a model of the spec's L2 (sector_cache.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/results.hpp"

namespace gpulab {

/// Global-memory requests of one kind (loads, stores or atomics).
struct GlobalAccessCounts {
  std::uint64_t requests = 0;         ///< warp-level instructions
  std::uint64_t sectors = 0;          ///< 32-byte sectors moved, summed over requests
  std::uint64_t bytes_requested = 0;  ///< bytes the active lanes asked for
  std::uint64_t lanes = 0;            ///< active lanes, summed over requests
  std::uint64_t partial_sectors = 0;  ///< stores: sectors a request wrote only part of
  friend bool operator==(const GlobalAccessCounts&, const GlobalAccessCounts&) = default;
};

/// Shared-memory requests of one kind (loads, stores or atomics).
struct SharedAccessCounts {
  std::uint64_t requests = 0;        ///< warp-level instructions
  std::uint64_t wavefronts = 0;      ///< passes through the banks
  std::uint64_t bank_conflicts = 0;  ///< wavefronts beyond the conflict-free minimum
  std::uint64_t lanes = 0;           ///< active lanes, summed over requests
  friend bool operator==(const SharedAccessCounts&, const SharedAccessCounts&) = default;
};

/// Everything counted for one kernel launch.
struct MemoryCounters {
  GlobalAccessCounts global_load;
  GlobalAccessCounts global_store;
  GlobalAccessCounts global_atomic;
  SharedAccessCounts shared_load;
  SharedAccessCounts shared_store;
  SharedAccessCounts shared_atomic;
  std::uint64_t l2_sector_reads = 0;     ///< sectors looked up in L2 by loads (and atomics)
  std::uint64_t l2_sector_writes = 0;    ///< sectors written to L2 by stores (and atomics)
  std::uint64_t l2_sector_hits = 0;      ///< lookups that found their sector in L2
  std::uint64_t dram_bytes_read = 0;     ///< sectors L2 missed, times 32
  std::uint64_t dram_bytes_written = 0;  ///< dirty sectors written back, times 32
  /// Global atomic requests that reached the busiest 32-byte sector (atomics on one sector
  /// serialize in L2; the time model's contention term). Summed when launches are added: their
  /// serial chains run one after the other. A lower bound within 1/1025 of the launch's atomic
  /// sector requests (heavy_hitters.hpp); exact for 1024 sectors or fewer.
  std::uint64_t l2_atomic_busiest_sector = 0;
  /// Tensor-core work: warp-level matrix multiply-accumulates (WMMA mma_sync; a GPU may split one
  /// into several instructions) and their FLOPs (2 m n k each), by input type.
  std::uint64_t tensor_mma = 0;
  std::uint64_t tensor_fp16_flop = 0;  ///< mma_sync on half inputs
  std::uint64_t tensor_bf16_flop = 0;  ///< mma_sync on __nv_bfloat16 inputs
  /// Warp-level instructions of the kinds the sim runs itself (not the kernel's arithmetic): each
  /// warp's __syncthreads (one per warp and barrier), and each warp collective call: shuffles
  /// (__shfl*_sync), votes (__ballot_sync, __any_sync, __all_sync, __activemask) and __syncwarp.
  std::uint64_t barrier_instructions = 0;
  std::uint64_t shuffle_instructions = 0;
  std::uint64_t vote_instructions = 0;
  std::uint64_t warp_sync_instructions = 0;
  /// The kernel's own arithmetic, counted where sim kernels are compiled with the gpulab_count_ops
  /// plugin (GCC; docs/sim.md, "Counted instructions"): the source's operations after the host
  /// compiler's optimizations, warp-level (an instruction per operation that any lane of the
  /// warp executed, the slowest lane's count per barrier phase), by class.
  std::uint64_t fp32_fma_instructions = 0;    ///< FP32 fused multiply-adds (a*b+c contracted)
  std::uint64_t fp32_instructions = 0;        ///< other FP32: add, multiply, min, max, compare
  std::uint64_t fp64_instructions = 0;        ///< FP64 arithmetic
  std::uint64_t integer_instructions = 0;     ///< integer and pointer arithmetic, logic, compare
  std::uint64_t special_instructions = 0;     ///< exp, log, sin, cos, sqrt, reciprocal (SFU)
  std::uint64_t conversion_instructions = 0;  ///< int <-> float, float <-> double
  std::uint64_t branch_instructions = 0;      ///< conditional branches
  /// Integer arithmetic that only addresses memory or controls a loop (an index scaled and added
  /// to a pointer, an induction variable and its exit test), kept apart from the integer class:
  /// nvcc folds part of it into its instructions' address offsets.
  std::uint64_t address_instructions = 0;
  std::uint64_t fp32_flop = 0;  ///< FP32 operations of all threads, an FMA counted twice
  /// The blocks' critical paths, summed over the blocks (the time model's latency term): per
  /// barrier phase, whether the block loaded from global memory or used shared memory, and the
  /// most shared-memory requests, warp collectives and counted arithmetic of one of its warps.
  std::uint64_t path_phases = 0;         ///< barrier phases: the block's barriers + 1
  std::uint64_t path_global_phases = 0;  ///< phases with a global load or atomic
  /// Runs of global loads a warp issues with no global store or atomic between them (a store or
  /// atomic may need what was loaded), summed over the warps.
  std::uint64_t global_load_runs = 0;
  std::uint64_t path_shared_phases = 0;    ///< phases with a shared-memory request
  std::uint64_t path_shared_requests = 0;  ///< per phase, one warp's most shared requests
  std::uint64_t path_collectives = 0;      ///< per phase, one warp's most warp collectives
  std::uint64_t path_arithmetic = 0;       ///< per phase, one warp's most arithmetic
  std::uint64_t local_accesses = 0;  ///< lane accesses to the thread's own stack (not modeled)
  std::uint64_t other_accesses = 0;  ///< lane accesses outside device and shared memory

  MemoryCounters& operator+=(const MemoryCounters& other);
  friend bool operator==(const MemoryCounters&, const MemoryCounters&) = default;

  /// Sectors per request of global loads (0 without loads).
  [[nodiscard]] double sectors_per_load_request() const;
  /// Sectors per request of global stores (0 without stores).
  [[nodiscard]] double sectors_per_store_request() const;
  /// L2 sector hit rate in percent (0 without lookups).
  [[nodiscard]] double l2_hit_rate_pct() const;
  /// Active lanes per warp-level memory request, over every kind (0 without requests).
  [[nodiscard]] double lanes_per_request() const;
  /// Global loads' bytes requested over bytes moved (sectors x 32), in percent (0 without loads):
  /// 100 when every byte moved was asked for, above 100 when lanes share bytes.
  [[nodiscard]] double global_load_efficiency_pct() const;
};

/// What the instructions of one source line did, summed over the line's instructions (a source
/// view, like Nsight Compute's Source page; counted on sim with GPULAB_SIM_COUNTERS_BY_LINE=1).
/// Only the figures a line's own accesses make: its requests, sectors, wavefronts and bank
/// conflicts, its L2 lookups and hits, and the DRAM bytes its L2 misses read. DRAM writes
/// (write-backs of evicted sectors), arithmetic, barriers and the critical path belong to no one
/// line and stay 0.
struct SourceLineCounters {
  std::string file;   ///< the source file's path as the debug information names it; "" unknown
  unsigned line = 0;  ///< 1-based; 0 where the program has no line information
  MemoryCounters counters;
  friend bool operator==(const SourceLineCounters&, const SourceLineCounters&) = default;
};

/// Adds each line of `from` to the line of `into` with the same file and line (appended where
/// `into` has none), keeping `into` sorted by file and line.
void add_source_lines(std::vector<SourceLineCounters>& into,
                      const std::vector<SourceLineCounters>& from);

/// Sectors a line's global requests moved beyond the bytes their lanes asked for, rounded up to
/// whole sectors (0 where they moved no more): what a fully coalesced access would save. Summed
/// over loads, stores and atomics.
[[nodiscard]] std::uint64_t excess_sectors(const MemoryCounters& counters);

/// One counted kernel launch.
struct CountedLaunch {
  std::uint64_t launch_id = 0;                 ///< the process's launches so far, this one included
  std::string kernel;                          ///< the kernel as the launch names it
  std::string where;                           ///< file:line of the launch
  std::string spec;                            ///< key of the simulated GPU (L2 size, banks)
  std::array<std::uint32_t, 3> grid{1, 1, 1};  ///< blocks, x y z
  std::array<std::uint32_t, 3> block{1, 1, 1};  ///< threads per block, x y z
  std::uint64_t dynamic_shared_bytes = 0;       ///< dynamic shared memory per block
  /// The kernel's registers per thread and static shared memory as its launch knew them (recorded
  /// with the kernel); 0 registers: unknown, the time model looks them up for its spec.
  int registers_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t longest_wait_cycles = 0;  ///< the longest clock64() wait of one of its threads
  MemoryCounters counters;
  /// The counters per source line, sorted by file and line, when counted by line (else empty).
  std::vector<SourceLineCounters> lines;
  friend bool operator==(const CountedLaunch&, const CountedLaunch&) = default;
};

/// Version of the counted-launch line format below.
inline constexpr int kCountedLaunchSchemaVersion = 1;

/// One launch as one line of JSON (no newline), the format of GPULAB_SIM_COUNTERS files.
[[nodiscard]] std::string counted_launch_to_json_line(const CountedLaunch& launch);
/// Reads one line; throws std::runtime_error saying what is wrong (unknown fields are ignored).
[[nodiscard]] CountedLaunch counted_launch_from_json_line(std::string_view line);
/// Every launch of a GPULAB_SIM_COUNTERS file, in file order; throws std::runtime_error naming the
/// file and line of the first bad line, or a file that cannot be read.
[[nodiscard]] std::vector<CountedLaunch> read_counted_launches(const std::filesystem::path& path);

/// One counted figure under its metric name.
struct CounterMetric {
  std::string_view name;  ///< Nsight Compute's metric name, or gpulab__... where it has none
  std::string_view unit;  ///< "", "sector", "request", "byte", "%", ...
  double value = 0;
  std::string_view description;  ///< one line
};

/// Every figure of `counters`, in a fixed order (the order of `gpulab profile`'s table).
[[nodiscard]] std::vector<CounterMetric> counter_metrics(const MemoryCounters& counters);

/// The names counter_metrics() uses that Nsight Compute also reports (for `ncu --metrics`).
[[nodiscard]] std::vector<std::string_view> ncu_metric_names();

/// True when `name` is one of counter_metrics()'s names.
[[nodiscard]] bool is_counter_metric(std::string_view name);

/// The name a counted figure has in a results file: its metric name with the unit suffix results
/// files need ("dram__bytes_read.sum_bytes", "lts__t_sector_hit_rate.pct_percent", a ".ratio"
/// metric "_ratio", every other count "_count"), so metric_stem() gives the metric name back.
[[nodiscard]] std::string results_metric_name(const CounterMetric& metric);
/// Every figure of `counters` as results metrics (results.hpp) of `provenance`: counted (on sim),
/// or measured (by Nsight Compute: then without the gpulab__ figures, which it does not report).
[[nodiscard]] std::vector<Metric> counter_results_metrics(const MemoryCounters& counters,
                                                          Provenance provenance);

/// The launches in what `ncu --metrics <ncu_metric_names()> --csv` prints: a table with one row
/// per launch and metric after ncu's ==PROF== lines and the program's output. Each launch's
/// counters hold what ncu measured under the names counter_metrics() shares with it (its hit rate
/// becomes hits); figures it does not report stay 0. Thousands separators and decimal byte
/// prefixes (Kbyte, Mbyte, ...) are read. Throws std::runtime_error saying what is wrong: no
/// table, a missing column, a row of the wrong width (with its line), a value that is not a
/// number.
[[nodiscard]] std::vector<CountedLaunch> parse_ncu_csv(std::string_view text);

}  // namespace gpulab
