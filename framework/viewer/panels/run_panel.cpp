// "Live run" panel: start one of the viewer's experiments and watch it fill the other panels.
//
// The run itself happens on the model's worker thread; this panel only edits the selections
// (which experiment, how big, which kernel or shape), asks the model to start or cancel, and
// shows the run's status. Finished results land in the model's live source, which every chart
// panel's source picker offers after the loaded files, and a run points the panel it fills at it,
// so a student sees the bandwidth curve grow size by size.
#include <imgui.h>
#include <imgui_stdlib.h>  // InputText over std::string (compiled into Debian's libimgui.a)

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/viewer/experiments.hpp"
#include "gpulab/viewer/plot/colours.hpp"
#include "panels/panel_support.hpp"
#include "panels/panels.hpp"
#include "panels/widgets.hpp"

namespace gpulab::viewer {
namespace {

// What the panel remembers between frames that is not the model's business: the last Run or
// Save outcome and the path typed for saving.
struct RunPanelState {
  std::string start_error;
  std::string save_message;
  bool save_failed = false;
};

RunPanelState& state() {
  static RunPanelState panel_state;
  return panel_state;
}

constexpr Experiment kExperiments[] = {Experiment::bandwidth, Experiment::components,
                                       Experiment::sweep};

const char* describe(Experiment experiment) {
  switch (experiment) {
    case Experiment::bandwidth:
      return "vector_add across sizes: bandwidth, timing samples and their statistics "
             "(Benchmark panel)";
    case Experiment::components:
      return "the five attention components of one shape, measured and modeled (Components "
             "and Roofline panels)";
    case Experiment::sweep:
      return "one kernel across block sizes: time and occupancy (Block-size sweep panel)";
  }
  return "";
}

// An integer field kept within [lo, hi]; true when the value changed.
bool bounded_int(const char* label, int& value, int lo, int hi, const char* help) {
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  const bool changed = ImGui::InputInt(label, &value, 1, 16);
  value = std::clamp(value, lo, hi);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("%s (%d..%d)", help, lo, hi);
  }
  return changed;
}

void draw_options(Selections& selections) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("experiment");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::BeginCombo("##experiment", std::string(to_string(selections.experiment)).c_str())) {
    for (const Experiment experiment : kExperiments) {
      const bool selected = experiment == selections.experiment;
      if (ImGui::Selectable(std::string(to_string(experiment)).c_str(), selected)) {
        selections.experiment = experiment;
      }
      if (selected) {
        ImGui::SetItemDefaultFocus();
      }
    }
    ImGui::EndCombo();
  }
  widgets::wrapped(describe(selections.experiment),
                   ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));

  ExperimentOptions& options = selections.options;
  ImGui::Checkbox("quick", &options.quick);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("smaller sizes and fewer samples: seconds instead of minutes");
  }
  if (selections.experiment == Experiment::sweep) {
    const auto kernels = sweep_kernels();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("kernel");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##kernel", options.sweep_kernel.c_str())) {
      for (const std::string_view kernel : kernels) {
        const bool selected = kernel == options.sweep_kernel;
        if (ImGui::Selectable(std::string(kernel).c_str(), selected)) {
          options.sweep_kernel = std::string(kernel);
        }
      }
      ImGui::EndCombo();
    }
  }
  if (selections.experiment == Experiment::components) {
    kernels::AttentionConfig& shape = options.attention;
    ImGui::TextUnformatted("attention shape");
    bounded_int("seq_len", shape.seq_len, 1, 4096, "tokens per sequence");
    bounded_int("d_model", shape.d_model, 1, 4096, "model width");
    bounded_int("heads", shape.heads, 1, 64, "attention heads; d_model must divide by it");
    bounded_int("batch", shape.batch, 1, 64, "sequences");
    ImGui::Checkbox("causal", &shape.causal);
    if (shape.d_model % shape.heads != 0) {
      widgets::wrapped("d_model must be a multiple of heads (head_dim = d_model / heads)",
                       colours::kError);
    } else {
      ImGui::TextDisabled("head_dim = %d", shape.d_model / shape.heads);
    }
  }
}

