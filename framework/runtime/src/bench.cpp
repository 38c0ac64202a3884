#include "gpulab/runtime/bench.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "gpulab/runtime/device_query.hpp"
#include "gpulab/runtime/stream.hpp"

namespace gpulab {

void BenchOptions::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("BenchOptions: " + what); };
  if (warmup_runs < 0) {
    fail("warmup_runs must be >= 0");
  }
  if (min_samples < 1) {
    fail("min_samples must be >= 1");
  }
  if (max_samples < min_samples) {
    fail("max_samples must be >= min_samples");
  }
  if (!(min_time_ms >= 0) || !std::isfinite(min_time_ms)) {
    fail("min_time_ms must be >= 0 and finite");
  }
  if (!(target_rel_noise >= 0) || !std::isfinite(target_rel_noise)) {
    fail("target_rel_noise must be >= 0 and finite");
  }
  if (!(time_limit_ms > 0) || !std::isfinite(time_limit_ms)) {
    fail("time_limit_ms must be positive and finite");
  }
}

std::string_view to_string(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::converged:
      return "converged";
    case StopReason::max_samples:
      return "max_samples";
    case StopReason::time_limit:
      return "time_limit";
    case StopReason::repeated:
      return "repeated";
  }
  return "?";
}

namespace {

// Keeps the stream drained on every exit path, so a throwing launch never leaves work queued
// behind the caller's back.
class SynchronizeOnExit {
 public:
  explicit SynchronizeOnExit(cudaStream_t stream) : stream_(stream) {}
  ~SynchronizeOnExit() { GPULAB_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_)); }
  SynchronizeOnExit(const SynchronizeOnExit&) = delete;
  SynchronizeOnExit& operator=(const SynchronizeOnExit&) = delete;

 private:
  cudaStream_t stream_;
};

}  // namespace

Measurement measure(const LaunchFn& launch, cudaStream_t stream, const BenchOptions& options) {
  options.validate();
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  };
  SynchronizeOnExit drain(stream);
  Measurement m;
  for (int i = 0; i < options.warmup_runs && elapsed_ms() < options.time_limit_ms; ++i) {
    launch(stream);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    ++m.warmup_runs;
  }
  Event start;
  Event stop;
  double sampled_ms = 0;
  const bool deterministic = event_clock() == TimingClock::modeled;
  while (true) {
    if (options.cold_l2) {
      flush_l2(stream);  // enqueued before `start`: the flush is not part of the sample
    }
    start.record(stream);
    launch(stream);
    stop.record(stream);
    stop.synchronize();
    const double sample = static_cast<double>(Event::elapsed_ms(start, stop));
    m.samples_ms.push_back(sample);
    sampled_ms += sample;
    const auto n = static_cast<int>(m.samples_ms.size());
    if (deterministic && n >= 2 &&
        std::abs(m.samples_ms[n - 1] - m.samples_ms[n - 2]) <=
            1e-6 * std::max(m.samples_ms[n - 1], m.samples_ms[n - 2])) {
      m.stop = StopReason::repeated;
      break;
    }
    if (n >= options.min_samples && sampled_ms >= options.min_time_ms &&
        summarize(m.samples_ms).rel_noise <= options.target_rel_noise) {
      m.stop = StopReason::converged;
      break;
    }
    if (n >= options.max_samples) {
      m.stop = StopReason::max_samples;
      break;
    }
    if (elapsed_ms() >= options.time_limit_ms) {
      m.stop = StopReason::time_limit;
      break;
    }
  }
  m.summary = summarize(m.samples_ms);
  m.wall_ms = elapsed_ms();
  return m;
}

L2Flusher::L2Flusher(std::size_t bytes) {
  if (bytes == 0) {
    int device = 0;
    int l2_bytes = 0;
    GPULAB_CHECK(cudaGetDevice(&device));
    GPULAB_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    // Twice the cache, so no line of the previous contents survives LRU-like replacement.
    bytes = 2 * static_cast<std::size_t>(l2_bytes > 0 ? l2_bytes : 1 << 20);
  }
  buffer_ = DeviceBuffer<unsigned char>(bytes);
}

void L2Flusher::flush(cudaStream_t stream) {
  GPULAB_CHECK(cudaMemsetAsync(buffer_.data(), 0, buffer_.bytes(), stream));
}

namespace {
std::atomic<std::uint64_t> g_flushes{0};
}  // namespace

void flush_l2(cudaStream_t stream) {
  // Created once per process and never destroyed: a static destructor calling cudaFree after
  // the runtime has shut down would fail.
  static L2Flusher* const flusher = new L2Flusher();
  flusher->flush(stream);
  g_flushes.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t l2_flush_count() noexcept {
  return g_flushes.load(std::memory_order_relaxed);
}

}  // namespace gpulab
