// gpulab-view (also `gpulab view`): the viewer. See `gpulab view --help`.
//
// Exit codes: 0 success; 1 failure (a live run failed or did not finish, the screenshot or the
// saved results could not be written); 2 bad arguments, or no display to open a window on. A
// results file that does not load is not a failure: its error shows in the Results panel (and on
// stderr), and the viewer runs on.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/app.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/viewer/model.hpp"
#include "panels/panels.hpp"

namespace {

constexpr int kSuccess = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

// One line for a bad command line, never CLI11's multi-line text.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab view: error: %s (see gpulab view --help)\n", message.c_str());
  return kUsage;
}

std::string known_spec_keys() {
  std::string keys;
  for (const gpulab::GpuSpec& spec : gpulab::all_specs()) {
    keys += (keys.empty() ? "" : ", ") + spec.key;
  }
  return keys;
}

std::string sweep_kernel_names() {
  std::string names;
  for (const std::string_view name : gpulab::viewer::sweep_kernels()) {
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

std::vector<std::string> panel_names() {
  std::vector<std::string> names;
  for (const gpulab::viewer::PanelInfo& panel : gpulab::viewer::all_panels()) {
    names.emplace_back(panel.name);
  }
  return names;
}

std::vector<gpulab::viewer::Experiment> experiments_of(const std::vector<std::string>& names) {
  using gpulab::viewer::Experiment;
  std::vector<Experiment> runs;
  for (const std::string& name : names) {
    if (name == "all") {
      runs.insert(runs.end(), {Experiment::bandwidth, Experiment::components, Experiment::sweep});
    } else {
      for (const Experiment e :
           {Experiment::bandwidth, Experiment::components, Experiment::sweep}) {
        if (gpulab::viewer::to_string(e) == name) {
          runs.push_back(e);
        }
      }
    }
  }
  return runs;
}

// "frames 60, median 6.52 ms, p90 7.10 ms, max 9.81 ms" over the frames after the first two
// (the first frames build font atlases and lay windows out).
std::string frame_report(const std::vector<double>& frame_ms) {
  if (frame_ms.size() < 3) {
    return "too few frames to time (draw at least 3 with --frames)";
  }
  const std::vector<double> steady(frame_ms.begin() + 2, frame_ms.end());
  const gpulab::Summary s = gpulab::summarize(steady);
  char line[160];
  std::snprintf(line, sizeof(line), "frames %zu, median %.2f ms, p90 %.2f ms, max %.2f ms",
                steady.size(), s.median_ms, s.p90_ms, s.max_ms);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "gpulab view: the gpulab viewer. Live runs on this machine's backend, results files written "
      "by gpulab commands (--json), the roofline, the occupancy explorer and block-size sweeps.",
      "gpulab view"};
  std::vector<std::string> files;
  std::string spec;
  std::string screenshot;
  std::string panel;
  std::string save;
  std::vector<std::string> runs;
  std::string kernel;
  bool quick = false;
  bool headless = false;
  bool frame_stats = false;
  std::optional<int> frames;
  gpulab::viewer::AppOptions options;
  cli.add_option("FILE", files, "Results files to show (several: side by side in the charts)");
  cli.add_option("--spec", spec,
                 "GPU spec to show first, by key or name (see `gpulab specs`); default: the "
                 "detected device's, else GPULAB_SIM_SPEC's, else H100 SXM");
  cli.add_option("--run", runs,
                 "Start live runs at once, one after another: bandwidth, components, sweep or all")
      ->check(CLI::IsMember({"bandwidth", "components", "sweep", "all"}))
      ->delimiter(',');
  cli.add_flag("--quick", quick, "Smaller live runs (fewer sizes, fewer samples)");
  cli.add_option("--kernel", kernel,
                 "Kernel of the block-size sweep (default: the first): " + sweep_kernel_names());
  cli.add_option("--save", save, "After the live runs, save their results to this JSON file");
  cli.add_flag("--headless", headless,
               "Render in a hidden window (an X display is still needed: use xvfb-run on a "
               "machine without one), draw --frames frames after the live runs end, and exit");
  cli.add_option("--screenshot", screenshot,
                 "Write the last frame to this PNG (implies --headless)");
  cli.add_option("--panel", panel, "Show only this panel, filling the window")
      ->check(CLI::IsMember(panel_names()));
  cli.add_option("--frames", frames,
                 "Frames to draw after the live runs end (default with --headless: 3; without: "
                 "run until the window is closed)")
      ->check(CLI::Range(1, 1000000));
  cli.add_flag("--frame-stats", frame_stats,
               "Print the frame time (median, p90, max) when the viewer exits");
  cli.add_option("--run-timeout", options.run_timeout_s,
                 "Headless: give up on live runs that take longer than this, in seconds")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cli.add_option("--width", options.width, "Window width in pixels")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  cli.add_option("--height", options.height, "Window height in pixels")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  cli.footer(
      "Examples:\n"
      "  gpulab view --run all                       live runs, panels fill in as they finish\n"
      "  gpulab view a100.json h100.json             two saved runs side by side\n"
      "  xvfb-run -a gpulab view --headless --run sweep --quick --panel sweep "
      "--screenshot sweep.png\n"
      "`gpulab view --backend cuda|sim` picks the build the live runs use (default: cuda when a "
      "GPU is usable, else sim).\n"
      "Exit codes: 0 success, 1 failure (a live run failed, a file could not be written), 2 bad "
      "arguments or no display.");

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }

  try {
    gpulab::viewer::Model model = gpulab::viewer::Model::detect();
    if (!spec.empty() && !model.select_spec(spec)) {
      return usage_error("--spec: unknown GPU '" + spec + "'; known: " + known_spec_keys());
    }
    if (!kernel.empty()) {
      const auto kernels = gpulab::viewer::sweep_kernels();
      if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) {
        std::string known;
        for (const std::string_view name : kernels) {
          known += (known.empty() ? "" : ", ") + std::string(name);
        }
        return usage_error("--kernel: the block-size sweep cannot run '" + kernel + "'; it runs " +
                           known);
      }
      model.selections().options.sweep_kernel = kernel;
      model.selections().experiment = gpulab::viewer::Experiment::sweep;
    }
    model.selections().options.quick = quick;

    options.headless = headless || !screenshot.empty();
    options.screenshot = screenshot;
    options.panel = panel;
    // ImGui sizes windows and table columns from what the previous frame drew, so the first
    // frame of a fresh window is not yet laid out; three frames settle it.
    options.frames = frames.value_or(options.headless ? 3 : 0);
    std::optional<gpulab::viewer::App> app;
    try {
      app.emplace(options);
    } catch (const gpulab::viewer::WindowError& e) {
      std::fprintf(stderr,
                   "gpulab view: no display to open a window on (%s); run it in a desktop "
                   "session, or headless under a virtual X server: xvfb-run -a gpulab view "
                   "--headless --screenshot out.png\n",
                   e.what());
      return kUsage;
    }

    for (const std::string& file : files) {
      const gpulab::viewer::LoadedResults& loaded = model.load_results(file);
      if (!loaded.ok()) {
        std::fprintf(stderr, "gpulab view: %s\n", loaded.error.c_str());
      }
    }
    model.queue_runs(experiments_of(runs));

    const gpulab::viewer::RunOutcome outcome = app->run(model);
    // A window closed while a run goes on stops it; either way every finished result is taken
    // before anything is reported or saved.
    if (model.runs_pending()) {
      model.cancel_run();
    }
    model.wait_for_run();
    int status = kSuccess;
    if (!outcome.error.empty()) {
      std::fprintf(stderr, "gpulab view: %s\n", outcome.error.c_str());
      status = kFailure;
    }
    for (const std::string& error : model.run_errors()) {
      std::fprintf(stderr, "gpulab view: live run: %s\n", error.c_str());
      status = kFailure;
    }
    const gpulab::viewer::RunStatus run = model.run_status();
    if (run.state == gpulab::viewer::RunState::failed) {
      std::fprintf(stderr, "gpulab view: live run failed: %s\n", run.error.c_str());
      status = kFailure;
    }
    if (!save.empty()) {
      if (std::string error; model.save_live(save, error)) {
        std::printf("gpulab view: saved the live results to %s\n", save.c_str());
      } else {
        std::fprintf(stderr, "gpulab view: cannot save %s: %s\n", save.c_str(), error.c_str());
        status = kFailure;
      }
    }
    if (frame_stats) {
      const std::string shown = panel.empty() ? "all panels" : "panel " + panel;
      std::printf("gpulab view: frame time (%s, %dx%d): %s\n", shown.c_str(), options.width,
                  options.height, frame_report(outcome.frame_ms).c_str());
    }
    if (!screenshot.empty() && outcome.screenshot_written) {
      std::printf("gpulab view: wrote %s\n", screenshot.c_str());
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab view: error: %s\n", e.what());
    return kFailure;
  }
}
