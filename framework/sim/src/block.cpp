// Kernel execution on sim: blocks over worker threads, CUDA threads of a block as fibers, and the
// device built-ins that make them wait for each other (barriers and warp collectives).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "block_worker.hpp"
#include "clock.hpp"
#include "counting.hpp"
#include "fiber.hpp"
#include "matrix.hpp"
#include "queue.hpp"
#include "settings.hpp"

// The built-in variables, per OS thread (the scheduler sets them before resuming a CUDA thread).
thread_local constinit uint3 threadIdx{0, 0, 0};
thread_local constinit uint3 blockIdx{0, 0, 0};
thread_local constinit dim3 blockDim{1, 1, 1};
thread_local constinit dim3 gridDim{1, 1, 1};

namespace gpulab::sim::detail {
namespace {

thread_local Worker* current_worker = nullptr;

Worker& this_worker() {
  thread_local Worker worker;
  return worker;
}

// ---------------------------------------------------------------------------------------------
// Scheduling
// ---------------------------------------------------------------------------------------------

// SplitMix64's step (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): `state` advanced, its next 64 well-mixed bits returned.
std::uint64_t split_mix(std::uint64_t& state) {
  std::uint64_t z = state += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The order threads run in during one phase (between two barriers). A shuffle is a Fisher-Yates
// permutation drawn from the seed, the block and the phase: the same on every standard library
// (std::shuffle's is not specified), and cheap enough to draw at every barrier (seeding a
// Mersenne twister per phase was 10% of a reduction's run).
void make_order(Worker& w) {
  w.order.resize(w.thread_count);
  std::iota(w.order.begin(), w.order.end(), 0u);
  const Schedule& schedule = w.launch->schedule;
  if (schedule.order == Schedule::Order::reverse) {
    std::reverse(w.order.begin(), w.order.end());
  } else if (schedule.order == Schedule::Order::shuffle) {
    std::uint64_t state = schedule.seed;
    state = split_mix(state) ^ w.block_linear;
    state = split_mix(state) ^ w.phase;
    for (std::size_t i = w.order.size(); i > 1; --i) {
      std::swap(w.order[i - 1], w.order[split_mix(state) % i]);
    }
  }
}

void fiber_main();

// Makes `t` the running CUDA thread of this OS thread (on its fiber).
void make_current(Worker& w, CudaThread& t) {
  t.state = State::running;
  --w.ready;
  w.current = &t;
  threadIdx = t.index;
  if (w.counter != nullptr) {
    counting_enter_thread(t.linear, *t.fiber);
  }
}

// Runs `t` and the threads after it in this pass over the order (run_threads) until one waits or
// exits with nothing left to run in the pass: control passes along the pass from fiber to fiber
// (pass_on) and comes back here once. Then w.cursor is the place of the last thread that ran.
void resume(Worker& w, CudaThread& t) {
  if (t.state == State::not_started) {
    t.fiber = w.acquire();
    t.fiber->prepare(&fiber_main);
  }
  make_current(w, t);
  device_code_enter();
  Switcher::enter(*t.fiber);
  device_code_leave();
  if (w.counter != nullptr) {
    counting_leave_thread();
  }
  w.current = nullptr;
}

// The thread after w.cursor in this pass over the order that the scheduler would run next (one
// that has not started or is runnable), with w.cursor moved to it; nullptr when none is left.
CudaThread* next_in_pass(Worker& w) {
  for (std::size_t k = w.cursor + 1; k < w.order.size(); ++k) {
    CudaThread& t = w.threads[w.order[k]];
    if (t.state == State::not_started || t.state == State::runnable) {
      w.cursor = k;
      return &t;
    }
  }
  return nullptr;
}

// The running thread, on `fiber`, stops running (it waits, or it exited and gave up `fiber`):
// `next` (next_in_pass) runs, switched to directly, or the scheduler when it is null. Returns when
// the thread is resumed (never when `finished`).
void pass_on(Worker& w, Fiber& fiber, CudaThread* next, bool finished) {
  if (next == nullptr) {
    Switcher::leave(fiber, finished);
    return;
  }
  if (next->state == State::not_started) {
    next->fiber = w.acquire();  // not `fiber`: a finished thread hands it over (fiber_main)
    next->fiber->prepare(&fiber_main);
  }
  make_current(w, *next);
  // The thread two places after `next` in the order mostly runs two switches later: the top of
  // its stack is loaded meanwhile (a block's stacks do not fit in the L1 cache; this saved 5-9%
  // of a barrier-bound kernel's time).
  if (w.cursor + 2 < w.order.size()) {
    if (const Fiber* after = w.threads[w.order[w.cursor + 2]].fiber; after != nullptr) {
      Switcher::prefetch(*after);
    }
  }
  Switcher::transfer(fiber, *next->fiber, finished);
}

// Returns the fibers of a failed block to the pool; their frames are abandoned.
void abandon(Worker& w) {
  for (unsigned i = 0; i < w.thread_count; ++i) {
    CudaThread& t = w.threads[i];
    if (t.fiber != nullptr) {
      t.fiber->discard();
      w.idle.push_back(t.fiber);
      t.fiber = nullptr;
    }
  }
}

void finish_thread(Worker& w, CudaThread& t) {
  t.state = State::done;
  if (w.counter != nullptr) {
    counting_thread_done(t.linear, true);
  }
  if (t.cycles > 0) {  // the modeled clock: the launch lasts at least this thread's wait
    std::uint64_t longest = w.launch->longest_wait_cycles.load(std::memory_order_relaxed);
    while (longest < t.cycles && !w.launch->longest_wait_cycles.compare_exchange_weak(
                                     longest, t.cycles, std::memory_order_relaxed)) {
    }
  }
  --w.live;
  // Lanes waiting in a collective that named this lane may now be complete (or, in a WMMA call,
  // never).
  const unsigned warp = t.linear / kWarp;
  w.warp_exited[warp] |= 1u << (t.linear % kWarp);
  if (w.warp_matrix_used[warp] != 0 && (warp + 1) * kWarp <= w.thread_count) {
    try_complete_matrix(w, warp);
  }
  for (unsigned lane = 0; lane < kWarp && w.warp_waiting[warp] != 0; ++lane) {
    const unsigned linear = warp * kWarp + lane;
    if (linear < w.thread_count && w.threads[linear].state == State::at_warp &&
        w.threads[linear].op != WarpOp::active) {
      const CudaThread& waiting = w.threads[linear];
      try_complete(w, warp, waiting.mask, waiting.op);
    }
  }
}

// Every fiber runs this: the CUDA thread it was started for, then the threads of the pass that
// have not started yet, on the same fiber while they exit without waiting (so a kernel without
// barriers costs one switch per run of threads, not one per thread).
void fiber_main() {
  Switcher::started();
  Worker& w = *current_worker;
  Fiber& fiber = *w.current->fiber;
  for (CudaThread* t = w.current;;) {
    try {
      w.launch->call.invoke(w.launch->call.payload);
    } catch (const std::exception& e) {
      fail_block(w, cudaErrorLaunchFailure,
                 "thread " + triple(t->index.x, t->index.y, t->index.z) +
                     " threw a C++ exception: " + e.what());
    } catch (...) {
      fail_block(w, cudaErrorLaunchFailure,
                 "thread " + triple(t->index.x, t->index.y, t->index.z) + " threw a C++ exception");
    }
    finish_thread(w, *t);
    t->fiber = nullptr;
    CudaThread* next = w.failure ? nullptr : next_in_pass(w);
    if (next == nullptr || next->state != State::not_started) {
      // This fiber is done: it goes back to the pool before control leaves it for good.
      w.idle.push_back(&fiber);
      pass_on(w, fiber, next, true);
      std::abort();  // a finished fiber is never entered again
    }
    // The next thread starts on this fiber, from the top of the loop: no switch.
    next->fiber = &fiber;
    make_current(w, *next);
    t = next;
  }
}

// At a stall, the lanes waiting in __activemask learn which lanes of their warp got there: the
// others have exited or wait elsewhere. Returns whether any were waiting.
bool release_active_masks(Worker& w) {
  if (w.at_active == 0) {
    return false;
  }
  bool released = false;
  for (unsigned base = 0; base < w.thread_count; base += kWarp) {
    unsigned mask = 0;
    for (unsigned lane = 0; lane < kWarp && base + lane < w.thread_count; ++lane) {
      const CudaThread& t = w.threads[base + lane];
      if (t.state == State::at_warp && t.op == WarpOp::active) {
        mask |= 1u << lane;
      }
    }
    if (mask != 0 && w.counter != nullptr) {
      counting_warp_collective(WarpOp::active, base / kWarp, 0);
    }
    for (unsigned lane = 0; lane < kWarp; ++lane) {
      if ((mask & (1u << lane)) != 0) {
        w.threads[base + lane].result = mask;
        w.threads[base + lane].state = State::runnable;
        ++w.ready;
        --w.at_active;
        w.warp_waiting[base / kWarp] &= ~(1u << lane);
        released = true;
      }
    }
  }
  return released;
}

// Releases a barrier every live thread reached; fails the block if some threads exited or wait at
// another __syncthreads.
bool release_barrier(Worker& w) {
  if (w.barrier_diverged) {
    fail_block(w, cudaErrorLaunchFailure,
               "divergent __syncthreads: the threads of a block wait at different barriers: " +
                   describe_block(w));
    return false;
  }
  if (w.live != w.thread_count) {
    fail_block(w, cudaErrorLaunchFailure,
               "divergent __syncthreads: some threads of the block exited and can never reach "
               "the barrier the others wait at: " +
                   describe_block(w));
    return false;
  }
  const int count = w.barrier_count;
  switch (w.barrier_first->barrier) {
    case BarrierOp::sync:
      w.barrier_result = 0;
      break;
    case BarrierOp::count:
      w.barrier_result = count;
      break;
    case BarrierOp::all:
      w.barrier_result = count == static_cast<int>(w.live) ? 1 : 0;
      break;
    case BarrierOp::any:
      w.barrier_result = count > 0 ? 1 : 0;
      break;
  }
  for (CudaThread& t : w.threads) {  // every thread waits here (none exited)
    t.state = State::runnable;
  }
  w.ready = w.thread_count;
  w.at_barrier = 0;
  ++w.phase;
  if (w.counter != nullptr) {
    counting_barrier((w.thread_count + kWarp - 1) / kWarp);
    if (std::optional<std::string> wrong = counting_end_phase()) {
      fail_block(w, cudaErrorLaunchFailure, *wrong);
      return false;
    }
  }
  if (w.launch->schedule.order == Schedule::Order::shuffle) {
    make_order(w);
  }
  return true;
}

void run_threads(Worker& w, unsigned block_linear) {
  const LaunchSpec& spec = w.launch->spec;
  w.block_linear = block_linear;
  w.thread_count = spec.block.x * spec.block.y * spec.block.z;
  w.threads.assign(w.thread_count, CudaThread{});
  const unsigned warps = (w.thread_count + kWarp - 1) / kWarp;
  w.warp_waiting.assign(warps, 0);
  w.warp_exited.assign(warps, 0);
  w.warp_matrix_used.assign(warps, 0);
  for (unsigned i = 0; i < w.thread_count; ++i) {
    CudaThread& t = w.threads[i];
    t.linear = i;
    t.index = w.indexes[i];
  }
  w.live = w.thread_count;
  w.ready = w.thread_count;
  w.at_active = 0;
  w.at_barrier = 0;
  w.phase = 0;
  w.failure.reset();
  blockIdx = {block_linear % spec.grid.x, (block_linear / spec.grid.x) % spec.grid.y,
              block_linear / (spec.grid.x * spec.grid.y)};
  if (w.shared != nullptr) {
    std::memset(w.shared, 0xff, w.shared_bytes);  // uninitialized shared memory
  }
  make_order(w);
  for (;;) {
    const unsigned* order = w.order.data();  // not reordered during a pass (release_barrier)
    const std::size_t count = w.order.size();
    for (std::size_t k = 0; k < count && w.ready > 0; ++k) {
      CudaThread& t = w.threads[order[k]];
      if (t.state == State::not_started || t.state == State::runnable) {
        w.cursor = k;
        resume(w, t);
        k = w.cursor;  // past the threads that ran after it (resume)
        if (w.failure) {
          abandon(w);
          return;
        }
      }
    }
    if (w.live == 0) {
      return;
    }
    if (w.ready > 0) {
      continue;
    }
    // Nobody can run: __activemask calls to answer, a barrier everyone reached, or threads that
    // can never meet.
    if (release_active_masks(w)) {
      continue;
    }
    if (w.at_barrier > 0 && w.at_barrier == w.live) {
      if (!release_barrier(w)) {
        abandon(w);
        return;
      }
      continue;
    }
    fail_block(w, cudaErrorLaunchFailure,
               "deadlock: no thread of the block can continue: " + describe_block(w));
    abandon(w);
    return;
  }
}

void run_block(Worker& w, unsigned block_linear) {
  if (w.counter == nullptr) {
    run_threads(w, block_linear);
    return;
  }
  counting_begin_block(*w.counter, block_linear,
                       w.launch->spec.block.x * w.launch->spec.block.y * w.launch->spec.block.z,
                       w.shared, w.shared_bytes);
  run_threads(w, block_linear);
  if (std::optional<std::string> wrong = counting_end_block(w.failure.has_value())) {
    fail_block(w, cudaErrorLaunchFailure, *wrong);
  }
}

// Points the worker at a launch: built-in dimensions and this launch's dynamic shared memory.
void enter_launch(Worker& w, const KernelLaunch& launch) {
  w.launch = &launch;
  blockDim = launch.spec.block;
  gridDim = launch.spec.grid;
  if (w.launch_id != launch.id) {
    w.launch_id = launch.id;
    const dim3 block = launch.spec.block;
    w.indexes.resize(std::size_t{block.x} * block.y * block.z);
    for (unsigned i = 0; i < w.indexes.size(); ++i) {
      w.indexes[i] = {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
    }
    std::free(w.shared);
    w.shared = nullptr;
    w.shared_bytes = launch.spec.shared_bytes;
    // Exactly the requested size, so AddressSanitizer reports accesses past it. With no bytes
    // requested there is no memory: using it faults (a null pointer), as it is wrong on a GPU.
    if (w.shared_bytes > 0 && posix_memalign(&w.shared, 128, w.shared_bytes) != 0) {
      w.shared = nullptr;
      throw std::bad_alloc();
    }
  }
}

// The block taken i-th, for the schedule: forward, reverse, or a seeded permutation
// (i * a + b mod count with a coprime to count).
__extension__ using Wide = unsigned __int128;  // i * a needs up to 127 bits

struct BlockOrder {
  std::uint64_t count;
  Schedule schedule;
  std::uint64_t a = 1;
  std::uint64_t b = 0;

  BlockOrder(std::uint64_t n, const Schedule& s) : count(n), schedule(s) {
    if (s.order == Schedule::Order::shuffle && n > 1) {
      std::mt19937_64 random(s.seed);
      a = random() % n;
      while (std::gcd(a, n) != 1) {
        a = (a + 1) % n;
      }
      b = random() % n;
    }
  }
  std::uint64_t operator()(std::uint64_t i) const {
    switch (schedule.order) {
      case Schedule::Order::forward:
        return i;
      case Schedule::Order::reverse:
        return count - 1 - i;
      case Schedule::Order::shuffle:
        return static_cast<std::uint64_t>((static_cast<Wide>(i) * a + b) % count);
    }
    return i;
  }
};

}  // namespace

std::optional<KernelFailure> execute_kernel(const KernelLaunch& launch,
                                            std::optional<CountedLaunch>& counted) {
  const dim3 grid = launch.spec.grid;
  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  const BlockOrder order(blocks, launch.schedule);
  // The failure reported is that of the lowest failing block, whatever the number of workers and
  // the order they finished in: once a block failed, only blocks below it still run.
  std::atomic<std::uint64_t> failed_block{blocks};
  std::mutex mutex;
  std::optional<KernelFailure> failure;
  LaunchCounterPtr counter = begin_counting(launch);
  parallel_for(blocks, [&](std::size_t i) {
    const std::uint64_t block = order(i);
    if (block >= failed_block.load(std::memory_order_relaxed)) {
      return;
    }
    Worker& w = this_worker();
    current_worker = &w;
    try {
      w.block_linear = static_cast<unsigned>(block);
      enter_launch(w, launch);
      w.counter = counter.get();
      run_block(w, w.block_linear);
    } catch (const std::bad_alloc&) {
      fail_block(w, cudaErrorMemoryAllocation,
                 "the simulator ran out of host memory for stacks or shared memory");
    }
    current_worker = nullptr;
    w.counter = nullptr;
    if (w.failure) {
      std::scoped_lock lock(mutex);
      if (block < failed_block.load(std::memory_order_relaxed)) {
        failure = std::move(w.failure);
        failed_block.store(block, std::memory_order_relaxed);
      }
    }
  });
  counted = finish_counting(std::move(counter), failure.has_value(), launch.kept);
  return failure;
}

// ---------------------------------------------------------------------------------------------
// Device built-ins (called from kernels)
// ---------------------------------------------------------------------------------------------

namespace {

[[noreturn]] void outside_kernel(const char* what, const std::source_location& where) {
  std::fprintf(stderr, "gpulab sim: %s called outside a kernel at %s\n", what,
               location(where).c_str());
  std::abort();
}

// Records why the running CUDA thread ends its block.
void record_failure(Worker& w, cudaError_t error, const std::string& what) {
  const CudaThread& t = *w.current;
  fail_block(w, error, "thread " + triple(t.index.x, t.index.y, t.index.z) + ": " + what);
}

// Leaves the failed block's fiber for good. Callers record the failure in a full expression of
// its own first, so no string of theirs stays alive in the abandoned frame.
[[noreturn]] void abandon_thread(Worker& w) {
  Switcher::leave(*w.current->fiber, true);
  std::abort();  // the failed block is abandoned, never resumed
}

}  // namespace

int block_barrier(BarrierOp op, int predicate, std::source_location where) {
  Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    outside_kernel(barrier_name(op), where);
  }
  CudaThread& t = *w->current;
  t.state = State::at_barrier;
  t.barrier = op;
  t.where = where;
  if (w->at_barrier++ == 0) {
    w->barrier_first = &t;
    w->barrier_diverged = false;
    w->barrier_count = 0;
  } else if (!same_location(w->barrier_first->where, where) || w->barrier_first->barrier != op) {
    w->barrier_diverged = true;
  }
  w->barrier_count += predicate != 0 ? 1 : 0;
  if (w->counter != nullptr) {
    counting_thread_done(t.linear, false);
  }
  pass_on(*w, *t.fiber, next_in_pass(*w), false);
  return w->barrier_result;
}

std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int lane_arg,
                              int width, std::source_location where) {
  Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    outside_kernel(warp_name(op), where);
  }
  CudaThread& t = *w->current;
  const unsigned lane = t.linear % kWarp;
  if ((mask & (1u << lane)) == 0) {
    record_failure(*w, cudaErrorLaunchFailure,
                   std::string(warp_name(op)) + " with mask " + hex_mask(mask) +
                       ", which does not include the calling lane " + std::to_string(lane) + " (" +
                       location(where) + ")");
    abandon_thread(*w);
  }
  if (width < 1 || width > static_cast<int>(kWarp) || (width & (width - 1)) != 0) {
    record_failure(*w, cudaErrorLaunchFailure,
                   std::string(warp_name(op)) + " with width " + std::to_string(width) +
                       ": the width must be a power of 2 from 1 to 32 (" + location(where) + ")");
    abandon_thread(*w);
  }
  t.state = State::at_warp;
  w->warp_waiting[t.linear / kWarp] |= 1u << lane;
  w->at_active += op == WarpOp::active ? 1 : 0;
  t.op = op;
  t.mask = mask;
  t.value = value;
  t.lane_arg = lane_arg;
  t.width = width;
  t.where = where;
  if (op != WarpOp::active && try_complete(*w, t.linear / kWarp, mask, op)) {
    t.state = State::running;  // try_complete made it runnable
    --w->ready;
  } else {
    pass_on(*w, *t.fiber, next_in_pass(*w), false);
  }
  return t.result;
}

