// Unit tests of process.hpp (the grader's way to run untrusted programs), on /bin/sh scripts:
// exit status, signals, the time limit, processes that escape into their own session and keep the
// output open, output capture, the environment, and a program that cannot be started.
#include "gpulab/grader/process.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "process_tree.hpp"
#include "text_match.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

using gpulab::testing::contains;

ProcessSpec shell(const std::string& script, double timeout_s = 20) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.timeout_s = timeout_s;
  return spec;
}

// The pids of the processes with `marker` as one of their arguments.
std::vector<int> processes_with_argument(const std::string& marker) {
  std::vector<int> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // Arguments are separated (and ended) by NUL bytes.
    std::size_t begin = 0;
    for (std::size_t end = cmdline.find('\0'); end != std::string::npos;
         begin = end + 1, end = cmdline.find('\0', begin)) {
      if (cmdline.compare(begin, end - begin, marker) == 0) {
        found.push_back(std::stoi(name));
        break;
      }
    }
  }
  return found;
}

TEST(RunProcess, ReportsTheExitStatus) {
  for (const int code : {0, 1, 3, 77, 255}) {
    const ProcessResult result = run_process(shell("exit " + std::to_string(code)));
    EXPECT_TRUE(result.started) << result.start_error;
    ASSERT_TRUE(result.exit_code.has_value()) << "exit " << code;
    EXPECT_EQ(*result.exit_code, code);
    EXPECT_FALSE(result.signal.has_value());
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.strays_killed, 0);
  }
}

TEST(RunProcess, ReportsTheSignalThatEndedIt) {
  const ProcessResult result = run_process(shell("kill -SEGV $$"));
  EXPECT_TRUE(result.started) << result.start_error;
  ASSERT_TRUE(result.signal.has_value()) << "exit code " << result.exit_code.value_or(-1);
  EXPECT_EQ(*result.signal, SIGSEGV);
  EXPECT_FALSE(result.exit_code.has_value());
  EXPECT_FALSE(result.timed_out);
}

TEST(RunProcess, KillsItAtTheTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult result = run_process(shell("echo started; sleep 30", 0.5));
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(result.started);
  EXPECT_TRUE(result.timed_out);
  EXPECT_LT(elapsed, 5.0);
  EXPECT_GE(result.duration_s, 0.5);
  EXPECT_LT(result.duration_s, 5.0);
  EXPECT_FALSE(result.exit_code.has_value()) << "the time limit's kill is not an exit";
  EXPECT_FALSE(result.signal.has_value()) << "the time limit's SIGKILL is not the program's";
  EXPECT_TRUE(contains(result.output, "started")) << result.output;
}

TEST(RunProcess, ACancelledRunIsKilledWithEverythingItStarted) {
  const std::string marker = "31." + std::to_string(getpid());  // a sleep found by its argument
  std::atomic<bool> cancel{false};
  ProcessSpec spec = shell("sleep " + marker + " & echo started; sleep 30", 0);
  spec.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult result = run_process(spec);
  canceller.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(result.cancelled);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.exit_code.has_value()) << "the cancel's kill is not an exit";
  EXPECT_LT(elapsed, 5.0);
  EXPECT_TRUE(contains(result.output, "started")) << result.output;
  EXPECT_TRUE(processes_with_argument(marker).empty()) << "the background sleep survived";
}

TEST(RunProcess, KillsAnEscapedProcessThatKeepsTheOutputOpen) {
  // A grandchild leaves the process group (setsid) and holds stdout while its parent exits: the
  // run must end with the parent, and the grandchild must not outlive it. The marker is an
  // argument of the escaped shell ($0 of sh -c) and the sleep's duration, so /proc shows both.
  const std::string id =
      std::to_string(getpid()) +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
  const std::string marker = "gpulab-process-test-" + id;
  const std::string duration = "300." + id;
  // The parent waits for the escaped shell's flag file, so it has left the group by then.
  const fs::path flag = fs::temp_directory_path() / (marker + ".flag");
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult result = run_process(shell(
      "setsid /bin/sh -c 'echo escaped; touch " + flag.string() + "; sleep " + duration + "; :' " +
          marker + " & while [ ! -e " + flag.string() + " ]; do sleep 0.02; done; echo parent done",
      20));
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::remove(flag);
  EXPECT_LT(elapsed, 5.0) << "run_process returned only after the escaped process's output ended";
  EXPECT_TRUE(result.started);
  EXPECT_FALSE(result.timed_out);
  ASSERT_TRUE(result.exit_code.has_value());
  EXPECT_EQ(*result.exit_code, 0);
  EXPECT_LT(result.duration_s, 5.0);
  EXPECT_GE(result.strays_killed, 1);
  EXPECT_TRUE(contains(result.output, "escaped\n")) << result.output;
  EXPECT_TRUE(contains(result.output, "parent done\n")) << result.output;
  EXPECT_TRUE(processes_with_argument(marker).empty()) << marker << " is still running";
  EXPECT_TRUE(processes_with_argument(duration).empty())
      << "sleep " << duration << " is still running";
}

