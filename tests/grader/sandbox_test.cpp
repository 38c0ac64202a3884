// The sandbox graded tests run in (gpulab/grader/sandbox.hpp): the command it builds, and what a
// program inside can and cannot do, tried with /bin/sh.
#include "gpulab/grader/sandbox.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpulab/grader/process.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::ProcessResult;
using gpulab::ProcessSpec;
using gpulab::SandboxSpec;
using gpulab::testing::TempDir;
using Lines = std::vector<std::string>;

// Where `needle` starts in `haystack`, or -1.
long find_run(const Lines& haystack, const Lines& needle) {
  const auto at = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end());
  return at == haystack.end() ? -1 : static_cast<long>(at - haystack.begin());
}

#define GPULAB_REQUIRE_SANDBOX()                             \
  if (const auto why = gpulab::sandbox_unavailable()) {      \
    GTEST_SKIP() << "the sandbox cannot run here: " << *why; \
  }

TEST(SandboxedCommand, MountsInOrderAndEndsWithTheProgram) {
  if (!gpulab::find_on_path("bwrap")) {
    EXPECT_THROW((void)gpulab::sandboxed_command({}, {"/bin/true"}), std::runtime_error);
    GTEST_SKIP() << "bubblewrap (bwrap) is not installed: only the error was checked";
  }
  const TempDir dir("gpulab-sandbox-command");
  fs::create_directories(dir.path() / "hidden");
  SandboxSpec spec;
  spec.visible = {dir.path()};
  spec.hidden = {dir.path() / "hidden", dir.path() / "absent"};
  spec.writable = {dir.path() / "out"};
  const Lines command = gpulab::sandboxed_command(spec, {"/bin/echo", "a b"});
  ASSERT_FALSE(command.empty());
  EXPECT_EQ(fs::path(command.front()).filename(), "bwrap");
  const std::string visible = dir.path().string();
  const std::string hidden = (dir.path() / "hidden").string();
  const std::string out = (dir.path() / "out").string();
  EXPECT_EQ(find_run(command, {"--ro-bind", "/", "/"}), -1) << "not the whole machine";
  const long system = find_run(command, {"--ro-bind", "/usr", "/usr"});
  const long tmp = find_run(command, {"--tmpfs", "/tmp"});
  const long shown = find_run(command, {"--ro-bind", visible, visible});
  const long emptied = find_run(command, {"--tmpfs", hidden, "--remount-ro", hidden});
  const long bound = find_run(command, {"--bind", out, out});
  EXPECT_TRUE(system >= 0 && system < tmp && tmp < shown && shown < emptied && emptied < bound)
      << "later mounts cover earlier ones: /usr read-only, /tmp, the visible trees, the hidden "
         "folders, the writable ones";
  EXPECT_EQ(find_run(command, {"--tmpfs", (dir.path() / "absent").string()}), -1)
      << "a hidden folder that does not exist is left out";
  for (const char* option : {"--unshare-all", "--new-session", "--die-with-parent"}) {
    EXPECT_NE(std::find(command.begin(), command.end(), option), command.end()) << option;
  }
  EXPECT_EQ(Lines(command.end() - 3, command.end()), (Lines{"--", "/bin/echo", "a b"}));
  EXPECT_THROW((void)gpulab::sandboxed_command(spec, {"echo"}), std::invalid_argument)
      << "a program without an absolute path";
}

TEST(SandboxStatus, AnExitStatusAbove128IsTheSignalThatEndedTheProgram) {
  ProcessResult crashed;
  crashed.exit_code = 128 + SIGSEGV;
  gpulab::read_sandboxed_status(crashed);
  EXPECT_FALSE(crashed.exit_code.has_value());
  EXPECT_EQ(crashed.signal, SIGSEGV);
  for (const int code : {0, 1, 77, 128}) {
    ProcessResult exited;
    exited.exit_code = code;
    gpulab::read_sandboxed_status(exited);
    EXPECT_EQ(exited.exit_code, code);
    EXPECT_FALSE(exited.signal.has_value()) << code;
  }
}