void warp_matrix(MatrixCall& call, const char* name, std::source_location where) {
  Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    outside_kernel(name, where);
  }
  CudaThread& t = *w->current;
  const unsigned warp = t.linear / kWarp;
  const unsigned lane = t.linear % kWarp;
  bool failed = false;
  if (const unsigned in_warp = std::min(kWarp, w->thread_count - warp * kWarp); in_warp < kWarp) {
    record_failure(*w, cudaErrorLaunchFailure,
                   std::string(name) + " in warp " + std::to_string(warp) + ", which has " +
                       std::to_string(in_warp) + " threads (the block has " +
                       std::to_string(w->thread_count) +
                       "): WMMA calls need all 32 lanes of a warp (" + location(where) + ")");
    failed = true;
  } else if (const std::string problem = matrix_argument_problem(call); !problem.empty()) {
    record_failure(*w, cudaErrorLaunchFailure,
                   std::string(name) + ": " + problem + " (" + location(where) + ")");
    failed = true;
  }
  if (failed) {
    abandon_thread(*w);
  }
  t.state = State::at_matrix;
  w->warp_matrix_used[warp] = 1;
  t.matrix = &call;
  t.matrix_name = name;
  t.where = where;
  if (try_complete_matrix(*w, warp)) {
    t.state = State::running;  // try_complete_matrix made it runnable
    --w->ready;
  } else if (w->failure) {
    abandon_thread(*w);
  } else {
    pass_on(*w, *t.fiber, next_in_pass(*w), false);
  }
  if (call.op != MatrixOp::mma) {
    lane_matrix_access(call, lane);
  }
}

