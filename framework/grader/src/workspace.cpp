#include "gpulab/grader/workspace.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

std::filesystem::path build_dir() {
  return executable_path().parent_path().parent_path();
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

namespace {

// Whether some lab of the manifest has a run that `wanted` accepts.
template <typename Predicate>
bool any_run(const LabManifest& manifest, Predicate wanted) {
  return std::any_of(manifest.labs.begin(), manifest.labs.end(), [&](const LabEntry& lab) {
    return std::any_of(lab.runs.begin(), lab.runs.end(), wanted);
  });
}

bool has_backend(const LabManifest& manifest, const std::string& backend) {
  return any_run(manifest, [&](const LabRun& run) { return run.backend == backend; });
}

}  // namespace

bool has_variant(const LabManifest& manifest, const std::string& variant) {
  return any_run(manifest, [&](const LabRun& run) { return run.variant == variant; });
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

std::string choose_backend(const LabManifest& manifest, const std::string& backend,
                           const CudaDevices& cuda) {
  const std::string requested = backend == "auto" ? "" : backend;
  if (!requested.empty() && requested != "cuda" && requested != "sim") {
    throw UsageError("--backend must be cuda, sim or auto, not \"" + requested + "\"");
  }
  if (!requested.empty() && !has_backend(manifest, requested)) {
    throw UsageError("this build has no " + requested +
                     " backend (see `gpulab device` for how it was configured)");
  }
  // `gpulab` links the cuda backend when the build has it, so its device query is the GPU's.
  const bool cuda_built = cuda && has_backend(manifest, "cuda");
  if (requested == "cuda" || requested.empty()) {
    const DeviceQuery query = cuda_built ? cuda() : DeviceQuery{};
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

ProcessResult build_target(const std::string& target, int jobs, double timeout_s,
                           const std::string& waiting) {
  const std::filesystem::path build = build_dir();
  ProcessSpec spec;
  spec.argv = {GPULAB_CMAKE_COMMAND, "--build", build.string(), "--target", target, "-j",
               std::to_string(jobs)};
  spec.timeout_s = timeout_s;
  spec.keep_bytes = 1 << 20;
  const FileLock building = wait_for_lock(build / "grading" / "build.lock", waiting);
  return run_process(spec);
}

FileLock wait_for_lock(const std::filesystem::path& path, const std::string& waiting) {
  FileLock lock(path, false);
  if (lock.held()) {
    return lock;
  }
  std::cout << waiting << std::endl;
  return FileLock(path, true);
}

std::vector<std::string> build_failure(const ProcessResult& built) {
  if (!built.started) {
    return {built.start_error};
  }
  if (built.timed_out) {
    return {"the build took too long"};
  }
  return built.exit_code == 0 ? std::vector<std::string>{} : compiler_errors(built.output);
}

bool build_report(const LabEntry& lab, const LabRun& run, const std::string& command) {
  const std::string prefix = "gpulab " + command + ": ";
  const ProcessResult built =
      build_target(run.report.filename().string(),
                   std::max(1, static_cast<int>(std::thread::hardware_concurrency())),
                   kBuildTimeoutS, prefix + "waiting for another build in this build folder");
  if (const std::vector<std::string> failure = build_failure(built); !failure.empty()) {
    std::cerr << prefix << lab.id << "'s " << run.variant << " code did not build:\n";
    for (const std::string& line : failure) {
      std::cerr << "  " << line << "\n";
    }
    return false;
  }
  // Something was compiled or linked (Ninja and Makefiles both say so; a step that always runs,
  // such as the version stamp, is neither).
  if (built.output.find("Building ") != std::string::npos ||
      built.output.find("Linking ") != std::string::npos) {
    std::cout << prefix << "rebuilt " << lab.id << " (" << run.variant
              << " code) from its current sources" << std::endl;
  }
  return true;
}

int run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                const std::vector<std::pair<std::string, std::string>>& env) {
  ProcessSpec spec;
  spec.argv.push_back(program.string());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.inherit_io = true;
  const ProcessResult result = run_process(spec);
  if (!result.started) {
    throw std::runtime_error(result.start_error);
  }
  return result.exit_code ? *result.exit_code : 128 + result.signal.value_or(0);
}

}  // namespace gpulab
