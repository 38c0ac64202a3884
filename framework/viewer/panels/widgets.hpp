// Small drawing helpers the panels share: colours with a meaning, right-aligned numbers.
#pragma once

#include <imgui.h>

#include <string>

namespace gpulab::viewer::widgets {

// One colour per kind of number, used the same way in every panel so a reader learns them once.
inline const ImVec4 kMeasured{0.55F, 0.85F, 0.55F, 1.0F};     ///< green: measured here
inline const ImVec4 kModeled{0.55F, 0.75F, 1.0F, 1.0F};       ///< blue: computed from a spec
inline const ImVec4 kEstimated{1.0F, 0.78F, 0.35F, 1.0F};     ///< amber: an estimate
inline const ImVec4 kUnavailable{0.65F, 0.65F, 0.65F, 1.0F};  ///< grey: no number
inline const ImVec4 kError{1.0F, 0.45F, 0.45F, 1.0F};         ///< red: something failed

/// Text in a colour, wrapped at the window's edge.
inline void wrapped(const std::string& text, const ImVec4& colour) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::PushTextWrapPos(0.0F);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

/// Text wrapped at the window's edge in the default colour.
inline void wrapped(const std::string& text) {
  ImGui::PushTextWrapPos(0.0F);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
}

/// Text in a colour.
inline void coloured(const std::string& text, const ImVec4& colour) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopStyleColor();
}

/// Right-aligns text in the current table cell, so the digits of a number column line up.
inline void right_aligned(const std::string& text) {
  const float free = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(text.c_str()).x;
  if (free > 0) {
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + free);
  }
  ImGui::TextUnformatted(text.c_str());
}

}  // namespace gpulab::viewer::widgets
