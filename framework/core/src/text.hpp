// Untrusted text (results files, JSON documents, the output of graded code) checked and rendered
// for a terminal. Internal to gpulab.core.host.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpulab::detail {

/// Whether `text` is well-formed UTF-8.
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

/// `text` made safe for one line of a terminal: control characters (C0, DEL, C1), invisible ones
/// (line separators, zero-width and bidirectional controls) and ill-formed UTF-8 bytes become
/// escapes (\n, \x1b, ...); longer texts are cut to about `max_bytes` with "...". Idempotent, so
/// a message can be passed through it twice.
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_bytes = 120);

/// printable(text) in double quotes.
[[nodiscard]] std::string quote_text(std::string_view text, std::size_t max_bytes = 60);

}  // namespace gpulab::detail
