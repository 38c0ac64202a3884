// The checks of one lab's code (code_checks.hpp) under the rules its manifest entry gives: its
// object code, what its files include and their own preprocessed lines.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/grader/code_checks.hpp"
#include "gpulab/grader/manifest.hpp"

namespace gpulab {

/// What the checks of a lab's code found (code_checks.hpp).
struct LabCodeCheck {
  std::vector<std::string> findings;           ///< rules broken, one line each: the lab is rejected
  std::vector<ForbiddenCall> forbidden_calls;  ///< fail the tests covering what they do
};

/// What `lab`'s code does that lab code must not (code_checks.hpp), checked on `run`'s student
/// library: its object code against the lab's namespace and forbidden calls, and what its files
/// include, `files_dir` being the folder they came from (the staged submission, labs/<dir> or
/// solutions/<dir>). Throws std::runtime_error when the code cannot be read.
[[nodiscard]] LabCodeCheck check_lab_code(const LabManifest& manifest, const LabEntry& lab,
                                          const LabRun& run, const std::filesystem::path& build_dir,
                                          const std::filesystem::path& files_dir);

/// The part of check_lab_code that needs no object code: first that `lab`'s files in `files_dir`
/// rename none of their lines (check_line_directives: the rest relies on the compiler's line
/// markers; only those findings when there are any), then what they include and their own
/// preprocessed lines (check_library_sources). Also for a lab that did not compile, before its
/// compiler errors are shown: they could quote a file it must not include.
[[nodiscard]] std::vector<std::string> check_lab_sources(const LabManifest& manifest,
                                                         const LabEntry& lab, const LabRun& run,
                                                         const std::filesystem::path& build_dir,
                                                         const std::filesystem::path& files_dir);

}  // namespace gpulab
