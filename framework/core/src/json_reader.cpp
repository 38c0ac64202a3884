#include "gpulab/core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;
using detail::printable;
using detail::quote_text;

// An iterator over the text that records how far the parser has read, so that errors our handler
// raises (nlohmann tells positions only to parse_error) can name a line and column.
struct CountingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* at = nullptr;
  const char* begin = nullptr;
  std::size_t* consumed = nullptr;

  reference operator*() const { return *at; }
  CountingIterator& operator++() {
    ++at;
    *consumed = static_cast<std::size_t>(at - begin);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) {
    return a.at == b.at;
  }
};

// Builds the DOM; stops (returns false) on the first error, recording its message and offset.
class DomBuilder {
 public:
  DomBuilder(json& root, std::string_view text, int max_depth, const std::size_t& consumed)
      : root_(root), text_(text), max_depth_(max_depth), consumed_(consumed) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(json::number_integer_t value) { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return add(json(value)); }
  bool number_float(json::number_float_t value, const std::string& token) {
    if (!std::isfinite(value)) {  // nlohmann reports overflow itself; kept as a guard
      return stop_at_token(token, "number too large for a double, found " + token_text(token));
    }
    // strtod turns 1e-400 into 0 without a word: a silent wrong value. (Subnormals such as
    // 5e-324 are kept: they are what to_json() writes for such values.)
    const std::string_view mantissa = std::string_view(token).substr(0, token.find_first_of("eE"));
    if (value == 0.0 && mantissa.find_first_of("123456789") != std::string_view::npos) {
      return stop_at_token(
          token, "number too small for a double (it would become 0), found " + token_text(token));
    }
    return add(json(value));
  }
  bool string(std::string& value) { return add(json(std::move(value))); }
  bool binary(json::binary_t& /*value*/) {
    return stop(consumed_, "binary data is not allowed in JSON text");
  }
  bool start_object(std::size_t /*elements*/) { return open(json::object()); }
  bool start_array(std::size_t /*elements*/) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& key) {
    const json& object = *stack_.back();
    if (object.find(key) != object.end()) {
      return stop(consumed_, "duplicate key " + quote_text(key) + " (each key may appear once)");
    }
    key_ = std::move(key);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const json::exception& error) {
    offset_ = error.id == 406 ? token_offset(last_token, position) : position;
    message_ = describe_error(error, last_token, offset_);
    return false;
  }

  [[nodiscard]] std::size_t offset() const { return offset_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  static std::string token_text(const std::string& token) {
    return "'" + printable(token, 40) + "'";
  }

  // nlohmann echoes everything read since the last string or number began (an invalid literal
  // after a key comes as "\"key\": N"). Inside a string we keep its end, where the error is;
  // elsewhere we show the whole word around the error in the original text ('NaN', 'garbage').
  std::string found_token(const std::string& token, bool in_string, std::size_t offset) const {
    if (in_string) {
      const std::string_view tail =
          token.size() > 40 ? std::string_view(token).substr(token.size() - 40) : token;
      return "'" + std::string(tail.size() < token.size() ? "..." : "") + printable(tail, 100) +
             "'";
    }
    if (text_.empty()) {
      return "''";
    }
    const auto in_word = [](char c) {
      return std::string_view(" \t\r\n{}[],:\"").find(c) == std::string_view::npos;
    };
    const std::size_t at = std::min(offset == 0 ? 0 : offset - 1, text_.size() - 1);
    std::size_t begin = at;
    std::size_t end = at + 1;
    if (in_word(text_[at])) {
      while (begin > 0 && at - begin < 40 && in_word(text_[begin - 1])) {
        --begin;
      }
      while (end < text_.size() && end - at < 40 && in_word(text_[end])) {
        ++end;
      }
    }
    return "'" + printable(text_.substr(begin, end - begin), 100) + "'";
  }

  // nlohmann's message without its "[json.exception...] parse error at line L, column C: "
  // prefix (we add our own location), with the echoed token shortened and made printable.
  std::string describe_error(const json::exception& error, const std::string& last_token,
                             std::size_t offset) const {
    if (error.id == 406) {  // out_of_range.406: the number does not fit in a double
      return "number too large for a double, found " + token_text(last_token);
    }
    std::string text = error.what();
    const bool in_string = text.find("invalid string") != std::string::npos;
    if (!in_string && offset > 0 && offset <= text_.size() && text_[offset - 1] == '\0') {
      return "expected JSON text, found a NUL byte";  // nlohmann: "unexpected end of input"
    }
    if (const auto column = text.find("column "); column != std::string::npos) {
      if (const auto colon = text.find(": ", column); colon != std::string::npos) {
        text.erase(0, colon + 2);
      }
    } else if (const auto bracket = text.find("] "); bracket != std::string::npos) {
      text.erase(0, bracket + 2);
    }
    const std::string echoed = "last read: '" + last_token + "'";
    if (const auto at = text.find(echoed); at != std::string::npos) {
      text.replace(at, echoed.size(), "found " + found_token(last_token, in_string, offset));
    }
    return text;
  }

  bool stop(std::size_t offset, std::string message) {
    offset_ = offset;
    message_ = std::move(message);
    return false;
  }

  // Errors about a number point at its first character. The number ends at `read` or one
  // character before it (the lexer reads one character past a number).
  std::size_t token_offset(const std::string& token, std::size_t read) const {
    if (read >= token.size()) {
      const std::size_t start = text_.rfind(token, read - token.size());
      if (start != std::string_view::npos) {
        return start + 1;
      }
    }
    return read;
  }

  bool stop_at_token(const std::string& token, std::string message) {
    return stop(token_offset(token, consumed_), std::move(message));
  }

  // Inserts into the open container (or as the root); returns where the value now lives.
  json* insert(json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    auto& object = parent.get_ref<json::object_t&>();
    return &object.emplace(std::move(key_), std::move(value)).first->second;
  }

  bool add(json&& value) {
    insert(std::move(value));
    return true;
  }

  bool open(json&& container) {
    if (stack_.size() >= static_cast<std::size_t>(std::max(max_depth_, 0))) {
      return stop(consumed_, "nesting deeper than the limit of " + std::to_string(max_depth_) +
                                 " levels of arrays and objects");
    }
    stack_.push_back(insert(std::move(container)));
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  std::string_view text_;
  int max_depth_;
  const std::size_t& consumed_;
  std::vector<json*> stack_;  // open containers; pointers stay valid while they are open
  std::string key_;           // the key of the next object member
  std::size_t offset_ = 0;
  std::string message_ = "malformed JSON";
};

// "LINE:COLUMN" of the character at 1-based `offset` (how many characters the parser had read).
std::string line_column(std::string_view text, std::size_t offset) {
  const std::size_t index = std::min(offset == 0 ? 0 : offset - 1, text.size());
  const std::string_view before = text.substr(0, index);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const std::size_t newline = before.rfind('\n');
  const std::size_t column = newline == std::string_view::npos ? index + 1 : index - newline;
  return std::to_string(line) + ":" + std::to_string(column);
}

[[noreturn]] void fail_at(std::string_view source, std::string_view text, std::size_t offset,
                          std::string_view what) {
  const std::string where = source.empty() ? std::string("<input>") : printable(source, 300);
  throw JsonError(printable(where + ":" + line_column(text, offset) + ": " + std::string(what),
                            std::string::npos));
}

}  // namespace

