// The viewer's panels, one file each. A panel draws one ImGui window from the model and nothing
// else: no device queries, no file parsing, no kernel launches (the run panel asks the model to
// start a run; the worker thread does it). Each one says explicitly what it shows when there is no
// data, so an empty window never looks like a bug.
//
// The app places each window (position and size) before calling its panel; a panel only fills it.
#pragma once

#include <span>
#include <string_view>

#include "gpulab/viewer/model.hpp"

namespace gpulab::viewer {

/// One panel: its short name (for --panel), its window title, and its draw function.
struct PanelInfo {
  std::string_view name;   ///< "device", "results", "run", "benchmark", "components",
                           ///< "roofline", "occupancy", "sweep", "memory", "source", "levels",
                           ///< "history", "class"
  std::string_view title;  ///< the ImGui window title, e.g. "Device and spec"
  void (*draw)(Model& model);
};

/// Every panel, in layout order.
[[nodiscard]] std::span<const PanelInfo> all_panels();

/// "Device and spec": the detected device (or why there is none), what the sim backend
/// simulates, a spec picker, and the selected spec's peaks and per-SM limits with units and
/// their origin (datasheet, estimated, ...). Picking a spec calls model.select_spec().
void draw_device_panel(Model& model);

/// "Results": every loaded results file (context, then its metrics with provenance), the error
/// of each file that failed to load, or a hint when nothing is loaded.
void draw_results_panel(Model& model);

/// "Live run": the experiment picker and its options, Run and Cancel, a progress bar with the
/// step in progress, the run's state or error, and a note that sim times are CPU time.
void draw_run_panel(Model& model);

/// "Benchmark": per source, bandwidth against bytes (log-log) with the spec's peak line, measured
/// and modeled series; the selected size's sample histogram and statistics.
void draw_benchmark_panel(Model& model);

/// "Components": the attention breakdown of the selected shape as bars (measured beside modeled)
/// and a table, the bottleneck highlighted.
void draw_components_panel(Model& model);

/// "Memory traffic": one profiled kernel's global loads and stores from requests through L1
/// sectors and L2 to DRAM, and its shared-memory wavefronts and bank conflicts.
void draw_memory_panel(Model& model);

/// "Source": one kernel's lines counted on sim (gpulab profile --source), hottest first with its
/// share of the kernel's L1 traffic as a heat bar, each line's figures and code, and the problems
/// the rules found with the modeled gain of each fix.
void draw_code_panel(Model& model);

/// "Optimization levels": the lab 04 levels of the selected shape as bars (time with speed-up, or
/// device memory held) and each level's buffers against the sequence length with its growth
/// exponent.
void draw_levels_panel(Model& model);

/// "Memory history": a recorded memory history as device memory over time, stacked by
/// allocation (the largest ones labelled with size and source line), the reserved total, the
/// peak marked and the allocations alive at it.
void draw_history_panel(Model& model);

/// "Class": a class summary (`gpulab grade --roster`'s summary.json): how many were graded, each
/// lab's students per tenth of the points as grouped bars, and the tests failed by most students
/// with their share of the class.
void draw_class_panel(Model& model);
/// "Roofline": log-log axes, the memory and compute roofs of the selected spec at the chosen
/// precision, every op as a labelled point with a tooltip (intensity, achieved, % of roof, bound).
void draw_roofline_panel(Model& model);

/// "Occupancy explorer": kernel picker, sliders for block size, registers and shared memory; the
/// result (blocks, warps, occupancy, limiter) and three charts with the current point marked.
void draw_occupancy_panel(Model& model);

/// "Block-size sweep": time (measured, and modeled for the spec) and occupancy against block size
/// for the selected sweep; on sim the measured times are marked as CPU simulation.
void draw_sweep_panel(Model& model);

}  // namespace gpulab::viewer
