// The exit codes of gpulab's programs, and the error a user can fix (exit code kUsage): the
// `gpulab` command returns them, and the grading workflow (framework/grader) reads them back from
// the gradings it starts.
#pragma once

#include <stdexcept>

namespace gpulab {

/// Exit codes of every gpulab command (`gpulab run LAB` returns the lab program's own).
enum ExitCode : int {
  kSuccess = 0,
  kFailure = 1,
  kUsage = 2,             ///< bad arguments
  kIntegrityFailure = 3,  ///< `gpulab grade`: the instructor files differ from the seal
  kInterrupted = 130,     ///< `gpulab grade --roster` interrupted by SIGINT or SIGTERM (128 +
                          ///< SIGINT, as a shell reports it)
};

/// An error the user can fix: printed as one line "gpulab: error: <message>", exit code kUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpulab
