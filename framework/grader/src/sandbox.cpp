#include "gpulab/grader/sandbox.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace gpulab {

namespace fs = std::filesystem;

namespace {

// How long bwrap may take to start `true` before it counts as not working.
constexpr double kProbeTimeoutS = 10;

std::optional<fs::path> bwrap_path() {
  static const std::optional<fs::path> found = find_on_path("bwrap");
  return found;
}

// The GPU's device files (/dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-caps/...):
// the sandbox's /dev holds only the basic devices, and CUDA needs these.
std::vector<fs::path> gpu_device_files() {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev", error)) {
    if (entry.path().filename().string().starts_with("nvidia")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::string> sandboxed_command(const SandboxSpec& spec,
                                           const std::vector<std::string>& argv) {
  const std::optional<fs::path> bwrap = bwrap_path();
  if (!bwrap) {
    throw std::runtime_error("bubblewrap (bwrap) is not installed");
  }
  if (argv.empty() || !fs::path(argv.front()).is_absolute()) {
    throw std::invalid_argument("sandboxed_command: the program needs an absolute path");
  }
  // Later mounts go on top of earlier ones: the machine read-only, fresh /dev, /proc and /tmp,
  // the trees that live under /tmp shown again, the hidden folders emptied, and last the
  // writable folders (which may sit inside a tree shown read-only).
  std::vector<std::string> command = {bwrap->string(), "--ro-bind", "/", "/", "--dev", "/dev"};
  for (const fs::path& device : gpu_device_files()) {
    command.insert(command.end(), {"--dev-bind", device.string(), device.string()});
  }
  command.insert(command.end(), {"--proc", "/proc", "--tmpfs", "/tmp"});
  for (const fs::path& folder : spec.visible) {
    command.insert(command.end(), {"--ro-bind", folder.string(), folder.string()});
  }
  for (const fs::path& folder : spec.hidden) {
    std::error_code error;
    if (fs::is_directory(folder, error)) {
      command.insert(command.end(), {"--tmpfs", folder.string(), "--remount-ro", folder.string()});
    }
  }
  for (const fs::path& folder : spec.writable) {
    command.insert(command.end(), {"--bind", folder.string(), folder.string()});
  }
  command.insert(command.end(), {"--setenv", "TMPDIR", "/tmp", "--unshare-all", "--new-session",
                                 "--die-with-parent", "--"});
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

std::optional<std::string> sandbox_unavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    if (!bwrap_path()) {
      return "bubblewrap (bwrap) is not installed";
    }
    const std::optional<fs::path> truth = find_on_path("true");
    if (!truth) {
      return "no `true` program on PATH to try the sandbox with";
    }
    ProcessSpec probe;
    probe.argv = sandboxed_command({}, {fs::absolute(*truth).string()});
    probe.timeout_s = kProbeTimeoutS;
    const ProcessResult ran = run_process(probe);
    if (ran.started && ran.exit_code == 0) {
      return std::nullopt;
    }
    std::string said = ran.started ? ran.output : ran.start_error;
    said = said.substr(0, said.find('\n'));
    return "bwrap cannot start a sandbox here" + (said.empty() ? "" : ": " + said);
  }();
  return reason;
}

void read_sandboxed_status(ProcessResult& result) {
  // Signals are 1..64 on Linux; bwrap's own failures exit 1.
  if (result.exit_code && *result.exit_code > 128 && *result.exit_code <= 128 + 64) {
    result.signal = *result.exit_code - 128;
    result.exit_code.reset();
  }
}

}  // namespace gpulab
