// The object code and the includes of every lab's student stubs and solutions pass the grader's
// code checks (gpulab/grader/code_checks.hpp) on every backend this build has: the rules reject
// cheating, not the code a lab is meant to be solved with. (A solution's own folder stands where
// a graded submission's staged copy would.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/grader/lab_code_check.hpp"
#include "gpulab/grader/manifest.hpp"

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
      const gpulab::LabCodeCheck found =
          gpulab::check_lab_code(manifest, lab, run, build, run.files_dir);
      std::string listed;
      for (const std::string& finding : found.findings) {
        listed += "\n  " + finding;
      }
      for (const gpulab::ForbiddenCall& call : found.forbidden_calls) {
        listed += "\n  " + call.file + ": calls " + call.call;
      }
      EXPECT_TRUE(found.findings.empty() && found.forbidden_calls.empty())
          << lab.id << " " << run.variant << " " << run.backend << ":" << listed;
      ++checked;
    }
  }
  EXPECT_GE(checked, 2 * static_cast<int>(manifest.labs.size()));
}

}  // namespace
