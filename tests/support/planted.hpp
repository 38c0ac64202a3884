// The submission a planted spec describes (tests/grading/planted/<name>/planted.json): a copy of
// its base (solutions/ or labs/ of the instructor's tree) with its edits applied and its files
// written. Shared by the planted test, which grades each one against its expected verdicts, and
// the roster tests, which grade a class of them.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpulab::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// A spec's text field: a string, or an array of lines (each ending in a newline).
inline std::string planted_lines(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  std::string out;
  for (const nlohmann::json& line : value) {
    out += line.get<std::string>() + "\n";
  }
  return out;
}

/// `text` with "${source}" replaced by `source`, "${submission}" by `work` and "${planted}" by
/// `spec_dir`.
inline std::string planted_paths(std::string text, const std::filesystem::path& source,
                                 const std::filesystem::path& work,
                                 const std::filesystem::path& spec_dir) {
  for (const auto& [name, path] : {std::pair{std::string("${source}"), source.string()},
                                   std::pair{std::string("${submission}"), work.string()},
                                   std::pair{std::string("${planted}"), spec_dir.string()}}) {
    for (std::size_t at = text.find(name); at != std::string::npos;
         at = text.find(name, at + path.size())) {
      text.replace(at, name.size(), path);
    }
  }
  return text;
}

/// Writes the submission of `spec` (read from `spec_dir`) into `work` (created; its "layout":
/// "tree" puts the labs under work/labs), its base taken from `source` (the instructor's tree).
/// "${source}", "${submission}" and "${planted}" (`spec_dir`) in replacements, copies and link
/// targets are those folders.
/// Throws std::runtime_error when an edit's "find" is not in its file exactly once, or its
/// replacement is empty.
inline void make_planted_submission(const nlohmann::json& spec,
                                    const std::filesystem::path& spec_dir,
                                    const std::filesystem::path& source,
                                    const std::filesystem::path& work) {
  namespace fs = std::filesystem;
  const bool tree = spec.value("layout", "folders") == "tree";
  const fs::path labs_root = tree ? work / "labs" : work;
  fs::create_directories(labs_root);
  fs::copy(source / spec.at("base").get<std::string>(), labs_root, fs::copy_options::recursive);
  const nlohmann::json no_edits = nlohmann::json::array();
  const nlohmann::json& edits = spec.contains("edits") ? spec.at("edits") : no_edits;
  for (const nlohmann::json& edit : edits) {
    const fs::path file = labs_root / edit.at("file").get<std::string>();
    std::string text = read_text(file);
    const std::string find = edit.at("find").get<std::string>();
    const std::size_t at = text.find(find);
    if (at == std::string::npos || text.find(find, at + 1) != std::string::npos) {
      throw std::runtime_error("\"" + find + "\" is not in " + file.string() + " exactly once");
    }
    const std::string replacement =
        planted_paths(edit.contains("replace_file")
                          ? read_text(spec_dir / edit.at("replace_file").get<std::string>())
                          : planted_lines(edit.at("replace")),
                      source, work, spec_dir);
    if (replacement.empty()) {
      throw std::runtime_error("an empty replacement for \"" + find + "\"");
    }
    text.replace(at, find.size(), replacement);
    write_text(file, text);
  }
  const nlohmann::json no_files = nlohmann::json::object();
  const nlohmann::json& files = spec.contains("files") ? spec.at("files") : no_files;
  for (const auto& [path, content] : files.items()) {
    write_text(work / path, planted_lines(content));
  }
  // "copies": {"<path in the submission>": "<file>"}: a copy of the file there.
  const nlohmann::json& copies = spec.contains("copies") ? spec.at("copies") : no_files;
  for (const auto& [path, from] : copies.items()) {
    write_text(work / path,
               read_text(planted_paths(from.get<std::string>(), source, work, spec_dir)));
  }
  // "links": {"<path in the submission>": "<target>"}: the file or folder at the path (under the
  // labs' root) replaced by a symbolic link to the target.
  const nlohmann::json& links = spec.contains("links") ? spec.at("links") : no_files;
  for (const auto& [path, target] : links.items()) {
    const fs::path link = labs_root / path;
    fs::remove_all(link);
    fs::create_directories(link.parent_path());
    fs::create_symlink(planted_paths(target.get<std::string>(), source, work, spec_dir), link);
  }
}

}  // namespace gpulab::testing
