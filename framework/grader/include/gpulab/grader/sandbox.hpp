// The sandbox a graded test runs in, where Debian's bubblewrap (`bwrap`) is installed and works.
// It is built from an allowlist, not from the machine: the system's programs and libraries
// (/usr and the top-level links into it) and the few files of /etc that the dynamic loader and C
// library read, all read-only; the files and folders the caller names (the test program, the
// lab's data), read-only; the test's own results folder, the one place it can write; a private
// /tmp; basic devices (and the GPU's); no network; its own PID namespace and session (no terminal
// to write into). Nothing else of the machine is there: not the source tree, the build, other
// grading slots, the solutions, hidden tests, seals or other users' files. Code under test can
// then change neither the grader, nor the build, nor the seal, nor the next submission's grade,
// and cannot read what it is not given.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/grader/process.hpp"

namespace gpulab {

/// What a sandboxed program sees beyond the system's read-only programs and libraries.
struct SandboxSpec {
  /// Files and folders shown read-only (they must exist; they may live under /tmp).
  std::vector<std::filesystem::path> visible;
  /// Folders inside visible ones shown empty and read-only; those that do not exist are left
  /// out.
  std::vector<std::filesystem::path> hidden;
  /// Folders the program may write (bound read-write; they must exist).
  std::vector<std::filesystem::path> writable;
};

/// Why programs cannot run in the sandbox on this machine, with what to do ("bubblewrap (bwrap)
/// is not installed; ...", or what bwrap said when it could not start); nullopt when they can.
/// Found once per process, by running `true` in the sandbox.
[[nodiscard]] std::optional<std::string> sandbox_unavailable();

/// `argv` as a command that runs it in the sandbox; argv[0] must be an absolute path. Throws
/// std::runtime_error when bwrap is not on PATH.
[[nodiscard]] std::vector<std::string> sandboxed_command(const SandboxSpec& spec,
                                                         const std::vector<std::string>& argv);

/// bwrap ends with status 128 + N when the program inside was ended by signal N: `result` as if
/// the program had run outside (signal N, no exit code).
void read_sandboxed_status(ProcessResult& result);

}  // namespace gpulab
