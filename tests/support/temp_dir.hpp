// A temporary directory for one test, removed with everything in it when the test ends.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace gpulab::testing {

/// Creates <temp>/<stem>-<random>-<random> and removes it (recursively) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& stem = "gpulab-test") {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            (stem + "-" + std::to_string(seed()) + "-" + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The directory.
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// The names of what the directory holds, in directory order.
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace gpulab::testing
