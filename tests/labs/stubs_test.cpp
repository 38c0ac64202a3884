// The untouched student stubs score 0: every graded test of every lab, run directly against the
// student build of this tree (labs/ as shipped), must fail. A graded test that passes on a stub
// would hand out points for nothing. (Only in the instructor's tree: a student release has no
// stubs left to check once work starts.) And the manifest of this build marks the counted tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "gpulab/grader/manifest.hpp"
#include "run_command.hpp"

namespace {

using gpulab::testing::run_command;
using gpulab::testing::shell_quote;

TEST(LabStubs, EveryGradedTestFailsOnTheUntouchedStubs) {
  const std::filesystem::path build = GPULAB_BUILD_DIR;
  const gpulab::LabManifest manifest =
      gpulab::load_lab_manifest(build / "grading" / "manifest.json");
  ASSERT_FALSE(manifest.labs.empty()) << "the manifest lists no labs";
  int checked = 0;
  for (const gpulab::LabEntry& lab : manifest.labs) {
    for (const gpulab::LabRun& run : lab.runs) {
      if (run.variant != "student" || run.backend != "sim") {
        continue;  // the stubs fail the same way on cuda; sim runs everywhere
      }
      ASSERT_FALSE(run.tests.empty()) << lab.id << " has no graded tests";
      int points = 0;
      for (const gpulab::GradedTest& test : run.tests) {
        const gpulab::testing::Outcome outcome = run_command(
            shell_quote(run.tests_program.string()) + " --gtest_filter=" + shell_quote(test.name));
        EXPECT_EQ(outcome.exit_code, 1)
            << test.name << " (" << test.points << " points) on the untouched stub: expected a "
            << "failure (exit 1), got exit " << outcome.exit_code << "\n"
            << outcome.out;
        points += test.points;
        ++checked;
      }
      EXPECT_EQ(points, 100) << lab.id << ": graded points do not total 100";
    }
  }
  EXPECT_GT(checked, 0) << "no student sim build in the manifest";
}

// The manifest marks counted exactly the tests declared GPULAB_COUNTED_TEST (lab 04's traffic
// tests), in every run: a cuda grading runs those from the sim build (grading_run).
TEST(LabManifestOfThisBuild, CountedTestsAreTheOnesDeclaredSo) {
  const std::filesystem::path build = GPULAB_BUILD_DIR;
  const gpulab::LabManifest manifest =
      gpulab::load_lab_manifest(build / "grading" / "manifest.json");
  const std::set<std::string> expected = {"Lab04Traffic.FusedSoftmaxSavesAScoreMatrixOfDramTraffic",
                                          "Lab04Traffic.FlashReadsQkvAndWritesOOnce",
                                          "Lab04Traffic.CausalFlashSkipsTheKeysNoRowSees",
                                          "Lab04Traffic.TensorCoresReadHalfPrecision"};
  int runs = 0;
  for (const gpulab::LabEntry& lab : manifest.labs) {
    for (const gpulab::LabRun& run : lab.runs) {
      std::set<std::string> counted;
      for (const gpulab::GradedTest& test : run.tests) {
        if (test.counted) {
          counted.insert(test.name);
        }
      }
      EXPECT_EQ(counted,
                lab.id == "lab04" && !run.tests.empty() ? expected : std::set<std::string>{})
          << lab.id << " " << run.variant << " " << run.backend;
      runs += lab.id == "lab04" ? 1 : 0;
    }
  }
  EXPECT_GT(runs, 0) << "no run of lab04 in the manifest";
}

}  // namespace
