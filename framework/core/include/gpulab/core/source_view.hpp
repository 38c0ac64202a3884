// A kernel's source view: the figures counted on each line of its code (counters.hpp's
// SourceLineCounters, counted on sim by line), each line's share of the kernel's L1 traffic, and
// the line's code, like Nsight Compute's Source page. For `gpulab profile --source`; GUI-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/core/counters.hpp"

namespace gpulab {

/// Bytes a line moved through L1: 32 per global sector, 128 per shared-memory wavefront (a
/// wavefront is one pass through the 32 banks of 4 bytes). Both are what L1 serves at up to 128
/// bytes per cycle per SM, so the bytes rank lines by the L1 cycles they take.
[[nodiscard]] std::uint64_t l1_bytes(const MemoryCounters& counters);

/// One line of the view.
struct SourceViewLine {
  SourceLineCounters figures;
  double l1_share_pct = 0;  ///< l1_bytes() of the line over the kernel's (0 where it has none)
  std::string code;         ///< the line's text without its indentation; "" where unreadable
};

/// The view of `lines` (one kernel's, summed over its launches): every line in file and line
/// order, with its share and its code read from its file (each file read once).
[[nodiscard]] std::vector<SourceViewLine> source_view(const std::vector<SourceLineCounters>& lines);

/// The `count` lines with the largest L1 share, largest first (ties in file and line order).
[[nodiscard]] std::vector<SourceViewLine> hottest_lines(const std::vector<SourceViewLine>& view,
                                                        std::size_t count);

/// A line of `kernel`'s view as a results file's result (result_kind::counted_line): params
/// kernel, file, line, code; counted metrics requests_count, excess_sectors_count,
/// dram_read_bytes, l1_share_percent, and where the line has them
/// load_sectors_per_request_ratio, store_sectors_per_request_ratio, l2_hit_rate_percent (global
/// requests), shared_wavefronts_count and bank_conflicts_count (shared requests).
[[nodiscard]] Result source_line_result(const std::string& kernel, const SourceViewLine& line);

}  // namespace gpulab
