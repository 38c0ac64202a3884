// Move-only owners of CUDA streams and events.
//
//   Stream stream;                           cudaStreamCreateWithFlags(cudaStreamNonBlocking)
//   Event start, stop;
//   start.record(stream); launch(stream); stop.record(stream);
//   stop.synchronize();
//   float ms = Event::elapsed_ms(start, stop);
//
//   double ms = event_timed_ms(stream, [&] { launch(stream); });   the same, once
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab {

namespace detail {

/// Owns a CUDA handle destroyed by Traits::destroy; the shared half of Stream and Event.
/// // move-only
template <class Handle, class Traits>
class UniqueHandle {
 public:
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~UniqueHandle() { reset(); }

  /// The handle; nullptr after a move.
  [[nodiscard]] Handle get() const noexcept { return handle_; }

 protected:
  UniqueHandle() = default;
  Handle handle_ = nullptr;

 private:
  void reset() noexcept {
    if (handle_ != nullptr) {
      check_noexcept(Traits::destroy(handle_), Traits::kDestroyCall, __FILE__, __LINE__);
      handle_ = nullptr;
    }
  }
};

struct StreamTraits {
  static constexpr const char* kDestroyCall = "cudaStreamDestroy";
  static cudaError_t destroy(cudaStream_t stream) noexcept { return cudaStreamDestroy(stream); }
};

struct EventTraits {
  static constexpr const char* kDestroyCall = "cudaEventDestroy";
  static cudaError_t destroy(cudaEvent_t event) noexcept { return cudaEventDestroy(event); }
};

/// True when `status` says the work is done, false for cudaErrorNotReady; throws otherwise.
inline bool ready(cudaError_t status, const char* call) {
  if (status == cudaErrorNotReady) {
    return false;
  }
  check(status, call, __FILE__, __LINE__);
  return true;
}

}  // namespace detail

/// A CUDA stream, destroyed on destruction. // move-only
class Stream : public detail::UniqueHandle<cudaStream_t, detail::StreamTraits> {
 public:
  /// Creates a stream. The default, cudaStreamNonBlocking, does not synchronize with the legacy
  /// default stream (stream 0), so other work on stream 0 cannot stretch a measurement.
  explicit Stream(unsigned int flags = cudaStreamNonBlocking) {
    GPULAB_CHECK(cudaStreamCreateWithFlags(&handle_, flags));
  }

  operator cudaStream_t() const noexcept { return get(); }  // NOLINT: handle conversion
  /// Blocks until all work enqueued so far has finished.
  void synchronize() const { GPULAB_CHECK(cudaStreamSynchronize(get())); }
  /// True when all enqueued work has finished (cudaStreamQuery), without blocking.
  [[nodiscard]] bool ready() const {
    return detail::ready(cudaStreamQuery(get()), "cudaStreamQuery");
  }
};

/// A CUDA event, destroyed on destruction. // move-only
class Event : public detail::UniqueHandle<cudaEvent_t, detail::EventTraits> {
 public:
  /// Creates an event; cudaEventDefault records timing, cudaEventDisableTiming does not.
  explicit Event(unsigned int flags = cudaEventDefault) {
    GPULAB_CHECK(cudaEventCreateWithFlags(&handle_, flags));
  }

  /// Enqueues the event on `stream`: it completes when the work before it has finished.
  void record(cudaStream_t stream) { GPULAB_CHECK(cudaEventRecord(get(), stream)); }
  /// Blocks until the event has completed.
  void synchronize() const { GPULAB_CHECK(cudaEventSynchronize(get())); }
  /// True when the event has completed, without blocking.
  [[nodiscard]] bool ready() const {
    return detail::ready(cudaEventQuery(get()), "cudaEventQuery");
  }
  /// Milliseconds between two completed events recorded with timing (resolution about 0.5 us).
  [[nodiscard]] static float elapsed_ms(const Event& start, const Event& stop) {
    float ms = 0.0f;
    GPULAB_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms;
  }
};

/// Records an event on `stream`, runs `work` (which enqueues on the stream, or calls the host
/// API), records a second event and waits for it: the milliseconds between the two. One sample,
/// no warm-up: what a single timed step or a first launch took, not a benchmark.
template <class Work>
double event_timed_ms(cudaStream_t stream, Work&& work) {
  Event start;
  Event stop;
  start.record(stream);
  std::forward<Work>(work)();
  stop.record(stream);
  stop.synchronize();
  return static_cast<double>(Event::elapsed_ms(start, stop));
}

}  // namespace gpulab
