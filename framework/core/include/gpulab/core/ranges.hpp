// Named profiling ranges: an NVTX range (what Nsight Systems shows on its timeline) and, while a
// RangeRecorder is alive, an entry the program itself can read (tests check that the labs
// profile what they claim to).
//
//   {
//     gpulab::ScopedRange range("Softmax");   // nvtxRangePushA("Softmax")
//     ...                                     // the work, enqueued and timed
//   }                                         // nvtxRangePop()
//
//   nsys profile --trace=cuda,nvtx gpulab run lab02    shows the ranges above the kernels.
//
// NVTX is header-only (the toolkit's nvtx3); a range costs next to nothing unless a tool such as
// Nsight Systems is attached. Built without the toolkit, ranges are only recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpulab {

/// One range as recorded: name, nesting depth (0 = outermost) and host times since the
/// recorder started.
struct RecordedRange {
  std::string name;     ///< as given to ScopedRange
  int depth = 0;        ///< ranges open around it on the same thread
  double start_ms = 0;  ///< when it opened, since the recorder started
  double end_ms = 0;    ///< when it closed
};

/// Opens a named range for its lifetime (NVTX push/pop on this thread). Not copyable, not movable:
/// it brackets a scope.
class ScopedRange {
 public:
  explicit ScopedRange(std::string name);
  ~ScopedRange();
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  std::size_t slot_;         // index of this range in the active recorder, or npos
  std::uint64_t recording_;  // which recorder the slot belongs to
};

/// Records every ScopedRange the process opens while it is alive. One recorder at a time: a
/// second throws std::logic_error.
class RangeRecorder {
 public:
  RangeRecorder();
  ~RangeRecorder();
  RangeRecorder(const RangeRecorder&) = delete;
  RangeRecorder& operator=(const RangeRecorder&) = delete;

  /// Every range opened since the recorder started, in opening order; a range still open has
  /// end_ms == start_ms.
  [[nodiscard]] std::vector<RecordedRange> ranges() const;
  /// The names of ranges(), in the same order.
  [[nodiscard]] std::vector<std::string> names() const;
};

/// True when this build emits NVTX ranges (built with the CUDA toolkit's nvtx3 headers).
[[nodiscard]] bool nvtx_enabled() noexcept;

}  // namespace gpulab
