// The student's files: where one is in a submission, what refuses it (links, hard links, files
// over 1 MiB), its copy in the build behind a `#line 1 "<from>"` directive, and the line where a
// function is defined in it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "gpulab/grader/manifest.hpp"

namespace gpulab {

/// Copies a student file to `to` (its folders created) behind a `#line 1 "<from>"` directive, so
/// compiler errors and __FILE__ name the file the student wrote. Writes only when the staged text
/// differs (an unchanged file is not rebuilt), and not at all when `keep_existing` and `to`
/// exists. Returns whether it wrote; throws std::runtime_error when `from` cannot be read.
bool stage_student_file(const std::filesystem::path& from, const std::filesystem::path& to,
                        bool keep_existing = false);

/// Where a lab's student file is in a submission, relative to its root: labs/<dir>/<file> (a copy
/// of the whole tree) or <dir>/<file> (a folder of lab folders); nullopt when neither exists.
/// Links count as existing: submitted_file_problem refuses them.
[[nodiscard]] std::optional<std::filesystem::path> find_student_file(
    const std::filesystem::path& root, const LabEntry& lab, const std::string& file);

/// The largest student file graded: 1 MiB.
inline constexpr std::uintmax_t kMaxStudentFileBytes = std::uintmax_t{1} << 20;

/// Why `root / relative` cannot be graded as a submitted file, in words that follow its path:
/// "is a symbolic link (to ...)" (the root, a folder on the way or the file itself: a link could
/// name the solution, a classmate's file or a system file), "is not a regular file", "is a hard
/// link (N names)", "is larger than 1 MiB". nullopt for a plain file of the submission.
[[nodiscard]] std::optional<std::string> submitted_file_problem(
    const std::filesystem::path& root, const std::filesystem::path& relative,
    std::uintmax_t max_bytes = kMaxStudentFileBytes);

/// The line (from 1) of `source` where `function` is defined, in the project's layout: the first
/// line that starts at column 0 (not a comment or preprocessor line) and has the name, after a
/// character that cannot be part of a qualified name, followed by "(". nullopt when there is none.
[[nodiscard]] std::optional<int> definition_line(std::string_view source,
                                                 std::string_view function);

}  // namespace gpulab
