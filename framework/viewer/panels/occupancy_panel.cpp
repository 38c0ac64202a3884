// "Occupancy explorer" panel: how many warps of a kernel an SM holds, and what stops it holding
// more.
//
// Pick a kernel of this build (its registers and static shared memory come from ptxas) or type
// figures in, then move the block size, registers and shared memory: the result shows the four
// block limits side by side with the tightest one marked, and the three charts show how
// occupancy responds to each input around the current point - the staircases are where one more
// register or one more KiB costs a whole block per SM. Everything here is modeled from the spec.
#include <imgui.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
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

constexpr const char* kCustom = "custom (typed in)";

void draw_kernel_picker(OccupancyExplorer& explorer) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("kernel");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  const auto& kernels = explorer.kernels();
  const auto selected = explorer.selected_kernel();
  const std::string current =
      selected && *selected < kernels.size() ? kernels[*selected] : std::string(kCustom);
  if (ImGui::BeginCombo("##kernel", current.c_str())) {
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      const bool is_selected = selected == i;
      if (ImGui::Selectable(kernels[i].c_str(), is_selected) && !is_selected) {
        explorer.select_kernel(i);
      }
      ImGui::PopID();
    }
    if (ImGui::Selectable(kCustom, !selected) && selected) {
      explorer.select_custom();
    }
    ImGui::EndCombo();
  }
  if (kernels.empty() && !explorer.kernel_table_note().empty()) {
    widgets::wrapped(explorer.kernel_table_note(), colours::kUnavailable);
  }
  widgets::wrapped("figures: " + explorer.figures_origin(),
                   ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
}

void draw_inputs(OccupancyExplorer& explorer) {
  const float label_width = ImGui::CalcTextSize("shared mem (KiB)").x;
  ImGui::PushItemWidth(-label_width - ImGui::GetStyle().ItemInnerSpacing.x);
  // Block size moves in whole warps: a partial warp still occupies a full warp's slot.
  const int max_block = std::max(1, explorer.max_block_size());
  int block = explorer.block_size();
  if (ImGui::SliderInt("block size", &block, std::min(32, max_block), max_block)) {
    const int rounded = max_block >= 32 ? std::max(32, (block + 16) / 32 * 32) : block;
    explorer.set_block_size(std::min(rounded, max_block));
  }
  int registers = explorer.registers();
  const int max_registers = std::max(1, explorer.spec().max_registers_per_thread);
  if (ImGui::SliderInt("registers", &registers, 1, max_registers)) {
    explorer.set_registers(registers);  // typed-in figures from here on
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("registers per thread; changing it switches to typed-in figures");
  }
  const auto max_kib = static_cast<int>(explorer.max_dynamic_shared_bytes() / 1024);
  int kib = static_cast<int>(explorer.dynamic_shared_bytes() / 1024);
  if (ImGui::SliderInt("shared mem (KiB)", &kib, 0, std::max(0, max_kib))) {
    explorer.set_dynamic_shared_bytes(static_cast<std::uint64_t>(kib) * 1024);
  }
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "dynamic shared memory per block, in KiB (1 KiB = 1024 bytes); static: %llu "
        "bytes",
        static_cast<unsigned long long>(explorer.static_shared_bytes()));
  }
  ImGui::PopItemWidth();
}

std::string limit_text(int blocks) {
  return blocks == kUnlimitedBlocks ? std::string("no limit") : std::to_string(blocks);
}

