// The panel table (name for --panel, window title, draw function) and the helpers the panels
// share (panel_support.hpp).
#include "panels/panels.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "panels/panel_support.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {

std::span<const PanelInfo> all_panels() {
  // Layout order: the app fills its grid column by column, two panels per column, so each
  // column pairs panels that are read together.
  static constexpr PanelInfo kPanels[] = {
      {"device", "Device and spec", &draw_device_panel},
      {"results", "Results", &draw_results_panel},
      {"run", "Live run", &draw_run_panel},
      {"benchmark", "Benchmark", &draw_benchmark_panel},
      {"components", "Components", &draw_components_panel},
      {"roofline", "Roofline", &draw_roofline_panel},
      {"occupancy", "Occupancy explorer", &draw_occupancy_panel},
      {"sweep", "Block-size sweep", &draw_sweep_panel},
      {"memory", "Memory traffic", &draw_memory_panel},
      {"source", "Source", &draw_code_panel},
      {"levels", "Optimization levels", &draw_levels_panel},
      {"history", "Memory history", &draw_history_panel},
      {"class", "Class", &draw_class_panel},
  };
  return kPanels;
}

namespace panel {

bool begin(std::string_view name) {
  for (const PanelInfo& info : all_panels()) {
    if (info.name == name) {
      // Titles are string literals: their data() is NUL-terminated.
      return ImGui::Begin(info.title.data());
    }
  }
  // Only reachable through a typo in a panel's own name: show it rather than hide the panel.
  const std::string title = "unknown panel " + std::string(name);
  return ImGui::Begin(title.c_str());
}

ImVec4 provenance_colour(Provenance provenance) {
  switch (provenance) {
    case Provenance::measured:
      return colours::kMeasured;
    case Provenance::modeled:
    case Provenance::modeled_clock:
      return colours::kModeled;
    case Provenance::unavailable:
      return colours::kUnavailable;
    case Provenance::counted:
      return colours::kMeasured;
  }
  return colours::kUnavailable;
}

bool combo(const char* label, std::size_t& index, const std::vector<std::string>& items) {
  if (items.empty()) {
    return false;
  }
  index = std::min(index, items.size() - 1);
  bool changed = false;
  if (ImGui::BeginCombo(label, items[index].c_str())) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      const bool selected = i == index;
      if (ImGui::Selectable(items[i].c_str(), selected)) {
        changed = i != index;
        index = i;
      }
      if (selected) {
        ImGui::SetItemDefaultFocus();
      }
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  return changed;
}

std::size_t pick_source(const char* label, const PanelData& data,
                        const std::vector<std::size_t>& candidates, std::size_t& selected) {
  if (candidates.empty()) {
    return data.sources.size();
  }
  // A selection that is not a candidate shows the first candidate without being overwritten,
  // so a source that gains data later (the live run) is not locked out by this frame's choice.
  auto at = std::find(candidates.begin(), candidates.end(), selected);
  if (at == candidates.end()) {
    at = candidates.begin();
  }
  if (candidates.size() == 1) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", label);
    ImGui::SameLine();
    ImGui::TextUnformatted(data.sources[*at].source.label.c_str());
    return *at;
  }
  std::vector<std::string> labels;
  labels.reserve(candidates.size());
  for (const std::size_t i : candidates) {
    labels.push_back(data.sources[i].source.label);
  }
  auto position = static_cast<std::size_t>(at - candidates.begin());
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize(label).x - ImGui::GetStyle().ItemInnerSpacing.x);
  if (combo(label, position, labels)) {
    selected = candidates[position];
  }
  return candidates[position];
}

std::string short_source(const std::string& label) {
  const std::size_t colon = label.find(": ");
  return colon == std::string::npos ? label : label.substr(0, colon);
}

void sim_note(const std::string& modeled_spec) {
  widgets::wrapped(
      "sim: measured = CPU time, not GPU time" +
          (modeled_spec.empty() ? std::string() : "; modeled = " + modeled_spec + " (GPU)"),
      colours::kEstimated);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "On the sim backend the kernels run on CPU threads: a measured time is the CPU time of\n"
        "the simulation, never a GPU time. Modeled numbers are computed from the spec's roofline.");
  }
}

float chart_height(float below, float min_height) {
  const float avail = ImGui::GetContentRegionAvail().y;
  return avail - below >= min_height ? avail - below : std::max(avail, min_height);
}

void same_line_if_fits(const std::string& text) {
  ImGui::SameLine();
  if (ImGui::CalcTextSize(text.c_str()).x > ImGui::GetContentRegionAvail().x) {
    ImGui::NewLine();  // undoes the SameLine
  }
}

std::string number(std::optional<double> value) {
  return value && std::isfinite(*value) ? format_value(*value) : std::string("n/a");
}

std::string bytes(std::optional<double> value) {
  return value && std::isfinite(*value) ? format_bytes(*value) : std::string("n/a");
}

void header_with_tooltip(const char* label, const char* tooltip) {
  ImGui::TableHeader(label);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s", tooltip);
  }
}

}  // namespace panel
}  // namespace gpulab::viewer
