// "Block-size sweep" panel: one kernel timed at every block size, beside its occupancy.
//
// Two charts share their x axis (the block size): time above (measured, and modeled for the
// spec, on a log axis) and modeled occupancy (0..100 %) below, so a student can check the usual
// claims: too small a block starves the SM of warps (the blocks-per-SM limit caps occupancy), a
// large one is not faster once the kernel is bandwidth-bound. The fastest measured block size is
// marked in both; the tooltip of each point names the occupancy limiter there.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/viewer/plot/colours.hpp"
#include "gpulab/viewer/plot/plot.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

std::string point_tooltip(const SweepPoint& point, const std::string& measured_label,
                          const std::string& spec) {
  std::string text = "block size " + std::to_string(point.block_size);
  text += "\n" + measured_label + ": " +
          (point.measured_ms ? panel::number(point.measured_ms) + " ms" : std::string("n/a"));
  text += "\nmodeled (" + spec +
          "): " + (point.modeled_ms ? panel::number(point.modeled_ms) + " ms" : std::string("n/a"));
  text += "\noccupancy: " + (point.occupancy_percent
                                 ? short_number(*point.occupancy_percent) + " % (modeled)"
                                 : std::string("n/a"));
  if (!point.limiter.empty()) {
    text += "\nlimiter: " + point.limiter;
  }
  return text;
}

// The two charts share their x axis: the same range, ticks and left margin, one above the other.
plot::AxisSpec block_axis(const SweepView& view, bool linear, bool with_label) {
  int smallest = 1024;
  int largest = 32;
  for (const SweepPoint& point : view.points) {
    smallest = std::min(smallest, point.block_size);
    largest = std::max(largest, point.block_size);
  }
  smallest = std::max(1, std::min(smallest, largest));
  plot::AxisSpec axis{.label = with_label
                                   ? (linear ? "threads per block" : "threads per block (log2)")
                                   : std::string(),
                      .log = !linear,
                      .range = linear ? Axis{0, largest * 1.06, false}
                                      : Axis{smallest / 1.25, largest * 1.25, true}};
  // Block sizes are powers of two in practice: tick them, not decades (on a linear axis the
  // labels of 32 and 64 would collide; the plot leaves out a label that overlaps another).
  for (int b = 32; b <= 1024; b *= 2) {
    axis.ticks.push_back({static_cast<double>(b), std::to_string(b), true});
  }
  return axis;
}

void draw_charts(const SweepView& view, bool linear, float height) {
  const std::string spec = view.modeled_spec.empty() ? std::string("spec") : view.modeled_spec;
  const float label_width = ImGui::CalcTextSize("0.0001").x + 10;
  std::optional<int> fastest;
  if (view.fastest_measured && *view.fastest_measured < view.points.size()) {
    fastest = view.points[*view.fastest_measured].block_size;
  }

  plot::Chart time;  // no title: the picker above names the kernel and problem
  time.x = block_axis(view, linear, false);
  time.y = {.label = "time (ms, log scale)", .log = true};
  time.y_label_width = label_width;
  plot::Series measured{.name = view.cpu_times                      ? "measured: CPU simulation"
                                : view.measured_label == "measured" ? "measured (GPU)"
                                                                    : view.measured_label,
                        .colour = plot::measured(),
                        .style = plot::Style::line_points};
  plot::Series modeled{.name = "modeled: " + spec + " (GPU)",
                       .colour = plot::modeled(),
                       .style = plot::Style::line_points,
                       .hollow = true,
                       .dashed = true};

  plot::Chart occupancy;
  occupancy.x = block_axis(view, linear, true);
  occupancy.y = {.label = "occupancy (%, modeled)", .range = Axis{0, 105, false}};
  occupancy.y.ticks = {{0, "0", true}, {50, "50", true}, {100, "100", true}};
  occupancy.y_label_width = label_width;
  plot::Series occupied{.colour = plot::modeled(),
                        .style = plot::Style::line_points,
                        .marker = plot::Marker::square,
                        .radius = 3.5F};

  for (const SweepPoint& point : view.points) {
    const double x = point.block_size;
    const std::string tooltip = point_tooltip(point, view.measured_label, spec);
    const auto add = [&](plot::Series& series, const std::optional<double>& value) {
      if (value) {
        series.x.push_back(x);
        series.y.push_back(*value);
        series.tooltips.push_back(tooltip);
      }
    };
    add(measured, point.measured_ms);
    add(modeled, point.modeled_ms);
    add(occupied, point.occupancy_percent);
  }
  time.series.push_back(std::move(modeled));
  time.series.push_back(std::move(measured));
  occupancy.series.push_back(std::move(occupied));
  if (fastest) {
    // The line is named in the legend: a label inside the plot would sit on the data.
    time.lines.push_back(
        {.value = static_cast<double>(*fastest), .vertical = true, .colour = plot::measured()});
    time.notes.push_back({"| fastest measured: " + std::to_string(*fastest), plot::measured()});
    occupancy.lines.push_back(
        {.value = static_cast<double>(*fastest), .vertical = true, .colour = plot::measured()});
  }
  time.empty_text = "no block size of this sweep has a time";
  occupancy.empty_text = "no occupancy in this sweep";
  plot::draw("##sweep_time", time, std::max(140.0F, height * 0.62F));
  plot::draw("##sweep_occupancy", occupancy, std::max(110.0F, height * 0.38F - 4));
}

