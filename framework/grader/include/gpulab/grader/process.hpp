// Running a program: the grader's (untrusted, in its own process group, with a time limit, its
// output captured through a pipe) and the user's (a lab report, the viewer, ncu: on the terminal,
// with inherit_io); every process it started is killed when it ends.
//
// On Linux the caller becomes a "child subreaper" (prctl PR_SET_CHILD_SUBREAPER): a process that
// leaves its group (setsid) and whose parent exits is re-parented to the caller instead of init,
// so it is still found and killed. macOS has no subreaper: there the program's process group is
// killed, and a process that left it is not found (src/process_tree.hpp). A descendant that keeps
// the output pipe open cannot make the caller wait: the program's own exit (or its time limit) ends
// the run, not the pipe's end of file.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulab {

/// What to run and how.
struct ProcessSpec {
  std::vector<std::string> argv;                         ///< argv[0] is the program's path
  std::vector<std::pair<std::string, std::string>> env;  ///< set (added to the inherited ones)
  double timeout_s = 0;                                  ///< 0: no limit
  bool forward = false;                 ///< also copy the output to this process's stdout
  std::size_t keep_bytes = 256 * 1024;  ///< output kept (the first half and the last half)
  /// The program uses this process's stdin, stdout and stderr and stays in its process group (a
  /// terminal's Ctrl-C reaches both): nothing is captured. For programs the user runs, not for
  /// code under test.
  bool inherit_io = false;
  /// When set, the run ends as at its time limit once this becomes true (another thread, or a
  /// signal handler, sets it): everything it started is killed. Checked every 20 ms.
  const std::atomic<bool>* cancel = nullptr;
};

/// What happened.
struct ProcessResult {
  bool started = false;          ///< false: it could not be started (start_error says why)
  std::string start_error;       ///< e.g. "cannot start /x: No such file or directory"
  bool timed_out = false;        ///< killed at its time limit
  bool cancelled = false;        ///< killed because ProcessSpec::cancel became true
  std::optional<int> exit_code;  ///< when it exited
  std::optional<int> signal;     ///< when a signal ended it (not the time limit's SIGKILL)
  std::string output;            ///< stdout and stderr, interleaved; middle cut past keep_bytes
  std::size_t output_bytes = 0;  ///< everything it printed
  double duration_s = 0;         ///< wall time until it ended
  int strays_killed = 0;         ///< processes it left behind that were killed afterwards
};

/// Runs `spec` to completion (or its time limit) and kills everything it started. Never throws
/// for the program's behaviour; throws std::runtime_error only when this process cannot create
/// a pipe or fork.
[[nodiscard]] ProcessResult run_process(const ProcessSpec& spec);

/// The executable `name` in a folder of PATH, or nothing.
[[nodiscard]] std::optional<std::filesystem::path> find_on_path(const std::string& name);

/// "SIGSEGV (segmentation fault)" for SIGSEGV, and so on.
[[nodiscard]] std::string signal_description(int signal);

}  // namespace gpulab
