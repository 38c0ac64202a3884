// The build workspace, which `gpulab run`, `profile`, `bench`, `view` and the grading workflow
// share: where the build is, its lab manifest, choosing labs, code variant and backend, building a
// target, and running a program of the build. Host-only: what it needs to know of the devices,
// the command that links a backend hands it (CudaDevices).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/device_info.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

/// The build directory this gpulab binary belongs to (the parent of its bin/).
[[nodiscard]] std::filesystem::path build_dir();
/// The build's lab manifest; throws with a clear message when the build has none.
[[nodiscard]] LabManifest build_manifest();

/// The labs named on the command line: "all" (or nothing) for every lab, else ids such as
/// "lab01", "01" or "1". Throws UsageError for a name that is no lab.
[[nodiscard]] std::vector<const LabEntry*> select_labs(const LabManifest& manifest,
                                                       const std::vector<std::string>& names);

/// True when the manifest has runs of this variant ("solution" exists only where solutions/ does).
[[nodiscard]] bool has_variant(const LabManifest& manifest, const std::string& variant);

/// The code variant of --solution / --student: "solution" when asked for (UsageError in a student
/// release, which has none), "student" when asked for, else "solution" where it exists.
[[nodiscard]] std::string choose_variant(const LabManifest& manifest, bool solution, bool student);

/// The devices of the cuda backend, as the `gpulab` command built with it queries them
/// (query_devices()); empty where the command is built without the cuda backend, which then
/// cannot run: the command links the sim's instead.
using CudaDevices = std::function<DeviceQuery()>;

/// The backend to use: `backend` ("cuda", "sim", or "auto" or "" for automatic: cuda when this
/// build has it and `cuda` finds a usable device, else sim; `cuda` is asked only then). Throws
/// UsageError for another name or a backend the build lacks, and std::runtime_error for cuda
/// without a usable device.
[[nodiscard]] std::string choose_backend(const LabManifest& manifest, const std::string& backend,
                                         const CudaDevices& cuda);

/// The lock on `path`, waited for when another program holds it (printing `waiting` first).
[[nodiscard]] FileLock wait_for_lock(const std::filesystem::path& path, const std::string& waiting);

/// The longest a build of lab code may take, in seconds.
constexpr double kBuildTimeoutS = 1800;

/// Builds `target` of this build (cmake --build, `jobs` at a time, at most `timeout_s`), one build
/// at a time in the build folder: two ninjas at once would rebuild what they share twice, at once
/// (<build>/grading/build.lock; `waiting` is printed when another holds it). The output is kept.
[[nodiscard]] ProcessResult build_target(const std::string& target, int jobs, double timeout_s,
                                         const std::string& waiting);

/// Why a build_target did not succeed, in lines: the compiler's first errors, or that it could
/// not start or took too long. Empty when it succeeded.
[[nodiscard]] std::vector<std::string> build_failure(const ProcessResult& built);

/// Builds `run`'s report program from the current sources (nothing when it is up to date), so
/// that `gpulab <command>` never runs a program older than the code it reports on: says so when
/// something was compiled or linked; prints the compiler's first errors and returns false when the
/// code does not build.
[[nodiscard]] bool build_report(const LabEntry& lab, const LabRun& run, const std::string& command);

/// Runs a program with arguments, stdout and stderr inherited, and `env` added to this process's
/// environment (for it alone); returns its exit status (128 + signal when killed by one). Throws
/// std::runtime_error when it cannot be started.
int run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace gpulab
