// The checks of one lab's code under its manifest's rules (lab_code_check.hpp).
#include "gpulab/grader/lab_code_check.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/files.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;

}  // namespace

LabCodeCheck check_lab_code(const LabManifest& manifest, const LabEntry& lab, const LabRun& run,
                            const fs::path& build_dir, const fs::path& files_dir) {
  CodeRules rules{
      "gpulab::" + lab.id, {}, run.backend == "cuda", lab.allowed_calls, lab.cuda_calls};
  for (const LabForbiddenCall& forbidden : lab.forbidden_calls) {
    rules.forbidden_calls.push_back(forbidden.call);
  }
  const std::vector<ObjectCode> objects =
      read_object_code(run.library, manifest.nm, manifest.objdump);
  LabCodeCheck check{check_object_code(objects, rules), find_forbidden_calls(objects, rules)};
  for (std::string& finding : check_lab_sources(manifest, lab, run, build_dir, files_dir)) {
    check.findings.push_back(std::move(finding));
  }
  return check;
}

std::vector<std::string> check_lab_sources(const LabManifest& manifest, const LabEntry& lab,
                                           const LabRun& run, const fs::path& build_dir,
                                           const fs::path& files_dir) {
  const IncludeRules includes{manifest.source_dir,
                              build_dir,
                              manifest.source_dir / "labs" / lab.dir,
                              files_dir,
                              manifest.extra_tests_dir,
                              {},
                              manifest.system_include_dirs};
  // First what the other checks rely on: the compiler's line markers are the student's to forge.
  std::vector<std::string> findings;
  for (const std::string& file : lab.student_files) {
    if (const std::optional<std::string> text = read_file(files_dir / file)) {
      for (std::string& finding : check_line_directives(file, *text)) {
        findings.push_back(std::move(finding));
      }
    }
  }
  return findings.empty() ? check_library_sources(run.library_target, includes) : findings;
}

}  // namespace gpulab
