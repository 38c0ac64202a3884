#include "gpulab/core/source_view.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "gpulab/core/files.hpp"

namespace gpulab {

std::uint64_t l1_bytes(const MemoryCounters& c) {
  return 32 * (c.global_load.sectors + c.global_store.sectors + c.global_atomic.sectors) +
         128 * (c.shared_load.wavefronts + c.shared_store.wavefronts + c.shared_atomic.wavefronts);
}

std::vector<SourceViewLine> source_view(const std::vector<SourceLineCounters>& lines) {
  std::uint64_t total = 0;
  for (const SourceLineCounters& l : lines) {
    total += l1_bytes(l.counters);
  }
  std::map<std::string, std::vector<std::string>> files;  // each file's lines, read once
  std::vector<SourceViewLine> view;
  for (const SourceLineCounters& l : lines) {
    SourceViewLine& v = view.emplace_back();
    v.figures = l;
    v.l1_share_pct =
        total == 0 ? 0
                   : 100.0 * static_cast<double>(l1_bytes(l.counters)) / static_cast<double>(total);
    if (l.file.empty()) {
      continue;
    }
    auto [file, added] = files.try_emplace(l.file);
    if (added) {
      std::istringstream in(read_file(l.file).value_or(""));
      for (std::string text; std::getline(in, text);) {
        file->second.push_back(text);
      }
    }
    if (l.line >= 1 && l.line <= file->second.size()) {
      const std::string& text = file->second[l.line - 1];
      const auto first = text.find_first_not_of(" \t");
      const auto last = text.find_last_not_of(" \t\r");
      v.code = first == std::string::npos ? "" : text.substr(first, last - first + 1);
    }
  }
  std::sort(view.begin(), view.end(), [](const SourceViewLine& a, const SourceViewLine& b) {
    return std::tie(a.figures.file, a.figures.line) < std::tie(b.figures.file, b.figures.line);
  });
  return view;
}

std::vector<SourceViewLine> hottest_lines(const std::vector<SourceViewLine>& view,
                                          std::size_t count) {
  std::vector<SourceViewLine> hottest = view;
  std::stable_sort(hottest.begin(), hottest.end(),
                   [](const auto& a, const auto& b) { return a.l1_share_pct > b.l1_share_pct; });
  hottest.resize(std::min(count, hottest.size()));
  return hottest;
}

Result source_line_result(const std::string& kernel, const SourceViewLine& line) {
  const MemoryCounters& c = line.figures.counters;
  const std::uint64_t global =
      c.global_load.requests + c.global_store.requests + c.global_atomic.requests;
  const std::uint64_t shared =
      c.shared_load.requests + c.shared_store.requests + c.shared_atomic.requests;
  Result r{result_kind::counted_line,
           {{"kernel", kernel},
            {"file", line.figures.file},
            {"line", std::to_string(line.figures.line)},
            {"code", line.code}},
           {}};
  const auto add = [&](const char* name, double value) {
    r.metrics.push_back({name, value, Provenance::counted, "", ""});
  };
  add("requests_count", static_cast<double>(global + shared));
  if (c.global_load.requests > 0) {
    add("load_sectors_per_request_ratio", c.sectors_per_load_request());
  }
  if (c.global_store.requests > 0) {
    add("store_sectors_per_request_ratio", c.sectors_per_store_request());
  }
  add("excess_sectors_count", static_cast<double>(excess_sectors(c)));
  if (global > 0) {
    add("l2_hit_rate_percent", c.l2_hit_rate_pct());
  }
  add("dram_read_bytes", static_cast<double>(c.dram_bytes_read));
  if (shared > 0) {
    add("shared_wavefronts_count",
        static_cast<double>(c.shared_load.wavefronts + c.shared_store.wavefronts +
                            c.shared_atomic.wavefronts));
    add("bank_conflicts_count",
        static_cast<double>(c.shared_load.bank_conflicts + c.shared_store.bank_conflicts +
                            c.shared_atomic.bank_conflicts));
  }
  add("l1_share_percent", line.l1_share_pct);
  return r;
}

}  // namespace gpulab
