// Unit tests of ranges.hpp: what a RangeRecorder records of the ScopedRanges opened while it is
// alive (names, nesting depth, order, times), one recorder at a time, ranges that outlive their
// recorder, ranges from several threads, and whether NVTX is compiled in.
#include "gpulab/core/ranges.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpulab {
namespace {

using Names = std::vector<std::string>;

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// `inner` opened and closed within `outer`.
void expect_within(const RecordedRange& inner, const RecordedRange& outer) {
  EXPECT_LE(outer.start_ms, inner.start_ms)
      << inner.name << " opened at " << inner.start_ms << " ms, before " << outer.name << " at "
      << outer.start_ms << " ms";
  EXPECT_LE(inner.end_ms, outer.end_ms)
      << inner.name << " closed at " << inner.end_ms << " ms, after " << outer.name << " at "
      << outer.end_ms << " ms";
}

TEST(Ranges, NestedRangesAreRecordedInOpeningOrderWithTheirDepth) {
  RangeRecorder recorder;
  {
    ScopedRange outer("outer");
    {
      ScopedRange first("first");
      ScopedRange deepest("deepest");
    }
    ScopedRange second("second");
  }
  ScopedRange after("after");
  const std::vector<RecordedRange> ranges = recorder.ranges();
  ASSERT_EQ(ranges.size(), 5u);
  const Names expected_names = {"outer", "first", "deepest", "second", "after"};
  const std::vector<int> expected_depths = {0, 1, 2, 1, 0};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].name, expected_names[i]) << "range " << i;
    EXPECT_EQ(ranges[i].depth, expected_depths[i]) << ranges[i].name;
  }
}

TEST(Ranges, NamesListsTheRangesInOpeningOrder) {
  RangeRecorder recorder;
  {
    ScopedRange a("Softmax");
    ScopedRange b("Softmax/kernel");
  }
  { ScopedRange c("Verify"); }
  EXPECT_EQ(recorder.names(), (Names{"Softmax", "Softmax/kernel", "Verify"}));
}

TEST(Ranges, TimesAreOrderedAndAnInnerRangeLiesWithinItsOuterRange) {
  RangeRecorder recorder;
  {
    ScopedRange outer("outer");
    sleep_ms(2);
    {
      ScopedRange inner("inner");
      sleep_ms(5);
    }
    sleep_ms(2);
  }
  { ScopedRange later("later"); }
  const std::vector<RecordedRange> r = recorder.ranges();
  ASSERT_EQ(r.size(), 3u);
  for (const RecordedRange& range : r) {
    EXPECT_GE(range.start_ms, 0.0) << range.name;
    EXPECT_LE(range.start_ms, range.end_ms) << range.name;
  }
  expect_within(r[1], r[0]);
  // The sleeps make the order strict, not just <=.
  EXPECT_LT(r[0].start_ms, r[1].start_ms);
  EXPECT_LT(r[1].end_ms, r[0].end_ms);
  EXPECT_GE(r[1].end_ms - r[1].start_ms, 4.5) << "inner slept 5 ms";
  EXPECT_LE(r[0].end_ms, r[2].start_ms) << "later opened after outer closed";
}

TEST(Ranges, ARangeStillOpenHasEndEqualToStart) {
  RangeRecorder recorder;
  ScopedRange open("open");
  sleep_ms(1);
  const std::vector<RecordedRange> r = recorder.ranges();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].end_ms, r[0].start_ms);
}

TEST(Ranges, NothingIsRecordedWithoutARecorder) {
  { ScopedRange unrecorded("before any recorder"); }
  RangeRecorder recorder;
  EXPECT_TRUE(recorder.ranges().empty()) << "first recorded: " << recorder.names().front();
}

TEST(Ranges, ARangeOpenedBeforeTheRecorderIsNotRecordedButCountsForDepth) {
  auto early = std::make_unique<ScopedRange>("early");
  RangeRecorder recorder;
  { ScopedRange late("late"); }
  early.reset();
  const std::vector<RecordedRange> r = recorder.ranges();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].name, "late");
  EXPECT_EQ(r[0].depth, 1) << "one range (early) was open around it on this thread";
}

