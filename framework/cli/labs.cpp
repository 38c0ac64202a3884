#include "labs.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "commands.hpp"
#include "gpulab/core/device.hpp"

extern char** environ;

namespace gpulab::cli {

std::filesystem::path build_dir() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    throw std::runtime_error("cannot find this program's path (/proc/self/exe): " +
                             error.message());
  }
  return self.parent_path().parent_path();
}

LabManifest build_manifest() {
  const std::filesystem::path path = build_dir() / "grading" / "manifest.json";
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("this build has no labs (" + path.string() +
                             " is missing): configure with cmake --preset default");
  }
  return load_lab_manifest(path);
}

std::vector<const LabEntry*> select_labs(const LabManifest& manifest,
                                         const std::vector<std::string>& names) {
  std::vector<const LabEntry*> chosen;
  if (names.empty() || (names.size() == 1 && names.front() == "all")) {
    for (const LabEntry& lab : manifest.labs) {
      chosen.push_back(&lab);
    }
    return chosen;
  }
  for (const std::string& name : names) {
    std::string id = name;
    if (id.rfind("lab", 0) != 0) {
      id = (id.size() == 1 ? "lab0" : "lab") + id;
    }
    const LabEntry* found = nullptr;
    for (const LabEntry& lab : manifest.labs) {
      if (lab.id == id) {
        found = &lab;
      }
    }
    if (found == nullptr) {
      std::string known;
      for (const LabEntry& lab : manifest.labs) {
        known += (known.empty() ? "" : ", ") + lab.id;
      }
      throw UsageError("no lab \"" + name + "\" (labs: " + known + ", or all)");
    }
    chosen.push_back(found);
  }
  return chosen;
}

bool has_variant(const LabManifest& manifest, const std::string& variant) {
  for (const LabEntry& lab : manifest.labs) {
    for (const LabRun& run : lab.runs) {
      if (run.variant == variant) {
        return true;
      }
    }
  }
  return false;
}

std::string choose_variant(const LabManifest& manifest, bool solution, bool student) {
  if (solution && !has_variant(manifest, "solution")) {
    throw UsageError("--solution: this tree has no solutions/ (a student release)");
  }
  if (solution) {
    return "solution";
  }
  return student || !has_variant(manifest, "solution") ? "student" : "solution";
}

namespace {

bool has_backend(const LabManifest& manifest, const std::string& backend) {
  for (const LabEntry& lab : manifest.labs) {
    for (const LabRun& run : lab.runs) {
      if (run.backend == backend) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string choose_backend(const LabManifest& manifest, const std::string& requested) {
  if (!requested.empty() && requested != "cuda" && requested != "sim") {
    throw UsageError("--backend must be cuda or sim, not \"" + requested + "\"");
  }
  if (!requested.empty() && !has_backend(manifest, requested)) {
    throw UsageError("this build has no " + requested +
                     " backend (see `gpulab device` for how it was configured)");
  }
  // `gpulab` links the cuda backend when the build has it, so its device query is the GPU's.
  const bool cuda_built = std::string(backend_name()) == "cuda" && has_backend(manifest, "cuda");
  if (requested == "cuda" || requested.empty()) {
    const DeviceQuery query = cuda_built ? query_devices() : DeviceQuery{};
    if (cuda_built && query.usable()) {
      return "cuda";
    }
    if (requested == "cuda") {
      throw std::runtime_error("--backend cuda: no usable CUDA device: " +
                               (query.unavailable ? query.unavailable->reason
                                                  : std::string("the cuda backend is not built")));
    }
  }
  return "sim";
}

const LabRun* find_run(const LabEntry& lab, const std::string& variant,
                       const std::string& backend) {
  for (const LabRun& run : lab.runs) {
    if (run.variant == variant && run.backend == backend) {
      return &run;
    }
  }
  return nullptr;
}

int run_program(const std::filesystem::path& program, const std::vector<std::string>& args) {
  std::vector<std::string> storage;
  storage.push_back(program.string());
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, storage.front().c_str(), nullptr, nullptr, argv.data(), environ);
  if (error != 0) {
    throw std::runtime_error("cannot start " + program.string() + ": " + std::strerror(error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error("waiting for " + program.string() + ": " + std::strerror(errno));
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gpulab::cli
