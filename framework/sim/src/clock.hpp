// The modeled device clock of the sim backend (internal to framework/sim; the public switch is
// gpulab::sim::clock_mode(), GPULAB_SIM_CLOCK).
//
// With the modeled clock, each stream has a time in seconds that advances by the modeled duration
// of every operation queued on it, and CUDA events read it instead of the host's clock:
//   kernel   max(the counted-traffic model of gpulab/core/traffic_model.hpp, launch overhead +
//            the longest clock64() wait of any of its threads)
//   copy     launch overhead + bytes / host link bandwidth (host <-> device), or 2 x bytes / DRAM
//            bandwidth (device <-> device)
//   memset   launch overhead + bytes / DRAM bandwidth
//   SGEMM    the time model on what the fastest register-blocked GEMM kernel of the catalog
//            would count on the problem (gpulab/core/gemm_model.hpp), launch overhead included;
//            its operands go through the L2 model as a kernel's would
// An operation starts when its stream's earlier work ends, and not before the host issued it;
// work on the legacy default stream also waits for every blocking stream, and work on a blocking
// stream for the legacy stream's last; cudaStreamWaitEvent moves a stream to the event's time.
//
// The host has a modeled clock too: the time at which it issues its next call. It advances by
// the modeled host time of the runtime's allocation calls (cudaMalloc, cudaFree, cudaMallocHost,
// cudaFreeHost; a launch or copy costs the host nothing here, its overhead is in the operation's
// device time), and a host that waited for work (a synchronization, cudaFree's wait for the
// device, a query that found the work done) is at least at that work's end. So an allocation
// between two operations of an idle stream shows as a gap between them. Concurrent streams do not
// slow each other down (the model has no contention between them). All of it runs on the device
// thread, which also takes at least each operation's modeled duration in real time, so work is not
// done sooner than it would be on a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "gpulab/core/counters.hpp"

namespace gpulab::sim::detail {

/// Cycles a clock64() call advances its thread's modeled clock (a read-and-compare loop step).
inline constexpr std::uint64_t kModeledCyclesPerClockRead = 32;

/// True when events use the modeled clock.
[[nodiscard]] bool modeled_clock() noexcept;

/// Queues timed work on `stream`: `work(start_s)` runs on the device thread at the stream's
/// modeled start time and returns its modeled duration in seconds (ignored with the host clock).
/// Same errors as enqueue().
cudaError_t enqueue_timed(cudaStream_t stream, std::function<double(double start_s)> work) noexcept;

/// The modeled time at which the stream's queued work so far is done, and not before `issue_s`,
/// the host's time when it queued the caller (device thread).
[[nodiscard]] double modeled_now(cudaStream_t stream, bool blocking, double issue_s);
/// Moves the stream's clock forward to `time_s` if it is behind (device thread).
void modeled_wait(cudaStream_t stream, double time_s);

/// The host's modeled time (host thread; 0 with the host clock).
[[nodiscard]] double host_now();
/// The host spent `seconds` in a runtime call (no-op with the host clock).
void host_spend(double seconds);
/// The host waited for, or found done: the work queued so far on `stream` (the legacy stream:
/// and on every blocking stream), on every stream, or up to a modeled time. No-ops with the host
/// clock. Host thread, after the wait.
void host_waited_for_stream(cudaStream_t stream);
void host_waited_for_device();
void host_waited_until(double time_s);

/// Modeled host time of the runtime's allocation calls, in seconds (sources in clock.cpp).
[[nodiscard]] double modeled_malloc_seconds(std::size_t bytes);  ///< cudaMalloc, cudaFree
[[nodiscard]] double modeled_malloc_host_seconds(
    std::size_t bytes);  ///< cudaMallocHost, ...FreeHost

/// Modeled durations, in seconds.
[[nodiscard]] double overhead_s();  ///< a launch's overhead on the device's spec
[[nodiscard]] double modeled_kernel_seconds(const CountedLaunch& launch);
[[nodiscard]] double modeled_copy_seconds(std::size_t bytes, bool device_to_device);
[[nodiscard]] double modeled_memset_seconds(std::size_t bytes);
/// The launch cuBLAS's column-major SGEMM of m x n by depth k, `batch` times, reading C when
/// `reads_c` (beta != 0), is modeled as, with `operand_sectors_in_l2` of the operands' sectors in
/// the L2 model when it starts (count_library_call): the fastest register-blocked tiling of
/// gpulab/core/gemm_model.hpp, named "cublasSgemm as KERNEL", with its closed-form counts (no
/// launch id: the caller gives it one); its time is modeled_kernel_seconds() of it. nullopt when
/// no tiling fits the spec.
[[nodiscard]] std::optional<CountedLaunch> modeled_gemm_launch(std::int64_t m, std::int64_t n,
                                                               std::int64_t k, std::int64_t batch,
                                                               bool reads_c,
                                                               std::uint64_t operand_sectors_in_l2);

}  // namespace gpulab::sim::detail
