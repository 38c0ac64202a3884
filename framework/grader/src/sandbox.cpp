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

// What every program needs of the system, shown read-only: the programs and libraries under
// /usr, the top-level folders that are links into it on a merged-/usr system (or folders of
// their own elsewhere), and the few files of /etc the dynamic loader and the C library read.
// Nothing else of the machine: not /home, /root, /work, /opt, /var, /srv, /mnt, nor the rest of
// /etc.
std::vector<fs::path> system_paths() {
  std::vector<fs::path> paths;
  std::error_code error;
  for (const char* path :
       {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache",
        "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group",
        "/etc/nsswitch.conf", "/etc/alternatives"}) {
    if (fs::exists(fs::symlink_status(path, error))) {
      paths.emplace_back(path);
    }
  }
  return paths;
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
  // Later mounts go on top of earlier ones: the system (read-only), fresh /dev, /proc and /tmp,
  // the visible files and folders (which may live under /tmp), the hidden folders emptied, and
  // last the writable folders (which may sit inside a tree shown read-only).
  std::vector<std::string> command = {bwrap->string()};
  const auto bind = [&](const char* how, const fs::path& path) {
    command.insert(command.end(), {how, path.string(), path.string()});
  };
  for (const fs::path& path : system_paths()) {
    std::error_code error;
    if (fs::is_symlink(path, error)) {
      command.insert(command.end(),
                     {"--symlink", fs::read_symlink(path, error).string(), path.string()});
    } else {
      bind("--ro-bind", path);
    }
  }
  command.insert(command.end(), {"--dev", "/dev"});
  const std::vector<fs::path> gpu = gpu_device_files();
  for (const fs::path& device : gpu) {
    bind("--dev-bind", device);
  }
  if (!gpu.empty()) {
    bind("--ro-bind", "/sys");  // the CUDA driver reads the GPUs' PCI and NUMA topology there
  }
  command.insert(command.end(), {"--proc", "/proc", "--tmpfs", "/tmp"});
  for (const fs::path& path : spec.visible) {
    bind("--ro-bind", path);
  }
  for (const fs::path& folder : spec.hidden) {
    std::error_code error;
    if (fs::is_directory(folder, error)) {
      command.insert(command.end(), {"--tmpfs", folder.string(), "--remount-ro", folder.string()});
    }
  }
  for (const fs::path& folder : spec.writable) {
    bind("--bind", folder);
  }
  command.insert(command.end(), {"--setenv", "TMPDIR", "/tmp", "--unshare-all", "--new-session",
                                 "--die-with-parent", "--"});
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

std::optional<std::string> sandbox_unavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    if (!bwrap_path()) {
      return "bubblewrap (bwrap) is not installed; scripts/setup installs it";
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
    // Most often a container that does not let its processes make namespaces and mount /proc.
    return "bwrap cannot start a sandbox here" + (said.empty() ? "" : ": " + said) +
           " (inside a container, see docs/getting-started.md, 'The dev container')";
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
