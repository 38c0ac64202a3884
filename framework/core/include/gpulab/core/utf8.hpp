// Decoding UTF-8 from untrusted text (results files, the output of graded code): shared by
// gpulab.core.host and the grader (gpulab.grader).
#pragma once

#include <cstddef>
#include <string_view>

namespace gpulab::detail {

/// Length of the well-formed UTF-8 sequence starting at text[i] (Unicode table 3-7: no overlong
/// forms, no surrogates, nothing above U+10FFFF), or 0 when it is ill-formed. `code` receives the
/// code point.
inline std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    code = b0;
    return 1;
  }
  std::size_t length = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    lo = b0 == 0xE0 ? 0xA0 : 0x80;
    hi = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    lo = b0 == 0xF0 ? 0x90 : 0x80;
    hi = b0 == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + length > text.size()) {
    return 0;
  }
  const unsigned char b1 = byte(i + 1);
  if (b1 < lo || b1 > hi) {
    return 0;
  }
  char32_t value = b0 & (0x7Fu >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if (b < 0x80 || b > 0xBF) {
      return 0;
    }
    value = (value << 6) | (b & 0x3Fu);
  }
  code = value;
  return length;
}

}  // namespace gpulab::detail
