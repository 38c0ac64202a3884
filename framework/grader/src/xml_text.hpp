// Reading the XML the grader meets (gtest's result files): attribute values of a start tag and
// character entities. Internal to gpulab.grader.
#pragma once

#include <charconv>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpulab::detail {

/// Decodes &amp; &lt; &gt; &quot; &apos; and numeric references (non-ASCII ones become '?').
inline std::string decode_entities(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '&') {
      out += in[i];
      continue;
    }
    const std::size_t semi = in.find(';', i);
    if (semi == std::string_view::npos) {
      out += in[i];
      continue;
    }
    const std::string_view entity = in.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out += '&';
    } else if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      unsigned long code = 0;
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
      if (error != std::errc{} || end != digits.data() + digits.size()) {
        throw std::runtime_error("XML: bad character reference &" + std::string(entity) + ";");
      }
      out += code < 0x80 ? static_cast<char>(code) : '?';
    } else {
      out += in.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

/// The value of attribute `name` in a start tag's text, or nullopt.
inline std::optional<std::string> attribute(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  std::size_t at = tag.find(key);
  if (at == std::string_view::npos) {
    // Attributes may follow a newline and tab instead of a space.
    for (const char* sep : {"\n", "\t"}) {
      at = tag.find(std::string(sep) + std::string(name) + "=\"");
      if (at != std::string_view::npos) {
        break;
      }
    }
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
  }
  const std::size_t begin = at + key.size();
  const std::size_t end = tag.find('"', begin);
  if (end == std::string_view::npos) {
    return std::nullopt;
  }
  return decode_entities(tag.substr(begin, end - begin));
}

}  // namespace gpulab::detail