void draw_status(const RunStatus& status) {
  const float fraction =
      status.total > 0 ? static_cast<float>(status.done) / static_cast<float>(status.total) : 0.0F;
  if (status.state != RunState::idle) {
    const std::string overlay =
        std::to_string(status.done) + " / " + std::to_string(status.total) + " steps";
    ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
  }
  ImVec4 colour = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  switch (status.state) {
    case RunState::idle:
      colour = colours::kUnavailable;
      break;
    case RunState::running:
      colour = colours::kModeled;
      break;
    case RunState::finished:
      colour = colours::kMeasured;
      break;
    case RunState::cancelled:
      colour = colours::kEstimated;
      break;
    case RunState::failed:
      colour = colours::kError;
      break;
  }
  widgets::coloured(std::string(to_string(status.state)), colour);
  if (status.state != RunState::idle) {
    ImGui::SameLine();
    ImGui::TextDisabled("after %.1f s", status.elapsed_s);
  }
  if (!status.plan.empty()) {
    widgets::wrapped(status.plan);
  }
  if (!status.current.empty()) {
    widgets::wrapped("now: " + status.current);
  }
  if (status.state == RunState::failed && !status.error.empty()) {
    widgets::wrapped(status.error, colours::kError);
  }
  if (status.state == RunState::idle) {
    widgets::wrapped(
        "nothing run yet: pick an experiment and press Run; results appear in the "
        "chart panels as each step finishes",
        colours::kUnavailable);
  }
}

void draw_save(Model& model, RunPanelState& panel_state) {
  ImGui::Separator();
  ImGui::TextUnformatted("Save results...");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Save").x - ImGui::GetStyle().FramePadding.x * 2 -
                          ImGui::GetStyle().ItemSpacing.x);
  ImGui::InputText("##save_path", &model.selections().save_path);
  ImGui::SameLine();
  if (ImGui::Button("Save")) {
    std::string error;
    if (model.save_live(model.selections().save_path, error)) {
      panel_state.save_message = "saved " + model.selections().save_path;
      panel_state.save_failed = false;
    } else {
      panel_state.save_message = error;
      panel_state.save_failed = true;
    }
  }
  if (!panel_state.save_message.empty()) {
    widgets::wrapped(panel_state.save_message,
                     panel_state.save_failed ? colours::kError : colours::kMeasured);
  }
}

}  // namespace

void draw_run_panel(Model& model) {
  if (panel::begin("run")) {
    RunPanelState& panel_state = state();
    const RunStatus status = model.run_status();
    const bool running = status.state == RunState::running;

    ImGui::BeginDisabled(running);  // options cannot change under a run in progress
    draw_options(model.selections());
    ImGui::EndDisabled();

    ImGui::Spacing();
    ImGui::BeginDisabled(running);
    if (ImGui::Button("Run")) {
      panel_state.start_error.clear();
      if (!model.start_run(panel_state.start_error) && panel_state.start_error.empty()) {
        panel_state.start_error = "the run did not start";
      }
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!running);
    if (ImGui::Button("Cancel")) {
      model.cancel_run();
    }
    ImGui::EndDisabled();
    const std::string modeled = "modeled for " + model.selected_spec().name;
    panel::same_line_if_fits(modeled);
    ImGui::TextDisabled("%s", modeled.c_str());
    if (!panel_state.start_error.empty()) {
      widgets::wrapped(panel_state.start_error, colours::kError);
    }

    draw_status(status);
    if (model.devices().backend == "sim") {
      panel::sim_note(model.selected_spec().name);
    }
    const bool ended = status.state == RunState::finished || status.state == RunState::cancelled ||
                       status.state == RunState::failed;
    if (ended && !model.live().results.empty()) {
      draw_save(model, panel_state);
    }
  }
  ImGui::End();
}

}  // namespace gpulab::viewer
