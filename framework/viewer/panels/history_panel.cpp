// "Memory history" panel: device memory over the time of one run, from a memory history file
// (`gpulab run LAB -- --memory-history FILE`), stacked by allocation - the largest ones as bands of
// their own, labelled with the size and source line, the rest as one band - under the reserved
// total, with the peak marked and what was alive at it listed below.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "gpulab/viewer/plot/plot.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

ImU32 band_colour(const TimelineBand& band, std::size_t index) {
  switch (band.kind) {
    case TimelineBand::Kind::before:
      return plot::unavailable();
    case TimelineBand::Kind::others:
      return plot::faded(plot::unavailable(), 0.6F);
    case TimelineBand::Kind::allocation:
      break;
  }
  return plot::source_colour(index);
}

void draw_timeline(const MemoryTimelineView& view, float height) {
  plot::Chart chart;
  chart.title = "device memory over time, stacked by allocation";
  chart.x = {.label = "time (ms, host clock)", .include_zero = false};
  chart.y = {.label = "MB", .include_zero = true, .scale = 1e6};
  std::size_t colour = 0;
  for (const TimelineBand& band : view.bands) {
    plot::Blocks blocks{.name = "", .colour = band_colour(band, colour), .tooltip = band.label};
    if (band.kind == TimelineBand::Kind::allocation) {
      ++colour;
    }
    for (const TimelineSegment& s : band.segments) {
      blocks.blocks.push_back({s.t0_ms, s.t1_ms, s.base_bytes, s.base_bytes + s.height_bytes});
    }
    chart.blocks.push_back(std::move(blocks));
  }
  std::vector<double> xs = view.time_ms;
  std::vector<double> reserved = view.reserved_bytes;
  if (!xs.empty()) {
    xs.push_back(view.end_ms);
    reserved.push_back(reserved.back());
  }
  chart.series.push_back({.name = "reserved",
                          .colour = plot::modeled(),
                          .x = xs,
                          .y = reserved,
                          .style = plot::Style::steps,
                          .thickness = 1.5F});
  chart.lines.push_back({.value = view.peak_bytes,
                         .label = "peak " + format_bytes(view.peak_bytes),
                         .colour = plot::error()});
  chart.lines.push_back({.value = view.peak_ms, .vertical = true, .colour = plot::error()});
  chart.notes.push_back(
      {"bands: allocations alive (hover: size and source line)", plot::measured()});
  chart.empty_text = view.empty_reason.empty() ? "no events" : view.empty_reason;
  plot::draw("##memory_history", chart, height);
}

}  // namespace

void draw_history_panel(Model& model) {
  if (panel::begin("history")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    const std::vector<std::size_t> candidates = panel::sources_with(
        data, [](const SourceViews& views) { return views.timeline.has_value(); });
    if (candidates.empty()) {
      widgets::wrapped(
          "no memory history - record one with gpulab run LAB -- --memory-history FILE and open "
          "FILE",
          colours::kUnavailable);
    } else {
      const std::size_t source =
          panel::pick_source("source", data, candidates, selections.history_source);
      const MemoryTimelineView& view = *data.sources[source].timeline;
      std::string summary = std::to_string(view.events) + " events; peak " +
                            format_bytes(view.peak_bytes) + " allocated at " +
                            short_number(view.peak_ms) + " ms";
      if (view.capacity_bytes > 0) {
        summary += " of a " + format_bytes(view.capacity_bytes) + " device";
      }
      widgets::wrapped(summary);
      if (view.dropped_events > 0) {
        widgets::wrapped(std::to_string(view.dropped_events) +
                             " events were not recorded (the history was full): the end of the "
                             "run is missing",
                         colours::kEstimated);
      }
      const float listed =
          ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(view.alive_at_peak.size() + 1);
      draw_timeline(view, panel::chart_height(listed, 180.0F));
      ImGui::TextDisabled("alive at the peak:");
      for (const std::string& line : view.alive_at_peak) {
        ImGui::BulletText("%s", line.c_str());
      }
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
