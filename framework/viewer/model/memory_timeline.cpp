// The memory history panel's view (memory_timeline.hpp): the history replayed event by event.
#include "gpulab/viewer/memory_timeline.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "gpulab/core/console.hpp"

namespace gpulab::viewer {
namespace {

constexpr std::size_t kAliveListed = 10;

// "4.2 MB  attention.cu:120": the size and where it was made, the file without its folders.
std::string allocation_label(std::size_t bytes, const MemoryEvent& made) {
  std::string label = format_bytes(static_cast<double>(bytes)) + "  ";
  if (made.file.empty()) {
    return label + "(no source line)";
  }
  const std::size_t slash = made.file.find_last_of('/');
  return label + (slash == std::string::npos ? made.file : made.file.substr(slash + 1)) + ":" +
         std::to_string(made.line);
}

void extend(TimelineBand& band, double t0, double t1, double base, double height) {
  if (!(height > 0) || !(t1 > t0)) {
    return;
  }
  if (!band.segments.empty()) {
    TimelineSegment& last = band.segments.back();
    if (last.t1_ms == t0 && last.base_bytes == base && last.height_bytes == height) {
      last.t1_ms = t1;
      return;
    }
  }
  band.segments.push_back({t0, t1, base, height});
}

}  // namespace

MemoryTimelineView memory_timeline_view(const MemoryHistory& history, std::size_t max_bands) {
  MemoryTimelineView view;
  view.events = history.events.size();
  view.dropped_events = history.dropped_events;
  view.capacity_bytes = static_cast<double>(history.capacity_bytes);
  if (history.events.empty()) {
    view.empty_reason = "the history has no events (was anything allocated while it recorded?)";
    return view;
  }

  // The largest allocations get bands of their own, stacked in the order they were made.
  std::vector<const MemoryEvent*> made;
  for (const MemoryEvent& e : history.events) {
    if (e.kind == MemoryEventKind::allocate) {
      made.push_back(&e);
    }
  }
  std::sort(made.begin(), made.end(), [](const MemoryEvent* a, const MemoryEvent* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->id < b->id;
  });
  made.resize(std::min(made.size(), max_bands));
  std::sort(made.begin(), made.end(),
            [](const MemoryEvent* a, const MemoryEvent* b) { return a->id < b->id; });
  TimelineBand before{TimelineBand::Kind::before, 0, "allocated before the recording", {}};
  std::map<std::uint64_t, TimelineBand> own;  // by id: the stacking order
  for (const MemoryEvent* e : made) {
    own.emplace(
        e->id,
        TimelineBand{TimelineBand::Kind::allocation, e->id, allocation_label(e->bytes, *e), {}});
  }
  TimelineBand others{TimelineBand::Kind::others, 0, "other allocations", {}};

  const double first = history.events.front().time_ms;
  const double last = history.events.back().time_ms;
  view.end_ms = last + std::max((last - first) * 0.05, 1e-3);
  // The peak: the first event after which the most is allocated.
  std::size_t peak = 0;
  for (std::size_t i = 1; i < history.events.size(); ++i) {
    if (history.events[i].allocated_after > history.events[peak].allocated_after) {
      peak = i;
    }
  }
  view.peak_bytes = static_cast<double>(history.events[peak].allocated_after);
  view.peak_ms = history.events[peak].time_ms;

  // Replayed with running sums: each event costs the bands of their own, not every allocation.
  std::map<std::uint64_t, std::pair<std::size_t, const MemoryEvent*>> live;  // id -> bytes, made
  std::map<std::uint64_t, std::size_t> own_live;                             // id -> bytes
  double known = 0;      // bytes of the allocations the history saw made, alive
  double own_bytes = 0;  // of those, the ones with bands of their own
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const MemoryEvent& e = history.events[i];
    if (e.kind == MemoryEventKind::allocate && live.emplace(e.id, std::pair(e.bytes, &e)).second) {
      known += static_cast<double>(e.bytes);
      if (own.count(e.id) != 0) {
        own_live[e.id] = e.bytes;
        own_bytes += static_cast<double>(e.bytes);
      }
    } else if (const auto it = live.find(e.id);
               e.kind == MemoryEventKind::free && it != live.end()) {
      known -= static_cast<double>(it->second.first);
      if (own_live.erase(e.id) != 0) {
        own_bytes -= static_cast<double>(it->second.first);
      }
      live.erase(it);
    }
    view.time_ms.push_back(e.time_ms);
    view.allocated_bytes.push_back(static_cast<double>(e.allocated_after));
    view.reserved_bytes.push_back(static_cast<double>(e.reserved_after));

    const double t0 = e.time_ms;
    const double t1 = i + 1 < history.events.size() ? history.events[i + 1].time_ms : view.end_ms;
    double base = std::max(static_cast<double>(e.allocated_after) - known, 0.0);  // before
    extend(before, t0, t1, 0, base);
    for (const auto& [id, bytes] : own_live) {
      extend(own.at(id), t0, t1, base, static_cast<double>(bytes));
      base += static_cast<double>(bytes);
    }
    extend(others, t0, t1, base, known - own_bytes);

    if (i == peak) {
      std::vector<std::pair<std::size_t, const MemoryEvent*>> alive;
      for (const auto& [id, entry] : live) {
        alive.push_back(entry);
      }
      // Largest first, then by id (the map's order): a total order, so no stable sort is needed
      // (libstdc++ 12's stable_sort trips clang 19's deprecation warnings).
      std::ranges::sort(alive, [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second->id < b.second->id;
      });
      for (std::size_t k = 0; k < alive.size() && k < kAliveListed; ++k) {
        view.alive_at_peak.push_back(allocation_label(alive[k].first, *alive[k].second));
      }
      if (alive.size() > kAliveListed) {
        view.alive_at_peak.push_back("... and " + std::to_string(alive.size() - kAliveListed) +
                                     " smaller");
      }
    }
  }

  if (!before.segments.empty()) {
    view.bands.push_back(std::move(before));
  }
  for (auto& [id, band] : own) {
    view.bands.push_back(std::move(band));
  }
  if (!others.segments.empty()) {
    view.bands.push_back(std::move(others));
  }
  return view;
}

}  // namespace gpulab::viewer
