// The lockdown of a graded test process: resource limits and a seccomp filter that the graded
// test program installs on itself before any other code of it runs (tests/labs/graded_main.cpp
// calls lock_down from the executable's .preinit_array, ahead of every static initializer, lab
// code's included). From then on the process, and every thread it starts, cannot:
//
//   - become another program (execve, execveat): the call fails with EPERM;
//   - start another process (fork, vfork, clone without CLONE_THREAD): EPERM; threads are fine
//     (clone3, whose flags a filter cannot read, answers ENOSYS and the C library falls back to
//     clone);
//   - trace or read another process (ptrace, process_vm_readv/writev, pidfd_getfd, kcmp), signal
//     one (kill and tgkill of any process but itself, tkill), or leave its namespaces (setns,
//     unshare, mount, chroot, pivot_root): EPERM;
//   - run a system call of another ABI (x32, or a 32-bit one): the process is killed (SIGSYS);
//
// and it runs within limits: no core file, files of at most max_file_bytes, max_open_files
// descriptors, max_threads threads (RLIMIT_NPROC, which the kernel does not apply to root),
// max_cpu_s seconds of CPU time (SIGXCPU, then SIGKILL 5 s later) and max_address_space_bytes of
// address space (allocations beyond it fail). A limit is only ever lowered.
//
// Linux on x86-64 and ARM64 only; elsewhere lock_down says it cannot. The grader tries it once
// (lockdown_unavailable) and says so in its report, as it does for the sandbox.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpulab {

/// The resource limits of a locked-down process; 0 leaves a limit as it is.
struct LockdownLimits {
  std::uint64_t max_file_bytes = 0;
  std::uint64_t max_open_files = 0;
  std::uint64_t max_threads = 0;
  std::uint64_t max_cpu_s = 0;
  std::uint64_t max_address_space_bytes = 0;
};

/// The limits of a graded test process: files of 256 MiB, 1024 descriptors, 4096 threads, and CPU
/// time and address space from the environment the grader's test runner sets
/// (GPULAB_LOCKDOWN_CPU_S, GPULAB_LOCKDOWN_ADDRESS_SPACE_BYTES; unset or not a number: no
/// limit).
[[nodiscard]] LockdownLimits graded_test_limits();

/// Applies `limits` and installs the seccomp filter on the calling process (and the threads it
/// starts afterwards; call it before starting any). Returns what could not be done, e.g.
/// "seccomp: Invalid argument", or nullopt. Never throws; it needs only the C library and
/// operator new, so it can run before any static initializer.
[[nodiscard]] std::optional<std::string> lock_down(const LockdownLimits& limits) noexcept;

/// Why a process cannot be locked down on this machine, found once by locking down a child
/// process and checking that exec fails in it; nullopt when it can.
[[nodiscard]] std::optional<std::string> lockdown_unavailable();

}  // namespace gpulab
