// A worker thread's state while it runs a block (internal to framework/sim's block*.cpp): the
// block's CUDA threads, what each waits at, the fibers they run on. block.cpp schedules them and
// holds the device built-ins, block_warp.cpp completes warp collectives and WMMA calls,
// block_messages.cpp says what went wrong in words.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "counting.hpp"
#include "fiber.hpp"
#include "matrix.hpp"
#include "queue.hpp"
#include "settings.hpp"

namespace gpulab::sim::detail {

enum class State : std::uint8_t {
  not_started,
  running,
  runnable,
  at_barrier,
  at_warp,
  at_matrix,
  done
};

struct CudaThread {
  uint3 index{};
  unsigned linear = 0;
  State state = State::not_started;
  Fiber* fiber = nullptr;
  // What the thread waits at (barrier or warp collective).
  std::source_location where;
  BarrierOp barrier = BarrierOp::sync;
  WarpOp op = WarpOp::sync;
  unsigned mask = 0;
  int lane_arg = 0;
  int width = 32;
  std::uint64_t value = 0;
  std::uint64_t result = 0;
  MatrixCall* matrix = nullptr;  // the WMMA call it waits in
  const char* matrix_name = "";
  std::uint64_t cycles = 0;  // the modeled clock: cycles this thread's clock64() reads advanced
};

inline std::size_t stack_bytes() {
  return settings().stack_bytes;
}

// One per OS thread that runs blocks: its fibers and the state of the block it runs.
struct Worker {
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<Fiber*> idle;
  std::vector<CudaThread> threads;
  std::vector<unsigned> order;
  std::size_t cursor = 0;  // the place in `order` of the thread running or last run
  // Per warp, what a collective's completion looks at without a scan of the 32 lanes (one per
  // call and exit cost a reduction a third of its run): the lanes waiting in a warp collective
  // and the lanes that exited (bit masks), and whether a lane ever waited in a WMMA call in this
  // block.
  std::vector<unsigned> warp_waiting;
  std::vector<unsigned> warp_exited;
  std::vector<std::uint8_t> warp_matrix_used;

  const KernelLaunch* launch = nullptr;
  LaunchCounter* counter = nullptr;  // memory counting of this launch, or null
  std::uint64_t launch_id = 0;
  unsigned thread_count = 0;
  std::vector<uint3> indexes;  // threadIdx of each linear index, for the current launch
  unsigned live = 0;           // threads not done
  unsigned ready = 0;          // threads not started or runnable
  unsigned at_active = 0;      // threads waiting in __activemask
  unsigned at_barrier = 0;     // threads waiting at __syncthreads
  // The barrier being reached: its first thread, whether a later one waits at another barrier,
  // and how many passed a non-zero predicate.
  const CudaThread* barrier_first = nullptr;
  bool barrier_diverged = false;
  int barrier_count = 0;
  int barrier_result = 0;
  unsigned phase = 0;  // barriers passed in this block
  unsigned block_linear = 0;
  CudaThread* current = nullptr;
  std::optional<KernelFailure> failure;

  void* shared = nullptr;  // dynamic shared memory of the current launch
  std::size_t shared_bytes = 0;

  ~Worker() { std::free(shared); }

  Fiber* acquire() {
    if (idle.empty()) {
      fibers.push_back(
          std::make_unique<Fiber>(stack_bytes(), static_cast<unsigned>(fibers.size())));
      return fibers.back().get();
    }
    Fiber* fiber = idle.back();
    idle.pop_back();
    return fiber;
  }
};

// Messages (block_messages.cpp).

/// Where a call was made: "k.cu:12" (the file without its folders).
[[nodiscard]] std::string location(const std::source_location& where);
/// Whether two calls are the same place in the source (line, column and file).
[[nodiscard]] bool same_location(const std::source_location& a, const std::source_location& b);
/// The CUDA name of a barrier: "__syncthreads", "__syncthreads_count", ...
[[nodiscard]] const char* barrier_name(BarrierOp op);
/// The CUDA name of a warp collective: "__shfl_sync", "__ballot_sync", ...
[[nodiscard]] const char* warp_name(WarpOp op);
/// A lane mask as CUDA code writes it: "0xffffffff".
[[nodiscard]] std::string hex_mask(unsigned mask);
/// "(x,y,z)".
[[nodiscard]] std::string triple(unsigned x, unsigned y, unsigned z);
/// What one thread is doing, in words ("wait at __syncthreads (k.cu:12)", "have exited"); equal
/// strings are merged into thread ranges.
[[nodiscard]] std::string describe(const CudaThread& t);
/// Every thread of the block `w` runs, in ranges: "threads 0-31 wait at __syncthreads (k.cu:12);
/// threads 32-63 have exited".
[[nodiscard]] std::string describe_block(const Worker& w);
/// The lanes of `warp`, in ranges: "lanes 0-30 wait in wmma::mma_sync (k.cu:12); lane 31 has
/// exited".
[[nodiscard]] std::string describe_lanes(const Worker& w, unsigned warp);
/// Fails the block `w` runs: its launch fails with `error` and a message naming the kernel, where
/// it was launched, the block and `what` (the block's first failure is kept).
void fail_block(Worker& w, cudaError_t error, const std::string& what);

// Warp collectives and WMMA calls (block_warp.cpp).

/// The lane a shuffle reads for `reader`, or -1 when it keeps its own value.
[[nodiscard]] int shuffle_source(const CudaThread& reader, unsigned lane);
/// Completes the collective that the non-exited lanes of `mask` in `warp` wait in, if all of them
/// have arrived with the same operation and mask. Returns whether it completed.
bool try_complete(Worker& w, unsigned warp, unsigned mask, WarpOp op);
/// Every warp-level mma_sync completed (gpulab::sim::tensor_core_operations).
[[nodiscard]] std::atomic<std::uint64_t>& tensor_core_operation_count();
/// Completes the WMMA call the lanes of the (full) `warp` wait in, once all 32 made it: checks
/// that they agree, and for mma_sync computes every lane's result. Fails the block when they can
/// never meet (a lane exited) or disagree. Returns whether it completed.
bool try_complete_matrix(Worker& w, unsigned warp);

}  // namespace gpulab::sim::detail
