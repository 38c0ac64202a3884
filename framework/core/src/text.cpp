#include "text.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "gpulab/core/utf8.hpp"

namespace gpulab::detail {
namespace {

// Line and paragraph separators and invisible format characters that can make text on a terminal
// read differently from what it is (byte order mark, zero-width and bidirectional controls).
bool is_invisible(char32_t code) noexcept {
  return code == 0x2028 || code == 0x2029 || code == 0xFEFF || (code >= 0x200B && code <= 0x200F) ||
         (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
  char32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence(text, i, code);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  char32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const std::size_t length = utf8_sequence(text, i, code);
    const bool control = length == 0 || code < 0x20 || code == 0x7F ||
                         (code >= 0x80 && code <= 0x9F) || is_invisible(code);
    if (!control) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    if (length == 1 && code == '\n') {
      out += "\\n";
    } else if (length == 1 && code == '\r') {
      out += "\\r";
    } else if (length == 1 && code == '\t') {
      out += "\\t";
    } else {
      const std::size_t bytes = length == 0 ? 1 : length;
      for (std::size_t k = 0; k < bytes; ++k) {
        const auto b = static_cast<unsigned char>(text[i + k]);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
      }
    }
    i += length == 0 ? 1 : length;
  }
  return out;
}

std::string quote_text(std::string_view text, std::size_t max_bytes) {
  return "\"" + printable(text, max_bytes) + "\"";
}

}  // namespace gpulab::detail
