// "Components" panel: where the time of one attention forward pass goes.
//
// Each of the five components is a bar pair - measured beside modeled - so a student sees both
// which component dominates and whether the real run agrees with the roofline model. Shares
// (each component's fraction of its total) are the default view because on the sim backend the
// measured times are CPU time, orders of magnitude above the modeled GPU times: as shares the two
// are comparable, as times only on a log axis. The bottleneck is outlined and tagged, and the
// table below gives every number with its provenance.
#include <imgui.h>

#include <algorithm>
#include <cmath>
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

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

double or_none(std::optional<double> value, double scale = 1) {
  return value ? *value * scale : kNone;
}

std::string row_tooltip(const ComponentRow& row, const std::string& measured_label) {
  std::string text = row.name;
  text += "\n" + measured_label + ": " +
          (row.measured_ms ? panel::number(row.measured_ms) + " ms" : std::string("n/a"));
  if (row.measured_share) {
    text += " (" + short_number(*row.measured_share * 100) + " %)";
  }
  text +=
      "\nmodeled: " + (row.modeled_ms ? panel::number(row.modeled_ms) + " ms" : std::string("n/a"));
  if (row.modeled_share) {
    text += " (" + short_number(*row.modeled_share * 100) + " %)";
  }
  if (!row.bound.empty()) {
    text += "\n" + row.bound;
  }
  return text;
}

void draw_bars(const ComponentsView& view, bool times, float height) {
  plot::Chart chart;
  chart.title = times ? "time per component" : "share of the total";
  plot::Bars bars;
  bars.horizontal = true;
  bars.highlight = view.bottleneck;
  bars.highlight_tag = view.bottleneck_is_modeled ? "bottleneck (modeled)" : "bottleneck";
  bars.highlight_colour = plot::error();
  plot::BarGroup measured{.name = view.cpu_times ? "measured (CPU sim)" : view.measured_label,
                          .colour = plot::measured()};
  plot::BarGroup modeled{
      .name = "modeled" + (view.modeled_spec.empty() ? "" : " (" + view.modeled_spec + ")"),
      .colour = plot::modeled()};
  for (const ComponentRow& row : view.rows) {
    bars.categories.push_back(row.name);
    const std::string tooltip = row_tooltip(row, view.measured_label);
    if (times) {
      measured.values.push_back(or_none(row.measured_ms));
      modeled.values.push_back(or_none(row.modeled_ms));
    } else {
      measured.values.push_back(or_none(row.measured_share, 100));
      modeled.values.push_back(or_none(row.modeled_share, 100));
      measured.labels.push_back(row.measured_share ? short_number(*row.measured_share * 100) + "%"
                                                   : std::string());
      modeled.labels.push_back(row.modeled_share ? short_number(*row.modeled_share * 100) + "%"
                                                 : std::string());
    }
    measured.tooltips.push_back(tooltip);
    modeled.tooltips.push_back(tooltip);
  }
  bars.groups.push_back(std::move(measured));
  bars.groups.push_back(std::move(modeled));
  chart.bars = std::move(bars);
  // Measured CPU time and modeled GPU time differ by orders of magnitude: times need a log axis.
  chart.x = times ? plot::AxisSpec{.label = "time (ms, log scale)", .log = true}
                  : plot::AxisSpec{.label = "share of total time (%)", .include_zero = true};
  chart.empty_text = "no component has a time";
  plot::draw("##components", chart, height);
}

