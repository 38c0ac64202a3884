// main() of every graded lab suite. ctest runs one test case per process
// (--gtest_filter=Suite.Name). The exit status says what happened, so a grade never rests on
// text the code under test could print:
//   0   the selected test ran and passed
//   1   it failed, or the filter selected no test at all (a renamed or deleted test earns nothing)
//   77  it was skipped (e.g. it needs a CUDA device): ctest reports "skipped", never "passed"
//
// Before any other code of the program runs (static initializers, lab code's included), the
// process locks itself down (gpulab/grader/lockdown.hpp): no exec, no other processes, no
// tracing, resource limits. It ends with _exit as soon as gtest has written its result: no code
// runs at exit (static destructors, atexit handlers), so nothing can rewrite the result after
// the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "gpulab/grader/lockdown.hpp"

namespace {

void lock_down_first(int /*argc*/, char** /*argv*/, char** /*envp*/) {
  gpulab::LockdownLimits limits = gpulab::graded_test_limits();
#if defined(GPULAB_BACKEND_SIM) && !defined(__SANITIZE_ADDRESS__)
  // On sim, device memory is this process's memory: at most the machine's. (Not on cuda, whose
  // driver reserves address space far beyond it, nor under AddressSanitizer, whose shadow does.)
  if (limits.max_address_space_bytes == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_bytes = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_bytes > 0) {
      limits.max_address_space_bytes =
          static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
    }
  }
#endif
  if (const std::optional<std::string> problem = gpulab::lock_down(limits)) {
    std::fprintf(stderr, "graded suite: runs without its lockdown (%s)\n", problem->c_str());
  }
}

// The dynamic loader runs .preinit_array before the .init_array of any object: before every
// static initializer.
[[gnu::used,
  gnu::section(".preinit_array")]] void (*const lock_down_entry)(int, char**,
                                                                 char**) = &lock_down_first;

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  if (unit.test_to_run_count() == 0) {
    std::fprintf(stderr, "graded suite: the filter selected no test\n");
    status = 1;
  } else if (status == 0 && unit.skipped_test_count() > 0) {
    status = 77;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(status);
}
