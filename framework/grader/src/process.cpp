#include "gpulab/grader/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "process_tree.hpp"

extern char** environ;

namespace gpulab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The direct children of the run_process calls in progress, in any thread: one run's clean-up
// must not kill or reap another run's program. Held across fork, so a child is registered
// before any other run can see it.
std::mutex runs_mutex;
std::set<pid_t> running;

// Reaps `pid` if it has ended (its exit status to `status`), and takes it off the runs in
// progress while no other run can fork: until it is reaped its pid cannot be reused.
bool reap(pid_t pid, int& status) {
  const std::lock_guard lock(runs_mutex);
  if (waitpid(pid, &status, WNOHANG) != pid) {
    return false;
  }
  running.erase(pid);
  return true;
}

// This process's children that belong to no other run in progress: `child` and the strays the
// subreaper inherited.
std::vector<pid_t> children_of_run(pid_t child) {
  std::vector<pid_t> mine;
  const std::lock_guard lock(runs_mutex);
  for (const pid_t pid : detail::children_of(getpid())) {
    if (pid == child || !running.contains(pid)) {
      mine.push_back(pid);
    }
  }
  return mine;
}

// How long a process the program left behind may take to end by itself before it counts as
// left running.
constexpr double kGraceMs = 100;

// Kills the run's direct child and every stray the subreaper inherited (processes of no other run
// in progress), reaps them, and repeats until none is left: killing a stray re-parents its own
// children here. `child` leads its own process group. Returns how many were killed besides
// `child`.
int kill_descendants(pid_t child) {
  // A process killed in one round may still be listed in the next (not yet dead, or a zombie not
  // yet reaped): each counts once. The orphans already here are counted before the group is
  // killed, or those of the run's own group could die and be reaped uncounted.
  std::set<pid_t> strays;
  // A process that ends a moment after the program (a sandbox's init, reaped by the sandbox's
  // own monitor a little later) was not left running: it gets kGraceMs to end by itself.
  const Clock::time_point grace_start = Clock::now();
  std::vector<pid_t> orphans;
  do {
    orphans.clear();
    for (const pid_t pid : children_of_run(child)) {
      int status = 0;
      if (pid != child && !reap(pid, status)) {  // a stray that already ended is not killed
        orphans.push_back(pid);
      }
    }
    if (!orphans.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } while (!orphans.empty() && seconds_since(grace_start) * 1e3 < kGraceMs);
  strays.insert(orphans.begin(), orphans.end());
  kill(-child, SIGKILL);
  const Clock::time_point start = Clock::now();
  while (seconds_since(start) < 10) {
    const std::vector<pid_t> children = children_of_run(child);
    if (children.empty()) {
      break;
    }
    for (const pid_t pid : children) {
      const pid_t pgid = getpgid(pid);
      if (pgid > 0 && pgid != getpgrp()) {
        kill(-pgid, SIGKILL);
      }
      kill(pid, SIGKILL);
      int status = 0;
      reap(pid, status);
      if (pid != child) {
        strays.insert(pid);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return static_cast<int>(strays.size());
}

// Output kept for the verdict: the first half of the budget, then the latest bytes.
class OutputKeeper {
 public:
  explicit OutputKeeper(std::size_t budget) : head_limit_(budget / 2), tail_limit_(budget / 2) {}

  void add(std::string_view data) {
    total_ += data.size();
    if (head_.size() < head_limit_) {
      const std::size_t take = std::min(data.size(), head_limit_ - head_.size());
      head_.append(data.substr(0, take));
      data.remove_prefix(take);
    }
    tail_.append(data);
    if (tail_.size() > 2 * tail_limit_) {
      tail_.erase(0, tail_.size() - tail_limit_);
    }
  }

  [[nodiscard]] std::string text() const {
    if (total_ <= head_limit_ + tail_limit_) {
      return head_ + tail_;
    }
    const std::string_view tail =
        std::string_view(tail_).substr(tail_.size() > tail_limit_ ? tail_.size() - tail_limit_ : 0);
    return head_ + "\n[... " + std::to_string(total_ - head_.size() - tail.size()) +
           " bytes of output left out ...]\n" + std::string(tail);
  }
  [[nodiscard]] std::size_t total() const { return total_; }

 private:
  std::size_t head_limit_;
  std::size_t tail_limit_;
  std::string head_;
  std::string tail_;
  std::size_t total_ = 0;
};

// A pipe whose ends close on exec. Without pipe2 (macOS), another thread's fork between pipe()
// and fcntl() could inherit them; run_process's own forks cannot (they hold runs_mutex).
bool open_pipe(int fds[2]) {
#if defined(__linux__)
  return pipe2(fds, O_CLOEXEC) == 0;
#else
  const std::lock_guard lock(runs_mutex);
  if (pipe(fds) != 0) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    fcntl(fds[i], F_SETFD, FD_CLOEXEC);
  }
  return true;
#endif
}

void forward(std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = write(STDOUT_FILENO, data.data(), data.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      return;  // nobody reads our stdout any more: the run goes on
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

std::string signal_description(int signal) {
  // POSIX's signals, described as the C library describes them (its own functions for it,
  // sigabbrev_np and sigdescr_np, are glibc's).
  struct Known {
    int number;
    const char* name;
    const char* description;
  };
  static constexpr Known kKnown[] = {
      {SIGHUP, "SIGHUP", "hangup"},
      {SIGINT, "SIGINT", "interrupt"},
      {SIGQUIT, "SIGQUIT", "quit"},
      {SIGILL, "SIGILL", "illegal instruction"},
      {SIGTRAP, "SIGTRAP", "trace/breakpoint trap"},
      {SIGABRT, "SIGABRT", "aborted"},
      {SIGBUS, "SIGBUS", "bus error"},
      {SIGFPE, "SIGFPE", "floating point exception"},
      {SIGKILL, "SIGKILL", "killed"},
      {SIGUSR1, "SIGUSR1", "user defined signal 1"},
      {SIGSEGV, "SIGSEGV", "segmentation fault"},
      {SIGUSR2, "SIGUSR2", "user defined signal 2"},
      {SIGPIPE, "SIGPIPE", "broken pipe"},
      {SIGALRM, "SIGALRM", "alarm clock"},
      {SIGTERM, "SIGTERM", "terminated"},
      {SIGCHLD, "SIGCHLD", "child exited"},
      {SIGCONT, "SIGCONT", "continued"},
      {SIGSTOP, "SIGSTOP", "stopped (signal)"},
      {SIGTSTP, "SIGTSTP", "stopped"},
      {SIGTTIN, "SIGTTIN", "stopped (tty input)"},
      {SIGTTOU, "SIGTTOU", "stopped (tty output)"},
      {SIGURG, "SIGURG", "urgent I/O condition"},
      {SIGXCPU, "SIGXCPU", "CPU time limit exceeded"},
      {SIGXFSZ, "SIGXFSZ", "file size limit exceeded"},
      {SIGVTALRM, "SIGVTALRM", "virtual timer expired"},
      {SIGPROF, "SIGPROF", "profiling timer expired"},
      {SIGWINCH, "SIGWINCH", "window changed"},
      {SIGIO, "SIGIO", "I/O possible"},
      {SIGSYS, "SIGSYS", "bad system call"},
  };
  for (const Known& known : kKnown) {
    if (known.number == signal) {
      return std::string(known.name) + " (" + known.description + ")";
    }
  }
  return "signal " + std::to_string(signal);
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    std::error_code error;
    if (::access(candidate.c_str(), X_OK) == 0 &&
        std::filesystem::is_regular_file(candidate, error)) {
      return candidate;
    }
  }
  return std::nullopt;
}

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw std::invalid_argument("run_process: no program");
  }
  ProcessResult result;
  // Orphans of the run come back here rather than to init, where the platform can.
  detail::adopt_orphans();

  // Everything the child needs, prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [key, value] : spec.env) {
      replaced = replaced ||
                 (entry.starts_with(key) && entry.size() > key.size() && entry[key.size()] == '=');
    }
    if (!replaced) {
      env_storage.emplace_back(entry);
    }
  }
  for (const auto& [key, value] : spec.env) {
    env_storage.push_back(key + "=" + value);
  }
  std::vector<char*> envp;
  for (std::string& entry : env_storage) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> arg_storage = spec.argv;
  std::vector<char*> argv;
  for (std::string& arg : arg_storage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  const std::string start_failed = "cannot start " + spec.argv.front() + ": ";

  const bool capture = !spec.inherit_io;
  int pipe_fds[2] = {-1, -1};
  if (capture && !open_pipe(pipe_fds)) {
    throw std::runtime_error(std::string("run_process: pipe: ") + std::strerror(errno));
  }
  const auto close_all = [](std::initializer_list<int> fds) {
    for (const int fd : fds) {
      if (fd >= 0) {
        close(fd);
      }
    }
  };
  // A second pipe reports a failed exec (errno) back; exec closes it on success.
  int exec_fds[2];
  if (!open_pipe(exec_fds)) {
    close_all({pipe_fds[0], pipe_fds[1]});
    throw std::runtime_error(std::string("run_process: pipe: ") + std::strerror(errno));
  }
  const Clock::time_point start = Clock::now();
  std::unique_lock registering(runs_mutex);
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    registering.unlock();
    close_all({pipe_fds[0], pipe_fds[1], exec_fds[0], exec_fds[1]});
    throw std::runtime_error(std::string("run_process: fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    if (capture) {
      setpgid(0, 0);
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) {
        dup2(null, STDIN_FILENO);
      }
      dup2(pipe_fds[1], STDOUT_FILENO);
      dup2(pipe_fds[1], STDERR_FILENO);
    }
    signal(SIGPIPE, SIG_DFL);
    execve(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(exec_fds[1], &error, sizeof error);
    _exit(127);
  }
  running.insert(pid);
  registering.unlock();
  if (capture) {
    setpgid(pid, pid);  // also here: no race with the child's own call
    close(pipe_fds[1]);
  }
  close(exec_fds[1]);
  int exec_error = 0;
  const bool exec_failed =
      read(exec_fds[0], &exec_error, sizeof exec_error) == static_cast<ssize_t>(sizeof exec_error);
  close(exec_fds[0]);

  OutputKeeper keeper(spec.keep_bytes);
  std::string chunk(64 * 1024, '\0');
  bool pipe_open = capture;
  int status = 0;
  bool exited = false;
  const auto drain = [&](int timeout_ms) {
    if (!pipe_open) {
      // The program closed its output but runs on: wait here, not in a busy loop of waitpid.
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      return;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (poll(&fd, 1, timeout_ms) <= 0) {
      return;
    }
    const ssize_t n = read(pipe_fds[0], chunk.data(), chunk.size());
    if (n > 0) {
      const std::string_view data(chunk.data(), static_cast<std::size_t>(n));
      keeper.add(data);
      if (spec.forward) {
        forward(data);
      }
    } else if (n == 0 || errno != EINTR) {
      pipe_open = false;
    }
  };
  while (!exited) {
    drain(20);
    if (reap(pid, status)) {
      exited = true;
    } else if (spec.timeout_s > 0 && seconds_since(start) > spec.timeout_s) {
      result.timed_out = true;
      break;
    } else if (spec.cancel != nullptr && spec.cancel->load()) {
      result.cancelled = true;
      break;
    }
  }
  result.duration_s = seconds_since(start);
  result.strays_killed = kill_descendants(pid);
  // Every writer is dead now; what is left in the pipe is read to its end (bounded in time, in
  // case a process escaped).
  const Clock::time_point drain_start = Clock::now();
  while (pipe_open && seconds_since(drain_start) < 2) {
    drain(50);
  }
  close_all({pipe_fds[0]});

  if (exec_failed) {
    result.start_error = start_failed + std::strerror(exec_error);
    return result;
  }
  result.started = true;
  if (!result.timed_out && !result.cancelled) {
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
    }
  }
  result.output = keeper.text();
  result.output_bytes = keeper.total();
  return result;
}

}  // namespace gpulab
