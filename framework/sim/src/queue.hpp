// The simulated device's work queue and kernel execution (internal to framework/sim).
//
// All stream work (copies, memsets, kernels, event records, cuBLAS calls) goes through one FIFO
// executed by one device thread, in the order it was queued. That is a valid CUDA schedule
// (streams may always serialize) and it keeps every stream in order; the host thread returns as
// soon as the work is queued, so code that forgets to synchronize is as wrong on sim as on a GPU.
// Kernels spread their blocks over the worker threads (block.cpp).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "gpulab/core/counters.hpp"

namespace gpulab::sim::detail {

/// `text` as a decimal number: digits only (no sign, no spaces), within 64 bits; else nullopt.
/// Every number the sim reads from its environment goes through here.
inline std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) {
    return std::nullopt;
  }
  return value;
}

/// Queues `work` on `stream` (nullptr: the legacy default stream). Returns the device's sticky
/// error if one is set, cudaErrorInvalidResourceHandle for an unknown stream, else cudaSuccess.
/// Failures also set the calling thread's last error. `work` runs later on the device thread.
cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) noexcept;

/// Runs body(i) for every i in [0, count) on the simulator's worker threads and returns when all
/// have finished. Call it from queued work (the device thread) only.
void parallel_for(std::size_t count, const std::function<void(std::size_t)>& body);

/// A kernel launch as queued: the validated configuration, the kernel with its arguments, and the
/// schedule it runs under.
struct KernelLaunch {
  LaunchSpec spec;
  KernelCall call;
  Schedule schedule;
  std::uint64_t id = 0;   // unique per launch
  bool counted = false;   // its memory traffic is counted (counting on, or the modeled clock)
  bool kept = false;      // its counts go to counted_launches() (counting was on)
  bool sanitize = false;  // the sanitizer checks it (which needs it counted)
  // The modeled clock: its start in device cycles, and the longest clock64() wait of a thread.
  std::uint64_t start_cycles = 0;
  mutable std::atomic<std::uint64_t> longest_wait_cycles{0};
  KernelLaunch(const LaunchSpec& s, KernelCall c, Schedule order, std::uint64_t launch_id,
               bool count, bool keep, bool check = false)
      : spec(s),
        call(c),
        schedule(order),
        id(launch_id),
        counted(count || check),
        kept(keep),
        sanitize(check) {}
  ~KernelLaunch() { call.destroy(call.payload); }
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;
};

struct KernelFailure {
  cudaError_t error = cudaErrorLaunchFailure;
  std::string message;
};

/// True on a fiber running a CUDA thread.
bool inside_kernel() noexcept;

/// Runs every block of the launch; on the first failure stops and says what went wrong. A counted
/// launch leaves its record in `counted`.
std::optional<KernelFailure> execute_kernel(const KernelLaunch& launch,
                                            std::optional<CountedLaunch>& counted);

/// The FIFO and the device thread. Sequence numbers start at 1; 0 means "nothing queued".
class DeviceQueue {
 public:
  static DeviceQueue& instance();

  /// Queues work for `stream` and returns its sequence number.
  std::uint64_t push(cudaStream_t stream, std::function<void()> work);
  /// Blocks until the work with sequence number `seq` (and everything before it) has run.
  void wait(std::uint64_t seq);
  [[nodiscard]] bool done(std::uint64_t seq);
  /// The last sequence number queued on `stream` (0 if none) / on any stream.
  [[nodiscard]] std::uint64_t last(cudaStream_t stream);
  [[nodiscard]] std::uint64_t last_any();
  void forget(cudaStream_t stream);

  /// The sticky error a failed kernel left (cudaSuccess if none) and its message.
  [[nodiscard]] cudaError_t sticky();
  [[nodiscard]] std::string sticky_message();
  /// Called on the device thread when work fails: later work is skipped until clear_sticky().
  void set_sticky(cudaError_t error, std::string message);
  void clear_sticky();

  /// On the device thread, inside work: when that work became ready to run, the later of when it
  /// was queued and when the work before it ended. What an event record on the host clock reads:
  /// the device thread waking late from idle does not delay it.
  [[nodiscard]] std::chrono::steady_clock::time_point ready_time() const noexcept { return ready_; }

 private:
  struct Work {
    std::uint64_t seq;
    std::function<void()> run;
    std::chrono::steady_clock::time_point queued;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::deque<Work> work_;
  std::map<cudaStream_t, std::uint64_t> last_by_stream_;
  std::uint64_t queued_seq_ = 0;
  std::uint64_t done_seq_ = 0;
  cudaError_t sticky_ = cudaSuccess;
  std::string sticky_message_;
  bool started_ = false;  // the device thread starts with the first work
  // Device thread only: when the current work became ready, and when the previous work ended.
  std::chrono::steady_clock::time_point ready_;
  std::chrono::steady_clock::time_point previous_end_;
};

}  // namespace gpulab::sim::detail
