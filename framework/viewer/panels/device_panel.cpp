// "Device and spec" panel: which GPU the numbers are about.
//
// A learner needs three facts before any measurement means something: is there a real GPU (and
// if not, why), which GPU the sim backend pretends to be, and the peaks that "% of peak" and the
// roofline are computed against. The spec table says for every number whether it comes from a
// datasheet, from the device itself, or is an estimate, because an estimated peak can be off.
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

ImVec4 origin_colour(const std::string& origin) {
  if (origin == "estimated") {
    return colours::kEstimated;
  }
  if (origin == "datasheet") {
    return ImGui::GetStyleColorVec4(ImGuiCol_Text);
  }
  return colours::kUnavailable;  // "device query" and "derived": secondary detail
}

void draw_devices(const Model& model) {
  const DeviceSummary summary = summarize_devices(model);
  ImGui::Text("backend: %s", summary.backend.c_str());
  for (const std::string& line : summary.devices) {
    widgets::wrapped(line, colours::kMeasured);
  }
  // No device is a normal state (a laptop, a CI runner), not an error: say why and go on.
  if (!summary.unavailable.empty()) {
    widgets::wrapped(summary.unavailable, colours::kEstimated);
  }
  widgets::wrapped(summary.simulation);
  for (const std::string& note : model.notes()) {
    widgets::wrapped(note, colours::kError);
  }
}

void draw_spec_picker(Model& model) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("spec");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 16, ImGui::GetContentRegionAvail().x));
  const std::string current = spec_label(model.selected_spec());
  if (ImGui::BeginCombo("##spec", current.c_str())) {
    const auto specs = model.specs();
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const bool selected = i == model.selected_index();
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(spec_label(specs[i]).c_str(), selected)) {
        model.select_spec(i);
      }
      if (selected) {
        ImGui::SetItemDefaultFocus();  // opening the combo scrolls to the current entry
      }
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  // The reason goes on its own line: beside the combo, a narrow panel would squeeze it into a
  // column one word wide.
  widgets::wrapped("(" + describe_choice(model) + ")",
                   ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
}

void draw_spec_table(const char* id, const std::vector<SpecRow>& rows) {
  // Fixed columns fit their widest cell, so no label is cut off. In a narrow panel (the grid at
  // 1280x800) the table scrolls sideways, its height set to fit every row and the scrollbar; a
  // wide one needs neither.
  constexpr float kScrollBelow = 520.0F;  // about the table's natural width, in pixels
  const bool scroll = ImGui::GetContentRegionAvail().x < kScrollBelow;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoSavedSettings |
                                (scroll ? ImGuiTableFlags_ScrollX : ImGuiTableFlags_None);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_height = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const ImVec2 outer(
      0.0F,
      scroll ? static_cast<float>(rows.size() + 1) * row_height + style.ScrollbarSize + 4 : 0.0F);
  if (!ImGui::BeginTable(id, 4, flags, outer)) {
    return;
  }
  ImGui::TableSetupColumn("property");
  ImGui::TableSetupColumn("value");
  ImGui::TableSetupColumn("unit");
  ImGui::TableSetupColumn("origin");
  ImGui::TableHeadersRow();
  for (const SpecRow& row : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.property.c_str());
    ImGui::TableNextColumn();
    widgets::right_aligned(row.value);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.unit.c_str());
    ImGui::TableNextColumn();
    widgets::coloured(row.origin, origin_colour(row.origin));
  }
  ImGui::EndTable();
}

void draw_spec(Model& model) {
  draw_spec_picker(model);
  const SpecSheet sheet = spec_sheet(model.selected_spec());
  ImGui::TextUnformatted(sheet.title.c_str());
  if (sheet.estimated) {
    widgets::wrapped(
        "ESTIMATED: not in gpulab's spec database; peaks are computed from the "
        "device's clocks and per-SM rates and may be off",
        colours::kEstimated);
  } else {
    ImGui::TextUnformatted("origin: datasheet");
  }
  widgets::wrapped("source: " + sheet.source, colours::kUnavailable);

  ImGui::Spacing();
  ImGui::TextUnformatted("Peaks (decimal units: 1 GB = 1e9 bytes; tensor peaks dense, not sparse)");
  draw_spec_table("##peaks", sheet.peaks);
  ImGui::Spacing();
  ImGui::TextUnformatted("Per-SM and per-block limits (what occupancy is computed from)");
  draw_spec_table("##limits", sheet.limits);
}

}  // namespace

void draw_device_panel(Model& model) {
  if (panel::begin("device")) {  // false when collapsed: draw nothing, but End() below
    draw_devices(model);
    ImGui::Separator();
    draw_spec(model);
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
