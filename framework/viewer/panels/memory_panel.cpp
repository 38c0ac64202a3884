// Memory panel: what one kernel's launches did to memory, counted on sim or measured by ncu on a
// GPU (`gpulab profile --json`):
// global loads and stores from warp-level requests through L1 sectors and L2 to DRAM, with the
// sectors per request, the L2 hit rate and the DRAM bytes, and shared memory's wavefronts and
// bank conflicts; then the time modeled from those counts.
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

// One row of the flow: a stage, what loads did there, what stores did there, and what it means.
void row(const char* stage, const std::string& loads, const std::string& stores,
         const char* meaning) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  panel::header_with_tooltip(stage, meaning);
  ImGui::TableNextColumn();
  widgets::right_aligned(loads);
  ImGui::TableNextColumn();
  widgets::right_aligned(stores);
}

void draw_flow(const MemoryView& v) {
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit |
                                     ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("##memory_flow", 3, kFlags)) {
    return;
  }
  ImGui::TableSetupColumn("global memory");
  ImGui::TableSetupColumn("loads");
  ImGui::TableSetupColumn("stores");
  ImGui::TableHeadersRow();
  row("requests", panel::number(v.loads.requests), panel::number(v.stores.requests),
      "warp-level instructions (l1tex__t_requests_pipe_lsu_mem_global_op_ld/st.sum)");
  row("-> L1 sectors", panel::number(v.loads.sectors), panel::number(v.stores.sectors),
      "32-byte sectors the requests moved (l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st.sum)");
  row("   per request", panel::number(v.loads.sectors_per_request),
      panel::number(v.stores.sectors_per_request),
      "4 for 32 consecutive floats; 32 when every lane needs its own sector");
  row("-> L2 sectors", panel::number(v.loads.l2_sectors), panel::number(v.stores.l2_sectors),
      "sectors looked up in (loads) or written to (stores) the modeled L2 "
      "(lts__t_sectors_srcunit_tex_op_read/write.sum)");
  row("-> DRAM", panel::bytes(v.loads.dram_bytes), panel::bytes(v.stores.dram_bytes),
      "bytes read on L2 misses and written back from dirty L2 sectors "
      "(dram__bytes_read.sum, dram__bytes_write.sum)");
  ImGui::EndTable();

  const auto line = [](const std::string& text) { ImGui::TextUnformatted(text.c_str()); };
  line("L2 hit rate: " + panel::number(v.l2_hit_percent) + " %");
  line("load efficiency: " + panel::number(v.load_efficiency_percent) +
       " % of the bytes moved were asked for");
  line("stores writing part of a sector: " + panel::number(v.partial_store_sectors) + " sectors");
  line("shared memory: " + panel::number(v.shared_requests) + " requests, " +
       panel::number(v.shared_wavefronts) + " wavefronts, " + panel::number(v.bank_conflicts) +
       " bank conflicts");
  line("active lanes per request: " + panel::number(v.lanes_per_request) + " of 32");
  if (v.modeled_ms) {
    widgets::wrapped("modeled (" + v.modeled_spec +
                         ") from these counts: " + panel::number(*v.modeled_ms * 1e3) +
                         " us over " + v.launches + " launch(es)" +
                         (v.modeled_bound.empty() ? "" : ", bound by " + v.modeled_bound),
                     colours::kModeled);
  }
  widgets::wrapped(v.provenance == Provenance::counted
                       ? "counted on sim: exact for converged warps, summed over the kernel's "
                         "launches (docs/sim.md, section 9)"
                       : "measured by Nsight Compute (ncu) on the GPU, summed over the kernel's "
                         "launches",
                   colours::kUnavailable);
}

}  // namespace

void draw_memory_panel(Model& model) {
  if (panel::begin("memory")) {
    Selections& selections = model.selections();
    if (const MemoryView* v = panel::pick_kernel(
            model.panel_data(), &SourceViews::memory, selections.memory_source,
            selections.memory_kernel,
            "no profiled kernels - open a file that gpulab profile wrote (gpulab profile lab02 "
            "--json FILE)")) {
      draw_flow(*v);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
