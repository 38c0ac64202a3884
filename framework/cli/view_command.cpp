// `gpulab view [--backend cuda|sim] [ARGS...]`: the viewer. The window lives in its own program,
// built once per backend (gpulab-view.cuda, gpulab-view.sim: it links Dear ImGui, GLFW and
// OpenGL, which the command-line tool does not need, and its live runs use one backend). This
// command picks one and replaces itself with it, so the options, output and exit codes are the
// viewer's.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "build_config.hpp"
#include "commands.hpp"
#include "gpulab/grader/workspace.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace gpulab::cli {
namespace {

// Takes `--backend B` or `--backend=B` out of the arguments; empty when not given.
std::string take_backend(std::vector<std::string>& args) {
  std::string backend;
  for (auto it = args.begin(); it != args.end();) {
    if (*it == "--backend") {
      if (std::next(it) == args.end()) {
        throw UsageError("view: --backend needs a value: cuda or sim");
      }
      backend = *std::next(it);
      it = args.erase(it, std::next(it, 2));
    } else if (it->rfind("--backend=", 0) == 0) {
      backend = it->substr(std::strlen("--backend="));
      it = args.erase(it);
    } else {
      ++it;
    }
  }
  if (!backend.empty() && backend != "cuda" && backend != "sim") {
    throw UsageError("view: --backend " + backend + ": expected cuda or sim");
  }
  return backend;
}

}  // namespace

Command add_view_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "view",
      "Open the viewer: live runs, benchmark, components, roofline, occupancy explorer and "
      "block-size sweep panels (`gpulab view --help` for its options).");
  // Every argument, --help included, belongs to the viewer.
  command->set_help_flag();
  command->prefix_command();
  command->allow_extras();
  return {
      command, [command]() -> int {
        std::vector<std::string> args = command->remaining();
        std::string backend = take_backend(args);
        const std::filesystem::path bin = build_dir() / "bin";
        const auto viewer_of = [&](const std::string& b) { return bin / ("gpulab-view." + b); };
        if (backend.empty()) {
          // As `gpulab run` does: the GPU when this build has the cuda viewer and a device
          // is usable, the CPU simulation otherwise.
          const CudaDevices devices = cuda_devices();
          const bool cuda =
              access(viewer_of("cuda").c_str(), X_OK) == 0 && devices && devices().usable();
          backend = cuda ? "cuda" : "sim";
        }
        const std::filesystem::path viewer = viewer_of(backend);
        if (access(viewer.c_str(), X_OK) != 0) {
          const bool defined =
              backend == "sim" ? GPULAB_VIEWER_DEFINED_SIM != 0 : GPULAB_VIEWER_DEFINED_CUDA != 0;
          if (defined && std::filesystem::exists(build_dir() / "CMakeCache.txt")) {
            // Configured with the viewer, built without it (the README's `--target gpulab`).
            throw std::runtime_error("the " + backend + " viewer is not built yet (" +
                                     viewer.string() + " is missing): build it with " +
                                     GPULAB_CMAKE_COMMAND + " --build " + build_dir().string() +
                                     " --target gpulab-view." + backend);
          }
          if (access(viewer_of("sim").c_str(), X_OK) == 0) {
            throw UsageError("view: this build has no " + backend + " viewer (" + viewer.string() +
                             " is missing)");
          }
          throw std::runtime_error(
              "this build has no viewer (" + viewer.string() +
              " is missing): configure with -DGPULAB_BUILD_VIEWER=ON (it needs libglfw3-dev "
              "libgl-dev libimgui-dev libstb-dev; ./scripts/setup installs them)");
        }
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>("gpulab view"));
        for (std::string& arg : args) {
          argv.push_back(arg.data());
        }
        argv.push_back(nullptr);
        execv(viewer.c_str(), argv.data());
        throw std::runtime_error("cannot start " + viewer.string() + ": " + std::strerror(errno));
      }};
}

}  // namespace gpulab::cli
