// "Class" panel: a class graded with `gpulab grade --roster` (its summary.json): each lab's
// students per tenth of the points as grouped bars, and the tests failed by most students with
// their share of the class, for the instructor's next lecture.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/viewer/plot/colours.hpp"
#include "gpulab/viewer/plot/plot.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

void draw_scores(const ClassView& view, float height) {
  plot::Chart chart;
  chart.title = "students per score band, by lab";
  chart.y = {.label = "students", .include_zero = true, .integer = true};
  plot::Bars bars;
  bars.categories = view.bands;
  for (std::size_t i = 0; i < view.labs.size(); ++i) {
    const ClassLabScores& lab = view.labs[i];
    bars.groups.push_back({.name = lab.lab,
                           .colour = plot::source_colour(i),
                           .values = lab.students,
                           .labels = {},
                           .tooltips = lab.tooltips});
  }
  chart.bars = std::move(bars);
  chart.x = {.label = "share of the lab's points"};
  chart.empty_text = view.empty_reason.empty() ? "no lab in this summary" : view.empty_reason;
  plot::draw("##class_scores", chart, height);
}

void draw_failed_tests(const ClassView& view) {
  if (view.failed.empty()) {
    ImGui::TextDisabled("no test failed by any graded student");
    return;
  }
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##failed", 2, kFlags)) {
    return;
  }
  ImGui::TableSetupColumn("students who failed it", ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize("00000 of 00000 (100%)").x + 16.0F);
  ImGui::TableSetupColumn("test (lab, suite and name)", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const ClassFailedTest& test : view.failed) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, colours::kError);
    ImGui::ProgressBar(static_cast<float>(test.fraction), ImVec2(-1.0F, 0.0F), test.share.c_str());
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(test.test.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_class_panel(Model& model) {
  if (panel::begin("class")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    const std::vector<std::size_t> candidates = panel::sources_with(
        data, [](const SourceViews& views) { return views.class_view.has_value(); });
    if (candidates.empty()) {
      widgets::wrapped(
          "no class summary - grade a class with gpulab grade --roster DIR and open the "
          "summary.json of its grades folder",
          colours::kUnavailable);
    } else {
      const std::size_t source =
          panel::pick_source("source", data, candidates, selections.class_source);
      const ClassView& view = *data.sources[source].class_view;
      widgets::wrapped(view.heading);
      for (const ClassLabScores& lab : view.labs) {
        ImGui::BulletText("%s", lab.summary.c_str());
      }
      const float rows = static_cast<float>(std::min<std::size_t>(view.failed.size(), 8) + 3);
      draw_scores(view, panel::chart_height(ImGui::GetTextLineHeightWithSpacing() * rows, 160.0F));
      ImGui::TextDisabled("tests failed most often:");
      draw_failed_tests(view);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
