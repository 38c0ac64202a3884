#include "fiber.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <new>

#include "asan.hpp"
#if defined(GPULAB_SIM_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(GPULAB_SIM_FIBER_SWITCH)
// gpulab_sim_switch_context(save_sp, load_sp) saves the callee-saved registers on the current
// stack, stores the stack pointer in *save_sp, loads load_sp and restores the same set from there.
// A fresh fiber's stack is laid out by Fiber::prepare so that the final `ret` enters its entry
// function.
extern "C" void gpulab_sim_switch_context(void** save_sp, void* load_sp);
#if defined(__x86_64__)
// System V AMD64: rbp, rbx, r12-r15. The floating-point control state (MXCSR and the x87 control
// word, also callee-saved) is not switched: all fibers of an OS thread share it with the thread,
// as no device code may change it (CUDA has no rounding-mode state; <cfenv> is not on the labs'
// allowlist). Loading it was most of a switch's time (ldmxcsr and fldcw are microcoded: 80% of
// the switch's samples in a barrier-bound kernel).
asm(R"(
  .pushsection .text
  .globl gpulab_sim_switch_context
  .hidden gpulab_sim_switch_context
  .type gpulab_sim_switch_context, @function
gpulab_sim_switch_context:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gpulab_sim_switch_context, .-gpulab_sim_switch_context
  .popsection
)");
#else
// AAPCS64: x19-x28, the frame pointer x29, the link register x30 (where `ret` goes) and the low
// halves of v8-v15 (d8-d15), in a 160-byte frame (kSwitchFrameWords below). FPCR is not switched,
// as MXCSR is not on x86-64.
asm(R"(
  .pushsection .text
  .globl gpulab_sim_switch_context
  .hidden gpulab_sim_switch_context
  .type gpulab_sim_switch_context, %function
gpulab_sim_switch_context:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size gpulab_sim_switch_context, .-gpulab_sim_switch_context
  .popsection
)");
#endif
#endif

namespace gpulab::sim::detail {
namespace {

// The OS thread's own context, which fibers leave to.
#if defined(GPULAB_SIM_FIBER_SWITCH)
thread_local void* scheduler_sp = nullptr;
#else
thread_local ucontext_t scheduler_context;
#endif

#if defined(GPULAB_SIM_ASAN)
thread_local void* scheduler_fake_stack = nullptr;

// The OS thread's own stack, announced to AddressSanitizer when a fiber switches back to it.
struct ThreadStack {
  const void* bottom = nullptr;
  std::size_t bytes = 0;
};

const ThreadStack& scheduler_stack() {
  thread_local const ThreadStack stack = [] {
    ThreadStack found;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      void* bottom = nullptr;
      std::size_t bytes = 0;
      if (pthread_attr_getstack(&attributes, &bottom, &bytes) == 0) {
        found = ThreadStack{bottom, bytes};
      }
      pthread_attr_destroy(&attributes);
    }
    return found;
  }();
  return stack;
}
#endif

std::size_t page_bytes() {
  static const auto bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

Fiber::Fiber(std::size_t stack_bytes, unsigned color) {
  const std::size_t page = page_bytes();
  // Stacks are page-aligned and equally long, so without an offset every fiber's top frames
  // (where a switch saves and loads its registers) would fall in the same few cache sets and
  // evict each other: a barrier-bound kernel spent most of each switch waiting for those lines.
  // Successive fibers start 5 cache lines apart modulo a page (5 is coprime to the 64 lines of
  // a 4 KiB page, so 64 fibers use every line offset once); the extra page keeps the requested
  // bytes usable.
  constexpr std::size_t kLine = 64;
  top_offset_ = (std::size_t{color} * 5 % (4096 / kLine)) * kLine;
  stack_bytes_ = (stack_bytes + top_offset_ + page - 1) / page * page;
  mapping_bytes_ = stack_bytes_ + page;
#if defined(MAP_STACK)
  constexpr int kStack = MAP_STACK;
#else
  constexpr int kStack = 0;  // macOS has no such flag
#endif
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | kStack, -1, 0);
  if (mapping_ == MAP_FAILED) {
    throw std::bad_alloc();
  }
  mprotect(mapping_, page, PROT_NONE);  // guard page: an overflow faults
  stack_ = static_cast<char*>(mapping_) + page;
}

Fiber::~Fiber() {
  munmap(mapping_, mapping_bytes_);
}

void Fiber::prepare(void (*entry)()) noexcept {
#if defined(GPULAB_SIM_ASAN)
  // The frames of the previous thread on this stack that never returned (its entry function and
  // the switch) leave their redzones poisoned near the top; everything deeper returned normally.
  const std::size_t top_bytes = std::min<std::size_t>(stack_bytes_, 64 * 1024);
  __asan_unpoison_memory_region(static_cast<char*>(stack_) + stack_bytes_ - top_bytes, top_bytes);
#endif
#if defined(GPULAB_SIM_FIBER_SWITCH)
  const auto top =
      (reinterpret_cast<std::uintptr_t>(stack_) + stack_bytes_ - top_offset_) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top);
#if defined(__x86_64__)
  *--sp = 0;  // entry's return address: none, so debuggers stop unwinding here
  *--sp = reinterpret_cast<std::uint64_t>(entry);  // where the switch's `ret` goes
  for (int i = 0; i < 6; ++i) {
    *--sp = 0;  // rbp, rbx, r12-r15
  }
#else
  constexpr int kSwitchFrameWords = 20;  // x19-x30, d8-d15
  sp -= kSwitchFrameWords;
  std::fill(sp, sp + kSwitchFrameWords, std::uint64_t{0});  // x29 = 0: debuggers stop unwinding
  sp[11] = reinterpret_cast<std::uint64_t>(entry);          // x30, where the switch's `ret` goes
#endif
  sp_ = sp;
#else
  getcontext(&context_);
  context_.uc_stack.ss_sp = stack_;
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = nullptr;
  makecontext(&context_, entry, 0);
#endif
}

