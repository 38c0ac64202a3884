// Unit tests of memory_timeline_view (gpulab/viewer/memory_timeline.hpp): hand-made histories
// with hand-placed bands.
#include "gpulab/viewer/memory_timeline.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpulab::viewer {
namespace {

// An event with the totals after it, reserved equal to allocated.
MemoryEvent event(MemoryEventKind kind, std::uint64_t id, std::size_t bytes, double time_ms,
                  std::size_t allocated, std::string file = "", unsigned line = 0) {
  MemoryEvent e;
  e.kind = kind;
  e.id = id;
  e.bytes = bytes;
  e.time_ms = time_ms;
  e.allocated_after = allocated;
  e.reserved_after = allocated;
  e.file = std::move(file);
  e.line = line;
  return e;
}

constexpr auto kAllocate = MemoryEventKind::allocate;
constexpr auto kFree = MemoryEventKind::free;

const TimelineBand* band_of(const MemoryTimelineView& view, std::uint64_t id) {
  for (const TimelineBand& band : view.bands) {
    if (band.kind == TimelineBand::Kind::allocation && band.id == id) {
      return &band;
    }
  }
  return nullptr;
}

TEST(MemoryTimeline, BandsStackInTheOrderTheAllocationsWereMadeAndFallWhenOneBelowIsFreed) {
  MemoryHistory h;
  h.capacity_bytes = 1000;
  h.events = {event(kAllocate, 1, 100, 0, 100, "labs/lab05_memory/memory.cu", 12),
              event(kAllocate, 2, 300, 1, 400), event(kFree, 1, 100, 2, 300),
              event(kFree, 2, 300, 4, 0)};
  const MemoryTimelineView v = memory_timeline_view(h);
  EXPECT_EQ(v.events, 4U);
  EXPECT_EQ(v.capacity_bytes, 1000);
  EXPECT_EQ(v.peak_bytes, 400);
  EXPECT_EQ(v.peak_ms, 1);
  ASSERT_EQ(v.bands.size(), 2U);
  const TimelineBand* a = band_of(v, 1);
  const TimelineBand* b = band_of(v, 2);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->label, "100 B  memory.cu:12") << "the file without its folders";
  EXPECT_EQ(b->label, "300 B  (no source line)");
  ASSERT_EQ(a->segments.size(), 1U) << "0..1 and 1..2 at the bottom merge into one";
  EXPECT_EQ(a->segments[0].t0_ms, 0);
  EXPECT_EQ(a->segments[0].t1_ms, 2);
  EXPECT_EQ(a->segments[0].base_bytes, 0);
  ASSERT_EQ(b->segments.size(), 2U);
  EXPECT_EQ(b->segments[0].base_bytes, 100) << "on top of the first";
  EXPECT_EQ(b->segments[0].t0_ms, 1);
  EXPECT_EQ(b->segments[1].base_bytes, 0) << "falls once the first is freed";
  EXPECT_EQ(b->segments[1].t1_ms, 4);
  EXPECT_EQ(v.allocated_bytes, (std::vector<double>{100, 400, 300, 0}));
  EXPECT_GT(v.end_ms, 4);
  EXPECT_EQ(v.alive_at_peak,
            (std::vector<std::string>{"300 B  (no source line)", "100 B  memory.cu:12"}));
}

TEST(MemoryTimeline, BeyondTheLargestTheRestIsOneBandOnTopAndEarlierMemoryOneAtTheBottom) {
  MemoryHistory h;
  // 50 bytes were allocated before the recording started; then 1000, 10, 20.
  h.events = {event(kAllocate, 5, 1000, 0, 1050), event(kAllocate, 6, 10, 1, 1060),
              event(kAllocate, 7, 20, 2, 1080)};
  const MemoryTimelineView v = memory_timeline_view(h, 1);
  ASSERT_EQ(v.bands.size(), 3U);
  EXPECT_EQ(v.bands[0].kind, TimelineBand::Kind::before);
  EXPECT_EQ(v.bands[0].segments.front().height_bytes, 50);
  EXPECT_EQ(v.bands[1].id, 5U);
  EXPECT_EQ(v.bands[1].segments.front().base_bytes, 50);
  const TimelineBand& others = v.bands[2];
  EXPECT_EQ(others.kind, TimelineBand::Kind::others);
  ASSERT_EQ(others.segments.size(), 2U);
  EXPECT_EQ(others.segments[0].base_bytes, 1050);
  EXPECT_EQ(others.segments[0].height_bytes, 10);
  EXPECT_EQ(others.segments[1].height_bytes, 30);
  EXPECT_EQ(v.peak_bytes, 1080);
}

TEST(MemoryTimeline, AnEmptyHistorySaysWhyAndReservesAndReleasesMoveOnlyTheReservedLine) {
  const MemoryTimelineView empty = memory_timeline_view(MemoryHistory{});
  EXPECT_TRUE(empty.bands.empty());
  EXPECT_FALSE(empty.empty_reason.empty());

  MemoryHistory h;
  MemoryEvent reserve = event(MemoryEventKind::reserve, 1, 4096, 0, 0);
  reserve.reserved_after = 4096;
  h.events = {reserve, event(kAllocate, 2, 64, 1, 64)};
  h.events[1].reserved_after = 4096;
  const MemoryTimelineView v = memory_timeline_view(h);
  EXPECT_EQ(v.reserved_bytes, (std::vector<double>{4096, 4096}));
  ASSERT_EQ(v.bands.size(), 1U) << "a reserve is not an allocation";
  EXPECT_EQ(v.bands[0].id, 2U);
}

}  // namespace
}  // namespace gpulab::viewer