bool inside_kernel() noexcept {
  return current_worker != nullptr && current_worker->current != nullptr;
}

void* dynamic_shared_memory(std::source_location where) {
  const Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    outside_kernel("extern __shared__ (dynamic shared memory)", where);
  }
  return w->shared;
}

namespace {

[[noreturn]] void fail_access(cudaError_t error, const char* what) {
  Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    std::fprintf(stderr, "gpulab sim: %s\n", what);
    std::abort();
  }
  record_failure(*w, error, what);
  abandon_thread(*w);
}

}  // namespace

void fail_illegal_address(const char* what) {
  fail_access(cudaErrorIllegalAddress, what);
}

void fail_misaligned_address(const char* what) {
  fail_access(cudaErrorMisalignedAddress, what);
}

void fail_kernel(bool assertion, const char* message, std::source_location where) {
  Worker* w = current_worker;
  if (w == nullptr || w->current == nullptr) {
    outside_kernel(message, where);
  }
  record_failure(*w, assertion ? cudaErrorAssert : cudaErrorLaunchFailure,
                 std::string(message) + " (" + location(where) + ")");
  abandon_thread(*w);
}

long long clock_cycles() noexcept {
  // The modeled clock: each read advances the thread's own cycles by a fixed step, from the
  // launch's modeled start (deterministic; clock.hpp).
  if (Worker* w = current_worker; w != nullptr && w->current != nullptr && modeled_clock()) {
    w->current->cycles += kModeledCyclesPerClockRead;
    return static_cast<long long>(w->launch->start_cycles + w->current->cycles);
  }
  // The simulated device's clock; a kernel runs only on a usable device, so the query succeeds.
  static const double cycles_per_ns = [] {
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    return static_cast<double>(khz) / 1e6;
  }();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  return static_cast<long long>(static_cast<double>(ns) * cycles_per_ns);
}

}  // namespace gpulab::sim::detail

std::uint64_t gpulab::sim::tensor_core_operations() noexcept {
  return detail::tensor_core_operation_count().load(std::memory_order_relaxed);
}

// A failed assert() in a kernel ends the launch with cudaErrorAssert, printed the way CUDA prints
// device assertions; outside kernels it behaves as glibc's. (Defining it here overrides glibc's
// for programs linked with the sim runtime.)
extern "C" [[noreturn]] void __assert_fail(const char* assertion, const char* file,
                                           unsigned int line, const char* function) noexcept {
  using gpulab::sim::detail::current_worker;
  if (current_worker != nullptr && current_worker->current != nullptr) {
    char message[1024];
    std::snprintf(message, sizeof message, "%s:%u: %s: Assertion `%s` failed.", file, line,
                  function, assertion);
    gpulab::sim::detail::record_failure(*current_worker, cudaErrorAssert, message);
    gpulab::sim::detail::abandon_thread(*current_worker);
  }
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, assertion);
  std::abort();
}
