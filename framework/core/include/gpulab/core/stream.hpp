// Move-only owners of CUDA streams and events.
//
//   Stream stream;                           cudaStreamCreateWithFlags(cudaStreamNonBlocking)
//   Event start, stop;
//   start.record(stream); launch(stream); stop.record(stream);
//   stop.synchronize();
//   float ms = Event::elapsed_ms(start, stop);
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "gpulab/core/cuda_check.hpp"

namespace gpulab {

/// A CUDA stream, destroyed on destruction. // move-only
class Stream {
 public:
  /// Creates a stream. The default, cudaStreamNonBlocking, does not synchronize with the legacy
  /// default stream (stream 0), so other work on stream 0 cannot stretch a measurement.
  explicit Stream(unsigned int flags = cudaStreamNonBlocking) {
    GPULAB_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  ~Stream() { reset(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      reset();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }

  /// The handle, for launches and async calls. nullptr after a move.
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }  // NOLINT: handle conversion
  /// Blocks until all work enqueued so far has finished.
  void synchronize() const { GPULAB_CHECK(cudaStreamSynchronize(stream_)); }
  /// True when all enqueued work has finished (cudaStreamQuery), without blocking.
  [[nodiscard]] bool ready() const {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaErrorNotReady) {
      return false;
    }
    GPULAB_CHECK(status);
    return true;
  }

 private:
  void reset() noexcept {
    if (stream_ != nullptr) {
      GPULAB_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
      stream_ = nullptr;
    }
  }

  cudaStream_t stream_ = nullptr;
};

/// A CUDA event, destroyed on destruction. // move-only
class Event {
 public:
  /// Creates an event; cudaEventDefault records timing, cudaEventDisableTiming does not.
  explicit Event(unsigned int flags = cudaEventDefault) {
    GPULAB_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~Event() { reset(); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      reset();
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }

  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
  /// Enqueues the event on `stream`: it completes when the work before it has finished.
  void record(cudaStream_t stream) { GPULAB_CHECK(cudaEventRecord(event_, stream)); }
  /// Blocks until the event has completed.
  void synchronize() const { GPULAB_CHECK(cudaEventSynchronize(event_)); }
  /// True when the event has completed, without blocking.
  [[nodiscard]] bool ready() const {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) {
      return false;
    }
    GPULAB_CHECK(status);
    return true;
  }
  /// Milliseconds between two completed events recorded with timing (resolution about 0.5 us).
  [[nodiscard]] static float elapsed_ms(const Event& start, const Event& stop) {
    float ms = 0.0f;
    GPULAB_CHECK(cudaEventElapsedTime(&ms, start.event_, stop.event_));
    return ms;
  }

 private:
  void reset() noexcept {
    if (event_ != nullptr) {
      GPULAB_CHECK_NOEXCEPT(cudaEventDestroy(event_));
      event_ = nullptr;
    }
  }

  cudaEvent_t event_ = nullptr;
};

}  // namespace gpulab
