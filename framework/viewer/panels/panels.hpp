// The viewer's panels, one file each. A panel draws one ImGui window from the model and nothing
// else: no device queries, no file parsing, no kernel launches. Each one says explicitly what it
// shows when there is no data, so an empty window never looks like a bug.
//
// The app places each window (position and size) before calling its panel; a panel only fills it.
#pragma once

#include "gpulab/viewer/model.hpp"

namespace gpulab::viewer {

/// Title of the device panel's window.
inline constexpr const char* kDevicePanelTitle = "Device and spec";
/// Title of the results panel's window.
inline constexpr const char* kResultsPanelTitle = "Results";

/// "Device and spec": the detected device (or why there is none), what the sim backend
/// simulates, a spec picker, and the selected spec's peaks and per-SM limits with units and
/// their origin (datasheet, estimated, ...). Picking a spec calls model.select_spec().
void draw_device_panel(Model& model);

/// "Results": every loaded results file (context, then its metrics with provenance), the error
/// of each file that failed to load, or a hint when nothing is loaded.
void draw_results_panel(const Model& model);

}  // namespace gpulab::viewer
