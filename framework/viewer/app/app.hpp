// The viewer's window and frame loop: GLFW for the window and input, Dear ImGui for the widgets,
// its OpenGL3 backend for drawing. The loop only draws the model (through the panels); loading
// and querying happen before it starts.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "gpulab/viewer/model.hpp"

struct GLFWwindow;

namespace gpulab::viewer {

/// How the app runs.
struct AppOptions {
  int width = 1280;  ///< window width, in screen coordinates
  int height = 800;  ///< window height, in screen coordinates
  int frames = 0;    ///< frames to draw before exiting; 0 runs until the window is closed
  std::filesystem::path screenshot;  ///< PNG written after the last frame; empty for none
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
  /// Opens the window (hidden when a screenshot is asked for) and sets up ImGui; throws
  /// WindowError when there is no display or no usable OpenGL context.
  explicit App(AppOptions options);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;
  App(App&&) = delete;
  App& operator=(App&&) = delete;

  /// Draws frames until the window is closed or options.frames have been drawn, then writes
  /// the screenshot if one was asked for (throws std::runtime_error when it cannot be written).
  void run(Model& model);

 private:
  void shutdown() noexcept;
  void draw_frame(Model& model);
  void write_screenshot() const;

  AppOptions options_;
  GLFWwindow* window_ = nullptr;
  bool glfw_ready_ = false;
  bool imgui_context_ = false;
  bool imgui_glfw_ready_ = false;
  bool imgui_gl_ready_ = false;
  float last_width_ = 0;  // display size the windows were last laid out for
  float last_height_ = 0;
};

}  // namespace gpulab::viewer