void Fiber::discard() noexcept {
#if defined(GPULAB_SIM_ASAN)
  // Frames abandoned mid-run leave their redzones poisoned.
  __asan_unpoison_memory_region(stack_, stack_bytes_);
#endif
}

void Switcher::enter(Fiber& fiber) noexcept {
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_start_switch_fiber(&scheduler_fake_stack, fiber.stack_, fiber.stack_bytes_);
#endif
#if defined(GPULAB_SIM_FIBER_SWITCH)
  gpulab_sim_switch_context(&scheduler_sp, fiber.sp_);
#else
  swapcontext(&scheduler_context, &fiber.context_);
#endif
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
#endif
}

void Switcher::leave(Fiber& fiber, bool finished) noexcept {
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_start_switch_fiber(finished ? nullptr : &fiber.asan_fake_stack_,
                                 scheduler_stack().bottom, scheduler_stack().bytes);
#else
  static_cast<void>(finished);
#endif
#if defined(GPULAB_SIM_FIBER_SWITCH)
  gpulab_sim_switch_context(&fiber.sp_, scheduler_sp);
#else
  swapcontext(&fiber.context_, &scheduler_context);
#endif
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_finish_switch_fiber(fiber.asan_fake_stack_, nullptr, nullptr);
#endif
}

void Switcher::transfer(Fiber& from, Fiber& to, bool finished) noexcept {
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_start_switch_fiber(finished ? nullptr : &from.asan_fake_stack_, to.stack_,
                                 to.stack_bytes_);
#else
  static_cast<void>(finished);
#endif
#if defined(GPULAB_SIM_FIBER_SWITCH)
  gpulab_sim_switch_context(&from.sp_, to.sp_);
#else
  swapcontext(&from.context_, &to.context_);
#endif
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_finish_switch_fiber(from.asan_fake_stack_, nullptr, nullptr);
#endif
}

void Switcher::prefetch(const Fiber& fiber) noexcept {
#if defined(GPULAB_SIM_FIBER_SWITCH)
  // The saved registers and the frames a switch returns through: a few lines above sp_.
  const auto* top = static_cast<const char*>(fiber.sp_);
  if (top != nullptr) {
    for (int line = 0; line < 3; ++line) {
      __builtin_prefetch(top + 64 * line);
    }
  }
#else
  static_cast<void>(fiber);
#endif
}

void Switcher::started() noexcept {
#if defined(GPULAB_SIM_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace gpulab::sim::detail
