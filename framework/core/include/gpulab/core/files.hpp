// Whole-file reads and writes, for every program of the project (the results writer, the grader
// and its runner, the build tools): one atomic writer, one reader; and a lock file, for programs
// that share a folder.
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

/// The running program's own file (Linux: /proc/self/exe; macOS: _NSGetExecutablePath), for
/// programs that find their build or run themselves again. Throws std::runtime_error saying why
/// when the platform does not tell.
[[nodiscard]] std::filesystem::path executable_path();

/// Whether write_file_atomically creates the missing folders above the file.
enum class ParentFolders { must_exist, create };

/// Writes `text` to `path` so that a reader sees the old file or the new one, never part of one:
/// a temporary file in the same folder (mode 0644, flushed to disk) renamed over `path`. On
/// failure nothing is left behind and std::runtime_error says which file, which step and why,
/// e.g. "/x/run.json: cannot create a temporary file in /x: No such file or directory".
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           ParentFolders parents = ParentFolders::create);

/// An exclusive lock on a file (flock(2), advisory: it binds the programs that take it), held
/// until the object is destroyed or its process ends, however it ends.
class FileLock {
 public:
  /// Takes the lock on `path` (created, with its folders, when missing): waits for it when
  /// `wait`, else returns at once, and held() says whether it was free. Throws
  /// std::runtime_error when the file cannot be opened.
  FileLock(const std::filesystem::path& path, bool wait);
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

  [[nodiscard]] bool held() const noexcept { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace gpulab
