// A gate that holds a stream: the work queued on it after close() waits until open() (or until a
// safety timeout, so a test that fails half-way never hangs the device). A host function
// (cudaLaunchHostFunc) does the waiting, the same on both backends; on sim, whose one queue runs
// every stream in order, it holds all streams.
//
//   StreamGate gate;
//   gate.close(stream);   // work queued on `stream` from here waits
//   ...                   // the host sees that work as not done (cudaEventQuery: not ready)
//   gate.open();          // it runs
//
// Launch every kernel that will wait behind the gate once before close(): CUDA loads a kernel at
// its first launch (lazy loading, the default since CUDA 12.2), and loading can wait for the
// device's queued work, the gate's wait included, so the launch itself would block until the
// gate's timeout ("Lazy Loading", "Potential Hazards", CUDA C++ Programming Guide; seen on an
// H100 with CUDA 13.0: the launch returned after the 10 s timeout). Copies and memsets need no
// loading.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab::testing {

class StreamGate {
 public:
  explicit StreamGate(std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : timeout_(timeout) {}
  ~StreamGate() {
    open();
    // Every queued wait must have run and returned before the gate it reads goes away (a host
    // function that never ran, on a device that failed, is given up after the timeout).
    std::unique_lock lock(mutex_);
    (void)opened_.wait_for(lock, timeout_ + std::chrono::seconds(5),
                           [this] { return returned_ == closed_; });
  }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  /// Queues the wait on `stream`.
  void close(cudaStream_t stream) {
    GPULAB_CHECK(cudaLaunchHostFunc(stream, &wait, this));
    const std::scoped_lock lock(mutex_);
    ++closed_;
  }

  /// Lets the held work run.
  void open() {
    {
      const std::scoped_lock lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

  /// True when the gate opened by its timeout, not by open().
  [[nodiscard]] bool timed_out() const {
    const std::scoped_lock lock(mutex_);
    return timed_out_;
  }

 private:
  static void wait(void* self) {
    auto& gate = *static_cast<StreamGate*>(self);
    std::unique_lock lock(gate.mutex_);
    if (!gate.opened_.wait_for(lock, gate.timeout_, [&] { return gate.open_; })) {
      gate.timed_out_ = true;
    }
    ++gate.returned_;
    // Under the lock: the destructor, waiting for this return, cannot destroy the gate before
    // the lock is let go, and nothing touches the gate after that.
    gate.opened_.notify_all();
  }

  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
  bool timed_out_ = false;
  int closed_ = 0;    // waits queued
  int returned_ = 0;  // waits that returned
};

}  // namespace gpulab::testing
