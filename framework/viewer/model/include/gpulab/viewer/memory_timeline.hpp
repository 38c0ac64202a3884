// What the memory history panel shows, derived from a memory history (gpulab/core/
// memory_history.hpp) as plain data: device memory over time stacked by allocation, the largest
// allocations as bands of their own and the rest as one band, the reserved total, and the peak
// with what was alive at it. Like views.hpp, it takes whatever a loaded history holds and never
// throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/core/memory_history.hpp"

namespace gpulab::viewer {

/// Where a band sits for a while: from t0 to t1 (ms), from base up by height bytes.
struct TimelineSegment {
  double t0_ms = 0;
  double t1_ms = 0;
  double base_bytes = 0;
  double height_bytes = 0;
};

/// One band of the stack: one large allocation, or everything else together.
struct TimelineBand {
  enum class Kind { allocation, others, before };
  Kind kind = Kind::allocation;
  std::uint64_t id = 0;                   ///< the allocation's id (Kind::allocation)
  std::string label;                      ///< "4.2 MB  attention.cu:120", "others", ...
  std::vector<TimelineSegment> segments;  ///< in time order; equal neighbours merged
};

/// A history as a stacked timeline.
struct MemoryTimelineView {
  std::vector<TimelineBand> bands;         ///< bottom to top: before, allocations by id, others
  std::vector<double> time_ms;             ///< the time of each event
  std::vector<double> allocated_bytes;     ///< allocated after each event
  std::vector<double> reserved_bytes;      ///< reserved after each event
  double end_ms = 0;                       ///< where the last state is drawn to
  double peak_bytes = 0;                   ///< the most allocated after any event
  double peak_ms = 0;                      ///< when (the first event reaching it)
  std::vector<std::string> alive_at_peak;  ///< the allocations alive then, largest first
  std::size_t events = 0;                  ///< events in the history
  std::size_t dropped_events = 0;          ///< events the recording left out
  double capacity_bytes = 0;               ///< the device's memory; 0: unknown
  std::string empty_reason;                ///< set when there are no events
};

/// The timeline of `history`, with the `max_bands` largest allocations as bands of their own.
[[nodiscard]] MemoryTimelineView memory_timeline_view(const MemoryHistory& history,
                                                      std::size_t max_bands = 16);

}  // namespace gpulab::viewer
