#include "labs.hpp"

#include <stdexcept>

#include "commands.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/grader/process.hpp"

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

const LabRun* find_run(const LabEntry& lab, const std::string& variant, const std::string& backend,
                       int slot) {
  for (const LabRun& run : lab.runs) {
    if (run.variant == variant && run.backend == backend && run.slot == slot) {
      return &run;
    }
  }
  return nullptr;
}

int run_program(const std::filesystem::path& program, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv.push_back(program.string());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.inherit_io = true;
  const ProcessResult result = run_process(spec);
  if (!result.started) {
    throw std::runtime_error(result.start_error);
  }
  return result.exit_code ? *result.exit_code : 128 + result.signal.value_or(0);
}

}  // namespace gpulab::cli
