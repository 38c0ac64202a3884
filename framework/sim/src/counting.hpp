// Memory counting on sim (internal to framework/sim): what block.cpp and the runtime tell the
// counter, and what it keeps. The public side is in gpulab/sim/runtime.hpp (set_counting,
// counted_launches, ...); the mechanism is described in counting.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device_state.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/sim/device.hpp"
#include "gpulab/sim/launch.hpp"
#include "gpulab/sim/wmma.hpp"

namespace gpulab::sim::detail {

class Fiber;
struct KernelLaunch;

/// One kernel launch being counted; shared by the workers that run its blocks.
class LaunchCounter;
struct LaunchCounterDeleter {
  void operator()(LaunchCounter* counter) const noexcept;
};
using LaunchCounterPtr = std::unique_ptr<LaunchCounter, LaunchCounterDeleter>;

/// Whether this build's kernels were compiled to report their memory accesses.
[[nodiscard]] bool counting_compiled() noexcept;

/// A counter for `launch` (whose `counted` flag is set), or null.
[[nodiscard]] LaunchCounterPtr begin_counting(const KernelLaunch& launch);
/// Ends the launch: writes back L2 and returns the counted launch (none when it failed or was not
/// counted); keeps it in counted_launches() (and GPULAB_SIM_COUNTERS) when `keep`.
std::optional<CountedLaunch> finish_counting(LaunchCounterPtr counter, bool failed, bool keep);

// Per worker thread, from block.cpp. None of these is called when the launch is not counted.
void counting_begin_block(LaunchCounter& counter, unsigned block_linear, unsigned thread_count,
                          const void* dynamic_shared, std::size_t dynamic_shared_bytes);
/// The CUDA thread `linear` (its fiber) runs from now until counting_leave_thread().
void counting_enter_thread(unsigned linear, const Fiber& fiber) noexcept;
void counting_leave_thread() noexcept;
/// The CUDA thread `linear` waits at a barrier, or `exited`: it makes no more accesses in this
/// phase. Ends its counting until counting_enter_thread().
void counting_thread_done(unsigned linear, bool exited);
/// Every live thread of the block reached the same barrier: the requests formed so far are
/// complete. Returns what the sanitizer found wrong in the phase, in words (a race on shared
/// memory), or none: then the block fails with it.
[[nodiscard]] std::optional<std::string> counting_end_phase();
/// The block finished (or failed: its counts are dropped). Returns what the sanitizer found wrong
/// in its last phase, as counting_end_phase does.
[[nodiscard]] std::optional<std::string> counting_end_block(bool failed);
/// A warp of the block completed an mma_sync of m x n x k on `input` elements.
void counting_tensor_mma(MatrixElement input, int m, int n, int k) noexcept;
/// `warps` warps of the block passed a __syncthreads.
void counting_barrier(unsigned warps) noexcept;
/// The lanes `lanes` (a mask) of warp `warp` of the block completed the warp collective `op`.
void counting_warp_collective(WarpOp op, unsigned warp, unsigned lanes) noexcept;

/// A CUDA thread (counted or not) runs on this OS thread from device_code_enter() to
/// device_code_leave(): its accesses to device memory are a kernel's. Anywhere else, an
/// instrumented access to device memory is host code reaching it, which a GPU does not allow:
/// check_host_access ends the program with a message that says so.
void device_code_enter() noexcept;
void device_code_leave() noexcept;
/// For an access of `bytes` at `address` made outside device code by the instruction before
/// `pc`: returns when it touches no device memory, else prints what it touched and where and
/// aborts. Called by the access callbacks, and by the checked memcpy family (host_memory.cpp).
void check_host_access(std::uintptr_t address, std::size_t bytes, bool store,
                       const void* pc) noexcept;

/// Ends the running CUDA thread's block with cudaErrorIllegalAddress and `what` (block.cpp); only
/// from device code.
[[noreturn]] void fail_illegal_address(const char* what);
/// The same with cudaErrorMisalignedAddress.
[[noreturn]] void fail_misaligned_address(const char* what);

/// Copies and memsets pass through the modeled L2 too (a memset over a buffer larger than L2 is
/// how the harness flushes it); not part of any kernel's counters. Device thread only.
void count_copy(const void* destination, const void* source, std::size_t bytes);
/// A run of device memory a library call reads or writes.
struct MemoryRun {
  const void* address;
  std::size_t bytes;
};
/// A library call (cuBLAS) through the modeled L2, as count_copy does for copies: returns how many
/// sectors of `reads` the L2 held before the call (each sector of each run counted once per run),
/// then reads `reads`, writes `writes` and writes the dirty sectors back. 0 and nothing done when
/// no L2 is modeled (counting off and the host clock). Device thread only.
std::uint64_t count_library_call(const std::vector<MemoryRun>& reads,
                                 const std::vector<MemoryRun>& writes);
/// Records a library call the sim models as a kernel launch (cuBLAS: modeled_gemm_launch) as
/// counted, as finish_counting does a kernel's; for a call queued while counting was on (a call,
/// like a launch, keeps the setting it was queued with). Device thread only.
void record_library_launch(const CountedLaunch& launch);
/// Empties the L2 model (device thread).
void reset_l2_model();

}  // namespace gpulab::sim::detail
