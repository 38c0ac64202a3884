// What `gpulab profile` and `gpulab sanitize` share (commands.hpp): the program they run and the
// private folder its counted launches go to.
#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab::cli {

std::filesystem::path target_program(const std::string& target, bool solution, bool student,
                                     const std::string& backend, const std::string& command) {
  if (target.find('/') != std::string::npos) {
    if (!std::filesystem::is_regular_file(target)) {
      throw UsageError("no program at '" + target + "'");
    }
    return target;
  }
  const LabManifest manifest = build_manifest();
  const std::vector<const LabEntry*> labs = select_labs(manifest, {target});
  if (labs.size() != 1) {
    throw UsageError(command + " one lab at a time, not '" + target + "'");
  }
  const std::string variant = choose_variant(manifest, solution, student);
  const LabRun* run = find_run(*labs.front(), variant, backend);
  if (run == nullptr) {
    throw std::runtime_error(labs.front()->id + " has no " + variant + " build for the " + backend +
                             " backend");
  }
  if (!build_report(*labs.front(), *run, command)) {
    throw std::runtime_error(labs.front()->id + "'s " + variant + " code did not build");
  }
  return run->report;
}

PrivateTempFolder::PrivateTempFolder(const std::string& stem, const std::string& what) {
  // mkdtemp replaces the template's trailing six 'X' with a unique suffix.
  std::string name =
      (std::filesystem::temp_directory_path() / (stem + "." + std::string(6, 'X'))).string();
  if (mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory for " + what);
  }
  path_ = name;
}

PrivateTempFolder::~PrivateTempFolder() {
  std::error_code ignored;  // nothing to do about a folder that cannot be removed
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace gpulab::cli
