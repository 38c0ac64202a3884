// What the code checks' tests share (code_checks_test.cpp, code_checks_includes_test.cpp,
// code_checks_tokens_test.cpp): findings as lines, printed and searched.
#pragma once

#include <string>
#include <vector>

namespace gpulab::testing {

using Lines = std::vector<std::string>;

/// The findings one per line, or " (none)", for a failed expectation's message.
inline std::string joined(const Lines& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += "\n  " + line;
  }
  return out.empty() ? " (none)" : out;
}

/// Whether a finding holds `text`.
inline bool any_contains(const Lines& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace gpulab::testing
