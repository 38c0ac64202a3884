// The student's files (staging.hpp).
#include "gpulab/grader/staging.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include "gpulab/core/files.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;

}  // namespace

std::optional<fs::path> find_student_file(const fs::path& root, const LabEntry& lab,
                                          const std::string& file) {
  for (const fs::path& candidate : {fs::path("labs") / lab.dir / file, fs::path(lab.dir) / file}) {
    std::error_code error;
    if (fs::exists(fs::symlink_status(root / candidate, error))) {
      return candidate;
    }
  }
  return std::nullopt;
}

std::optional<std::string> submitted_file_problem(const fs::path& root, const fs::path& relative,
                                                  std::uintmax_t max_bytes) {
  fs::path path = root;
  std::error_code error;
  const auto link = [&](const fs::path& at) -> std::optional<std::string> {
    if (!fs::is_symlink(fs::symlink_status(at, error))) {
      return std::nullopt;
    }
    const fs::path target = fs::read_symlink(at, error);
    return (at == root ? "the submission folder " : "") + at.string() + " is a symbolic link (to " +
           target.string() + "): a submission is regular folders and files, graded as they are";
  };
  if (std::optional<std::string> problem = link(path)) {
    return problem;
  }
  for (const fs::path& part : relative) {
    path /= part;
    if (std::optional<std::string> problem = link(path)) {
      return problem;
    }
  }
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) {
    return path.string() + " does not exist";
  }
  if (!fs::is_regular_file(status)) {
    return path.string() + " is not a regular file";
  }
  if (const std::uintmax_t names = fs::hard_link_count(path, error); !error && names > 1) {
    return path.string() + " is a hard link (" + std::to_string(names) +
           " names): submit a copy of the file";
  }
  if (const std::uintmax_t bytes = fs::file_size(path, error); error || bytes > max_bytes) {
    return path.string() + " is larger than " + std::to_string(max_bytes >> 10) +
           " KiB: a student file is source code";
  }
  return std::nullopt;
}

bool stage_student_file(const fs::path& from, const fs::path& to, bool keep_existing) {
  std::error_code error;
  if (keep_existing && fs::exists(to, error)) {
    return false;
  }
  std::string why_not;
  const std::optional<std::string> contents = read_file(from, &why_not);
  if (!contents) {
    throw std::runtime_error("cannot read " + from.string() + ": " + why_not);
  }
  std::string staged = "#line 1 \"";
  for (const char c : fs::absolute(from).lexically_normal().string()) {
    if (c == '"' || c == '\\') {
      staged += '\\';
    }
    staged += c;
  }
  staged += "\"\n" + *contents;
  if (read_file(to) == staged) {
    return false;
  }
  write_file_atomically(to, staged);
  return true;
}

std::optional<int> definition_line(std::string_view source, std::string_view function) {
  const auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
  };
  int number = 0;
  for (std::size_t start = 0; start < source.size();) {
    const std::size_t end = std::min(source.find('\n', start), source.size());
    const std::string_view line = source.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == ' ' || line.front() == '\t' || line.front() == '#' ||
        line.starts_with("//") || line.starts_with("/*")) {
      continue;
    }
    for (std::size_t at = line.find(function); at != std::string_view::npos;
         at = line.find(function, at + 1)) {
      const std::size_t after = at + function.size();
      if (at > 0 && !part_of_name(line[at - 1]) && after < line.size() && line[after] == '(') {
        return number;
      }
    }
  }
  return std::nullopt;
}

}  // namespace gpulab
