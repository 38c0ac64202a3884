// Tests of the results' console report (results_report.cpp): the context, one table per result
// name, values with their provenance, and text from the file made safe for a terminal.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "gpulab/core/results.hpp"
#include "results_support.hpp"

namespace {

using gpulab::ResultsFile;
using gpulab::testing::sample_file;

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

// The report line that contains `needle`, or "" when none does.
std::string line_with(const std::string& report, const std::string& needle) {
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) {
      return line;
    }
  }
  return {};
}

TEST(ResultsReport, ShowsContextTablesValuesAndProvenance) {
  const std::string report = gpulab::render_report(sample_file());
  EXPECT_NE(line_with(report, "  gpulab ").find("0.1.0"), std::string::npos) << report;
  EXPECT_NE(line_with(report, "revision").find("abc123def456"), std::string::npos) << report;
  EXPECT_NE(line_with(report, "backend").find("sim"), std::string::npos) << report;
  EXPECT_NE(line_with(report, "clock")
                .find("modeled for H100 SXM from counted memory traffic and instructions"),
            std::string::npos)
      << report;
  ResultsFile host = sample_file();
  host.context.clock = gpulab::TimingClock::host;
  EXPECT_NE(line_with(gpulab::render_report(host), "clock").find("not GPU time"),
            std::string::npos);
  EXPECT_NE(line_with(report, "device").find("sim (16 CPU threads)"), std::string::npos);
  EXPECT_NE(line_with(report, "spec").find("H100 SXM"), std::string::npos);
  EXPECT_NE(line_with(report, "date").find("2026-11-22T10:15:00Z"), std::string::npos);

  // One table per result name, in order, with params and metrics as columns.
  const std::size_t vector_add = report.find("\nvector_add\n");
  const std::size_t softmax = report.find("\nsoftmax\n");
  ASSERT_NE(vector_add, std::string::npos) << report;
  ASSERT_NE(softmax, std::string::npos) << report;
  EXPECT_LT(vector_add, softmax);
  const std::string header = line_with(report, "bandwidth (GB/s)");
  EXPECT_NE(header.find("time (ms)"), std::string::npos) << report;
  EXPECT_NE(header.find("time (ms) modeled (H100 SXM)"), std::string::npos) << report;
  EXPECT_NE(header.find("sm_efficiency (%)"), std::string::npos) << report;
  EXPECT_LT(header.find("level"), header.find("time (ms)"));

  const std::string small = line_with(report, "1048576");
  EXPECT_NE(small.find("0.8120"), std::string::npos) << report;
  EXPECT_NE(small.find("15.50"), std::string::npos) << report;
  EXPECT_NE(small.find("0.003760"), std::string::npos) << report;
  EXPECT_NE(small.find("n/a"), std::string::npos) << report;
  const std::string large = line_with(report, "16777216");
  EXPECT_NE(large.find("12.25"), std::string::npos) << report;
  EXPECT_NE(large.find("0.06010"), std::string::npos) << report;
  // The reason for n/a is listed once under the table.
  const std::string reason = "n/a sm_efficiency (%): needs CUPTI";
  EXPECT_NE(report.find(reason), std::string::npos) << report;
  EXPECT_EQ(report.find(reason), report.rfind(reason)) << report;

  const std::string softmax_row = line_with(report, "4096");
  EXPECT_NE(softmax_row.find("33554432"), std::string::npos) << report;
  EXPECT_NE(softmax_row.find("3.500"), std::string::npos) << report;
  EXPECT_NE(report.find("bytes"), std::string::npos);
}

TEST(ResultsReport, EscapesControlCharactersAndHandlesNoResults) {
  ResultsFile file = sample_file();
  file.context.device = "evil\x1b]0;title\x07";
  file.context.backend = "cuda";
  file.results.clear();
  const std::string report = gpulab::render_report(file);
  EXPECT_EQ(report.find('\x1b'), std::string::npos);
  EXPECT_NE(report.find("evil\\x1b]0;title\\x07"), std::string::npos) << report;
  EXPECT_NE(report.find("(no results)"), std::string::npos) << report;
  EXPECT_EQ(report.find("not GPU time"), std::string::npos) << report;
}

TEST(ResultsReport, MissingCellsShowADash) {
  ResultsFile file = sample_file();
  file.results[1].metrics.erase(file.results[1].metrics.begin() + 1);  // no bandwidth
  const std::string report = gpulab::render_report(file);
  const std::string row = line_with(report, "16777216");
  EXPECT_NE(row.find(" - "), std::string::npos) << report;
}

}  // namespace