TEST(RunProcess, TheMarkerScanFindsALiveProcess) {
  // The checks above would pass vacuously if the scan could not see an argument: it can.
  const std::string marker = "30." + std::to_string(getpid());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execlp("sleep", "sleep", marker.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<int> found;
  for (int i = 0; i < 200 && found.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    found = processes_with_argument(marker);
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(found, std::vector<int>{pid});
  EXPECT_TRUE(processes_with_argument(marker).empty());
}

TEST(RunProcess, KillsBackgroundProcessesOfItsGroup) {
  const std::string marker = "gpulab-process-test-bg-" + std::to_string(getpid());
  const ProcessResult result =
      run_process(shell("/bin/sh -c 'sleep 300; :' " + marker + " & exit 4", 20));
  ASSERT_TRUE(result.exit_code.has_value());
  EXPECT_EQ(*result.exit_code, 4);
  EXPECT_LT(result.duration_s, 5.0);
  EXPECT_GE(result.strays_killed, 1);
  EXPECT_TRUE(processes_with_argument(marker).empty()) << marker << " is still running";
}

TEST(RunProcess, CountsEachStrayOnce) {
  // Eight processes left behind, killed with the group: each is counted, once, however fast the
  // group's SIGKILL reaps them.
  const std::string duration = "300." + std::to_string(getpid()) + "7";
  for (int round = 0; round < 5; ++round) {
    const ProcessResult result = run_process(
        shell("for i in 1 2 3 4 5 6 7 8; do sleep " + duration + " & done; exit 0", 20));
    EXPECT_EQ(result.strays_killed, 8) << "round " << round;
    EXPECT_TRUE(processes_with_argument(duration).empty()) << "round " << round;
  }
}

TEST(RunProcess, RunsInOtherThreadsAreLeftAlone) {
  // `gpulab grade` runs several tests at once, one thread each: one run's clean-up (killing and
  // reaping what it left behind) must neither kill nor reap another run's program.
  const std::string duration = "300." + std::to_string(getpid()) + "9";
  ProcessResult slow;
  std::thread other([&] { slow = run_process(shell("sleep 1.5; echo slow done; exit 3", 20)); });
  std::vector<int> strays;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
    strays.push_back(run_process(shell("sleep " + duration + " & exit 0", 20)).strays_killed);
  }
  other.join();
  ASSERT_TRUE(slow.exit_code.has_value()) << "the other thread's run was killed or reaped";
  EXPECT_EQ(*slow.exit_code, 3);
  EXPECT_TRUE(contains(slow.output, "slow done")) << slow.output;
  EXPECT_EQ(slow.strays_killed, 0);
  ASSERT_FALSE(strays.empty());
  for (const int count : strays) {
    EXPECT_EQ(count, 1) << "each quick run leaves exactly one process behind";
  }
  EXPECT_TRUE(processes_with_argument(duration).empty());
}

TEST(RunProcess, AProcessThatEndsAMomentAfterTheProgramWasNotLeftRunning) {
  // As a sandbox's init does: it ends by itself just after the program, and is no stray.
  const ProcessResult brief = run_process(shell("sleep 0.02 & exit 0", 20));
  EXPECT_EQ(brief.exit_code, 0);
  EXPECT_EQ(brief.strays_killed, 0);
  const ProcessResult lasting = run_process(shell("sleep 30 & exit 0", 20));
  EXPECT_EQ(lasting.strays_killed, 1) << "one that is still running after the grace is";
}

TEST(RunProcess, CapturesStdoutAndStderr) {
  const ProcessResult result = run_process(shell("echo to-stdout; echo to-stderr >&2"));
  EXPECT_TRUE(contains(result.output, "to-stdout\n")) << result.output;
  EXPECT_TRUE(contains(result.output, "to-stderr\n")) << result.output;
  EXPECT_EQ(result.output_bytes, result.output.size());
}

TEST(RunProcess, KeepsTheHeadAndTheTailOfLongOutput) {
  // 5000 lines of 10 bytes ("line NNNN\n"), 1000 bytes kept: 500 from the start, 500 from the end.
  ProcessSpec spec =
      shell("i=0; while [ $i -lt 5000 ]; do printf 'line %04d\\n' $i; i=$((i+1)); done");
  spec.keep_bytes = 1000;
  const ProcessResult result = run_process(spec);
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output_bytes, 50000u);
  EXPECT_EQ(result.output.rfind("line 0000\nline 0001\n", 0), 0u) << result.output;
  EXPECT_TRUE(result.output.ends_with("line 4998\nline 4999\n")) << result.output;
  EXPECT_TRUE(contains(result.output, "[... 49000 bytes of output left out ...]")) << result.output;
  EXPECT_TRUE(contains(result.output, "line 0049\n")) << "the head is 500 bytes";
  EXPECT_FALSE(contains(result.output, "line 0050\n")) << "the head is 500 bytes";
  EXPECT_TRUE(contains(result.output, "line 4950\n")) << "the tail is 500 bytes";
  EXPECT_FALSE(contains(result.output, "line 4949\n")) << "the tail is 500 bytes";
  EXPECT_LT(result.output.size(), 1100u);
}

