#include "app/app.hpp"

// GLFW includes the system's <GL/gl.h>: enough for the few OpenGL 1.x calls made here (clear,
// viewport, read pixels). ImGui's OpenGL3 backend loads the newer functions it needs itself.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image_write.h>  // libstb.so holds the implementation: no STB_..._IMPLEMENTATION

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
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
  if (!options_.panel.empty()) {
    const auto panels = all_panels();
    if (std::none_of(panels.begin(), panels.end(),
                     [&](const PanelInfo& info) { return info.name == options_.panel; })) {
      std::string known;
      for (const PanelInfo& info : panels) {
        known += (known.empty() ? "" : ", ") + std::string(info.name);
      }
      throw std::invalid_argument("unknown panel '" + options_.panel + "'; known: " + known);
    }
  }
  try {
    if (glfwInit() != GLFW_TRUE) {
      throw WindowError(glfw_error());
    }
    glfw_ready_ = true;
    // A screenshot run needs no visible window: a hidden one renders the same pixels and does
    // not flash on a desktop.
    const char* glsl = create_window(options_.width, options_.height, !options_.headless, &window_);
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
    // Anti-aliased lines from geometry rather than from the font texture: the texture is sampled
    // without filtering (see draw_frame), which would break the texture's line edges.
    ImGui::GetStyle().AntiAliasedLinesUseTex = false;
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

RunOutcome App::run(Model& model) {
  using Clock = std::chrono::steady_clock;
  RunOutcome outcome;
  const bool fixed = options_.frames > 0;
  const Clock::time_point started = Clock::now();
  int counted = 0;  // frames drawn since the live runs ended
  while (glfwWindowShouldClose(window_) == GLFW_FALSE) {
    const Clock::time_point frame_start = Clock::now();
    const bool running = model.runs_pending();
    if (fixed && !running) {
      glfwPollEvents();
    } else {
      // Sleep until input arrives, but wake at least 20 times a second (100 while a live run
      // streams results) so anything the model gains still shows: an idle viewer should not
      // spin a CPU core, and a headless one should leave the cores to the run.
      glfwWaitEventsTimeout(running ? 0.01 : 0.05);
    }
    if (fixed && running &&
        std::chrono::duration<double>(Clock::now() - started).count() > options_.run_timeout_s) {
      outcome.error = "the live runs did not finish within " +
                      std::to_string(static_cast<int>(options_.run_timeout_s)) +
                      " s (--run-timeout): cancelled";
      model.cancel_run();
      model.wait_for_run();
    }
    // In a fixed-frame run the count starts once the live runs are over, so the last frame (and
    // the screenshot) shows their results: read before draw_frame takes the finished results.
    const bool counting = !model.runs_pending();
    draw_frame(model);
    const bool last = fixed && counting && ++counted >= options_.frames;
    // Read the frame before glfwSwapBuffers: after the swap the back buffer's contents are
    // undefined.
    if (last && !options_.screenshot.empty()) {
      write_screenshot();
      outcome.screenshot_written = true;
    }
    glfwSwapBuffers(window_);
    if (counting) {
      // A frame's time includes the rendering itself, which a software renderer may still be
      // doing after the swap returns; interactive runs wait for vsync instead.
      if (fixed) {
        glFinish();
      }
      outcome.frame_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - frame_start).count());
    }
    if (last) {
      break;
    }
  }
  return outcome;
}

void App::draw_frame(Model& model) {
  // Results the live run finished since the last frame: moved into the model before anything
  // draws, so every panel of this frame sees the same data.
  model.poll();

  ImGui_ImplOpenGL3_NewFrame();  // creates the font texture on the first frame
  if (!font_texture_nearest_) {
    // ImGui puts every glyph on whole pixels, so sampling the font texture without bilinear
    // filtering draws the same text; on a software renderer (Mesa's llvmpipe, e.g. under Xvfb)
    // it makes whole frames about a fifth cheaper, since every pixel ImGui draws samples it.
    const auto texture =
        static_cast<GLuint>(reinterpret_cast<std::intptr_t>(ImGui::GetIO().Fonts->TexID));
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    font_texture_nearest_ = true;
  }
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  draw_panels(model);

  ImGui::Render();
  int width = 0;
  int height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  glViewport(0, 0, width, height);
  glClearColor(0.10F, 0.10F, 0.12F, 1.0F);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void App::draw_panels(Model& model) {
  // The panels tile the display: one panel fills it (--panel), or all of them share a grid that
  // is filled column by column (all_panels() pairs the panels that are read together). The grid
  // is laid out again whenever the display changes size; in between, the user may move and
  // resize the windows freely.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const bool relayout = display.x != last_width_ || display.y != last_height_;
  if (relayout) {
    last_width_ = display.x;
    last_height_ = display.y;
  }
  const auto panels = all_panels();
  if (!options_.panel.empty()) {
    for (const PanelInfo& info : panels) {
      if (info.name == options_.panel) {
        if (relayout) {
          ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
          ImGui::SetNextWindowSize(ImVec2(std::max(display.x, 1.0F), std::max(display.y, 1.0F)),
                                   ImGuiCond_Always);
        }
        info.draw(model);
      }
    }
    return;
  }
  // The grid whose cells come closest to a comfortable panel (about 320 x 360 pixels): the
  // smaller of the two ratios decides, so neither a narrow nor a flat cell wins. The 12 panels at
  // 1280x800: 4 columns x 3 rows; fewer columns for a tall, narrow window.
  constexpr float kComfortableWidth = 320.0F;
  constexpr float kComfortableHeight = 360.0F;
  const auto count = static_cast<int>(panels.size());
  int columns = 1;
  float best = -1;
  for (int c = 1; c <= 5; ++c) {
    const int r = (count + c - 1) / c;
    const float fit = std::min(display.x / static_cast<float>(c) / kComfortableWidth,
                               display.y / static_cast<float>(r) / kComfortableHeight);
    if (fit > best + 1e-3F) {
      best = fit;
      columns = c;
    }
  }
  const int rows = (count + columns - 1) / columns;
  const float width = std::max(display.x / static_cast<float>(columns), 1.0F);
  const float height = std::max(display.y / static_cast<float>(rows), 1.0F);
  for (int i = 0; i < count; ++i) {
    if (relayout) {
      const int column = i / rows;
      const int row = i % rows;
      ImGui::SetNextWindowPos(
          ImVec2(static_cast<float>(column) * width, static_cast<float>(row) * height),
          ImGuiCond_Always);
      ImGui::SetNextWindowSize(ImVec2(width, height), ImGuiCond_Always);
    }
    panels[static_cast<std::size_t>(i)].draw(model);
  }
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
