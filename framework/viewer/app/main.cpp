// gpulab-view: the viewer. See `gpulab-view --help`.
//
// Exit codes: 0 success, 1 failure (no display, screenshot not written), 2 bad arguments. A
// results file that does not load is not a failure: its error shows in the Results panel (and
// on stderr), and the viewer runs on.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/viewer/model.hpp"

namespace {

constexpr int kSuccess = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

// One line for a bad command line, never CLI11's multi-line text.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab-view: error: %s (see gpulab-view --help)\n", message.c_str());
  return kUsage;
}

std::string known_spec_keys() {
  std::string keys;
  for (const gpulab::GpuSpec& spec : gpulab::all_specs()) {
    keys += (keys.empty() ? "" : ", ") + spec.key;
  }
  return keys;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "gpulab-view: the gpulab viewer. Shows the detected device (or why there is none), the GPU "
      "spec database, and results files written by gpulab commands (--json).",
      "gpulab-view"};
  std::vector<std::string> files;
  std::string spec;
  std::string screenshot;
  std::optional<int> frames;
  gpulab::viewer::AppOptions options;
  cli.add_option("FILE", files, "Results files to show");
  cli.add_option("--spec", spec,
                 "GPU spec to show first, by key or name (see `gpulab specs`); default: the "
                 "detected device's, else GPULAB_SIM_SPEC's, else H100 SXM");
  cli.add_option("--screenshot", screenshot,
                 "Draw --frames frames in a hidden window, write them to this PNG and exit");
  cli.add_option("--frames", frames,
                 "Frames to draw before exiting (default with --screenshot: 3; without: run "
                 "until the window is closed)")
      ->check(CLI::Range(1, 1000000));
  cli.add_option("--width", options.width, "Window width in pixels")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  cli.add_option("--height", options.height, "Window height in pixels")
      ->check(CLI::Range(64, 16384))
      ->capture_default_str();
  cli.footer("Exit codes: 0 success, 1 failure (e.g. no display), 2 bad arguments.");

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

    options.screenshot = screenshot;
    // ImGui sizes windows and table columns from what the previous frame drew, so the first
    // frame of a fresh window is not yet laid out; three frames settle it.
    options.frames = frames.value_or(screenshot.empty() ? 0 : 3);
    std::optional<gpulab::viewer::App> app;
    try {
      app.emplace(options);
    } catch (const gpulab::viewer::WindowError& e) {
      std::fprintf(stderr,
                   "gpulab-view: cannot open a window: %s; run under a desktop session or "
                   "xvfb-run\n",
                   e.what());
      return kFailure;
    }

    for (const std::string& file : files) {
      const gpulab::viewer::LoadedResults& loaded = model.load_results(file);
      if (!loaded.ok()) {
        std::fprintf(stderr, "gpulab-view: %s\n", loaded.error.c_str());
      }
    }

    app->run(model);
    if (!screenshot.empty()) {
      std::printf("gpulab-view: wrote %s\n", screenshot.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab-view: error: %s\n", e.what());
    return kFailure;
  }
  return kSuccess;
}
