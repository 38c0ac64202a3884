// "Results" panel: the results files the viewer was given.
//
// Each file shows its context first (which backend, device and spec produced it: a number means
// nothing without it), then one row per metric with its provenance. Measured, modeled and
// unavailable numbers are coloured differently so a modeled H100 time is never read as a
// measurement. A file that failed to load shows the loader's one-line error instead.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/viewer/plot/colours.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

void draw_context(const std::vector<ContextRow>& rows) {
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##context", 2, kFlags)) {
    return;
  }
  for (const ContextRow& row : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", row.field.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.value.c_str());
  }
  ImGui::EndTable();
}

void draw_metrics(const std::vector<MetricRow>& rows) {
  if (rows.empty()) {
    ImGui::TextDisabled("this file holds no results");
    return;
  }
  // The table scrolls inside a bounded box: sideways when its columns are wider than the panel
  // (no cell is cut off), down when it has more than kVisibleRows rows. The clipper then submits
  // only the rows in view, so a file with thousands of metrics costs no more per frame than a
  // short one.
  constexpr std::size_t kVisibleRows = 16;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_height = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const auto shown = static_cast<float>(std::min(rows.size(), kVisibleRows) + 1);  // + header
  const ImVec2 outer(0.0F, shown * row_height + style.ScrollbarSize + 6);          // 6: borders
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit |
                                     ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                     ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##metrics", 7, kFlags, outer)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);  // keep the header visible while scrolling
  ImGui::TableSetupColumn("result");
  ImGui::TableSetupColumn("params");
  ImGui::TableSetupColumn("metric");
  ImGui::TableSetupColumn("value");
  ImGui::TableSetupColumn("unit");
  ImGui::TableSetupColumn("provenance");
  ImGui::TableSetupColumn("reason");
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const MetricRow& row = rows[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.result.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.params.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.metric.c_str());
      ImGui::TableNextColumn();
      widgets::right_aligned(row.value);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.unit.c_str());
      ImGui::TableNextColumn();
      widgets::coloured(row.provenance, panel::provenance_colour(row.kind));
      if (!row.reason.empty() && ImGui::IsItemHovered()) {
        // The reason column may be scrolled out of view: hovering "unavailable" shows it too.
        ImGui::SetTooltip("%s", row.reason.c_str());
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.reason.c_str());
    }
  }
  ImGui::EndTable();
}

void draw_file(const LoadedResults& entry) {
  // "###file" keeps the header's ID stable and independent of the label text (a path may
  // contain "##", which ImGui would otherwise read as an ID separator).
  const std::string label = entry.path + (entry.ok() ? "" : "  (failed to load)") + "###file";
  ImGui::SetNextItemOpen(true, ImGuiCond_Once);
  if (!ImGui::CollapsingHeader(label.c_str())) {
    return;
  }
  if (!entry.ok()) {
    widgets::wrapped(entry.error, colours::kError);
    return;
  }
  draw_context(entry.context);
  ImGui::Spacing();
  draw_metrics(entry.metrics);
}

}  // namespace

void draw_results_panel(Model& model) {
  if (panel::begin("results")) {
    const bool live = model.live_entry().ok();
    if (model.results().empty() && !live) {
      widgets::wrapped("no results yet - start a live run, or open a file: gpulab view FILE",
                       ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    }
    if (live) {
      ImGui::PushID("live");
      draw_file(model.live_entry());
      ImGui::PopID();
      ImGui::Spacing();
    }
    for (std::size_t i = 0; i < model.results().size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      draw_file(model.results()[i]);
      ImGui::PopID();
      ImGui::Spacing();
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
