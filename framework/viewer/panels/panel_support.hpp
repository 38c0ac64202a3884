// What the panels share beyond the plotting module: opening a panel's window under the title
// from the panel table, the meaning colour of a provenance, pickers over sources, and the
// sentences every panel says the same way (sim times, "n/a").
#pragma once

#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/viewer/model.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer::panel {

/// ImGui::Begin with the title of the panel `name` in all_panels(). As with ImGui::Begin,
/// ImGui::End() must be called whatever it returns; false when the window is collapsed.
bool begin(std::string_view name);

/// The meaning colour of a provenance (gpulab/viewer/plot/colours.hpp): measured green, modeled
/// blue, unavailable grey.
[[nodiscard]] ImVec4 provenance_colour(Provenance provenance);

/// Indices in `data.sources` of the sources `has` accepts.
template <class Predicate>
[[nodiscard]] std::vector<std::size_t> sources_with(const PanelData& data, Predicate has) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < data.sources.size(); ++i) {
    if (has(data.sources[i])) {
      indices.push_back(i);
    }
  }
  return indices;
}

/// A labelled combo over `items`; `index` is clamped into range first. True when the user picked
/// another item. Draws nothing for an empty list.
bool combo(const char* label, std::size_t& index, const std::vector<std::string>& items);

/// A source picker over `candidates` (indices in data.sources): shows `selected`, or the first
/// candidate when `selected` is not one (without changing it), and with more than one candidate
/// lets the user pick (which sets `selected`). Returns the index shown; data.sources.size() when
/// candidates is empty.
std::size_t pick_source(const char* label, const PanelData& data,
                        const std::vector<std::size_t>& candidates, std::size_t& selected);

/// The pickers of a panel of per-kernel views (SourceViews::memory, ::code): the sources that have
/// some, then the kernel (a `kernel` member) of the picked source's; `hint` in grey when no source
/// has any. Returns the picked view, or nullptr when there is none.
template <class View>
const View* pick_kernel(const PanelData& data, std::vector<View> SourceViews::*views,
                        std::size_t& source, std::size_t& kernel, const std::string& hint) {
  const std::vector<std::size_t> candidates =
      sources_with(data, [&](const SourceViews& v) { return !(v.*views).empty(); });
  if (candidates.empty()) {
    widgets::wrapped(hint, colours::kUnavailable);
    return nullptr;
  }
  const std::vector<View>& kernels =
      data.sources[pick_source("source", data, candidates, source)].*views;
  std::vector<std::string> names;
  names.reserve(kernels.size());
  for (const View& v : kernels) {
    names.push_back(v.kernel.empty() ? std::string("(unnamed kernel)") : v.kernel);
  }
  combo("kernel", kernel, names);
  return &kernels[std::min(kernel, kernels.size() - 1)];
}

/// The sentence that goes next to any chart of a sim source: its measured times are CPU time
/// (and, when `modeled_spec` is given, what the modeled numbers are for); hovering explains.
void sim_note(const std::string& modeled_spec = "");

/// A source's label for a legend: the part before ": " ("r.lab02.json: gpulab sim (H100 SXM)" ->
/// "r.lab02.json").
[[nodiscard]] std::string short_source(const std::string& label);

/// Height for a chart with `below` pixels of content under it: the rest of the window less
/// `below`, or - when that would leave the chart under `min_height` - all the rest of the window
/// (at least min_height), so the chart stays readable and the window scrolls to what is below.
[[nodiscard]] float chart_height(float below, float min_height = 220.0F);

/// ImGui::SameLine() when `text` fits in what is left of the current line; otherwise the next
/// item starts a new line.
void same_line_if_fits(const std::string& text);

/// A number for a table cell, or "n/a" when there is none.
[[nodiscard]] std::string number(std::optional<double> value);

/// A byte count in decimal units (format_bytes: "1.6 MB"), or "n/a" when there is none.
[[nodiscard]] std::string bytes(std::optional<double> value);

/// A label for a table header with a tooltip explaining it.
void header_with_tooltip(const char* label, const char* tooltip);

}  // namespace gpulab::viewer::panel
