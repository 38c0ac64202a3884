// A grading's choices that need no grading (gpulab/grader/session.hpp): the environment each
// graded test runs with, and what --sanitize accepts.
#include "gpulab/grader/session.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/exit_codes.hpp"

namespace gpulab {
namespace {

using Environment = std::vector<std::pair<std::string, std::string>>;

LabRun run_with(Environment environment) {
  LabRun run;
  run.environment = std::move(environment);
  return run;
}

TEST(GradedTestEnvironment, IsTheRunsOwnUnlessTheSanitizerIsAskedFor) {
  const LabRun run = run_with({{"GPULAB_SIM_SCHEDULE", "reverse"}});
  GradeOptions options;
  options.for_record = false;
  EXPECT_EQ(graded_test_environment(run, "sim", options), run.environment);
  EXPECT_EQ(graded_test_environment(run, "cuda", options), run.environment);
  options.sanitize = true;
  EXPECT_EQ(graded_test_environment(run, "sim", options),
            (Environment{{"GPULAB_SIM_SCHEDULE", "reverse"}, {"GPULAB_SIM_SANITIZE", "1"}}));
  // The run's own value of the setting gives way.
  EXPECT_EQ(graded_test_environment(run_with({{"GPULAB_SIM_SANITIZE", "0"}}), "sim", options),
            (Environment{{"GPULAB_SIM_SANITIZE", "1"}}));
}

TEST(GradedTestEnvironment, TheSanitizerIsForTheSimAndNotForAGradeOfRecord) {
  GradeOptions options;
  options.sanitize = true;
  options.for_record = false;
  EXPECT_THROW((void)graded_test_environment(LabRun{}, "cuda", options), UsageError);
  options.for_record = true;
  EXPECT_THROW((void)graded_test_environment(LabRun{}, "sim", options), UsageError);
}

}  // namespace
}  // namespace gpulab
