// User-mode fibers for the sim's CUDA threads (internal to framework/sim).
//
// A Fiber is a stack plus a saved context. Switching is a few instructions on x86-64 (callee-saved
// registers and the stack pointer, in fiber.cpp); other architectures use ucontext. Under
// AddressSanitizer every switch is announced to it, so stack checks keep working in kernels.
#pragma once

#include <cstddef>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace gpulab::sim::detail {

class Fiber {
 public:
  /// A stack of `stack_bytes` (rounded up to pages) with a guard page below it, so an overflow
  /// faults instead of corrupting the neighbour.
  explicit Fiber(std::size_t stack_bytes);
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
  void* asan_fake_stack_ = nullptr;  // AddressSanitizer's state while the fiber is switched out
#if defined(__x86_64__)
  void* sp_ = nullptr;
#else
  ucontext_t context_{};
#endif
};

/// The per-OS-thread side of switching: the thread's own stack is the "scheduler" context, and
/// fibers switch only to and from it.
class Switcher {
 public:
  /// From the scheduler into `fiber`; returns when the fiber switches back.
  static void enter(Fiber& fiber) noexcept;
  /// From the running fiber back to the scheduler; returns when the scheduler enters it again.
  /// `finished`: the fiber will never be entered again without prepare().
  static void leave(Fiber& fiber, bool finished) noexcept;
  /// First thing a fiber's entry function calls.
  static void started() noexcept;
};

}  // namespace gpulab::sim::detail