void draw_result(const OccupancyExplorer& explorer) {
  if (!explorer.error().empty()) {
    widgets::wrapped(explorer.error(), colours::kError);
  }
  if (!explorer.note().empty()) {
    widgets::wrapped(explorer.note(), colours::kEstimated);
  }
  const auto& result = explorer.result();
  if (!result) {
    if (explorer.error().empty()) {
      widgets::wrapped("no occupancy for these inputs", colours::kUnavailable);
    }
    return;
  }
  const Occupancy& o = *result;
  ImGui::PushStyleColor(ImGuiCol_Text, colours::kModeled);
  ImGui::Text("occupancy %.0f %%", o.occupancy_fraction * 100);
  ImGui::PopStyleColor();
  const std::string modeled = "modeled, " + explorer.spec().name;
  panel::same_line_if_fits(modeled);
  ImGui::TextDisabled("%s", modeled.c_str());
  widgets::wrapped(std::to_string(o.active_blocks_per_sm) +
                   " blocks/SM = " + std::to_string(o.active_warps_per_sm) + " of " +
                   std::to_string(o.max_warps_per_sm) + " warps");
  ImGui::TextDisabled("blocks/SM allowed by each limit:");

  struct Limit {
    const char* name;
    OccupancyLimiter which;
    int blocks;
  };
  const Limit limits[] = {{"warps", OccupancyLimiter::warps, o.blocks_limit_warps},
                          {"registers", OccupancyLimiter::registers, o.blocks_limit_registers},
                          {"shared mem", OccupancyLimiter::shared_memory, o.blocks_limit_shared},
                          {"blocks", OccupancyLimiter::blocks, o.blocks_limit_blocks}};
  // The four limits two per row, then what a block takes; the tightest limit is the limiter.
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_SizingFixedFit |
                                     ImGuiTableFlags_NoSavedSettings;
  if (ImGui::BeginTable("##limits", 4, kFlags)) {
    for (const Limit& limit : limits) {
      ImGui::TableNextColumn();
      const bool limiting = limit.which == o.limiter;
      const std::string name = std::string(limit.name) + (limiting ? " (limiter)" : "");
      if (limiting) {
        widgets::coloured(name, colours::kError);
      } else {
        ImGui::TextDisabled("%s", name.c_str());
      }
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("blocks per SM the %s limit allows; the smallest limit wins", limit.name);
      }
      ImGui::TableNextColumn();
      if (limiting) {
        widgets::coloured(limit_text(limit.blocks), colours::kError);
      } else {
        ImGui::TextUnformatted(limit_text(limit.blocks).c_str());
      }
    }
    ImGui::TableNextColumn();
    ImGui::TextDisabled("regs/block");
    ImGui::TableNextColumn();
    ImGui::Text("%d", o.allocated_registers_per_block);
    ImGui::TableNextColumn();
    ImGui::TextDisabled("smem/block");
    // In KiB, as the slider and the SM's capacity are; the tooltip has the exact bytes.
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(
          "shared memory a block takes (static + dynamic + reserved, rounded up): %s; "
          "the SM has %llu KiB",
          format_bytes_kib(o.allocated_shared_bytes_per_block).c_str(),
          static_cast<unsigned long long>(o.shared_memory_per_sm_bytes / 1024));
    }
    ImGui::TableNextColumn();
    ImGui::Text(
        "%s KiB",
        short_number(static_cast<double>(o.allocated_shared_bytes_per_block) / 1024).c_str());
    ImGui::EndTable();
  }
}

