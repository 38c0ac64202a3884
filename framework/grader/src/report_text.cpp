#include "report_text.hpp"

#include <cstddef>
#include <vector>

#include "gpulab/core/utf8.hpp"
#include "gpulab/grader/verdict.hpp"

namespace gpulab::detail {

namespace {

// The length of the well-formed UTF-8 sequence at in[i] of a character XML 1.0 allows (not
// U+FFFE or U+FFFF), else 0.
std::size_t xml_char_length(std::string_view in, std::size_t i) {
  char32_t code = 0;
  const std::size_t length = utf8_sequence(in, i, code);
  return code == 0xFFFE || code == 0xFFFF ? 0 : length;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string clean_text(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    const std::size_t length = xml_char_length(in, i);
    if (length == 0 || (length == 1 && c < 0x20 && c != '\n' && c != '\t')) {
      out += '?';
      ++i;
    } else {
      out.append(in.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string test_output(const TestGrade& test) {
  std::string out = display_name(test.verdict.disposition);
  if (!test.verdict.detail.empty()) {
    out += ": " + test.verdict.detail;
  }
  out += "\n" + join_lines(test.verdict.excerpt);
  return clean_text(out);
}

}  // namespace gpulab::detail
