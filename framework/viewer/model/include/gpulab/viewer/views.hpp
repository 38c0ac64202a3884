// What each results panel shows, derived from results files as plain data (no GUI code). The
// panels draw these; tests check them. Every function here takes whatever a results file holds
// (a lab's JSON, a live run, a file from another machine) and never throws on odd content: what
// it cannot use is left out, and a view with nothing in it says why in `empty_reason`.
//
// Result names the views read (the labs and the viewer's live runs write them):
//   vector_add            params n; metrics bytes, time_ms (measured and modeled),
//                         bandwidth_gb_s, rel_noise_percent; samples_ms        -> benchmark
//   attention_component   params component (+ the shape); metrics time_ms (measured and/or
//                         modeled), flop, bytes; param bound                  -> components,
//                         roofline
//   op_cost               params op, precision, bound; metrics work_gflop, bytes,
//                         intensity_flop_per_byte, time_ms (modeled)         -> roofline
//   block_size_sweep      params kernel, block_size, limiter; metrics time_ms (measured and
//                         modeled), occupancy_percent (modeled)               -> sweep
//   counted_kernel        params kernel, launches; metrics counted on sim under Nsight
//                         Compute's names (gpulab profile --json), time_ms (modeled) -> memory
//   attention_level       params level, level_name, bound (+ the shape); metrics time_ms,
//                         memory_bytes (measured), dram_bytes (counted or modeled) -> levels
//   attention_level_memory  params level, level_name (+ the shape, seq_len varying); metric
//                         memory_bytes (the level's buffers at that length)     -> levels
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpulab/core/class_summary.hpp"
#include "gpulab/core/memory_history.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/stats.hpp"

