// "Device and spec" panel: which GPU the numbers are about.
//
// A learner needs three facts before any measurement means something: is there a real GPU (and
// if not, why), which GPU the sim backend pretends to be, and the peaks that "% of peak" and the
// roofline are computed against. The spec table says for every number whether it comes from a
// datasheet, from the device itself, or is an estimate, because an estimated peak can be off.
#include <imgui.h>

#include <cstddef>
#include <string>
#include <vector>

#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

ImVec4 origin_colour(const std::string& origin) {
  if (origin == "estimated") {
    return widgets::kEstimated;
  }
  if (origin == "datasheet") {
    return ImGui::GetStyleColorVec4(ImGuiCol_Text);
  }
  return widgets::kUnavailable;  // "device query" and "derived": secondary detail
}

void draw_devices(const Model& model) {
  const DeviceSummary summary = summarize_devices(model);
  ImGui::Text("backend: %s", summary.backend.c_str());
  for (const std::string& line : summary.devices) {
    widgets::wrapped(line, widgets::kMeasured);
  }
  // No device is a normal state (a laptop, a CI runner), not an error: say why and go on.
  if (!summary.unavailable.empty()) {
    widgets::wrapped(summary.unavailable, widgets::kEstimated);
  }
  widgets::wrapped(summary.simulation);
  for (const std::string& note : model.notes()) {
    widgets::wrapped(note, widgets::kError);
  }
}

void draw_spec_picker(Model& model) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("spec");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
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
  // Wrapped text after SameLine wraps within the space right of the combo, so a long reason
  // stays readable in a narrow panel.
  ImGui::SameLine();
  widgets::wrapped("(" + describe_choice(model) + ")",
                   ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
}

void draw_spec_table(const char* id, const std::vector<SpecRow>& rows) {
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable(id, 4, kFlags)) {
    return;
  }
  // Fixed columns fit their widest cell, so no label is cut off; the origin column takes the
  // rest of the panel.
  ImGui::TableSetupColumn("property", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("unit", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("origin", ImGuiTableColumnFlags_WidthStretch);
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
        widgets::kEstimated);
  } else {
    ImGui::TextUnformatted("origin: datasheet");
  }
  widgets::wrapped("source: " + sheet.source, widgets::kUnavailable);

  ImGui::Spacing();
  ImGui::TextUnformatted("Peaks (decimal units: 1 GB = 1e9 bytes; tensor peaks dense, not sparse)");
  draw_spec_table("##peaks", sheet.peaks);
  ImGui::Spacing();
  ImGui::TextUnformatted("Per-SM and per-block limits (what occupancy is computed from)");
  draw_spec_table("##limits", sheet.limits);
}

}  // namespace

void draw_device_panel(Model& model) {
  if (ImGui::Begin(kDevicePanelTitle)) {  // false when collapsed: draw nothing, but End() below
    draw_devices(model);
    ImGui::Separator();
    draw_spec(model);
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