// A program in the sandbox: everything read-only but its folder, answers out of sight, a
// private /tmp, no network.
class InTheSandbox : public ::testing::Test {
 protected:
  InTheSandbox() {
    fs::create_directories(dir_.path() / "tree/solutions");
    fs::create_directories(dir_.path() / "tree/out");
    std::ofstream(dir_.path() / "tree/solutions/answer.cpp") << "the answer\n";
    std::ofstream(dir_.path() / "tree/kept.txt") << "kept\n";
    spec_.visible = {dir_.path() / "tree"};
    spec_.hidden = {dir_.path() / "tree/solutions"};
    spec_.writable = {dir_.path() / "tree/out"};
  }

  // Runs `script` with /bin/sh in the sandbox; its output and status.
  ProcessResult run(const std::string& script) const {
    ProcessSpec process;
    process.argv = gpulab::sandboxed_command(spec_, {"/bin/sh", "-c", script});
    process.timeout_s = 20;
    ProcessResult result = gpulab::run_process(process);
    gpulab::read_sandboxed_status(result);
    return result;
  }

  [[nodiscard]] std::string tree() const { return (dir_.path() / "tree").string(); }

  TempDir dir_{"gpulab-sandbox"};
  SandboxSpec spec_;
};

TEST_F(InTheSandbox, WritesOnlyItsOwnFolder) {
  GPULAB_REQUIRE_SANDBOX();
  const ProcessResult result =
      run("echo x > '" + tree() + "/out/result.xml' && cat '" + tree() +
          "/kept.txt' && ! echo y > '" + tree() + "/kept.txt' && ! touch '" + tree() +
          "/new' && ! touch " + fs::read_symlink("/proc/self/exe").string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(fs::exists(dir_.path() / "tree/out/result.xml"));
  EXPECT_FALSE(fs::exists(dir_.path() / "tree/new"));
  std::ifstream kept(dir_.path() / "tree/kept.txt");
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "kept");
}

TEST_F(InTheSandbox, SeesTheSystemButNothingElseOfTheMachine) {
  GPULAB_REQUIRE_SANDBOX();
  // This test's working folder (the build) and its source tree are not given to the sandbox.
  const std::string here = fs::current_path().string();
  const std::string source = fs::path(__FILE__).parent_path().string();
  const ProcessResult result =
      run("test -x /bin/sh && test -r /etc/passwd && test -e /usr/lib && test ! -e '" + here +
          "' && test ! -e '" + source + "' && test ! -e /etc/shadow && test ! -e /root/. && " +
          "test ! -e /home/.");
  EXPECT_EQ(result.exit_code, 0) << "expected /usr, /bin and /etc/passwd, and not " << here << ", "
                                 << source << ", /etc/shadow, /root or /home:\n"
                                 << result.output;
}

TEST_F(InTheSandbox, SeesHiddenFoldersEmpty) {
  GPULAB_REQUIRE_SANDBOX();
  const ProcessResult result = run("ls -A '" + tree() + "/solutions'; cat '" + tree() +
                                   "/solutions/answer.cpp' 2>&1; exit 0");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("the answer"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("answer.cpp\n"), std::string::npos) << "listed: " << result.output;
}

TEST_F(InTheSandbox, HasAPrivateTmpAndNoNetwork) {
  GPULAB_REQUIRE_SANDBOX();
  const TempDir outside("gpulab-sandbox-outside");
  if (!outside.path().string().starts_with("/tmp/")) {
    GTEST_SKIP() << "the temporary folder is not in /tmp (TMPDIR): " << outside.path();
  }
  std::ofstream(outside.path() / "secret") << "secret\n";
  const fs::path scratch = outside.path().string() + "-scratch";  // written inside only
  const ProcessResult result =
      run("test ! -e '" + (outside.path() / "secret").string() + "' && echo mine > '" +
          scratch.string() + "' && cat '" + scratch.string() +
          "' && test \"$(grep -cv -e '^ *lo:' -e '|' /proc/net/dev)\" = 0");
  EXPECT_EQ(result.exit_code, 0) << "expected no file of the machine's /tmp, a writable /tmp "
                                    "of its own and no network interface but lo:\n"
                                 << result.output;
  EXPECT_FALSE(fs::exists(scratch)) << "the sandbox's /tmp leaked into the machine's";
}

TEST_F(InTheSandbox, PassesTheExitStatusAndTheSignal) {
  GPULAB_REQUIRE_SANDBOX();
  EXPECT_EQ(run("exit 3").exit_code, 3);
  const ProcessResult killed = run("kill -SEGV $$");
  EXPECT_EQ(killed.signal, SIGSEGV) << killed.output;
}

}  // namespace
