// The seal of the instructor files (seal.hpp).
#include "gpulab/grader/seal.hpp"

#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "gpulab/grader/sha256.hpp"
#include "source_error.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;
using detail::fail;

}  // namespace

std::vector<std::string> instructor_files(const LabManifest& manifest) {
  const fs::path& root = manifest.source_dir;
  std::set<std::string> student;
  for (const LabEntry& lab : manifest.labs) {
    for (const std::string& file : lab.student_files) {
      student.insert((fs::path("labs") / lab.dir / file).generic_string());
    }
  }
  std::set<std::string> files;
  const auto add_tree = [&](const fs::path& dir, bool relative) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) {
      return;
    }
    for (fs::recursive_directory_iterator it(dir, error), end; it != end; it.increment(error)) {
      if (error) {
        throw std::runtime_error("cannot list " + dir.string() + ": " + error.message());
      }
      if (it->is_regular_file()) {
        const std::string path = relative ? it->path().lexically_relative(root).generic_string()
                                          : it->path().generic_string();
        // Markdown is documentation: nothing builds from it, and students keep notes in it.
        if (!student.contains(path) && it->path().extension() != ".md") {
          files.insert(path);
        }
      }
    }
  };
  for (const char* file : {"CMakeLists.txt", "CMakePresets.json"}) {
    if (fs::is_regular_file(root / file)) {
      files.insert(file);
    }
  }
  for (const char* dir : {"cmake", "framework", "kernels", "tests", "labs"}) {
    add_tree(root / dir, true);
  }
  if (!manifest.extra_tests_dir.empty()) {
    const fs::path extra = manifest.extra_tests_dir.lexically_normal();
    const fs::path relative = extra.lexically_relative(root);
    const bool inside = !relative.empty() && *relative.begin() != "..";
    // Inside the tree it may be outside the folders above (e.g. <source>/hidden): relative paths.
    add_tree(extra, inside);
  }
  std::vector<std::string> listed(files.begin(), files.end());  // the sources, sorted
  // What grading runs of the build: a test program that rewrote one of them could change how
  // the next submission is graded.
  std::set<std::string> build_files;
  std::error_code error;
  for (const fs::path& file :
       {manifest.grade_runner, manifest.build_dir / "grading" / "manifest.json"}) {
    if (fs::is_regular_file(file, error)) {
      build_files.insert(file.generic_string());
    }
  }
  if (fs::is_directory(manifest.build_dir, error)) {
    for (fs::recursive_directory_iterator it(manifest.build_dir, error), end; it != end;
         it.increment(error)) {
      if (error) {
        throw std::runtime_error("cannot list " + manifest.build_dir.string() + ": " +
                                 error.message());
      }
      const std::string name = it->path().filename().string();
      if (it->is_directory() && (name == "CMakeFiles" || name == "Testing" || name == "grading")) {
        // No ctest files there, and tests running beside a grading create and remove results
        // in them: not listed, so that listing cannot fail on a file that just went away.
        it.disable_recursion_pending();
      } else if (name == "CTestTestfile.cmake" && it->is_regular_file()) {
        build_files.insert(it->path().generic_string());
      }
    }
  }
  listed.insert(listed.end(), build_files.begin(), build_files.end());
  return listed;
}

fs::path default_seal_path(const fs::path& build_dir, std::string_view xdg_state_home,
                           std::string_view home) {
  fs::path state;
  if (!xdg_state_home.empty()) {
    state = fs::path(xdg_state_home);
  } else if (!home.empty()) {
    state = fs::path(home) / ".local" / "state";
  } else {
    throw std::runtime_error(
        "neither XDG_STATE_HOME nor HOME is set: name the seal's file with --seal");
  }
  fs::path build = fs::absolute(build_dir).lexically_normal();
  if (build.filename().empty()) {  // "/work/build/" names the same folder as "/work/build"
    build = build.parent_path();
  }
  return state / "gpulab" / "seals" /
         (build.filename().string() + "-" + sha256_hex(build.generic_string()).substr(0, 16) +
          ".sha256");
}

std::vector<SealedFile> seal_files(const LabManifest& manifest,
                                   const std::vector<std::string>& files) {
  std::vector<SealedFile> seal;
  seal.reserve(files.size());
  for (const std::string& file : files) {
    const fs::path path =
        fs::path(file).is_absolute() ? fs::path(file) : manifest.source_dir / file;
    seal.push_back({file, sha256_file(path)});
  }
  return seal;
}

std::string format_seal(const std::vector<SealedFile>& seal) {
  std::string out;
  for (const SealedFile& file : seal) {
    out += file.sha256 + "  " + file.path + "\n";
  }
  return out;
}

std::vector<SealedFile> parse_seal(std::string_view text_in, std::string_view source) {
  std::vector<SealedFile> seal;
  std::istringstream in{std::string(text_in)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      continue;
    }
    const bool hex = line.size() > 66 && line.substr(64, 2) == "  " &&
                     line.find_first_not_of("0123456789abcdef") == 64;
    if (!hex) {
      fail(source, "line " + std::to_string(number) + ": expected \"<sha256>  <path>\"");
    }
    seal.push_back({line.substr(66), line.substr(0, 64)});
  }
  return seal;
}

IntegrityCheck check_integrity(const LabManifest& manifest, const std::vector<SealedFile>& seal) {
  IntegrityCheck check;
  check.checked = true;
  std::set<std::string> sealed;
  for (const SealedFile& file : seal) {
    sealed.insert(file.path);
    const fs::path path =
        fs::path(file.path).is_absolute() ? fs::path(file.path) : manifest.source_dir / file.path;
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      check.missing.push_back(file.path);
    } else if (sha256_file(path) != file.sha256) {
      check.changed.push_back(file.path);
    }
  }
  for (const std::string& file : instructor_files(manifest)) {
    if (!sealed.contains(file)) {
      check.added.push_back(file);
    }
  }
  return check;
}

}  // namespace gpulab
