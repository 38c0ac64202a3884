// Source panel: one kernel's code, line by line, with what each line's accesses cost, hottest
// first with its share of the kernel's L1 traffic as a heat bar, and the problems the rules found
// with the modeled gain of fixing each (`gpulab profile --source --json`; counted on sim).
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

// A figure for a cell: empty where the line has none (not "n/a": most lines lack most figures).
std::string cell(std::optional<double> value, bool bytes = false) {
  if (!value) {
    return "";
  }
  return bytes ? panel::bytes(value) : panel::number(value);
}

void draw_problems(const CodeView& v) {
  if (v.problems.empty()) {
    widgets::wrapped("no problem the rules know of would gain 5% or more", colours::kUnavailable);
    return;
  }
  for (const CodeProblem& p : v.problems) {
    std::string text = p.where + ": " + p.problem + ": " + p.what;
    if (p.speedup) {
      text += "; fixed, the kernel would be " + format_fixed(*p.speedup, 2) + "x as fast (modeled" +
              (p.spec.empty() ? "" : ", " + p.spec) + ")";
    }
    widgets::wrapped(text, colours::kModeled);
  }
}

void draw_lines(const CodeView& v) {
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                     ImGuiTableFlags_ScrollY | ImGuiTableFlags_NoSavedSettings;
  // The rest of the window but the note below it; scrolls within itself.
  const float height = panel::chart_height(2.5F * ImGui::GetTextLineHeightWithSpacing(), 120.0F);
  if (!ImGui::BeginTable("##code_lines", 11, kFlags, ImVec2(0.0F, height))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(2, 1);
  ImGui::TableSetupColumn("L1 share");
  ImGui::TableSetupColumn("line");
  ImGui::TableSetupColumn("requests");
  ImGui::TableSetupColumn("ld sect/req");
  ImGui::TableSetupColumn("st sect/req");
  ImGui::TableSetupColumn("excess sect");
  ImGui::TableSetupColumn("shared wf");
  ImGui::TableSetupColumn("conflicts");
  ImGui::TableSetupColumn("L2 hit %");
  ImGui::TableSetupColumn("DRAM read");
  ImGui::TableSetupColumn("code");
  ImGui::TableHeadersRow();
  for (const CodeLine& line : v.lines) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    // The heat: red for the lines that take most of the kernel's L1 traffic.
    const float share = static_cast<float>(line.l1_share_percent / 100.0);
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram,
                          ImVec4(0.35F + 0.6F * share, 0.55F - 0.35F * share, 0.25F, 1.0F));
    ImGui::ProgressBar(share, ImVec2(90.0F, 0.0F),
                       (format_fixed(line.l1_share_percent, 1) + " %").c_str());
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(line.where.c_str());
    for (const std::optional<double> figure :
         {line.requests, line.load_sectors_per_request, line.store_sectors_per_request,
          line.excess_sectors, line.shared_wavefronts, line.bank_conflicts, line.l2_hit_percent}) {
      ImGui::TableNextColumn();
      widgets::right_aligned(cell(figure));
    }
    ImGui::TableNextColumn();
    widgets::right_aligned(cell(line.dram_read_bytes, true));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(line.code.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_code_panel(Model& model) {
  if (panel::begin("source")) {
    Selections& selections = model.selections();
    if (const CodeView* v = panel::pick_kernel(
            model.panel_data(), &SourceViews::code, selections.code_source, selections.code_kernel,
            "no kernel counted by line - open a file that gpulab profile --source wrote (gpulab "
            "profile lab04 --source --json FILE)")) {
      draw_problems(*v);
      draw_lines(*v);
      widgets::wrapped(
          "counted on sim per line, summed over the kernel's launches; hottest lines first "
          "(L1 share: a global sector 32 bytes, a shared-memory wavefront 128); gains modeled, "
          "not measured (docs/sim.md, section 9)",
          colours::kUnavailable);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
