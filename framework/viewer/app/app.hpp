// The viewer's window and frame loop: GLFW for the window and input, Dear ImGui for the widgets,
// its OpenGL3 backend for drawing. The loop only draws the model (through the panels); loading
// and querying happen before it starts.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/viewer/model.hpp"

struct GLFWwindow;

namespace gpulab::viewer {

/// How the app runs.
struct AppOptions {
  int width = 1280;       ///< window width, in screen coordinates
  int height = 800;       ///< window height, in screen coordinates
  int frames = 0;         ///< frames to draw once the live runs are over, then exit; 0 runs until
                          ///< the window is closed
  bool headless = false;  ///< a hidden window (still on an X display)
  double run_timeout_s = 600;        ///< with frames > 0: live runs taking longer are cancelled
  std::filesystem::path screenshot;  ///< PNG written after the last frame; empty for none
  std::string panel;  ///< name of the one panel to show filling the window (all_panels()
                      ///< names, e.g. "roofline"); empty shows every panel in a grid
};

/// How a run of the app went.
struct RunOutcome {
  std::vector<double> frame_ms;     ///< wall time of each frame drawn after the live runs, in ms
  bool screenshot_written = false;  ///< the PNG was written
  std::string error;                ///< one line when the live runs timed out; else empty
};

/// The window could not be opened; what() is GLFW's one-line reason.
class WindowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A window with an OpenGL context and Dear ImGui set up. Neither copyable nor movable: GLFW
/// and ImGui's backends keep pointers to the window.
class App {
 public:
  /// Opens the window (hidden when headless) and sets up ImGui; throws
  /// WindowError when there is no display or no usable OpenGL context, and
  /// std::invalid_argument (before opening anything) when options.panel names no panel.
  explicit App(AppOptions options);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;
  App(App&&) = delete;
  App& operator=(App&&) = delete;

  /// Draws frames until the window is closed or, once the model's live runs are over (or timed
  /// out), options.frames have been drawn; then writes the screenshot if one was asked for
  /// (throws std::runtime_error when it cannot be written).
  RunOutcome run(Model& model);

 private:
  void shutdown() noexcept;
  void draw_frame(Model& model);
  void draw_panels(Model& model);
  void write_screenshot() const;

  AppOptions options_;
  GLFWwindow* window_ = nullptr;
  bool glfw_ready_ = false;
  bool imgui_context_ = false;
  bool imgui_glfw_ready_ = false;
  bool imgui_gl_ready_ = false;
  bool font_texture_nearest_ = false;  // the font texture's filter has been set
  float last_width_ = 0;               // display size the windows were last laid out for
  float last_height_ = 0;
};

}  // namespace gpulab::viewer
