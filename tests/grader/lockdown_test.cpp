// The lockdown of a graded test process (gpulab/grader/lockdown.hpp), tried on this test's own
// process: ctest runs each test case in a process of its own, so each locks itself down.
#include "gpulab/grader/lockdown.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

extern char** environ;

namespace {

#define GPULAB_LOCK_DOWN(limits)                                                 \
  if (const auto why = gpulab::lockdown_unavailable()) {                         \
    GTEST_SKIP() << "a process cannot be locked down on this machine: " << *why; \
  }                                                                              \
  ASSERT_EQ(gpulab::lock_down(limits), std::nullopt) << "lockdown_unavailable said it could"

TEST(Lockdown, RefusesExec) {
  GPULAB_LOCK_DOWN(gpulab::LockdownLimits{});
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  errno = 0;
  EXPECT_EQ(execve("/bin/true", argv, environ), -1);
  EXPECT_EQ(errno, EPERM);
  errno = 0;
  EXPECT_EQ(execvp("true", argv), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(std::system("true"), 0) << "system() starts a shell";
}

TEST(Lockdown, RefusesNewProcessesButRunsThreads) {
  GPULAB_LOCK_DOWN(gpulab::LockdownLimits{});
  errno = 0;
  EXPECT_EQ(fork(), -1);
  EXPECT_EQ(errno, EPERM);
  pid_t child = 0;
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  EXPECT_NE(posix_spawn(&child, "/bin/true", nullptr, nullptr, argv, environ), 0);
  EXPECT_EQ(popen("true", "r"), nullptr);
  std::atomic<int> ran{0};
  std::thread first([&] { ++ran; });
  std::thread second([&] { ++ran; });
  first.join();
  second.join();
  EXPECT_EQ(ran.load(), 2) << "threads are how the sim runs blocks";
}

TEST(Lockdown, RefusesTracingAndSignallingOtherProcesses) {
  GPULAB_LOCK_DOWN(gpulab::LockdownLimits{});
  errno = 0;
  EXPECT_EQ(ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr), -1);
  EXPECT_EQ(errno, EPERM);
  errno = 0;
  EXPECT_EQ(kill(getppid(), 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(kill(-1, 0), -1) << "every process of the user";
  EXPECT_EQ(kill(0, 0), -1) << "the process group";
  EXPECT_EQ(kill(getpid(), 0), 0) << "itself";
  static std::atomic<int> caught{0};
  signal(SIGUSR1, [](int) { ++caught; });
  EXPECT_EQ(raise(SIGUSR1), 0) << "raise and abort signal the process itself";
  EXPECT_EQ(caught.load(), 1);
}

TEST(Lockdown, LowersTheLimitsItIsGiven) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  gpulab::LockdownLimits limits;
  limits.max_file_bytes = 4096;
  limits.max_open_files = 64;
  limits.max_cpu_s = 600;
  GPULAB_LOCK_DOWN(limits);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &now), 0);
  EXPECT_EQ(now.rlim_cur, 4096U);
  EXPECT_EQ(now.rlim_max, 4096U);
  ASSERT_EQ(getrlimit(RLIMIT_CPU, &now), 0);
  EXPECT_EQ(now.rlim_cur, 600U);
  EXPECT_EQ(now.rlim_max, 605U) << "SIGKILL 5 s after SIGXCPU";
  ASSERT_EQ(getrlimit(RLIMIT_CORE, &now), 0);
  EXPECT_EQ(now.rlim_max, 0U) << "no core file";
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, std::min<rlim_t>(before.rlim_cur, 64));

  signal(SIGXFSZ, SIG_IGN);
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  char block[8192] = {};
  EXPECT_LT(std::fwrite(block, 1, sizeof block, file), sizeof block) << "a file past 4096 bytes";
  std::fclose(file);

  // A limit is never raised.
  limits.max_file_bytes = 1 << 20;
  ASSERT_EQ(gpulab::lock_down(limits), std::nullopt);
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &now), 0);
  EXPECT_EQ(now.rlim_cur, 4096U);
}

TEST(Lockdown, GradedTestLimitsComeFromTheRunnersEnvironment) {
  ASSERT_EQ(setenv("GPULAB_LOCKDOWN_CPU_S", "240", 1), 0);
  ASSERT_EQ(setenv("GPULAB_LOCKDOWN_ADDRESS_SPACE_BYTES", "1073741824", 1), 0);
  gpulab::LockdownLimits limits = gpulab::graded_test_limits();
  EXPECT_EQ(limits.max_cpu_s, 240U);
  EXPECT_EQ(limits.max_address_space_bytes, 1073741824U);
  EXPECT_EQ(limits.max_file_bytes, 256U << 20);
  EXPECT_EQ(limits.max_open_files, 1024U);
  for (const char* bad : {"", "-1", "12s", "x"}) {
    ASSERT_EQ(setenv("GPULAB_LOCKDOWN_CPU_S", bad, 1), 0);
    EXPECT_EQ(gpulab::graded_test_limits().max_cpu_s, 0U) << "'" << bad << "' is no limit";
  }
  ASSERT_EQ(unsetenv("GPULAB_LOCKDOWN_CPU_S"), 0);
  EXPECT_EQ(gpulab::graded_test_limits().max_cpu_s, 0U);
}

}  // namespace
