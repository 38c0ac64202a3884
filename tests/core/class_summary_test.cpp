// Unit tests of class_summary.hpp: a summary saved and loaded back unchanged, and hostile files
// refused with one error naming the field.
#include "gpulab/core/class_summary.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <string>

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ClassSummary summary() {
  ClassSummary s;
  s.context.gpulab_version = "0.1.0";
  s.context.backend = "sim";
  s.context.date = "2026-11-27T10:00:00Z";
  s.context.clock = TimingClock::host;
  s.students = 5;
  s.graded = 4;
  s.labs = {{"lab01", {1, 0, 0, 0, 0, 0, 0, 0, 1, 2}}, {"lab03", {2, 0, 0, 0, 0, 0, 0, 0, 0, 2}}};
  s.failed_most = {{"lab03 Lab03Roofline.RidgePoint", 2}, {"lab01 Lab01Timing.Warmup", 1}};
  return s;
}

// The message of the ResultsError that reading `document` throws; empty when it reads.
std::string error_of(const json& document) {
  try {
    (void)class_summary_from_json(document, "class.json");
  } catch (const ResultsError& e) {
    return e.what();
  }
  return "";
}

TEST(ClassSummary, SavedAndLoadedBackUnchanged) {
  const ClassSummary written = summary();
  const fs::path path =
      fs::temp_directory_path() / ("gpulab-class-summary-" + std::to_string(::getpid()) + ".json");
  save_class_summary(path, written);
  const json document = load_results_json(path);
  fs::remove(path);
  EXPECT_TRUE(is_class_summary(document));
  EXPECT_EQ(class_summary_from_json(document, "class.json"), written);
  // It is a results file too (context, no results): gpulab show reads it.
  EXPECT_TRUE(results_from_json(document, "class.json").results.empty());
  EXPECT_FALSE(is_class_summary(to_json(ResultsFile{written.context, {}})));
  EXPECT_FALSE(is_class_summary(json::array()));
}

TEST(ClassSummary, ScoreBandsAreTenthsOfThePoints) {
  EXPECT_EQ(class_score_band(0), "0-9%");
  EXPECT_EQ(class_score_band(4), "40-49%");
  EXPECT_EQ(class_score_band(9), "90-100%");
}

TEST(ClassSummary, RenderedForAPersonAsSummaryTxt) {
  EXPECT_EQ(render_class_summary(summary()),
            "Class summary: 4 of 5 submission(s) graded, sim backend\n\n"
            "Scores per lab (students per tenth of the points):\n"
            "  lab01  0-9%: 1 10-19%: 0 20-29%: 0 30-39%: 0 40-49%: 0 50-59%: 0 60-69%: 0 "
            "70-79%: 0 80-89%: 1 90-100%: 2\n"
            "  lab03  0-9%: 2 10-19%: 0 20-29%: 0 30-39%: 0 40-49%: 0 50-59%: 0 60-69%: 0 "
            "70-79%: 0 80-89%: 0 90-100%: 2\n\n"
            "Tests failed most often:\n"
            "  2  lab03 Lab03Roofline.RidgePoint\n"
            "  1  lab01 Lab01Timing.Warmup\n");
}

TEST(ClassSummary, CountsUpTo2To53AreRead) {
  ClassSummary big = summary();
  big.students = std::size_t{1} << 53;
  big.graded = big.students;
  big.labs = {{"lab01", {big.graded, 0, 0, 0, 0, 0, 0, 0, 0, 0}}};
  big.failed_most = {{"lab01 Lab01Summary.CountMinMaxAndMean", big.graded}};
  EXPECT_EQ(class_summary_from_json(to_json(big), "class.json"), big);
}

TEST(ClassSummary, AnEmptyClassIsASummary) {
  ClassSummary empty = summary();
  empty.graded = 0;
  empty.labs = {{"lab01", {}}};
  empty.failed_most.clear();
  EXPECT_EQ(class_summary_from_json(to_json(empty), "class.json"), empty);
}

TEST(ClassSummary, HostileFilesAreRefusedNamingTheField) {
  const json good = to_json(summary());
  struct Case {
    const char* what;
    json::json_pointer pointer;
    json value;
    const char* expected;  // part of the message
  };
  const Case cases[] = {
      {"no section", json::json_pointer("/class_summary"), json(),
       "class_summary: expected an object"},
      {"negative", json::json_pointer("/class_summary/students"), -1, "class_summary.students"},
      {"a fraction", json::json_pointer("/class_summary/graded"), 2.5, "class_summary.graded"},
      {"over 2^53", json::json_pointer("/class_summary/students"), 1ULL << 60, "2^53"},
      {"more graded than students", json::json_pointer("/class_summary/graded"), 6,
       "6 graded of 5 students"},
      {"nine bins", json::json_pointer("/class_summary/labs/0/histogram"),
       json::array({1, 0, 0, 0, 0, 0, 0, 1, 2}), "expected 10 counts, found 9"},
      {"bins not adding up", json::json_pointer("/class_summary/labs/1/histogram/0"), 3,
       "labs[1].histogram: counts 5 students, but 4 were graded"},
      {"a string count", json::json_pointer("/class_summary/labs/0/histogram/9"), "2",
       "labs[0].histogram[9]"},
      {"an empty lab id", json::json_pointer("/class_summary/labs/1/lab"), "",
       "labs[1].lab: expected a name"},
      {"a lab twice", json::json_pointer("/class_summary/labs/1/lab"), "lab01",
       "the lab \"lab01\" a second time"},
      {"labs not an array", json::json_pointer("/class_summary/labs"), json::object(),
       "class_summary.labs: expected an array"},
      {"a test not UTF-8", json::json_pointer("/class_summary/failed_most/0/test"),
       std::string("lab03 \xff"), "failed_most[0].test: expected a name"},
      {"a newline in a test", json::json_pointer("/class_summary/failed_most/0/test"),
       "lab03\nfake line", "failed_most[0].test: expected a name"},
      {"a lab id too long", json::json_pointer("/class_summary/labs/0/lab"), std::string(301, 'x'),
       "labs[0].lab: expected a name"},
      {"too many labs", json::json_pointer("/class_summary/labs"),
       json::array({}) /* replaced below */, "expected at most 100 labs, found 101"},
      {"failed by more than graded", json::json_pointer("/class_summary/failed_most/1/students"), 5,
       "5 students failed it, but 4 were graded"},
      {"a bad context", json::json_pointer("/context/backend"), "", "context.backend"},
  };
  for (const Case& c : cases) {
    json bad = good;
    if (std::string(c.what) == "too many labs") {
      bad["class_summary"]["labs"] = json::array();
      for (int i = 0; i < 101; ++i) {
        bad["class_summary"]["labs"].push_back(
            {{"lab", "lab" + std::to_string(i)}, {"histogram", {4, 0, 0, 0, 0, 0, 0, 0, 0, 0}}});
      }
    } else if (c.value.is_null()) {
      bad.erase(c.pointer.back());
    } else {
      bad[c.pointer] = c.value;
    }
    const std::string error = error_of(bad);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
    EXPECT_EQ(error.rfind("class.json: ", 0), 0U) << c.what << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << c.what;
  }
  EXPECT_NE(error_of(json::array()).find("expected a class summary object"), std::string::npos);
  ClassSummary invalid = summary();
  invalid.graded = 9;
  EXPECT_THROW((void)to_json(invalid), ResultsError) << "what is written can be read back";
}

}  // namespace
}  // namespace gpulab