void draw_table(const SweepView& view, float height) {
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY |
                                     ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##sweep_table", 5, kFlags, ImVec2(0, height))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("block");
  ImGui::TableSetupColumn(view.cpu_times ? "measured ms (CPU)" : "measured ms");
  ImGui::TableSetupColumn("modeled ms");
  ImGui::TableSetupColumn("occupancy %");
  ImGui::TableSetupColumn("limiter");
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < view.points.size(); ++i) {
    const SweepPoint& point = view.points[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string block = std::to_string(point.block_size);
    if (view.fastest_measured == i) {
      widgets::coloured(block + " (fastest)", colours::kMeasured);
    } else {
      ImGui::TextUnformatted(block.c_str());
    }
    const auto cell = [](const std::optional<double>& value, const ImVec4& colour) {
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, value ? colour : colours::kUnavailable);
      widgets::right_aligned(panel::number(value));
      ImGui::PopStyleColor();
    };
    cell(point.measured_ms, colours::kMeasured);
    cell(point.modeled_ms, colours::kModeled);
    cell(point.occupancy_percent, colours::kModeled);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(point.limiter.empty() ? "-" : point.limiter.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_sweep_panel(Model& model) {
  if (panel::begin("sweep")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    // Every (source, sweep) pair is one entry of the picker.
    std::vector<std::pair<std::size_t, std::size_t>> entries;
    std::vector<std::string> names;
    std::size_t current = 0;
    for (std::size_t s = 0; s < data.sources.size(); ++s) {
      const auto& sweeps = data.sources[s].sweeps;
      for (std::size_t k = 0; k < sweeps.size(); ++k) {
        if (s == selections.sweep_source && k == selections.sweep_index) {
          current = entries.size();
        }
        entries.emplace_back(s, k);
        names.push_back(data.sources[s].source.label + ": " + sweeps[k].kernel +
                        (sweeps[k].problem.empty() ? "" : " " + sweeps[k].problem));
      }
    }
    if (entries.empty()) {
      widgets::wrapped(
          "no block-size sweep - pick the sweep experiment in Live run and press Run "
          "(it times one kernel at block sizes 32..1024)",
          colours::kUnavailable);
    } else {
      ImGui::SetNextItemWidth(-ImGui::CalcTextSize("sweep").x -
                              ImGui::GetStyle().ItemInnerSpacing.x);
      // Written back only when the user picks: a selection that matches nothing (yet) shows the
      // first sweep and stays as it is.
      if (panel::combo("sweep", current, names)) {
        selections.sweep_source = entries[current].first;
        selections.sweep_index = entries[current].second;
      }
      const SweepView& view = data.sources[entries[current].first].sweeps[entries[current].second];
      ImGui::Checkbox("linear x", &selections.sweep_linear_x);
      if (view.cpu_times) {
        panel::sim_note();
      }
      const float row = ImGui::GetTextLineHeightWithSpacing();
      const float table_height =
          row * static_cast<float>(std::min<std::size_t>(view.points.size(), 8) + 1) + 8;
      draw_charts(view, selections.sweep_linear_x, panel::chart_height(table_height, 260));
      draw_table(view, table_height);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