// One sweep of occupancy %, the current input marked with a line and a dot: a staircase for
// registers and shared memory (every value in between exists), points joined by lines for block
// sizes (only whole warps are swept).
void draw_sweep_chart(const char* id, const char* title, const char* x_label,
                      const std::vector<OccupancyPoint>& points, double x_scale, double current,
                      bool staircase, float height) {
  plot::Chart chart;
  chart.title = title;
  double largest = 1;
  for (const OccupancyPoint& point : points) {
    largest = std::max(largest, static_cast<double>(point.x) / x_scale);
  }
  chart.x = {.label = x_label, .range = Axis{0, largest * 1.02, false}};
  chart.y = {.label = "occupancy (%)", .range = Axis{0, 105, false}};
  chart.y.ticks = {
      {0, "0", true}, {25, "25", true}, {50, "50", true}, {75, "75", true}, {100, "100", true}};
  plot::Series series{.colour = plot::modeled(),
                      .style = staircase ? plot::Style::steps : plot::Style::line_points,
                      .radius = 2.5F};
  double current_y = -1;
  for (const OccupancyPoint& point : points) {
    const double x = static_cast<double>(point.x) / x_scale;
    series.x.push_back(x);
    if (point.occupancy) {
      const double y = point.occupancy->occupancy_fraction * 100;
      series.y.push_back(y);
      series.tooltips.push_back(
          std::string(x_label) + " " + short_number(x) + ": " + short_number(y) + " %\n" +
          std::to_string(point.occupancy->active_blocks_per_sm) + " blocks/SM, limiter " +
          std::string(to_string(point.occupancy->limiter)));
      if (x <= current) {
        current_y = y;  // the staircase's value at the current input
      }
    } else {
      series.y.push_back(std::numeric_limits<double>::quiet_NaN());
      series.tooltips.emplace_back();
    }
  }
  chart.series.push_back(std::move(series));
  chart.lines.push_back({.value = current, .vertical = true, .colour = plot::estimated()});
  if (current_y >= 0) {
    chart.series.push_back({.colour = plot::estimated(),
                            .x = {current},
                            .y = {current_y},
                            .style = plot::Style::points,
                            .radius = 5.0F,
                            .tooltips = {"current: " + short_number(current) + ", " +
                                         short_number(current_y) + " %"}});
  }
  chart.empty_text = "no configuration in this sweep can launch";
  plot::draw(id, chart, height);
}

void draw_charts(const OccupancyExplorer& explorer) {
  // Side by side when each chart gets a usable width; otherwise one at a time, in tabs (whose
  // labels replace the titles), so the chart keeps a readable height in a small panel.
  const bool wide = ImGui::GetContentRegionAvail().x >= 3 * 300.0F;
  const auto by_block = [&](float height) {
    draw_sweep_chart("##by_block", wide ? "occupancy vs block size" : "", "threads per block",
                     explorer.by_block_size(), 1, explorer.block_size(), false, height);
  };
  const auto by_registers = [&](float height) {
    draw_sweep_chart("##by_registers", wide ? "occupancy vs registers" : "", "registers per thread",
                     explorer.by_registers(), 1, explorer.registers(), true, height);
  };
  const auto by_shared = [&](float height) {
    draw_sweep_chart("##by_shared", wide ? "occupancy vs shared memory" : "",
                     "dynamic shared memory (KiB)", explorer.by_shared_memory(), 1024,
                     static_cast<double>(explorer.dynamic_shared_bytes()) / 1024, true, height);
  };
  if (wide) {
    const float height = std::max(180.0F, ImGui::GetContentRegionAvail().y - 4);
    if (ImGui::BeginTable("##charts", 3, ImGuiTableFlags_NoSavedSettings)) {
      ImGui::TableNextColumn();
      by_block(height);
      ImGui::TableNextColumn();
      by_registers(height);
      ImGui::TableNextColumn();
      by_shared(height);
      ImGui::EndTable();
    }
    return;
  }
  if (ImGui::BeginTabBar("##sweeps")) {
    const auto tab = [](const char* label, const auto& draw) {
      if (ImGui::BeginTabItem(label)) {
        draw(std::max(150.0F, ImGui::GetContentRegionAvail().y - 4));
        ImGui::EndTabItem();
      }
    };
    tab("block size", by_block);
    tab("registers", by_registers);
    tab("shared memory", by_shared);
    ImGui::EndTabBar();
  }
}

}  // namespace

void draw_occupancy_panel(Model& model) {
  if (panel::begin("occupancy")) {
    OccupancyExplorer& explorer = model.explorer();
    draw_kernel_picker(explorer);
    draw_inputs(explorer);
    draw_result(explorer);
    draw_charts(explorer);
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
