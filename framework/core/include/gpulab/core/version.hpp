// gpulab's version and the git revision it was built from.
#pragma once

#include <string>
#include <string_view>

namespace gpulab {

/// The project version, e.g. "0.1.0".
[[nodiscard]] std::string_view version() noexcept;
/// The git revision the build came from (`git describe --always --dirty`); empty when unknown.
[[nodiscard]] std::string_view git_revision() noexcept;
/// "gpulab 0.1.0 (rev abc123def456)" or "gpulab 0.1.0" when the revision is unknown.
[[nodiscard]] std::string version_string();

}  // namespace gpulab
