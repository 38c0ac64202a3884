// The one JSON reader for files gpulab does not write itself or cannot trust (results files,
// the grading manifest, verdict files, counted-launch lines): strict JSON with bounds, and errors
// that say where. nlohmann's plain parse accepts duplicate keys (the last one wins), turns 1e-400
// into 0 without a word, nests as deep as the stack allows, and reports errors as one long line
// naming its own exception ids.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpulab {

/// A document parse_json refused: "SOURCE:LINE:COLUMN: what", or "SOURCE: what" for the size.
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bounds on what parse_json accepts.
struct JsonLimits {
  std::size_t max_bytes = 64ull * 1000 * 1000;  ///< longest text, in bytes
  int max_depth = 32;                           ///< deepest nesting of arrays and objects
};

/// Parses `text` (named `source` in errors) as one JSON document: no comments, nothing after it,
/// no NUL byte, each key of an object once, every number representable as a double (neither
/// overflowing nor silently becoming 0), at most limits.max_depth levels and limits.max_bytes
/// bytes. Throws JsonError with the line and column of the first problem, its text made printable.
[[nodiscard]] nlohmann::json parse_json(std::string_view text, std::string_view source,
                                        const JsonLimits& limits = {});

}  // namespace gpulab
