// The CUDA runtime's streams and events on sim, and what each stream was given (runtime_state.hpp).
#include "gpulab/sim/runtime.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "clock.hpp"
#include "counting.hpp"
#include "queue.hpp"
#include "runtime_state.hpp"

namespace gpulab::sim {

// Whether work on `stream` (a live stream, or the legacy one) synchronizes with the legacy stream.
bool blocking(const CUstream_st* stream) {
  return stream == nullptr || (stream->flags & cudaStreamNonBlocking) == 0;
}

bool valid_stream(const State& s, cudaStream_t stream) {
  return stream == nullptr || s.streams.contains(stream);
}

namespace {

// Creates a handle and registers it as live (streams and events follow the same contract).
template <class Handle>
cudaError_t create_handle(std::set<Handle*> State::*live, Handle** out, Handle initial) noexcept {
  if (const cudaError_t error = check_usable(); error != cudaSuccess) {
    return error;
  }
  auto* created = new (std::nothrow) Handle(initial);
  if (created == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  State& s = state();
  std::scoped_lock lock(s.mutex);
  (s.*live).insert(created);
  *out = created;
  return cudaSuccess;
}

// Unregisters and deletes a live handle; anything else is an invalid handle.
template <class Handle>
cudaError_t destroy_handle(std::set<Handle*> State::*live, Handle* handle) noexcept {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  if (handle == nullptr || (s.*live).erase(handle) == 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  delete handle;
  return cudaSuccess;
}

// One operation noted on a stream, and the queue's sequence number when it was noted.
struct NotedEntry {
  StreamEntry entry;
  std::uint64_t seq = 0;
};

// What set_stream_recording keeps: per stream, the operations enqueued on it, in order.
struct StreamRecorder {
  std::mutex mutex;
  std::atomic<bool> on{false};  // read without the lock by every enqueue
  std::map<cudaStream_t, std::vector<NotedEntry>> entries;
};

StreamRecorder& recorder() {
  static StreamRecorder* const instance = new StreamRecorder();  // outlives static destructors
  return *instance;
}

}  // namespace

// Notes an operation the runtime has just accepted on `stream`, while recording is on.
void note(cudaStream_t stream, StreamOp op, const char* kernel) noexcept {
  StreamRecorder& r = recorder();
  if (!r.on.load(std::memory_order_relaxed)) {
    return;  // the usual case: no lock on the launch path
  }
  std::scoped_lock lock(r.mutex);
  if (!r.on) {
    return;
  }
  try {
    r.entries[stream].push_back({{op, kernel}, detail::DeviceQueue::instance().last(stream)});
  } catch (const std::bad_alloc&) {
    r.on = false;  // a record with holes would mislead: stop recording instead
    r.entries.clear();
  }
}

// Notes, after the host waited for everything up to `seq`, a host wait on each recorded stream
// whose last operation that covers (once: two waits in a row are one).
void note_host_wait(std::uint64_t seq) noexcept {
  StreamRecorder& r = recorder();
  if (!r.on.load(std::memory_order_relaxed)) {
    return;
  }
  std::scoped_lock lock(r.mutex);
  if (!r.on) {
    return;
  }
  try {
    for (auto& [stream, noted] : r.entries) {
      if (!noted.empty() && noted.back().entry.op != StreamOp::host_wait &&
          noted.back().seq <= seq) {
        noted.push_back({{StreamOp::host_wait, ""}, seq});
      }
    }
  } catch (const std::bad_alloc&) {
    r.on = false;
    r.entries.clear();
  }
}

void set_stream_recording(bool on) {
  StreamRecorder& r = recorder();
  std::scoped_lock lock(r.mutex);
  if (on) {
    r.entries.clear();
  }
  r.on = on;
}

std::vector<StreamEntry> stream_entries(cudaStream_t stream) {
  StreamRecorder& r = recorder();
  std::scoped_lock lock(r.mutex);
  std::vector<StreamEntry> entries;
  if (const auto it = r.entries.find(stream); it != r.entries.end()) {
    for (const NotedEntry& noted : it->second) {
      entries.push_back(noted.entry);
    }
  }
  return entries;
}

std::string describe(const StreamEntry& entry) {
  switch (entry.op) {
    case StreamOp::kernel:
      return "kernel " + entry.kernel;
    case StreamOp::event_record:
      return "event record";
    case StreamOp::event_wait:
      return "event wait";
    case StreamOp::memcpy:
      return "memcpy";
    case StreamOp::memset:
      return "memset";
    case StreamOp::l2_reset:
      return "L2 reset";
    case StreamOp::host_function:
      return "host function";
    case StreamOp::host_wait:
      return "host wait";
  }
  return "?";
}

namespace detail {

bool stream_is_blocking(cudaStream_t stream) {
  State& s = state();
  std::scoped_lock lock(s.mutex);
  return !s.streams.contains(stream) || blocking(stream);
}

cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) noexcept {
  if (const cudaError_t error = check_usable(); error != cudaSuccess) {
    return error;
  }
  State& s = state();
  std::scoped_lock lock(s.mutex);
  if (!valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  try {
    DeviceQueue::instance().push(stream, std::move(work));
  } catch (const std::bad_alloc&) {
    return fail(cudaErrorMemoryAllocation);
  }
  return cudaSuccess;
}

}  // namespace detail
}  // namespace gpulab::sim

using gpulab::sim::check_device;
using gpulab::sim::fail;
using gpulab::sim::state;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) noexcept {
  if (stream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) {
    return fail(cudaErrorInvalidValue);
  }
  return gpulab::sim::create_handle(&gpulab::sim::State::streams, stream, CUstream_st{flags});
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) noexcept {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

// As on a GPU, destroying a stream with queued work returns at once; the work still runs.
cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept {
  gpulab::sim::detail::DeviceQueue::instance().forget(stream);
  return gpulab::sim::destroy_handle(&gpulab::sim::State::streams, stream);
}

namespace {

// The last queue position of a live stream, or an invalid-handle error.
cudaError_t stream_position(cudaStream_t stream, std::uint64_t& seq) noexcept {
  if (const cudaError_t error = check_device(); error != cudaSuccess) {
    return error;
  }
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
  }
  // The legacy default stream waits for every stream; other streams only for their own work.
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  seq = stream == nullptr ? queue.last_any() : queue.last(stream);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept {
  std::uint64_t seq = 0;
  if (const cudaError_t error = stream_position(stream, seq); error != cudaSuccess) {
    return error;
  }
  const cudaError_t error = gpulab::sim::wait_for(seq);
  gpulab::sim::detail::host_waited_for_stream(stream);
  return error;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) noexcept {
  std::uint64_t seq = 0;
  if (const cudaError_t error = stream_position(stream, seq); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (!gpulab::sim::detail::DeviceQueue::instance().done(seq)) {
    return cudaErrorNotReady;
  }
  gpulab::sim::note_host_wait(seq);  // the host knows the stream's work is done: as if it waited
  gpulab::sim::detail::host_waited_for_stream(stream);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  if (fn == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
  }
  const cudaError_t error =
      gpulab::sim::detail::enqueue(stream, [fn, user_data] { fn(user_data); });
  if (error == cudaSuccess) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::host_function);
  }
  return error;
}

// One FIFO runs all streams in order, so work queued after an event's record always runs after it.
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  std::shared_ptr<EventRecord> record;
  {
    auto& s = state();
    std::scoped_lock lock(s.mutex);
    if (!s.events.contains(event) || !gpulab::sim::valid_stream(s, stream)) {
      return fail(cudaErrorInvalidResourceHandle);
    }
    if (flags != 0) {
      return fail(cudaErrorInvalidValue);
    }
    record = event->record;
  }
  if (record == nullptr) {
    return cudaSuccess;  // never recorded: nothing to wait for
  }
  // One FIFO runs everything in order; only the modeled clock has anything to wait for.
  const cudaError_t error = gpulab::sim::detail::enqueue(stream, [stream, record] {
    if (record->modeled) {
      gpulab::sim::detail::modeled_wait(stream, record->modeled_s);
    }
  });
  if (error == cudaSuccess) {
    gpulab::sim::note(stream, gpulab::sim::StreamOp::event_wait);
  }
  return error;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept {
  if (event == nullptr || (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming)) != 0) {
    return fail(cudaErrorInvalidValue);
  }
  return gpulab::sim::create_handle(&gpulab::sim::State::events, event, CUevent_st{flags, {}});
}

cudaError_t cudaEventCreate(cudaEvent_t* event) noexcept {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) noexcept {
  return gpulab::sim::destroy_handle(&gpulab::sim::State::events, event);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) noexcept {
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  const double issue_s = gpulab::sim::detail::host_now();
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(event) || !gpulab::sim::valid_stream(s, stream)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  auto record = std::make_shared<EventRecord>();
  record->seq = gpulab::sim::detail::DeviceQueue::instance().push(
      stream, [record, stream, issue_s, blocking = gpulab::sim::blocking(stream)] {
        record->time = gpulab::sim::detail::DeviceQueue::instance().ready_time();
        if (gpulab::sim::detail::modeled_clock()) {
          record->modeled = true;
          record->modeled_s = gpulab::sim::detail::modeled_now(stream, blocking, issue_s);
        }
      });
  event->record = std::move(record);
  gpulab::sim::note(stream, gpulab::sim::StreamOp::event_record);
  return cudaSuccess;
}

namespace {

// The queue position of an event's last record (0: never recorded), or an invalid-handle error.
cudaError_t event_record(cudaEvent_t event, std::shared_ptr<EventRecord>& record) noexcept {
  auto& s = state();
  std::scoped_lock lock(s.mutex);
  if (!s.events.contains(event)) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  record = event->record;
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept {
  std::shared_ptr<EventRecord> record;
  if (const cudaError_t error = event_record(event, record); error != cudaSuccess) {
    return error;
  }
  const cudaError_t error = gpulab::sim::wait_for(record ? record->seq : 0);
  if (record != nullptr && record->modeled) {
    gpulab::sim::detail::host_waited_until(record->modeled_s);
  }
  return error;
}

cudaError_t cudaEventQuery(cudaEvent_t event) noexcept {
  std::shared_ptr<EventRecord> record;
  if (const cudaError_t error = event_record(event, record); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = gpulab::sim::check_usable(); error != cudaSuccess) {
    return error;
  }
  // Never recorded: cudaSuccess, as the CUDA runtime documents.
  if (record == nullptr) {
    return cudaSuccess;
  }
  if (!gpulab::sim::detail::DeviceQueue::instance().done(record->seq)) {
    return cudaErrorNotReady;
  }
  gpulab::sim::note_host_wait(record->seq);  // the host knows the event is done: as if it waited
  if (record->modeled) {
    gpulab::sim::detail::host_waited_until(record->modeled_s);
  }
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) noexcept {
  if (ms == nullptr) {
    return fail(cudaErrorInvalidValue);
  }
  std::shared_ptr<EventRecord> first;
  std::shared_ptr<EventRecord> second;
  if (const cudaError_t error = event_record(start, first); error != cudaSuccess) {
    return error;
  }
  if (const cudaError_t error = event_record(stop, second); error != cudaSuccess) {
    return error;
  }
  // As on a GPU: both events recorded, with timing enabled, and both completed.
  if (((start->flags | stop->flags) & cudaEventDisableTiming) != 0 || !first || !second) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  auto& queue = gpulab::sim::detail::DeviceQueue::instance();
  if (!queue.done(first->seq) || !queue.done(second->seq)) {
    return fail(cudaErrorNotReady);
  }
  if (first->modeled != second->modeled) {
    return fail(cudaErrorInvalidResourceHandle);  // one on each clock: no common time base
  }
  *ms = first->modeled
            ? static_cast<float>((second->modeled_s - first->modeled_s) * 1e3)
            : std::chrono::duration<float, std::milli>(second->time - first->time).count();
  return cudaSuccess;
}
