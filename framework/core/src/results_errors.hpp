// The errors of the readers of results files and of the formats that extend one (memory
// histories, class summaries): one line, "SOURCE: WHERE: expected X, found Y". Internal to
// gpulab.core.host.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpulab::detail {

/// Throws the one-line ResultsError "SOURCE: WHERE: WHAT" (WHERE may be empty), made printable.
[[noreturn]] void fail(std::string_view source, std::string_view where, std::string_view what);

/// A JSON value that is present but wrong, for "found Y": "integer 256", "string \"fast\"", "an
/// array of 3 element(s)"; never dumps containers (they can be huge or deep).
[[nodiscard]] std::string describe(const nlohmann::json& value);

}  // namespace gpulab::detail
