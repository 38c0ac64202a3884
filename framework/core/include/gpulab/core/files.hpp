// Whole-file reads and writes, for every program of the project (the results writer, the grader
// and its runner, the build tools): one atomic writer, one reader.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpulab {

/// The file's bytes, or nullopt when it cannot be opened or read; then `why_not`, when given,
/// receives the reason ("No such file or directory", "Is a directory", ...).
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path& path,
                                                   std::string* why_not = nullptr);

/// Whether write_file_atomically creates the missing folders above the file.
enum class ParentFolders { must_exist, create };

/// Writes `text` to `path` so that a reader sees the old file or the new one, never part of one:
/// a temporary file in the same folder (mode 0644, flushed to disk) renamed over `path`. On
/// failure nothing is left behind and std::runtime_error says which file, which step and why,
/// e.g. "/x/run.json: cannot create a temporary file in /x: No such file or directory".
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           ParentFolders parents = ParentFolders::create);

}  // namespace gpulab
