// Small drawing helpers the panels share: wrapped and coloured text (in the colours with a
// meaning, gpulab/viewer/plot/colours.hpp), right-aligned numbers.
#pragma once

#include <imgui.h>

#include <string>

namespace gpulab::viewer::widgets {

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
