// "Benchmark" panel: how close a streaming kernel (vector_add) gets to DRAM bandwidth, and how
// much one measurement can be trusted.
//
// The top chart is the classic bandwidth curve: achieved GB/s against bytes moved, log-log, under
// the spec's peak. Small sizes sit far below the peak (launch overhead dominates), large ones
// approach it. The bottom half is one size's timing samples as a histogram with the median and
// the p10..p90 band marked, and their statistics: a wide histogram or a high relative noise says
// "measure again before believing a 5% difference".
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "gpulab/viewer/plot/plot.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

std::string point_name(const BenchmarkPoint& point) {
  return "n = " + format_value(point.n) +
         (point.bytes > 0 ? " (" + format_bytes(point.bytes) + ")" : std::string());
}

std::string point_tooltip(const BenchmarkPoint& point, const std::string& measured_label) {
  std::string text = point_name(point);
  text += "\n" + measured_label + ": ";
  if (point.measured_gb_s) {
    text += panel::number(point.measured_gb_s) + " GB/s, median " +
            panel::number(point.measured_ms) + " ms";
    if (point.rel_noise_percent) {
      text += ", noise " + panel::number(point.rel_noise_percent) + " %";
    }
  } else {
    text += "unavailable" + (point.unavailable.empty() ? "" : " (" + point.unavailable + ")");
  }
  text += "\nmodeled: ";
  text += point.modeled_gb_s ? panel::number(point.modeled_gb_s) + " GB/s, " +
                                   panel::number(point.modeled_ms) + " ms"
                             : std::string("n/a");
  return text;
}

void draw_bandwidth_chart(const BenchmarkView& view, std::size_t selected, float height) {
  // Bytes moved is the natural x; a file without byte counts falls back to elements.
  bool have_bytes = true;
  for (const BenchmarkPoint& point : view.points) {
    have_bytes = have_bytes && point.bytes > 0;
  }
  plot::Chart chart;
  chart.title = "bandwidth vs size";
  chart.x = {.label = have_bytes ? "bytes moved (B)" : "elements (n)", .log = true};
  chart.y = {.label = "bandwidth (GB/s)", .log = true};
  plot::Series measured{
      .name = view.measured_label, .colour = plot::measured(), .style = plot::Style::line_points};
  plot::Series modeled{.name = "modeled",
                       .colour = plot::modeled(),
                       .style = plot::Style::line_points,
                       .hollow = true,
                       .dashed = true};
  for (const BenchmarkPoint& point : view.points) {
    const double x = have_bytes ? point.bytes : point.n;
    const std::string tooltip = point_tooltip(point, view.measured_label);
    if (point.measured_gb_s) {
      measured.x.push_back(x);
      measured.y.push_back(*point.measured_gb_s);
      measured.tooltips.push_back(tooltip);
    }
    if (point.modeled_gb_s) {
      modeled.x.push_back(x);
      modeled.y.push_back(*point.modeled_gb_s);
      modeled.tooltips.push_back(tooltip);
    }
  }
  chart.series.push_back(std::move(modeled));
  chart.series.push_back(std::move(measured));
  if (view.peak_gb_s > 0) {
    chart.lines.push_back(
        {.value = view.peak_gb_s, .label = view.peak_label, .colour = plot::modeled()});
  }
  if (selected < view.points.size()) {
    const BenchmarkPoint& point = view.points[selected];
    chart.lines.push_back({.value = have_bytes ? point.bytes : point.n,
                           .vertical = true,
                           .colour = plot::faded(plot::estimated(), 0.7F)});
  }
  chart.empty_text = "no point has a bandwidth (no bytes or times in the file)";
  plot::draw("##bandwidth", chart, height);
}

void draw_histogram(const BenchmarkPoint& point, const std::string& measured_label, float height) {
  plot::Chart chart;
  chart.title = "samples of " + point_name(point);
  chart.x = {.label = "time per run (ms, " + measured_label + ")"};
  chart.y = {.label = "runs", .include_zero = true, .integer = true};
  if (!point.samples_ms.empty()) {
    const Histogram& histogram = point.histogram;
    plot::Columns columns{
        .colour = plot::measured(), .left = histogram.min_ms, .width = histogram.bin_width_ms};
    for (std::size_t i = 0; i < histogram.counts.size(); ++i) {
      const double left = histogram.min_ms + histogram.bin_width_ms * static_cast<double>(i);
      columns.heights.push_back(static_cast<double>(histogram.counts[i]));
      columns.tooltips.push_back(short_number(left) + " .. " +
                                 short_number(left + histogram.bin_width_ms) +
                                 " ms: " + std::to_string(histogram.counts[i]) + " runs");
    }
    chart.columns.push_back(std::move(columns));
  }
  if (point.summary) {
    const Summary& s = *point.summary;
    const ImU32 band = plot::faded(plot::estimated(), 0.8F);
    chart.lines.push_back({.value = s.p10_ms, .vertical = true, .label = "p10", .colour = band});
    chart.lines.push_back({.value = s.median_ms,
                           .vertical = true,
                           .label = "median",
                           .colour = IM_COL32_WHITE,
                           .dashed = false,
                           .label_row = 1});
    chart.lines.push_back(
        {.value = s.p90_ms, .vertical = true, .label = "p90", .colour = band, .label_row = 2});
  }
  chart.empty_text =
      "no samples in this file for this size: it holds only the median. The "
      "bandwidth run in Live run records every sample.";
  plot::draw("##histogram", chart, height);
}

