// Whole-file reads and writes for `gpulab grade` and gpulab-grade-runner.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gpulab::cli {

/// The file's bytes, or nullopt when it cannot be opened.
[[nodiscard]] std::optional<std::string> read_text_file(const std::filesystem::path& path);

/// Writes `text` to `path` through a temporary file renamed over it, so a reader never sees half
/// a file; creates the parent folders. Throws std::runtime_error when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace gpulab::cli
