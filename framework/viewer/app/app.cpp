#include "app/app.hpp"

// GLFW includes the system's <GL/gl.h>: enough for the few OpenGL 1.x calls made here (clear,
// viewport, read pixels). ImGui's OpenGL3 backend loads the newer functions it needs itself.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image_write.h>  // libstb.so holds the implementation: no STB_..._IMPLEMENTATION

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "panels/panels.hpp"

namespace gpulab::viewer {
namespace {

// GLFW reports failures through glfwGetError; turn the last one into a line for a person.
std::string glfw_error() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (code == GLFW_NO_ERROR) {
    return "unknown GLFW error";
  }
  return description != nullptr ? description : "GLFW error " + std::to_string(code);
}

// Asks for an OpenGL 3.2 core context (what macOS and Mesa's llvmpipe under Xvfb both give),
// falling back to any context of 3.0 or later. Returns the GLSL version line ImGui's OpenGL3
// backend compiles its shaders with, or nullptr when neither worked.
const char* create_window(int width, int height, bool visible, GLFWwindow** window) {
  struct Attempt {
    int major;
    int minor;
    bool core;
    const char* glsl;
  };
  constexpr Attempt kAttempts[] = {{3, 2, true, "#version 150"}, {3, 0, false, "#version 130"}};
  for (const Attempt& attempt : kAttempts) {
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, attempt.major);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, attempt.minor);
    if (attempt.core) {
      glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
      glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    }
    *window = glfwCreateWindow(width, height, "gpulab-view", nullptr, nullptr);
    if (*window != nullptr) {
      return attempt.glsl;
    }
  }
  return nullptr;
}

// ImGui's built-in font is a 13 px bitmap font: crisp, but small on today's screens. DejaVu Sans
// ships with most Linux desktops; use it when present, the built-in font otherwise.
void load_font() {
  ImGuiIO& io = ImGui::GetIO();
  for (const char* path :
       {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"}) {
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error) &&
        io.Fonts->AddFontFromFileTTF(path, 15.0F) != nullptr) {
      return;
    }
  }
  io.Fonts->AddFontDefault();
}

}  // namespace

App::App(AppOptions options) : options_(std::move(options)) {
  try {
    if (glfwInit() != GLFW_TRUE) {
      throw WindowError(glfw_error());
    }
    glfw_ready_ = true;
    // A screenshot run needs no visible window: a hidden one renders the same pixels and does
    // not flash on a desktop.
    const char* glsl =
        create_window(options_.width, options_.height, options_.screenshot.empty(), &window_);
    if (glsl == nullptr) {
      throw WindowError(glfw_error());
    }
    glfwMakeContextCurrent(window_);
    // vsync caps an interactive viewer at the display rate; a fixed-frame run should not wait.
    glfwSwapInterval(options_.frames > 0 ? 0 : 1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    imgui_context_ = true;
    // No imgui.ini: the layout comes from the app, and the viewer must not write files into
    // whatever directory it was started from.
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    load_font();
    if (!ImGui_ImplGlfw_InitForOpenGL(window_, true)) {
      throw WindowError("Dear ImGui's GLFW backend failed to initialise");
    }
    imgui_glfw_ready_ = true;
    if (!ImGui_ImplOpenGL3_Init(glsl)) {
      throw WindowError("Dear ImGui's OpenGL3 backend failed to initialise");
    }
    imgui_gl_ready_ = true;
  } catch (...) {
    shutdown();  // the destructor does not run for a half-built object
    throw;
  }
}

App::~App() {
  shutdown();
}

void App::shutdown() noexcept {
  if (imgui_gl_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    imgui_gl_ready_ = false;
  }
  if (imgui_glfw_ready_) {
    ImGui_ImplGlfw_Shutdown();
    imgui_glfw_ready_ = false;
  }
  if (imgui_context_) {
    ImGui::DestroyContext();
    imgui_context_ = false;
  }
  if (window_ != nullptr) {
    glfwDestroyWindow(window_);
    window_ = nullptr;
  }
  if (glfw_ready_) {
    glfwTerminate();
    glfw_ready_ = false;
  }
}

void App::run(Model& model) {
  for (int frame = 0; glfwWindowShouldClose(window_) == GLFW_FALSE; ++frame) {
    const bool fixed = options_.frames > 0;
    if (fixed) {
      glfwPollEvents();
    } else {
      // Sleep until input arrives, but wake at least 20 times a second so anything the model
      // gains while idle still shows: an idle viewer should not spin a CPU core.
      glfwWaitEventsTimeout(0.05);
    }
    draw_frame(model);
    const bool last = fixed && frame + 1 >= options_.frames;
    // Read the frame before glfwSwapBuffers: after the swap the back buffer's contents are
    // undefined.
    if (last && !options_.screenshot.empty()) {
      write_screenshot();
    }
    glfwSwapBuffers(window_);
    if (last) {
      break;
    }
  }
}

void App::draw_frame(Model& model) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();

  // Two side-by-side windows filling the display. They are laid out again whenever the display
  // changes size; in between, the user may move and resize them freely.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  if (display.x != last_width_ || display.y != last_height_) {
    last_width_ = display.x;
    last_height_ = display.y;
    const float left = std::max(display.x * 0.45F, std::min(560.0F, display.x));
    ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(left, display.y), ImGuiCond_Always);
    draw_device_panel(model);
    ImGui::SetNextWindowPos(ImVec2(left, 0), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(std::max(display.x - left, 1.0F), display.y), ImGuiCond_Always);
    draw_results_panel(model);
  } else {
    draw_device_panel(model);
    draw_results_panel(model);
  }

  ImGui::Render();
  int width = 0;
  int height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  glViewport(0, 0, width, height);
  glClearColor(0.10F, 0.10F, 0.12F, 1.0F);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void App::write_screenshot() const {
  // The framebuffer can be larger than the window on high-DPI screens: read what was drawn.
  int width = 0;
  int height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  if (width <= 0 || height <= 0) {
    throw std::runtime_error("cannot write screenshot " + options_.screenshot.string() +
                             ": the window has no pixels (minimised?)");
  }
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) *
                                    static_cast<std::size_t>(height) * 3);
  // Rows of an RGB image are 3 * width bytes; OpenGL pads each row to 4 bytes unless told not to.
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's first row is the bottom of the image; PNG's is the top.
  stbi_flip_vertically_on_write(1);
  if (stbi_write_png(options_.screenshot.c_str(), width, height, 3, pixels.data(), width * 3) ==
      0) {
    throw std::runtime_error("cannot write screenshot " + options_.screenshot.string());
  }
}

}  // namespace gpulab::viewer
