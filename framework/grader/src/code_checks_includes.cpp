// The code checks of what lab code includes (an allowlist of folders and files).
#include "gpulab/grader/code_checks.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "code_checks_shared.hpp"

namespace gpulab {

using code_checks_detail::split_lines;
using code_checks_detail::trim;

// ---- includes ---------------------------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

// True when `path` is `dir` or inside it (both lexically normal and absolute).
bool inside(const fs::path& path, const fs::path& dir) {
  if (dir.empty()) {
    return false;
  }
  const fs::path relative = path.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

// For a header of the compiler's own folder (GCC's <libdir>/gcc/<target>/<version>/include or
// include-fixed, clang's <libdir>/clang/<version>/include), whether lab code may include it: the
// C language's freestanding headers only (with the pieces clang 18 and later split stddef.h and
// stdarg.h into, __stddef_*.h and __stdarg_*.h), not the compiler's intrinsics (their loads and
// stores escape the sim's counting), OpenMP, OpenACC, gcov or sanitizer headers. nullopt for any
// other file.
std::optional<bool> compiler_header_allowed(const fs::path& path) {
  static constexpr std::string_view kFreestanding[] = {
      "float.h",     "iso646.h",    "limits.h",  "stdalign.h",   "stdarg.h",
      "stdbool.h",   "stddef.h",    "stdint.h",  "stdint-gcc.h", "stdnoreturn.h",
      "syslimits.h", "stdatomic.h", "varargs.h", "stdckdint.h"};
  const std::vector<fs::path> parts(path.begin(), path.end());
  for (std::size_t i = 2; i + 1 < parts.size(); ++i) {
    const bool compilers = (parts[i] == "include" || parts[i] == "include-fixed") &&
                           ((i >= 3 && parts[i - 3] == "gcc") || parts[i - 2] == "clang");
    if (compilers) {
      const std::string name = parts.back().string();
      const bool piece =
          (name.starts_with("__stddef_") || name.starts_with("__stdarg_")) && name.ends_with(".h");
      return i + 2 == parts.size() &&
             (piece || std::find(std::begin(kFreestanding), std::end(kFreestanding), name) !=
                           std::end(kFreestanding));
    }
  }
  return std::nullopt;
}

// Why lab code must not include `path`; empty when it may (IncludeRules: an allowlist).
std::string include_problem(const fs::path& path, const IncludeRules& rules) {
  const auto in_tree = [&](const fs::path& dir) { return inside(path, dir.lexically_normal()); };
  if (in_tree(rules.extra_tests_dir)) {
    return "a hidden test";
  }
  if (in_tree(rules.build_dir)) {
    const bool allowed = in_tree(rules.staged_dir) || in_tree(rules.translated_dir);
    return allowed ? "" : "a file of the build that is not the lab's";
  }
  if (in_tree(rules.source_dir)) {
    if (in_tree(rules.lab_dir) || in_tree(rules.staged_dir)) {
      return "";
    }
    const fs::path relative = path.lexically_relative(rules.source_dir.lexically_normal());
    auto part = relative.begin();
    const std::string extension = path.extension().string();
    if (part != relative.end() && *part == "kernels" &&
        (extension == ".hpp" || extension == ".h" || extension == ".cuh")) {
      return "";  // the catalog's headers
    }
    if (part != relative.end() && *part == "framework" && ++part != relative.end() &&
        ++part != relative.end() && *part == "include") {
      return "";  // framework/<module>/include/...
    }
    return "a file of the instructor's tree outside the lab's folder, the framework's public "
           "headers and the catalog's headers";
  }
  for (const fs::path& component : path) {
    if (component == "gtest" || component == "gmock") {
      return "GoogleTest's headers";
    }
  }
  if (const std::optional<bool> allowed = compiler_header_allowed(path)) {
    return *allowed ? ""
                    : "a header of the compiler's own (its intrinsics, OpenMP, ...): lab code "
                      "may include the C language's freestanding headers of that folder only";
  }
  if (std::any_of(rules.system_dirs.begin(), rules.system_dirs.end(),
                  [&](const fs::path& dir) { return in_tree(dir); })) {
    return "";
  }
  return "a file outside the project and the compilers' system include folders";
}

}  // namespace

std::vector<std::string> shell_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(word);
        word.clear();
        in_word = false;
      }
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
    } else if (c == '\'') {
      const std::size_t end = command.find('\'', i + 1);
      if (end == std::string_view::npos) {
        throw std::runtime_error("unterminated ' in a command: " + std::string(command));
      }
      word += command.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos) {
          ++i;
        }
        word += command[i];
      }
      if (i >= command.size()) {
        throw std::runtime_error("unterminated \" in a command: " + std::string(command));
      }
    } else {
      word += c;
    }
  }
  if (in_word) {
    words.push_back(word);
  }
  return words;
}

