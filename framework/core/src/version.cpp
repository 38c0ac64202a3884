#include "gpulab/core/version.hpp"

namespace gpulab {
namespace detail {
extern const char* const kVersion;
extern const char* const kGitRevision;
}  // namespace detail

std::string_view version() noexcept {
  return detail::kVersion;
}

std::string_view git_revision() noexcept {
  return detail::kGitRevision;
}

std::string version_string() {
  std::string text = "gpulab " + std::string(version());
  if (!git_revision().empty()) {
    text += " (rev " + std::string(git_revision()) + ")";
  }
  return text;
}

}  // namespace gpulab