void draw_table(const ComponentsView& view) {
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                     ImGuiTableFlags_NoSavedSettings;
  const float height =
      ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(view.rows.size() + 1) +
      ImGui::GetStyle().ScrollbarSize + 8;
  if (!ImGui::BeginTable("##component_table", 8, kFlags, ImVec2(0, height))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(1, 1);
  const char* headers[][2] = {
      {"component", "in execution order"},
      {"measured ms", view.cpu_times ? "CPU time of the simulation (sim backend), not GPU time"
                                     : "measured GPU time (median)"},
      {"modeled ms", "roofline time on the spec: max(FLOP / peak, bytes / bandwidth)"},
      {"meas. %", "share of the measured total"},
      {"model %", "share of the modeled total"},
      {"GFLOP", "floating-point work (decimal GFLOP)"},
      {"MB", "DRAM bytes moved (decimal MB)"},
      {"bound", "which roof limits it on the spec"},
  };
  for (const auto& header : headers) {
    ImGui::TableSetupColumn(header[0]);
  }
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (const auto& header : headers) {
    ImGui::TableNextColumn();
    panel::header_with_tooltip(header[0], header[1]);
  }
  for (std::size_t i = 0; i < view.rows.size(); ++i) {
    const ComponentRow& row = view.rows[i];
    const bool bottleneck = view.bottleneck == i;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (bottleneck) {
      widgets::coloured(row.name + " (bottleneck)", colours::kError);
    } else {
      ImGui::TextUnformatted(row.name.c_str());
    }
    const auto cell = [](std::optional<double> value, double scale, const ImVec4& colour) {
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, value ? colour : colours::kUnavailable);
      widgets::right_aligned(value ? format_value(*value * scale) : std::string("n/a"));
      ImGui::PopStyleColor();
    };
    cell(row.measured_ms, 1, colours::kMeasured);
    cell(row.modeled_ms, 1, colours::kModeled);
    cell(row.measured_share, 100, colours::kMeasured);
    cell(row.modeled_share, 100, colours::kModeled);
    const ImVec4 plain = ImGui::GetStyleColorVec4(ImGuiCol_Text);
    cell(row.flop, 1e-9, plain);
    cell(row.bytes, 1e-6, plain);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.bound.empty() ? "-" : row.bound.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_components_panel(Model& model) {
  if (panel::begin("components")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    const std::vector<std::size_t> candidates = panel::sources_with(
        data, [](const SourceViews& views) { return !views.components.empty(); });
    if (candidates.empty()) {
      widgets::wrapped(
          "no attention breakdown - start the components run in Live run, or open a "
          "lab 02 or lab 03 results file (gpulab run lab02 --json FILE)",
          colours::kUnavailable);
    } else {
      const std::size_t source =
          panel::pick_source("source", data, candidates, selections.components_source);
      const std::vector<ComponentsView>& shapes = data.sources[source].components;
      std::vector<std::string> names;
      names.reserve(shapes.size());
      for (const ComponentsView& shape : shapes) {
        names.push_back(shape.shape.empty() ? std::string("(no shape params)") : shape.shape);
      }
      ImGui::SetNextItemWidth(-ImGui::CalcTextSize("shape").x -
                              ImGui::GetStyle().ItemInnerSpacing.x);
      panel::combo("shape", selections.components_shape, names);
      const ComponentsView& view = shapes[std::min(selections.components_shape, shapes.size() - 1)];

      int mode = selections.components_times ? 1 : 0;
      ImGui::RadioButton("shares", &mode, 0);
      ImGui::SameLine();
      ImGui::RadioButton("times", &mode, 1);
      selections.components_times = mode == 1;
      if (view.bottleneck && *view.bottleneck < view.rows.size()) {
        const ComponentRow& row = view.rows[*view.bottleneck];
        const std::optional<double> share =
            view.bottleneck_is_modeled ? row.modeled_share : row.measured_share;
        // Which times it rests on matters: on sim the measured ranking is the CPU's, not a GPU's.
        const std::string basis = view.bottleneck_is_modeled ? "modeled" : "measured";
        widgets::wrapped("bottleneck: " + row.name + " (" +
                             (share ? short_number(*share * 100) + " % of " : std::string()) +
                             basis + " time)",
                         colours::kError);
      }
      if (view.bottleneck_is_modeled) {
        widgets::wrapped(view.cpu_times
                             ? "on sim the bottleneck comes from the modeled (GPU) times: "
                               "the measured ones are the CPU's"
                             : "nothing measured: the bottleneck comes from the modeled "
                               "times",
                         colours::kModeled);
      }
      if (view.cpu_times) {
        panel::sim_note();
      }
      const float table_height =
          ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(view.rows.size() + 1) +
          ImGui::GetStyle().ScrollbarSize + 12;
      draw_bars(view, selections.components_times, panel::chart_height(table_height));
      draw_table(view);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
