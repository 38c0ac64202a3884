// Checks of text the test suites share: whether one text holds another, and lines written out for
// a failure message.
#pragma once

#include <string>
#include <vector>

namespace gpulab::testing {

/// Whether `haystack` holds `needle`.
inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// `lines` one to a line, each in brackets (so an empty line and trailing spaces show), or
/// " (none)" when there are none.
inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += "\n  [" + line + "]";
  }
  return out.empty() ? " (none)" : out;
}

}  // namespace gpulab::testing
