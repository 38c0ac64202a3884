// The object code and the includes of every lab's student stubs and solutions pass the grader's
// code checks (gpulab/grader/code_checks.hpp) on every backend this build has: the rules reject
// cheating, not the code a lab is meant to be solved with. (A solution's own folder stands where
// a graded submission's staged copy would.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/grader/code_checks.hpp"
#include "gpulab/grader/grading.hpp"

namespace {

TEST(LabCode, StubsAndSolutionsPassTheCodeChecks) {
  const std::filesystem::path build = GPULAB_BUILD_DIR;
  const gpulab::LabManifest manifest =
      gpulab::load_lab_manifest(build / "grading" / "manifest.json");
  int checked = 0;
  for (const gpulab::LabEntry& lab : manifest.labs) {
    for (const gpulab::LabRun& run : lab.runs) {
      if (run.variant == "submission") {
        continue;  // what it holds depends on the last grading
      }
      const gpulab::CodeRules rules{"gpulab::" + lab.id, lab.forbidden_calls,
                                    run.backend == "cuda"};
      std::vector<std::string> findings = gpulab::check_object_code(
          gpulab::read_object_code(run.library, manifest.nm, manifest.objdump), rules);
      const gpulab::IncludeRules includes{
          manifest.source_dir, build, manifest.source_dir / "labs" / lab.dir,
          manifest.source_dir / (run.variant == "student" ? "labs" : "solutions") / lab.dir,
          manifest.extra_tests_dir};
      for (std::string& finding : gpulab::check_library_includes(run.library_target, includes)) {
        findings.push_back(std::move(finding));
      }
      std::string listed;
      for (const std::string& finding : findings) {
        listed += "\n  " + finding;
      }
      EXPECT_TRUE(findings.empty())
          << lab.id << " " << run.variant << " " << run.backend << ":" << listed;
      ++checked;
    }
  }
  EXPECT_GE(checked, 2 * static_cast<int>(manifest.labs.size()));
}

}  // namespace