std::vector<std::string> included_files(std::string_view preprocessed) {
  std::vector<std::string> files;
  for (std::string_view line : split_lines(preprocessed)) {
    // `# <line> "<file>" <flags>`: flag 1 enters an included file; a #line directive and the main
    // file's marker have none.
    if (!line.starts_with("# ") || line.size() < 3 ||
        std::isdigit(static_cast<unsigned char>(line[2])) == 0) {
      continue;
    }
    const std::size_t quote = line.find('"');
    if (quote == std::string_view::npos) {
      continue;
    }
    std::string name;
    std::size_t i = quote + 1;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;  // GCC escapes a backslash or a quote in a name
      }
      name += line[i];
    }
    if (i == line.size()) {
      continue;  // no closing quote
    }
    bool entered = false;
    for (std::string_view flags = line.substr(i + 1); !flags.empty();) {
      flags = trim(flags);
      const std::string_view flag = flags.substr(0, flags.find(' '));
      entered = entered || flag == "1";
      flags.remove_prefix(flag.size());
    }
    // The compiler's own pseudo-files ("<built-in>", "<command line>"), which clang enters.
    const bool pseudo = name.starts_with('<') && name.ends_with('>');
    if (entered && !pseudo && std::find(files.begin(), files.end(), name) == files.end()) {
      files.push_back(std::move(name));
    }
  }
  return files;
}

std::vector<std::string> forced_includes(std::string_view command) {
  const std::vector<std::string> words = shell_words(command);
  std::vector<std::string> files;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "-include") {
      continue;
    }
    std::size_t next = i + 1;
    if (words[next] == "-Xclang" && next + 1 < words.size()) {
      ++next;  // clang's spelling: -Xclang -include -Xclang FILE
    }
    files.push_back(words[next]);
    i = next;
  }
  return files;
}

std::vector<std::string> isystem_folders(std::string_view command) {
  const std::vector<std::string> words = shell_words(command);
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-isystem" && i + 1 < words.size()) {
      folders.push_back(words[++i]);
    } else if (words[i].starts_with("-isystem") && words[i].size() > 8) {
      folders.push_back(words[i].substr(8));
    }
  }
  return folders;
}

std::optional<fs::path> staged_origin(std::string_view text) {
  constexpr std::string_view kDirective = "#line 1 \"";
  if (!text.starts_with(kDirective)) {
    return std::nullopt;
  }
  std::string name;
  for (std::size_t i = kDirective.size(); i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '"') {
      return fs::path(name);
    }
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
    }
    name += text[i];
  }
  return std::nullopt;  // no closing quote on the first line
}

std::vector<std::string> check_includes(const std::string& file,
                                        const std::vector<std::string>& dependencies,
                                        const IncludeRules& rules) {
  std::vector<std::string> findings;
  for (const std::string& dependency : dependencies) {
    const fs::path path = fs::path(dependency).lexically_normal();
    const std::string problem = include_problem(path, rules);
    if (problem.empty()) {
      continue;
    }
    const fs::path relative = path.lexically_relative(rules.source_dir.lexically_normal());
    const std::string shown = inside(path, rules.source_dir.lexically_normal())
                                  ? relative.generic_string()
                                  : path.generic_string();
    findings.push_back(file + ": includes " + shown + " (" + problem +
                       "): lab code may include its own folder, the framework's public headers, "
                       "the catalog's headers (kernels/) and system headers");
  }
  return findings;
}

}  // namespace gpulab