namespace gpulab::viewer {

/// One results file the panels can draw, with a label for legends ("live (sim)",
/// "h100.json: NVIDIA H100 80GB HBM3").
struct Source {
  std::string label;                        ///< legend text
  const ResultsFile* file;                  ///< never null
  bool cpu_times = false;                   ///< its measured times are CPU time of the simulation
  std::string measured_label = "measured";  ///< what its measured times are (timing_label)
  const MemoryHistory* history = nullptr;   ///< its memory history, when the file has one
  const ClassSummary* class_summary = nullptr;  ///< its class summary, when the file is one
};

/// The spec a file's modeled numbers and peaks refer to: the file's context.spec when the
/// database knows it, else `fallback` (the viewer's selected spec).
[[nodiscard]] GpuSpec spec_of(const ResultsFile& file, const GpuSpec& fallback);

// ---------------------------------------------------------------------------------------------
// Benchmark panel
// ---------------------------------------------------------------------------------------------

/// Counts of samples in equal-width bins.
struct Histogram {
  double min_ms = 0;                ///< left edge of the first bin
  double bin_width_ms = 0;          ///< width of every bin (> 0)
  std::vector<std::size_t> counts;  ///< samples per bin; the last bin includes its right edge
};

/// Histogram of samples in `bins` bins from min to max; empty counts for no samples. All samples
/// equal: one bin of width max(1e-9, |value| * 1e-3) centred on the value. bins < 1 is read as 1.
[[nodiscard]] Histogram make_histogram(std::span<const double> samples_ms, int bins);

/// Bins of the benchmark panel's histograms.
inline constexpr int kHistogramBins = 30;

/// One size of the bandwidth benchmark.
struct BenchmarkPoint {
  double n = 0;                             ///< elements (param n)
  double bytes = 0;                         ///< bytes moved (metric bytes); 0 when absent
  std::optional<double> measured_ms;        ///< measured median time
  std::optional<double> modeled_ms;         ///< modeled time on the spec
  std::optional<double> measured_gb_s;      ///< measured bandwidth
  std::optional<double> modeled_gb_s;       ///< bytes / modeled time
  std::optional<double> rel_noise_percent;  ///< measured relative noise
  std::string unavailable;                  ///< why there is no measured time; else empty
  std::vector<double> samples_ms;           ///< the timed samples, when the file has them
  std::optional<Summary> summary;           ///< statistics of samples_ms, when there are some
  Histogram histogram;                      ///< samples_ms in kHistogramBins bins
};

/// The bandwidth benchmark of one source.
struct BenchmarkView {
  std::string kernel = "vector_add";        ///< result name the points come from
  std::vector<BenchmarkPoint> points;       ///< by increasing n
  double peak_gb_s = 0;                     ///< DRAM peak of the spec (the roof line)
  std::string peak_label;                   ///< "H100 SXM peak 3350 GB/s (datasheet)"
  bool cpu_times = false;                   ///< measured numbers are CPU time of the simulation
  std::string measured_label = "measured";  ///< "modeled clock (H100 SXM)", ...: timing_label
  std::string empty_reason;                 ///< set when points is empty
};

/// The vector_add results of `file` (see the header comment); peak from spec_of(file, fallback).
[[nodiscard]] BenchmarkView benchmark_view(const ResultsFile& file, const GpuSpec& fallback);

// ---------------------------------------------------------------------------------------------
// Components panel
// ---------------------------------------------------------------------------------------------

/// One attention component.
struct ComponentRow {
  std::string name;                      ///< "QKV Projection", ...
  std::optional<double> measured_ms;     ///< measured time
  std::optional<double> modeled_ms;      ///< modeled time
  std::optional<double> measured_share;  ///< fraction of the measured total, 0..1
  std::optional<double> modeled_share;   ///< fraction of the modeled total, 0..1
  std::optional<double> flop;            ///< FLOPs, when the file has them
  std::optional<double> bytes;           ///< DRAM bytes, when the file has them
  std::string bound;                     ///< "memory-bound" / "compute-bound"; empty if unknown
};

/// One attention shape's breakdown.
struct ComponentsView {
  std::string shape;                        ///< the shape's params, e.g. "batch=1, seq_len=64, ..."
  std::vector<ComponentRow> rows;           ///< in file order (execution order)
  std::optional<std::size_t> bottleneck;    ///< row with the largest measured time; the largest
                                            ///< modeled time when nothing is measured or the file
                                            ///< is from sim (CPU time); first on ties
  bool bottleneck_is_modeled = false;       ///< the bottleneck comes from modeled times
  bool cpu_times = false;                   ///< measured times are CPU time of the simulation
  std::string measured_label = "measured";  ///< "modeled clock (H100 SXM)", ...: timing_label
  std::string modeled_spec;                 ///< spec of the modeled times, e.g. "H100 SXM"
};

/// Every attention shape in `file`, one view each, in file order (results that share all params
/// except component and bound form one shape). Empty when the file has no attention_component.
[[nodiscard]] std::vector<ComponentsView> components_views(const ResultsFile& file);

// ---------------------------------------------------------------------------------------------
// Roofline panel
// ---------------------------------------------------------------------------------------------

/// One op placed on the roofline.
struct RooflinePoint {
  std::string label;                       ///< "Softmax (seq_len=64)", "GEMM 4096x4096x64"
  std::string source;                      ///< Source::label it came from
  double intensity_flop_per_byte = 0;      ///< FLOPs per DRAM byte
  double achieved_flop_s = 0;              ///< flops / time
  Provenance kind = Provenance::measured;  ///< measured or modeled time
  std::string kind_label = "measured";     ///< "measured", "modeled clock (H100 SXM)", "modeled"
  double roof_flop_s = 0;       ///< attainable FLOP/s at this intensity: on the roofs drawn for a
                                ///< modeled point, on its own file's spec for a measured one
  double percent_of_roof = 0;   ///< 100 * achieved / roof_flop_s
  Bound bound = Bound::memory;  ///< which of those roofs is above it
};

/// The roofs and the points for one spec and precision.
struct RooflineView {
  std::optional<Roofline> roofline;   ///< empty when the spec lacks the precision
  std::string unavailable;            ///< why roofline is empty; else empty
  std::vector<RooflinePoint> points;  ///< every op with FLOPs, bytes and a time
  std::string empty_reason;           ///< set when points is empty
};

/// Ops of every source at `precision` (results without a precision param count as FP32),
/// placed under the roofs of `spec`. Measured points of sim sources are left out (their times are
/// CPU time, not GPU time) and counted in empty_reason when nothing else is left.
[[nodiscard]] RooflineView roofline_view(std::span<const Source> sources, const GpuSpec& spec,
                                         Precision precision);

// ---------------------------------------------------------------------------------------------
// Block-size sweep panel
// ---------------------------------------------------------------------------------------------

/// One block size of a sweep.
struct SweepPoint {
  int block_size = 0;                       ///< threads per block
  std::optional<double> measured_ms;        ///< measured median time
  std::optional<double> modeled_ms;         ///< modeled GPU time on the spec
  std::optional<double> occupancy_percent;  ///< occupancy on the spec
  std::string limiter;                      ///< occupancy limiter; empty when unknown
};

/// One kernel's sweep.
struct SweepView {
  std::string kernel;                           ///< kernel name (param kernel)
  std::string problem;                          ///< the other params, e.g. "n=1048576"
  std::vector<SweepPoint> points;               ///< by increasing block size
  bool cpu_times = false;                       ///< measured times are CPU time of the simulation
  std::string measured_label = "measured";      ///< "modeled clock (H100 SXM)", ...: timing_label
  std::string modeled_spec;                     ///< spec of the modeled times and occupancy
  std::optional<std::size_t> fastest_measured;  ///< index of the smallest measured time
};

/// Every kernel swept in `file` (block_size_sweep results), one view per kernel and problem.
[[nodiscard]] std::vector<SweepView> sweep_views(const ResultsFile& file);

/// Global loads or stores of one kernel on their way down: requests -> L1 sectors -> L2 -> DRAM.
struct MemoryPath {
  std::optional<double> requests;             ///< warp-level instructions
  std::optional<double> sectors;              ///< 32-byte sectors they moved
  std::optional<double> sectors_per_request;  ///< 4 for 32 consecutive floats
  std::optional<double> l2_sectors;  ///< sectors looked up (loads) or written (stores) in L2
  std::optional<double> dram_bytes;  ///< bytes read from (loads) or written to DRAM
};

/// What one kernel's launches did to memory (a counted_kernel result): counted on sim, or
/// measured by Nsight Compute on a GPU.
struct MemoryView {
  std::string kernel;                             ///< param kernel
  std::string launches;                           ///< param launches, as written
  Provenance provenance = Provenance::counted;    ///< counted (sim) or measured (ncu)
  MemoryPath loads;                               ///< global loads
  MemoryPath stores;                              ///< global stores
  std::optional<double> load_efficiency_percent;  ///< bytes asked for / bytes moved (loads)
  std::optional<double> partial_store_sectors;    ///< store sectors written only in part
  std::optional<double> l2_hit_percent;           ///< L2 sector hit rate
  std::optional<double> shared_requests;          ///< shared loads + stores
  std::optional<double> shared_wavefronts;        ///< passes through the banks
  std::optional<double> bank_conflicts;           ///< wavefronts beyond the minimum
  std::optional<double> lanes_per_request;        ///< 32 without divergence
  std::optional<double> modeled_ms;               ///< time modeled from the counts
  std::string modeled_spec;                       ///< its spec
  std::string modeled_bound;  ///< param bound: the model's term that bounds it ("" when unsaid)
};

/// Every profiled kernel of `file` (counted or measured), in file order.
[[nodiscard]] std::vector<MemoryView> memory_views(const ResultsFile& file);

// ---------------------------------------------------------------------------------------------
// Source panel
// ---------------------------------------------------------------------------------------------

/// One line of a kernel's code with what its accesses cost (a counted_line result of `gpulab
/// profile --source`); a figure the line has no access of is empty.
struct CodeLine {
  std::string where;  ///< "transpose.cu:49": the file's name (no folders) and the line
  std::string code;   ///< the line's text (param code)
  std::optional<double> requests;
  std::optional<double> load_sectors_per_request;
  std::optional<double> store_sectors_per_request;
  std::optional<double> excess_sectors;  ///< sectors beyond the bytes the lanes asked for
  std::optional<double> shared_wavefronts;
  std::optional<double> bank_conflicts;
  std::optional<double> l2_hit_percent;
  std::optional<double> dram_read_bytes;
  double l1_share_percent = 0;  ///< the heat: the line's share of the kernel's L1 traffic, 0-100
};

/// A problem the rules found in a kernel (a finding result).
struct CodeProblem {
  std::string where;              ///< "transpose.cu:49", or "the kernel"
  std::string problem;            ///< "uncoalesced", "bank conflicts", ...
  std::string what;               ///< in words
  std::optional<double> speedup;  ///< modeled: the kernel's time now over its time fixed
  std::string spec;               ///< of the speed-up
};

/// One kernel's source view.
struct CodeView {
  std::string kernel;
  std::vector<CodeLine> lines;        ///< hottest first (largest L1 share), then in file order
  std::vector<CodeProblem> problems;  ///< largest modeled speed-up first
};

/// Every kernel of `file` with counted lines or problems, in the order of its first result.
[[nodiscard]] std::vector<CodeView> code_views(const ResultsFile& file);

// ---------------------------------------------------------------------------------------------
// Levels panel
// ---------------------------------------------------------------------------------------------

/// One optimization level run at one attention shape (an attention_level result).
struct LevelRow {
  int level = 0;                       ///< param level (>= 0)
  std::string name;                    ///< "L3 flash": the level and its param level_name
  std::optional<double> time_ms;       ///< its time on the file's clock (measured_label)
  std::optional<double> speedup;       ///< level 0's time / this time, both from the same view
  std::optional<double> memory_bytes;  ///< device memory it held while it ran (measured)
  std::optional<double> dram_bytes;    ///< DRAM bytes: counted on sim, else modeled (analytic)
  Provenance dram_provenance = Provenance::unavailable;  ///< of dram_bytes
  std::string bound;                                     ///< param bound; empty when absent
  std::string model_bound;     ///< param model_bound (sim: the time model's bound); may be empty
  std::string longest_kernel;  ///< param longest_kernel: the kernel model_bound is of
};

/// One level's buffers against the sequence length (attention_level_memory results).
struct LevelMemoryCurve {
  int level = 0;                   ///< param level
  std::string name;                ///< as LevelRow::name
  std::vector<double> seq_len;     ///< increasing, each once
  std::vector<double> bytes;       ///< the level's device memory at each seq_len (> 0)
  std::optional<double> exponent;  ///< growth_exponent(seq_len, bytes): about 2 for levels with
                                   ///< S x S tensors, 1 for flash; needs two lengths
  bool measured = false;  ///< every point measured while the level ran (lab 05), not the buffers
                          ///< computed from the shape (lab 04)
};

/// The levels of one attention shape, and how their memory grows with the sequence.
struct LevelsView {
  std::string shape;                        ///< the shape's params, e.g. "causal=false, ..."
  std::optional<double> seq_len;            ///< the shape's param seq_len, when it is a number
  std::vector<LevelRow> rows;               ///< by level, each level once (the first in the file)
  std::optional<std::size_t> fastest;       ///< row with the smallest time, first on ties;
                                            ///< empty when the times are CPU time
  std::vector<LevelMemoryCurve> memory;     ///< by level: memory results whose params other than
                                            ///< seq_len match the shape's
  bool cpu_times = false;                   ///< times are CPU time of the simulation
  std::string measured_label = "measured";  ///< "modeled clock (H100 SXM)", ...: timing_label
};

/// Every attention shape of `file` with levels (attention_level) or memory curves
/// (attention_level_memory), one view each, in file order. Empty when it has neither.
[[nodiscard]] std::vector<LevelsView> levels_views(const ResultsFile& file);

}  // namespace gpulab::viewer
