// The seal of the instructor files: what a submission must not change and grading relies on,
// each file's SHA-256 in `sha256sum -c`'s format, kept outside the build by default; a tree
// compared with it before and after grading.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/grader/manifest.hpp"

namespace gpulab {

/// One sealed file: its path relative to the source tree (absolute when outside it) and digest.
struct SealedFile {
  std::string path;
  std::string sha256;
};

/// The instructor files of a tree: what a submission must not change and grading relies on.
/// Everything under CMakeLists.txt, CMakePresets.json, cmake/, framework/, kernels/, tests/,
/// labs/ and the hidden suites' folder, except the labs' student files and Markdown (*.md)
/// documentation (relative paths, sorted); then, by absolute path, what grading runs of the
/// build: the test runner, the lab manifest and ctest's files (every CTestTestfile.cmake).
[[nodiscard]] std::vector<std::string> instructor_files(const LabManifest& manifest);

/// Where a build's seal is kept unless the user names a file: outside the build, which code
/// under test may write where there is no sandbox, in `<state>/gpulab/seals/`, `<state>` being
/// `xdg_state_home` ($XDG_STATE_HOME) or else `<home>/.local/state`; the file is named after the
/// build folder and a digest of its absolute path. Throws std::runtime_error when both are
/// empty.
[[nodiscard]] std::filesystem::path default_seal_path(const std::filesystem::path& build_dir,
                                                      std::string_view xdg_state_home,
                                                      std::string_view home);

/// Hashes `files` (as instructor_files names them) under manifest.source_dir.
[[nodiscard]] std::vector<SealedFile> seal_files(const LabManifest& manifest,
                                                 const std::vector<std::string>& files);

/// The seal as text: one "<sha256>  <path>" line per file, the format `sha256sum -c` checks.
[[nodiscard]] std::string format_seal(const std::vector<SealedFile>& seal);
/// Reads format_seal's text; throws std::runtime_error naming `source` on a malformed line.
[[nodiscard]] std::vector<SealedFile> parse_seal(std::string_view text, std::string_view source);

/// How a tree compares with a seal.
struct IntegrityCheck {
  bool checked = false;              ///< false when no check was made
  std::vector<std::string> changed;  ///< sealed files whose digest differs
  std::vector<std::string> missing;  ///< sealed files that are gone
  std::vector<std::string> added;    ///< instructor files that are not in the seal
  [[nodiscard]] bool ok() const { return changed.empty() && missing.empty() && added.empty(); }
};

/// Compares the instructor files of the tree with the seal.
[[nodiscard]] IntegrityCheck check_integrity(const LabManifest& manifest,
                                             const std::vector<SealedFile>& seal);

}  // namespace gpulab
