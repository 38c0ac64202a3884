#include "gpulab/grader/lockdown.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define GPULAB_LOCKDOWN_SUPPORTED 1
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace gpulab {

namespace {

// A number from the environment; 0 when unset or not a whole number.
std::uint64_t environment_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text < '0' || *text > '9') {
    return 0;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0' ? value : 0;
}

#ifdef GPULAB_LOCKDOWN_SUPPORTED

#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#else
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#endif

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kRefuse = SECCOMP_RET_ERRNO | EPERM;
constexpr std::uint32_t kKill = SECCOMP_RET_KILL_PROCESS;

// The system calls refused outright: other programs, other processes, other namespaces.
constexpr long kRefused[] = {
    SYS_execve,
    SYS_execveat,
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_kcmp,
    SYS_pidfd_getfd,
    SYS_setns,
    SYS_unshare,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_tkill,
    SYS_pidfd_send_signal,
    SYS_pidfd_open,
#ifdef SYS_fork
    SYS_fork,
#endif
#ifdef SYS_vfork
    SYS_vfork,
#endif
};

constexpr std::uint32_t kNumberAt = offsetof(struct seccomp_data, nr);
constexpr std::uint32_t kArchAt = offsetof(struct seccomp_data, arch);
// The low 32 bits of the first argument (both architectures are little-endian).
constexpr std::uint32_t kFirstArgumentAt = offsetof(struct seccomp_data, args);

sock_filter statement(std::uint16_t code, std::uint32_t k) {
  return sock_filter{code, 0, 0, k};
}

sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t if_true, std::uint8_t if_false) {
  return sock_filter{code, if_true, if_false, k};
}

// The filter: the architecture first (a system call of another ABI kills), then each refused
// number, then the calls allowed for some arguments only.
std::vector<sock_filter> filter_program(std::uint32_t own_pid) {
  std::vector<sock_filter> program = {
      statement(BPF_LD | BPF_W | BPF_ABS, kArchAt),
      jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      statement(BPF_RET | BPF_K, kKill),
      statement(BPF_LD | BPF_W | BPF_ABS, kNumberAt),
  };
#if defined(__x86_64__)
  // x32 system calls are numbered from bit 30.
  program.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, kKill));
#endif
  for (const long number : kRefused) {
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(number), 0, 1));
    program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  }
  // clone3 passes its flags in memory a filter cannot read: ENOSYS, and the C library uses clone.
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  // clone: threads only.
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kFirstArgumentAt));
  program.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, kAllow));
  program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  // kill and tgkill: this process only (abort and raise signal it through tgkill).
  for (const long number : {SYS_kill, SYS_tgkill}) {
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(number), 0, 4));
    program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kFirstArgumentAt));
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 0, 1));
    program.push_back(statement(BPF_RET | BPF_K, kAllow));
    program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  }
  program.push_back(statement(BPF_RET | BPF_K, kAllow));
  return program;
}

// Lowers `resource` to `value` (soft and hard), never raising either.
bool lower_limit(int resource, std::uint64_t value, std::uint64_t hard_extra = 0) {
  rlimit current{};
  if (getrlimit(resource, &current) != 0) {
    return false;
  }
  const auto lowered = [](rlim_t now, std::uint64_t wanted) {
    return now == RLIM_INFINITY || wanted < now ? static_cast<rlim_t>(wanted) : now;
  };
  const rlimit wanted{lowered(current.rlim_cur, value),
                      lowered(current.rlim_max, value + hard_extra)};
  return setrlimit(resource, &wanted) == 0;
}

std::string failure(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

#endif  // GPULAB_LOCKDOWN_SUPPORTED

}  // namespace

LockdownLimits graded_test_limits() {
  LockdownLimits limits;
  limits.max_file_bytes = std::uint64_t{256} << 20;
  limits.max_open_files = 1024;
  limits.max_threads = 4096;
  limits.max_cpu_s = environment_number("GPULAB_LOCKDOWN_CPU_S");
  limits.max_address_space_bytes = environment_number("GPULAB_LOCKDOWN_ADDRESS_SPACE_BYTES");
  return limits;
}

std::optional<std::string> lock_down(const LockdownLimits& limits) noexcept {
#ifdef GPULAB_LOCKDOWN_SUPPORTED
  try {
    struct Limit {
      int resource;
      std::uint64_t value;
      std::uint64_t hard_extra;
      const char* name;
    };
    // CPU time: SIGXCPU at the soft limit, SIGKILL at the hard one.
    const Limit table[] = {{RLIMIT_FSIZE, limits.max_file_bytes, 0, "RLIMIT_FSIZE"},
                           {RLIMIT_NOFILE, limits.max_open_files, 0, "RLIMIT_NOFILE"},
                           {RLIMIT_NPROC, limits.max_threads, 0, "RLIMIT_NPROC"},
                           {RLIMIT_CPU, limits.max_cpu_s, 5, "RLIMIT_CPU"},
                           {RLIMIT_AS, limits.max_address_space_bytes, 0, "RLIMIT_AS"}};
    if (!lower_limit(RLIMIT_CORE, 0)) {
      return failure("RLIMIT_CORE");
    }
    for (const Limit& limit : table) {
      if (limit.value != 0 && !lower_limit(limit.resource, limit.value, limit.hard_extra)) {
        return failure(limit.name);
      }
    }
    std::vector<sock_filter> program = filter_program(static_cast<std::uint32_t>(getpid()));
    const sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      return failure("prctl(PR_SET_NO_NEW_PRIVS)");
    }
    // TSYNC: every thread already running is filtered too (there should be none).
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter) != 0) {
      return failure("seccomp");
    }
    return std::nullopt;
  } catch (...) {
    return "out of memory";
  }
#else
  (void)limits;
  return "a seccomp filter needs Linux on x86-64 or ARM64";
#endif
}

std::optional<std::string> lockdown_unavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
#ifdef GPULAB_LOCKDOWN_SUPPORTED
    // The child reports with its exit status: 0 locked down (exec and fork refused), 1 it could
    // not lock down, 2 exec was not refused, 3 fork was not refused.
    const pid_t child = fork();
    if (child < 0) {
      return failure("fork");
    }
    if (child == 0) {
      if (lock_down({})) {
        _exit(1);
      }
      char* const argv[] = {nullptr};
      if (execve("/nonexistent/gpulab-lockdown-probe", argv, argv) == 0 || errno != EPERM) {
        _exit(2);
      }
      const pid_t grandchild = fork();
      if (grandchild == 0) {
        _exit(0);
      }
      _exit(grandchild < 0 && errno == EPERM ? 0 : 3);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
      if (errno != EINTR) {
        return failure("waitpid");
      }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      return std::nullopt;
    }
    switch (WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
      case 1:
        return "the kernel refused the seccomp filter (seccomp is not available here)";
      case 2:
        return "a seccomp filter installed, but exec was not refused";
      case 3:
        return "a seccomp filter installed, but fork was not refused";
      default:
        return "the lockdown probe ended abnormally";
    }
#else
    return lock_down({});
#endif
  }();
  return reason;
}

}  // namespace gpulab