void draw_statistics(const BenchmarkPoint& point) {
  if (!point.summary) {
    return;
  }
  const Summary& s = *point.summary;
  struct Stat {
    const char* name;
    std::string value;
  };
  const Stat stats[] = {
      {"count", std::to_string(s.count)},
      {"min", format_value(s.min_ms) + " ms"},
      {"median", format_value(s.median_ms) + " ms"},
      {"mean", format_value(s.mean_ms) + " ms"},
      {"p10", format_value(s.p10_ms) + " ms"},
      {"p90", format_value(s.p90_ms) + " ms"},
      {"max", format_value(s.max_ms) + " ms"},
      {"stddev", format_value(s.stddev_ms) + " ms"},
      {"rel. noise", format_value(s.rel_noise * 100) + " %"},
  };
  // Three name/value pairs per row: the statistics take three lines, not nine.
  constexpr int kPairs = 3;
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##stats", kPairs * 2, kFlags)) {
    return;
  }
  for (const Stat& stat : stats) {
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", stat.name);
    ImGui::TableNextColumn();
    widgets::coloured(stat.value, colours::kMeasured);
  }
  ImGui::EndTable();
}

}  // namespace

void draw_benchmark_panel(Model& model) {
  if (panel::begin("benchmark")) {
    const PanelData& data = model.panel_data();
    Selections& selections = model.selections();
    const std::vector<std::size_t> candidates = panel::sources_with(
        data, [](const SourceViews& views) { return !views.benchmark.points.empty(); });
    if (candidates.empty()) {
      widgets::wrapped(
          "no bandwidth results - start the bandwidth run in Live run, or open a "
          "lab 01 results file (gpulab run lab01 --json FILE; gpulab-view FILE)",
          colours::kUnavailable);
      for (const SourceViews& views : data.sources) {
        if (!views.benchmark.empty_reason.empty()) {
          widgets::wrapped(views.source.label + ": " + views.benchmark.empty_reason,
                           colours::kUnavailable);
        }
      }
    } else {
      const std::size_t source =
          panel::pick_source("source", data, candidates, selections.benchmark_source);
      const BenchmarkView& view = data.sources[source].benchmark;
      std::vector<std::string> sizes;
      sizes.reserve(view.points.size());
      for (const BenchmarkPoint& point : view.points) {
        sizes.push_back(point_name(point) +
                        (point.samples_ms.empty()
                             ? std::string()
                             : ", " + std::to_string(point.samples_ms.size()) + " samples"));
      }
      ImGui::SetNextItemWidth(-ImGui::CalcTextSize("size").x -
                              ImGui::GetStyle().ItemInnerSpacing.x);
      panel::combo("size", selections.benchmark_point, sizes);
      if (view.cpu_times) {
        panel::sim_note();
      }
      const BenchmarkPoint& point =
          view.points[std::min(selections.benchmark_point, view.points.size() - 1)];
      const auto bandwidth = [&](float height) {
        draw_bandwidth_chart(view, selections.benchmark_point, height);
      };
      const auto samples = [&](float height) {
        if (!point.unavailable.empty()) {
          widgets::wrapped("measured time unavailable: " + point.unavailable,
                           colours::kUnavailable);
        }
        // The histogram takes what is left above the three rows of statistics.
        const float stats = point.summary ? 3 * ImGui::GetFrameHeightWithSpacing() : 0.0F;
        draw_histogram(point, view.measured_label, std::max(140.0F, height - stats));
        draw_statistics(point);
      };
      // Both halves side by side in a wide panel, above each other in a tall one, and one at a
      // time (in tabs) in a small one, so neither chart is squeezed below readability.
      const ImVec2 avail = ImGui::GetContentRegionAvail();
      if (avail.x >= 800) {
        if (ImGui::BeginTable("##halves", 2, ImGuiTableFlags_NoSavedSettings)) {
          ImGui::TableNextColumn();
          bandwidth(avail.y - 4);
          ImGui::TableNextColumn();
          samples(avail.y - 4);
          ImGui::EndTable();
        }
      } else if (avail.y >= 520) {
        bandwidth(avail.y * 0.5F);
        samples(ImGui::GetContentRegionAvail().y);
      } else if (ImGui::BeginTabBar("##benchmark_tabs")) {
        if (ImGui::BeginTabItem("bandwidth")) {
          bandwidth(std::max(180.0F, ImGui::GetContentRegionAvail().y - 4));
          ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("samples")) {
          samples(std::max(200.0F, ImGui::GetContentRegionAvail().y - 4));
          ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
      }
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
