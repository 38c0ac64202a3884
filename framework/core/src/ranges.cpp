#include "gpulab/core/ranges.hpp"

#include <chrono>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>

#if GPULAB_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gpulab {

namespace {

constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

struct RecorderState {
  std::mutex mutex;
  bool active = false;
  std::uint64_t recording = 0;  // incremented by each recorder, so stale slots are ignored
  std::chrono::steady_clock::time_point origin;
  std::vector<RecordedRange> ranges;
};

RecorderState& state() {
  static RecorderState s;
  return s;
}

thread_local int t_depth = 0;

double since(std::chrono::steady_clock::time_point origin) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - origin)
      .count();
}

}  // namespace

ScopedRange::ScopedRange(std::string name) : slot_(kNoSlot), recording_(0) {
#if GPULAB_HAVE_NVTX
  nvtxRangePushA(name.c_str());
#endif
  RecorderState& s = state();
  {
    const std::lock_guard lock(s.mutex);
    if (s.active) {
      const double now = since(s.origin);
      slot_ = s.ranges.size();
      recording_ = s.recording;
      s.ranges.push_back({std::move(name), t_depth, now, now});
    }
  }
  ++t_depth;
}

ScopedRange::~ScopedRange() {
  --t_depth;
  RecorderState& s = state();
  {
    const std::lock_guard lock(s.mutex);
    if (s.active && recording_ == s.recording && slot_ < s.ranges.size()) {
      s.ranges[slot_].end_ms = since(s.origin);
    }
  }
#if GPULAB_HAVE_NVTX
  nvtxRangePop();
#endif
}

RangeRecorder::RangeRecorder() {
  RecorderState& s = state();
  const std::lock_guard lock(s.mutex);
  if (s.active) {
    throw std::logic_error("RangeRecorder: another recorder is already active");
  }
  s.active = true;
  ++s.recording;
  s.origin = std::chrono::steady_clock::now();
  s.ranges.clear();
}

RangeRecorder::~RangeRecorder() {
  RecorderState& s = state();
  const std::lock_guard lock(s.mutex);
  s.active = false;
  s.ranges.clear();
}

std::vector<RecordedRange> RangeRecorder::ranges() const {
  RecorderState& s = state();
  const std::lock_guard lock(s.mutex);
  return s.ranges;
}

std::vector<std::string> RangeRecorder::names() const {
  std::vector<std::string> result;
  for (const RecordedRange& range : ranges()) {
    result.push_back(range.name);
  }
  return result;
}

bool nvtx_enabled() noexcept {
  return GPULAB_HAVE_NVTX != 0;
}

}  // namespace gpulab
