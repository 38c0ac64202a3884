// The error of the readers of the manifest and the seal (manifest.cpp, seal.cpp): one line,
// "SOURCE: WHAT". Internal to gpulab.grader.
#pragma once

#include <string>
#include <string_view>

namespace gpulab::detail {

/// Throws std::runtime_error("SOURCE: WHAT").
[[noreturn]] void fail(std::string_view source, const std::string& what);

}  // namespace gpulab::detail
