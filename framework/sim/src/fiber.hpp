// User-mode fibers for the sim's CUDA threads (internal to framework/sim).
//
// A Fiber is a stack plus a saved context. Switching is a few instructions on x86-64 and ARM64
// (callee-saved registers and the stack pointer, in fiber.cpp); other platforms use ucontext. Under
// AddressSanitizer every switch is announced to it, so stack checks keep working in kernels.
#pragma once

#include <cstddef>

// GPULAB_SIM_FIBER_SWITCH: fibers switch with fiber.cpp's own few instructions (x86-64 and ARM64
// on ELF platforms: its assembly is ELF's); elsewhere (macOS), or with GPULAB_SIM_FIBER_UCONTEXT
// (CMake's option of that name, to test the portable path on Linux), with ucontext.
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__ELF__) && \
    !defined(GPULAB_SIM_FIBER_UCONTEXT)
#define GPULAB_SIM_FIBER_SWITCH 1
#else
#include <ucontext.h>
#endif

namespace gpulab::sim::detail {

class Fiber {
 public:
  /// A stack of `stack_bytes` (rounded up to pages) with a guard page below it, so an overflow
  /// faults instead of corrupting the neighbour. `color`: the fiber's number among its OS
  /// thread's; it decides where in its top page the stack starts (Fiber::prepare).
  Fiber(std::size_t stack_bytes, unsigned color);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  /// Makes the next switch to this fiber start `entry` at the top of its stack (entry must never
  /// return: it switches away for the last time instead).
  void prepare(void (*entry)()) noexcept;

  /// Marks the stack as reusable after it was abandoned mid-run (a failed kernel).
  void discard() noexcept;

  void* stack_bottom() const noexcept { return stack_; }
  std::size_t stack_bytes() const noexcept { return stack_bytes_; }

 private:
  friend class Switcher;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  void* stack_ = nullptr;
  std::size_t stack_bytes_ = 0;
  std::size_t top_offset_ = 0;       // bytes left unused above the first frame
  void* asan_fake_stack_ = nullptr;  // AddressSanitizer's state while the fiber is switched out
#if defined(GPULAB_SIM_FIBER_SWITCH)
  void* sp_ = nullptr;
#else
  ucontext_t context_{};
#endif
};

/// The per-OS-thread side of switching: the thread's own stack is the "scheduler" context.
/// Fibers switch to and from it, and directly to each other (transfer): a run of CUDA threads
/// that wait at the same barrier passes control along without the scheduler, so every switch
/// returns to the same call site the previous one left from, and the processor predicts the
/// returns.
class Switcher {
 public:
  /// From the scheduler into `fiber`; returns when a fiber switches back.
  static void enter(Fiber& fiber) noexcept;
  /// From the running fiber back to the scheduler; returns when it is entered again (by the
  /// scheduler or by another fiber). `finished`: the fiber will never be entered again without
  /// prepare().
  static void leave(Fiber& fiber, bool finished) noexcept;
  /// From the running fiber `from` into `to`; returns when `from` is entered again.
  static void transfer(Fiber& from, Fiber& to, bool finished) noexcept;
  /// First thing a fiber's entry function calls.
  static void started() noexcept;
  /// Starts loading the top of `fiber`'s saved stack into the cache, ahead of a switch to it.
  static void prefetch(const Fiber& fiber) noexcept;
};

}  // namespace gpulab::sim::detail