TEST(Ranges, ASecondRecorderThrowsAndTheFirstKeepsRecording) {
  RangeRecorder first;
  { ScopedRange a("a"); }
  EXPECT_THROW(RangeRecorder second, std::logic_error);
  { ScopedRange b("b"); }
  EXPECT_EQ(first.names(), (Names{"a", "b"}));
}

TEST(Ranges, ANewRecorderStartsEmptyAfterTheLastOneEnded) {
  {
    RangeRecorder first;
    { ScopedRange a("from the first recorder"); }
    ASSERT_EQ(first.ranges().size(), 1u);
  }
  RangeRecorder second;
  EXPECT_TRUE(second.ranges().empty());
  { ScopedRange b("from the second recorder"); }
  EXPECT_EQ(second.names(), (Names{"from the second recorder"}));
}

TEST(Ranges, ARangeClosedUnderALaterRecorderDoesNotTouchThatRecordersRanges) {
  std::optional<RangeRecorder> first(std::in_place);
  // Slot 0 of the first recording.
  auto stale = std::make_unique<ScopedRange>("stale");
  first.reset();
  RangeRecorder second;
  { ScopedRange fresh("fresh"); }  // slot 0 of the second recording
  const double fresh_end = second.ranges().at(0).end_ms;
  sleep_ms(2);
  stale.reset();  // closes its slot 0 of a recording that is over
  const std::vector<RecordedRange> r = second.ranges();
  ASSERT_EQ(r.size(), 1u) << "stale must not appear in the second recording";
  EXPECT_EQ(r[0].name, "fresh");
  EXPECT_EQ(r[0].end_ms, fresh_end) << "closing the stale range changed fresh's end time: expected "
                                    << fresh_end << " ms, got " << r[0].end_ms << " ms";
}

TEST(Ranges, RangesFromSeveralThreadsAreAllRecordedWithPerThreadDepth) {
  RangeRecorder recorder;
  constexpr int kThreads = 4;
  {
    ScopedRange main_range("main");  // open on this thread only: no depth for the workers
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        ScopedRange outer("thread" + std::to_string(t));
        sleep_ms(1);
        ScopedRange inner("thread" + std::to_string(t) + "/inner");
        sleep_ms(1);
      });
    }
    for (std::thread& thread : threads) {
      thread.join();
    }
  }
  const std::vector<RecordedRange> r = recorder.ranges();
  ASSERT_EQ(r.size(), 1u + 2 * kThreads);
  EXPECT_EQ(r[0].name, "main");
  for (int t = 0; t < kThreads; ++t) {
    const std::string outer_name = "thread" + std::to_string(t);
    const RecordedRange* outer = nullptr;
    const RecordedRange* inner = nullptr;
    for (const RecordedRange& range : r) {
      if (range.name == outer_name) {
        outer = &range;
      } else if (range.name == outer_name + "/inner") {
        inner = &range;
      }
    }
    ASSERT_NE(outer, nullptr) << outer_name << " was not recorded";
    ASSERT_NE(inner, nullptr) << outer_name << "/inner was not recorded";
    EXPECT_EQ(outer->depth, 0) << outer_name;
    EXPECT_EQ(inner->depth, 1) << outer_name << "/inner";
    EXPECT_LE(inner->start_ms, inner->end_ms);
    expect_within(*inner, *outer);
    expect_within(*outer, r[0]);
  }
}

TEST(Ranges, NvtxIsEnabledExactlyWhenTheBuildFoundTheNvtx3Headers) {
  // GPULAB_HAVE_NVTX is private to ranges.cpp; tests/core/CMakeLists.txt passes the same
  // configure-time decision (GPULAB_NVTX_INCLUDE_DIR found or not) as GPULAB_TEST_EXPECT_NVTX.
  EXPECT_EQ(nvtx_enabled(), GPULAB_TEST_EXPECT_NVTX != 0);
  // With or without NVTX, ranges are recorded.
  RangeRecorder recorder;
  { ScopedRange range("recorded either way"); }
  EXPECT_EQ(recorder.names(), (Names{"recorded either way"}));
}

}  // namespace
}  // namespace gpulab