TEST(RunProcess, OutputWithinTheBudgetIsKeptWhole) {
  ProcessSpec spec = shell("printf '0123456789'");
  spec.keep_bytes = 10;
  const ProcessResult result = run_process(spec);
  EXPECT_EQ(result.output, "0123456789");
  EXPECT_EQ(result.output_bytes, 10u);
}

TEST(RunProcess, PassesTheEnvironment) {
  setenv("GPULAB_PROCESS_TEST_INHERITED", "inherited", 1);
  setenv("GPULAB_PROCESS_TEST_REPLACED", "old", 1);
  ProcessSpec spec = shell(
      "echo \"[$GPULAB_PROCESS_TEST_VAR] [$GPULAB_PROCESS_TEST_REPLACED] "
      "[$GPULAB_PROCESS_TEST_INHERITED]\"; env | grep -c '^GPULAB_PROCESS_TEST_REPLACED='");
  spec.env = {{"GPULAB_PROCESS_TEST_VAR", "a value with spaces"},
              {"GPULAB_PROCESS_TEST_REPLACED", "new"}};
  const ProcessResult result = run_process(spec);
  unsetenv("GPULAB_PROCESS_TEST_INHERITED");
  unsetenv("GPULAB_PROCESS_TEST_REPLACED");
  EXPECT_EQ(result.output, "[a value with spaces] [new] [inherited]\n1\n")
      << "the given variables are set (replacing inherited ones) and the others are inherited";
}

TEST(RunProcess, AMissingProgramIsNotStarted) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/gpulab-no-such-program", "--flag"};
  const ProcessResult result = run_process(spec);
  EXPECT_FALSE(result.started);
  EXPECT_TRUE(contains(result.start_error, "/nonexistent/gpulab-no-such-program"))
      << result.start_error;
  EXPECT_TRUE(contains(result.start_error, "No such file")) << result.start_error;
  EXPECT_FALSE(result.exit_code.has_value());
}

// User and system CPU seconds this process has used.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

TEST(RunProcess, AProgramThatClosesItsOutputIsWaitedForWithoutSpinning) {
  const double cpu_before = cpu_seconds();
  const ProcessResult result = run_process(shell("echo before; exec >&- 2>&-; sleep 1; exit 5"));
  const double cpu = cpu_seconds() - cpu_before;
  ASSERT_TRUE(result.exit_code.has_value());
  EXPECT_EQ(*result.exit_code, 5);
  EXPECT_GE(result.duration_s, 1.0);
  EXPECT_EQ(result.output, "before\n");
  // Waiting is sleeping: a loop of waitpid calls would burn about a second of CPU here.
  EXPECT_LT(cpu, 0.5) << "CPU seconds used while waiting 1 s for the program";
}

TEST(RunProcess, NoProgramIsAnInvalidArgument) {
  EXPECT_THROW((void)run_process(ProcessSpec{}), std::invalid_argument);
}

