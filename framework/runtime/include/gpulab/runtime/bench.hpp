// The benchmark harness every lab and the viewer use: CUDA-event timing on a given stream,
// warm-up excluded, optional cold L2, and a noise-based stopping rule.
//
//   gpulab::Stream stream;
//   gpulab::Measurement m = gpulab::measure(
//       [&](cudaStream_t s) { kernels::vector_add(a, b, c, n, s); }, stream);
//   double gb_s = gpulab::bandwidth_gb_s(12.0 * n, m.summary.median_ms);
//
// Each sample is one launch between two events recorded on the stream, followed by a wait on
// the stop event, so the host never queues ahead and every sample starts on an idle stream. (For
// launches of a few microseconds the sample therefore includes the launch latency: that is the
// launch-bound regime lab 01 shows.) Sampling stops at the first of:
//   converged    at least min_samples, at least min_time_ms of samples, relative noise of the
//                samples (stddev / mean) at or below target_rel_noise;
//   max_samples  max_samples taken;
//   time_limit   time_limit_ms of wall-clock time spent (warm-up included), after >= 1 sample;
//   repeated     on the sim's modeled clock (event_clock() == modeled), two samples in a row equal
//                to 1 part in 10^6 (cudaEventElapsedTime's float, and the modeled clock's absolute
//                times, round the last digits): the clock is deterministic, so more samples would
//                repeat them. It takes precedence over min_samples and min_time_ms.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "gpulab/core/stats.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab {

/// Enqueues the work to time on the stream it is given (and nothing else: no allocation, no
/// synchronization).
using LaunchFn = std::function<void(cudaStream_t)>;

/// How long and how carefully to measure.
struct BenchOptions {
  int warmup_runs = 3;             ///< untimed launches first (module load, clocks, caches)
  int min_samples = 10;            ///< at least this many timed samples
  int max_samples = 10000;         ///< at most this many
  double min_time_ms = 50;         ///< at least this much sampled time (sum of samples)
  double target_rel_noise = 0.02;  ///< stop once stddev / mean is at or below this
  double time_limit_ms = 5000;     ///< wall-clock budget, warm-up included
  bool cold_l2 = false;            ///< flush the L2 cache before each sample (outside the timing)

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const;
};

/// Why sampling stopped.
enum class StopReason { converged, max_samples, time_limit, repeated };

/// "converged", "max_samples", "time_limit", "repeated".
[[nodiscard]] std::string_view to_string(StopReason reason) noexcept;

/// What measure() returns.
struct Measurement {
  std::vector<double> samples_ms;           ///< every timed sample, in order, warm-up excluded
  Summary summary;                          ///< statistics of samples_ms
  StopReason stop = StopReason::converged;  ///< why it stopped
  int warmup_runs = 0;                      ///< untimed launches done first
  double wall_ms = 0;                       ///< wall-clock time spent, warm-up included
};

/// Times `launch` on `stream` (see the header comment). Throws std::invalid_argument on bad
/// options, and whatever the launch or a CUDA call throws (CudaError); the stream is
/// synchronized before it returns either way.
[[nodiscard]] Measurement measure(const LaunchFn& launch, cudaStream_t stream,
                                  const BenchOptions& options = {});

/// Evicts the L2 cache by writing a device buffer twice its size (the current device's L2).
/// // move-only
class L2Flusher {
 public:
  /// Sizes the buffer for the current device; `bytes` overrides it.
  explicit L2Flusher(std::size_t bytes = 0);
  /// Enqueues the flush (a cudaMemsetAsync over the buffer) on `stream`.
  void flush(cudaStream_t stream);
  /// Size of the buffer written by each flush.
  [[nodiscard]] std::size_t bytes() const noexcept { return buffer_.bytes(); }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

/// Flushes L2 on `stream` with a process-wide L2Flusher, created on first use.
void flush_l2(cudaStream_t stream);
/// How many times flush_l2 has enqueued a flush in this process (tests use it).
[[nodiscard]] std::uint64_t l2_flush_count() noexcept;

}  // namespace gpulab
