// Shared by tests that run a program as a user would: its exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpulab::testing {

struct Outcome {
  int exit_code = -1;  // 128 + signal number when a signal ended it
  std::string out;
  std::string err;
};

/// This test program, to run it again: the path it was started by, as GoogleTest's own death tests
/// run it again (so that a program started through a wrapper, an emulator's for one, is run again
/// through it: scripts/check-arm64), else /proc/self/exe.
inline std::filesystem::path self_program() {
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  if (!argv.empty() && argv[0].find('/') != std::string::npos && std::filesystem::exists(argv[0])) {
    return std::filesystem::absolute(argv[0]);
  }
  return std::filesystem::read_symlink("/proc/self/exe");
}

/// `text` quoted for the shell.
inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

/// Runs `command` through the shell; stdout and stderr are captured separately.
inline Outcome run_command(const std::string& command) {
  const std::filesystem::path err_path =
      std::filesystem::temp_directory_path() / ("gpulab_test_stderr_" + std::to_string(::getpid()));
  Outcome run;
  FILE* pipe = popen((command + " 2>" + shell_quote(err_path.string())).c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed for " << command;
    return run;
  }
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) {
    run.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  run.err = err.str();
  std::filesystem::remove(err_path);
  return run;
}

}  // namespace gpulab::testing
