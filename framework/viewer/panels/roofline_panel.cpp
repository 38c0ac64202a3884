// "Roofline" panel: every op of every source placed under the selected spec's roofs.
//
// The memory roof rises with arithmetic intensity (FLOP per DRAM byte) until it meets the
// compute roof at the ridge point; an op left of the ridge can at best run at bandwidth x
// intensity, one right of it at the peak. How far a point sits below its roof is the headroom
// an optimization can win. Measured points are filled green, modeled ones hollow blue (a modeled
// point sits on its roof by construction); each source has its own marker shape.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
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

constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16,
                                     Precision::bf16};
constexpr plot::Marker kMarkers[] = {plot::Marker::circle, plot::Marker::square,
                                     plot::Marker::triangle, plot::Marker::diamond};

// "Softmax (seq_len=64)" -> "Softmax": the label next to the point; the tooltip has the rest.
std::string short_label(const std::string& label) {
  const std::size_t paren = label.find(" (");
  return paren == std::string::npos ? label : label.substr(0, paren);
}

std::string flop_rate(double flop_s) {
  return flop_s >= 1e12 ? short_number(flop_s / 1e12) + " TFLOP/s"
                        : short_number(flop_s / 1e9) + " GFLOP/s";
}

std::string point_tooltip(const RooflinePoint& point) {
  return point.label + "\nsource: " + point.source +
         "\nintensity: " + short_number(point.intensity_flop_per_byte) + " FLOP/byte" +
         "\nachieved: " + flop_rate(point.achieved_flop_s) + " (" + point.kind_label + ")" +
         "\nroof here: " + flop_rate(point.roof_flop_s) +
         "\n% of roof: " + short_number(point.percent_of_roof) + " %" + "\n" +
         std::string(to_string(point.bound));
}

void draw_precision_picker(Model& model) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("precision");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  const Precision current = model.roofline_precision();
  if (ImGui::BeginCombo("##precision", std::string(to_string(current)).c_str())) {
    for (const Precision precision : kPrecisions) {
      const bool selected = precision == current;
      if (ImGui::Selectable(std::string(to_string(precision)).c_str(), selected) && !selected) {
        model.set_roofline_precision(precision);
      }
      if (selected) {
        ImGui::SetItemDefaultFocus();
      }
    }
    ImGui::EndCombo();
  }
  const std::string spec = "spec: " + model.selected_spec().name;
  panel::same_line_if_fits(spec);
  ImGui::TextDisabled("%s", spec.c_str());
}

void draw_chart(const RooflineView& view, const Roofline& roof, float height) {
  const double ridge = roof.ridge_flop_per_byte();
  // x spans the points and a decade either side of the ridge, so both roofs always show.
  std::vector<double> xs = {ridge / 10, ridge * 10};
  std::vector<double> ys = {roof.peak_flop_s * 1.5};
  for (const RooflinePoint& point : view.points) {
    xs.push_back(point.intensity_flop_per_byte);
    ys.push_back(point.achieved_flop_s);
  }
  const Axis x_axis = fit_axis(xs, true);
  // The memory roof starts at the left edge: its height there is the lowest the roofs go.
  ys.push_back(roof.attainable_flop_s(x_axis.min));
  const Axis y_axis = fit_axis(ys, true);

  plot::Chart chart;
  chart.x = {.label = "arithmetic intensity (FLOP/byte)", .log = true, .range = x_axis};
  const bool tera = roof.peak_flop_s >= 1e12;
  chart.y = {.label = tera ? "TFLOP/s" : "GFLOP/s",
             .log = true,
             .range = y_axis,
             .scale = tera ? 1e12 : 1e9};
  const ImU32 roof_colour = plot::faded(IM_COL32(235, 235, 235, 255), 0.85F);
  chart.series.push_back(
      {.name = "roofs: " + roof.spec_name + " " + std::string(to_string(roof.precision)),
       .colour = roof_colour,
       .x = {x_axis.min, ridge, x_axis.max},
       .y = {roof.attainable_flop_s(x_axis.min), roof.peak_flop_s, roof.peak_flop_s},
       .thickness = 2.5F,
       .tooltips = {
           "memory roof: " + short_number(roof.bandwidth_bytes_s / 1e9) + " GB/s x intensity",
           "ridge point: " + short_number(ridge) + " FLOP/byte\n" +
               "left: memory-bound, right: compute-bound",
           "compute roof: " + flop_rate(roof.peak_flop_s)}});
  chart.series.push_back({.colour = roof_colour,
                          .x = {ridge},
                          .y = {roof.peak_flop_s},
                          .style = plot::Style::points,
                          .marker = plot::Marker::diamond,
                          .radius = 5.0F,
                          .tooltips = {"ridge point: " + short_number(ridge) + " FLOP/byte, " +
                                       flop_rate(roof.peak_flop_s) +
                                       "\nleft of it memory-bound, right of it compute-bound"}});
  chart.lines.push_back({.value = ridge,
                         .vertical = true,
                         .label = "ridge " + short_number(ridge) + " FLOP/B",
                         .colour = plot::faded(roof_colour, 0.6F)});

  // One series per source and provenance: colour says measured or modeled, shape the source.
  std::vector<std::string> sources;
  for (const RooflinePoint& point : view.points) {
    if (std::find(sources.begin(), sources.end(), point.source) == sources.end()) {
      sources.push_back(point.source);
    }
  }
  for (std::size_t s = 0; s < sources.size(); ++s) {
    for (const Provenance kind : {Provenance::modeled, Provenance::measured}) {
      const auto first = std::find_if(view.points.begin(), view.points.end(), [&](const auto& p) {
        return p.source == sources[s] && p.kind == kind;
      });
      plot::Series series{
          .name = (first != view.points.end() ? first->kind_label : std::string(to_string(kind))) +
                  ": " + panel::short_source(sources[s]),
          .colour = kind == Provenance::measured ? plot::measured() : plot::modeled(),
          .style = plot::Style::points,
          .marker = kMarkers[s % std::size(kMarkers)],
          .hollow = kind == Provenance::modeled,
          .radius = 4.5F};
      for (const RooflinePoint& point : view.points) {
        if (point.source != sources[s] || point.kind != kind) {
          continue;
        }
        series.x.push_back(point.intensity_flop_per_byte);
        series.y.push_back(point.achieved_flop_s);
        series.tooltips.push_back(point_tooltip(point));
        // Every point gets its label where there is room for it; the tooltip and the table
        // below name the rest.
        series.labels.push_back(short_label(point.label));
      }
      if (!series.x.empty()) {
        chart.series.push_back(std::move(series));
      }
    }
  }
  plot::draw("##roofline", chart, height);
}

void draw_points_table(const RooflineView& view, float height) {
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                     ImGuiTableFlags_ScrollY | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##points", 6, kFlags, ImVec2(0, height))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("op");
  ImGui::TableSetupColumn("FLOP/B");
  ImGui::TableSetupColumn("achieved");
  ImGui::TableSetupColumn("% roof");
  ImGui::TableSetupColumn("bound");
  ImGui::TableSetupColumn("source");
  ImGui::TableHeadersRow();
  for (const RooflinePoint& point : view.points) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(point.label.c_str());
    ImGui::TableNextColumn();
    widgets::right_aligned(short_number(point.intensity_flop_per_byte));
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_Text, panel::provenance_colour(point.kind));
    widgets::right_aligned(flop_rate(point.achieved_flop_s));
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s", std::string(to_string(point.kind)).c_str());
    }
    ImGui::TableNextColumn();
    widgets::right_aligned(short_number(point.percent_of_roof));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::string(to_string(point.bound)).c_str());
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", point.source.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_roofline_panel(Model& model) {
  if (panel::begin("roofline")) {
    draw_precision_picker(model);
    const RooflineView& view = model.panel_data().roofline;
    if (!view.roofline) {
      widgets::wrapped(view.unavailable.empty()
                           ? "no roofline for this spec and precision"
                           : view.unavailable + " - pick another precision or spec",
                       colours::kUnavailable);
    } else {
      const Roofline& roof = *view.roofline;
      widgets::wrapped("peak " + flop_rate(roof.peak_flop_s) + ", DRAM " +
                           short_number(roof.bandwidth_bytes_s / 1e9) + " GB/s, ridge " +
                           short_number(roof.ridge_flop_per_byte()) +
                           " FLOP/byte (modeled from the spec)",
                       colours::kModeled);
      if (view.points.empty()) {
        widgets::wrapped(view.empty_reason.empty()
                             ? "no ops to place - run the components experiment in Live run, or "
                               "open a lab 02 or lab 03 results file"
                             : view.empty_reason,
                         colours::kUnavailable);
      }
      const auto& sources = model.panel_data().sources;
      if (std::any_of(sources.begin(), sources.end(),
                      [](const SourceViews& views) { return views.source.cpu_times; })) {
        widgets::wrapped("sim: measured (CPU) times are left out; modeled points shown",
                         colours::kEstimated);
      }
      const float table_height =
          view.points.empty()
              ? 0.0F
              : ImGui::GetTextLineHeightWithSpacing() *
                        static_cast<float>(std::min<std::size_t>(view.points.size(), 8) + 1) +
                    ImGui::GetStyle().ScrollbarSize + 8;
      draw_chart(view, roof, panel::chart_height(table_height, 240));
      if (!view.points.empty()) {
        draw_points_table(view, table_height);
      }
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
