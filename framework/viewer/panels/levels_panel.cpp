// "Optimization levels" panel (lab 04): one attention shape at every level of the ladder.
//
// Top: one bar per level - its time on the file's clock with the speed-up over level 0, or the
// device memory it held - the fastest outlined. Below: the buffers each level needs against the
// sequence length on log-log axes, one line per level with its fitted growth exponent in the
// legend (about 2 for the levels that hold S x S tensors, 1 for flash attention), and the memory
// each level was measured holding at the run's length as a square on its line.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
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

std::string row_tooltip(const LevelRow& row, const LevelsView& view) {
  std::string text = row.name;
  text +=
      "\ntime: " + (row.time_ms ? panel::number(row.time_ms) + " ms (" + view.measured_label + ")"
                                : std::string("n/a"));
  text += "\nspeed-up over L0: " + (row.speedup ? short_number(*row.speedup) + "x" : "n/a");
  text += "\ndevice memory held: " + panel::bytes(row.memory_bytes);
  text += "\nDRAM: " + panel::bytes(row.dram_bytes);
  if (row.dram_bytes) {
    text += " (" + std::string(to_string(row.dram_provenance)) + ")";
  }
  if (!row.bound.empty()) {
    text += "\n" + row.bound + " on the roofline";
  }
  if (!row.model_bound.empty()) {
    text += "\nmodeled bound: " + row.model_bound +
            (row.longest_kernel.empty() ? "" : " (" + row.longest_kernel + ")");
  }
  return text;
}

void draw_level_bars(const LevelsView& view, bool memory, float height) {
  plot::Chart chart;
  chart.title = memory ? "device memory held while it ran" : "time per level";
  plot::Bars bars;
  bars.horizontal = true;
  if (!memory) {
    bars.highlight = view.fastest;
    bars.highlight_tag = "fastest";
    bars.highlight_colour = plot::measured();
  }
  plot::BarGroup group{.name = memory ? "measured" : view.measured_label,
                       .colour = plot::measured()};
  for (const LevelRow& row : view.rows) {
    bars.categories.push_back(row.name);
    const std::optional<double> value = memory ? row.memory_bytes : row.time_ms;
    group.values.push_back(value.value_or(std::numeric_limits<double>::quiet_NaN()));
    if (memory) {
      group.labels.push_back(row.memory_bytes ? format_bytes(*row.memory_bytes) : std::string());
    } else {
      group.labels.push_back(row.speedup ? short_number(*row.speedup) + "x" : std::string());
    }
    group.tooltips.push_back(row_tooltip(row, view));
  }
  bars.groups.push_back(std::move(group));
  chart.bars = std::move(bars);
  chart.x = memory ? plot::AxisSpec{.label = "MB", .include_zero = true, .scale = 1e6}
                   : plot::AxisSpec{.label = "ms (label: speed-up over L0)", .include_zero = true};
  chart.empty_text = memory ? "no level has a measured memory" : "no level has a time";
  plot::draw("##level_bars", chart, height);
}

void draw_memory_growth(const LevelsView& view, float height) {
  plot::Chart chart;
  chart.title = "memory against seq_len";
  chart.x = {.label = "seq_len (tokens)", .log = true};
  chart.y = {.label = "device memory (MB)", .log = true, .scale = 1e6};
  for (const LevelMemoryCurve& curve : view.memory) {
    const ImU32 colour = plot::source_colour(static_cast<std::size_t>(curve.level));
    plot::Series line{.name = curve.name,
                      .colour = colour,
                      .x = curve.seq_len,
                      .y = curve.bytes,
                      .style = plot::Style::line_points};
    if (curve.exponent) {
      line.name += "  ~S^" + format_fixed(*curve.exponent, 2);
    }
    for (std::size_t i = 0; i < curve.seq_len.size(); ++i) {
      line.tooltips.push_back(curve.name + "\nseq_len " + format_fixed(curve.seq_len[i], 0) + ": " +
                              format_bytes(curve.bytes[i]) +
                              (curve.measured ? " measured while it ran" : " of buffers"));
    }
    chart.series.push_back(std::move(line));
  }
  bool any_measured = false;
  for (const LevelRow& row : view.rows) {
    if (!row.memory_bytes || !view.seq_len) {
      continue;
    }
    any_measured = true;
    chart.series.push_back(
        {.colour = plot::source_colour(static_cast<std::size_t>(row.level)),
         .x = {*view.seq_len},
         .y = {*row.memory_bytes},
         .style = plot::Style::points,
         .marker = plot::Marker::square,
         .radius = 5.0F,
         .tooltips = {row.name + "\nmeasured holding " + format_bytes(*row.memory_bytes) +
                      " at seq_len " + format_fixed(*view.seq_len, 0)}});
  }
  const auto measured_curve = [](const LevelMemoryCurve& c) { return c.measured; };
  if (!std::all_of(view.memory.begin(), view.memory.end(), measured_curve)) {
    chart.notes.push_back({"lines: the level's buffers, from the shape", plot::modeled()});
  }
  if (std::any_of(view.memory.begin(), view.memory.end(), measured_curve)) {
    chart.notes.push_back({"lines: measured while the level ran at each length", plot::measured()});
  }
  if (any_measured) {
    chart.notes.push_back({"squares: measured while it ran", plot::measured()});
  }
  chart.empty_text = "no memory against seq_len in this file";
  plot::draw("##level_memory", chart, height);
}

}  // namespace

void draw_levels_panel(Model& model) {
  if (panel::begin("levels")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    const std::vector<std::size_t> candidates =
        panel::sources_with(data, [](const SourceViews& views) { return !views.levels.empty(); });
    if (candidates.empty()) {
      widgets::wrapped(
          "no optimization levels - open a lab 04 results file (gpulab run lab04 --json FILE)",
          colours::kUnavailable);
    } else {
      const std::size_t source =
          panel::pick_source("source", data, candidates, selections.levels_source);
      const std::vector<LevelsView>& shapes = data.sources[source].levels;
      std::vector<std::string> names;
      names.reserve(shapes.size());
      for (const LevelsView& shape : shapes) {
        names.push_back(shape.shape.empty() ? std::string("(no shape params)") : shape.shape);
      }
      ImGui::SetNextItemWidth(-ImGui::CalcTextSize("shape").x -
                              ImGui::GetStyle().ItemInnerSpacing.x);
      panel::combo("shape", selections.levels_shape, names);
      const LevelsView& view = shapes[std::min(selections.levels_shape, shapes.size() - 1)];

      int mode = selections.levels_memory ? 1 : 0;
      ImGui::RadioButton("time", &mode, 0);
      ImGui::SameLine();
      ImGui::RadioButton("memory", &mode, 1);
      selections.levels_memory = mode == 1;
      if (view.cpu_times) {
        panel::sim_note();
      }
      const float rest = ImGui::GetContentRegionAvail().y;
      const float bars = std::max(rest * 0.45F, 140.0F);
      if (!view.rows.empty()) {
        draw_level_bars(view, selections.levels_memory, bars);
      }
      draw_memory_growth(view, panel::chart_height(0, 160.0F));
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