json parse_json(std::string_view text, std::string_view source, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    const std::string where = source.empty() ? std::string("<input>") : printable(source, 300);
    throw JsonError(where + ": expected at most " + std::to_string(limits.max_bytes) +
                    " bytes, found " + std::to_string(text.size()));
  }
  json root;
  std::size_t consumed = 0;
  DomBuilder builder(root, text, limits.max_depth, consumed);
  const CountingIterator first{text.data(), text.data(), &consumed};
  const CountingIterator last{text.data() + text.size(), text.data(), &consumed};
  bool parsed = false;
  try {
    parsed = json::sax_parse(first, last, &builder, json::input_format_t::json, /*strict=*/true,
                             /*ignore_comments=*/false);
  } catch (const json::exception& error) {  // not expected with a SAX handler; kept as a guard
    fail_at(source, text, consumed, std::string("malformed JSON: ") + error.what());
  } catch (const std::bad_alloc&) {
    fail_at(source, text, consumed, "out of memory while parsing");
  }
  if (!parsed) {
    fail_at(source, text, builder.offset(), builder.message());
  }
  // nlohmann takes a NUL byte outside a string for the end of the input: a document followed by
  // a NUL and anything at all would pass. (A NUL inside a string is an error of its own.)
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail_at(source, text, nul + 1, "expected JSON text, found a NUL byte");
  }
  return root;
}

}  // namespace gpulab
