// Unit tests of gpulab/labkit/lab_main.hpp's LabContext: the labels of a report's columns and the
// command that runs a report again on the same code.
#include <gtest/gtest.h>

#include "gpulab/labkit/lab_main.hpp"

namespace {

using gpulab::labkit::LabContext;

LabContext context(const char* variant) {
  LabContext c;
  c.lab = "lab01";
  c.variant = variant;
  c.spec.name = "H100 SXM";
  return c;
}

TEST(LabContext, RerunKeepsTheStudentsCodeAndPassesTheReportsArguments) {
  EXPECT_EQ(context("student").rerun(), "gpulab run lab01 --student");
  EXPECT_EQ(context("student").rerun("--max-log2 28"),
            "gpulab run lab01 --student -- --max-log2 28");
  EXPECT_EQ(context("solution").rerun("--max-log2 28"), "gpulab run lab01 -- --max-log2 28");
}

TEST(LabContext, LabelsSayWhatATimeIs) {
  LabContext c = context("student");
  EXPECT_EQ(c.modeled_label(), "modeled (H100 SXM)");
  c.clock = gpulab::TimingClock::modeled;
  EXPECT_NE(c.measured_label().find("H100 SXM"), std::string::npos) << c.measured_label();
  c.clock = gpulab::TimingClock::host;
  EXPECT_NE(c.measured_label().find("CPU"), std::string::npos) << c.measured_label();
}

}  // namespace
