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

}  // namespace gpulab
