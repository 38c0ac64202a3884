// The errors of the readers of results files and of the formats that extend one (memory
// histories, class summaries): one line, "SOURCE: WHERE: expected X, found Y"; and the one rule
// results*.cpp share about provenances. Internal to gpulab.core.host.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpulab/core/results.hpp"

namespace gpulab::detail {

/// Whether a metric of this provenance names the spec it was modeled for (results*.cpp).
[[nodiscard]] inline bool has_spec(Provenance provenance) noexcept {
  return provenance == Provenance::modeled || provenance == Provenance::modeled_clock;
}

/// Throws the one-line ResultsError "SOURCE: WHERE: WHAT" (WHERE may be empty), made printable.
[[noreturn]] void fail(std::string_view source, std::string_view where, std::string_view what);

/// A JSON value that is present but wrong, for "found Y": "integer 256", "string \"fast\"", "an
/// array of 3 element(s)"; never dumps containers (they can be huge or deep).
[[nodiscard]] std::string describe(const nlohmann::json& value);

}  // namespace gpulab::detail