TEST(RunProcess, InheritedOutputIsNotCapturedAndTheProgramStaysInThisProcessGroup) {
  const fs::path file = fs::temp_directory_path() / ("gpulab_inherit_" + std::to_string(getpid()));
  // Field 5 of /proc/PID/stat is the process group (field 2, "(sh)", has no space).
  ProcessSpec spec = shell("read -r _ _ _ _ pgid _ < /proc/$$/stat; echo $pgid > '" +
                           file.string() + "'; echo to-the-terminal; exit 3");
  spec.inherit_io = true;
  const ProcessResult result = run_process(spec);
  EXPECT_TRUE(result.started) << result.start_error;
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_TRUE(result.output.empty()) << result.output;
  std::ifstream in(file);
  int pgid = 0;
  in >> pgid;
  EXPECT_EQ(pgid, getpgrp());  // so a terminal's Ctrl-C reaches it
  fs::remove(file);

  spec.argv = {"/no/such/program"};
  const ProcessResult missing = run_process(spec);
  EXPECT_FALSE(missing.started);
  EXPECT_TRUE(contains(missing.start_error, "cannot start /no/such/program: No such file"))
      << missing.start_error;
}

TEST(SignalDescription, NamesTheSignal) {
  EXPECT_EQ(signal_description(SIGSEGV), "SIGSEGV (segmentation fault)");
  EXPECT_EQ(signal_description(SIGKILL), "SIGKILL (killed)");
  EXPECT_EQ(signal_description(SIGABRT), "SIGABRT (aborted)");
  EXPECT_EQ(signal_description(12345), "signal 12345");
}

#if defined(__GLIBC__)
// The names are the C library's, where it has a function that gives them (glibc 2.32+), for every
// classic signal; the descriptions its, lower case but for abbreviations.
TEST(SignalDescription, AgreesWithTheCLibrary) {
  for (int signal = 1; signal < 32; ++signal) {
    const char* abbrev = sigabbrev_np(signal);
    const std::string ours = signal_description(signal);
    if (abbrev == nullptr || ours.starts_with("signal ")) {
      continue;  // Linux's SIGSTKFLT and SIGPWR are not POSIX's
    }
    // glibc names signal 29 SIGPOLL, System V's name; POSIX and macOS call it SIGIO.
    const std::string name = std::strcmp(abbrev, "POLL") == 0 ? "IO" : abbrev;
    EXPECT_TRUE(ours.starts_with("SIG" + name + " (")) << signal << ": " << ours;
    std::string theirs = sigdescr_np(signal);
    std::string lower = ours.substr(ours.find('(') + 1);
    lower.pop_back();
    for (std::string* text : {&theirs, &lower}) {
      for (char& c : *text) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    EXPECT_EQ(lower, theirs) << signal;
  }
}
#endif

// The platform's answers (framework/grader/src/process_tree.hpp).
TEST(ProcessTree, ListsTheChildrenUntilReaped) {
#if defined(__linux__)
  EXPECT_TRUE(detail::adopt_orphans());
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const auto listed = [&] {
    const std::vector<pid_t> children = detail::children_of(getpid());
    return std::find(children.begin(), children.end(), child) != children.end();
  };
  EXPECT_TRUE(listed());
  EXPECT_TRUE(detail::children_of(child).empty());
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(listed());
}

TEST(FindOnPath, FindsAnExecutableInAFolderOfPath) {
  const char* saved = std::getenv("PATH");
  const std::string original = saved == nullptr ? "" : saved;
  const fs::path dir =
      fs::temp_directory_path() / ("gpulab-find-on-path-" + std::to_string(getpid()));
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin/tool") << "#!/bin/sh\n";
  std::ofstream(dir / "bin/notes") << "not a program\n";
  fs::permissions(dir / "bin/tool", fs::perms::owner_all);
  fs::permissions(dir / "bin/notes", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_directories(dir / "bin/folder");
  setenv("PATH", ("/nonexistent:" + (dir / "bin").string()).c_str(), 1);
  const std::optional<fs::path> tool = find_on_path("tool");
  const std::optional<fs::path> notes = find_on_path("notes");
  const std::optional<fs::path> folder = find_on_path("folder");
  const std::optional<fs::path> missing = find_on_path("gpulab-no-such-program");
  setenv("PATH", original.c_str(), 1);
  fs::remove_all(dir);
  EXPECT_EQ(tool, dir / "bin/tool");
  EXPECT_FALSE(notes.has_value()) << "not executable";
  EXPECT_FALSE(folder.has_value()) << "a folder is not a program";
  EXPECT_FALSE(missing.has_value());
}

}  // namespace
}  // namespace gpulab
