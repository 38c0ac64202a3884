// Unit tests of grading.hpp: the lab manifest, ctest's JUnit report (a document shaped like the
// one ctest 3.25 --output-junit writes), the failure excerpt a student sees, and the points of a
// run.
#include "gpulab/core/grading.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Lines = std::vector<std::string>;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string joined(const Lines& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += "\n  [" + line + "]";
  }
  return out.empty() ? " (none)" : out;
}

// ---------------------------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------------------------

// Shaped like the <build>/grading/manifest.json that cmake/GpulabLabs.cmake writes.
json valid_manifest() {
  return json::parse(R"({
    "schema_version": 1,
    "source_dir": "/src/gpulab",
    "labs": [
      {"id": "lab01", "title": "Benchmarking a kernel correctly", "dir": "lab01_benchmarking",
       "runs": [
         {"variant": "student", "backend": "sim", "runner": "gpulab.lab01.student.run.sim",
          "tests": [{"name": "gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean", "points": 5},
                    {"name": "gpulab.lab01.student.sim/Lab01Timing.WarmupRunsAreNotTimed", "points": 10}]},
         {"variant": "solution", "backend": "cuda", "runner": "gpulab.lab01.solution.run.cuda",
          "tests": []}
       ]},
      {"id": "lab03", "title": "Identifying the bottleneck", "dir": "lab03_bottleneck", "runs": []}
    ]
  })");
}

TEST(LabManifest, ParsesEveryField) {
  const LabManifest m = parse_lab_manifest(valid_manifest().dump(), "manifest.json");
  EXPECT_EQ(m.source_dir, fs::path("/src/gpulab"));
  ASSERT_EQ(m.labs.size(), 2u);
  const LabEntry& lab = m.labs[0];
  EXPECT_EQ(lab.id, "lab01");
  EXPECT_EQ(lab.title, "Benchmarking a kernel correctly");
  EXPECT_EQ(lab.dir, "lab01_benchmarking");
  ASSERT_EQ(lab.runs.size(), 2u);
  EXPECT_EQ(lab.runs[0].variant, "student");
  EXPECT_EQ(lab.runs[0].backend, "sim");
  EXPECT_EQ(lab.runs[0].runner, "gpulab.lab01.student.run.sim");
  ASSERT_EQ(lab.runs[0].tests.size(), 2u);
  EXPECT_EQ(lab.runs[0].tests[0].name, "gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean");
  EXPECT_EQ(lab.runs[0].tests[0].points, 5);
  EXPECT_EQ(lab.runs[0].tests[1].points, 10);
  EXPECT_EQ(lab.runs[1].variant, "solution");
  EXPECT_EQ(lab.runs[1].backend, "cuda");
  EXPECT_TRUE(lab.runs[1].tests.empty());
  EXPECT_EQ(m.labs[1].id, "lab03");
  EXPECT_TRUE(m.labs[1].runs.empty());
}

TEST(LabManifest, IgnoresUnknownFields) {
  json doc = valid_manifest();
  doc["generator"] = "a later gpulab";
  doc["labs"][0]["points_total"] = 100;
  doc["labs"][0]["runs"][0]["tests"][0]["timeout_s"] = 60;
  const LabManifest m = parse_lab_manifest(doc.dump(), "manifest.json");
  ASSERT_EQ(m.labs.size(), 2u);
  EXPECT_EQ(m.labs[0].runs[0].tests[0].points, 5);
}

TEST(LabManifest, RejectsAnotherSchemaVersion) {
  json doc = valid_manifest();
  doc["schema_version"] = 2;
  try {
    (void)parse_lab_manifest(doc.dump(), "build/grading/manifest.json");
    FAIL() << "schema_version 2 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "build/grading/manifest.json")) << e.what();
    EXPECT_TRUE(contains(e.what(), "schema_version")) << e.what();
  }
}

TEST(LabManifest, RejectsTextThatIsNotJsonNamingTheSource) {
  for (const char* text : {"", "{", "not json", "[1, 2"}) {
    try {
      (void)parse_lab_manifest(text, "m.json");
      ADD_FAILURE() << "\"" << text << "\" was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "m.json")) << e.what();
    }
  }
}

// Every required field, as a JSON pointer to its parent object and the key to remove.
struct RequiredField {
  const char* parent;
  const char* key;
};

TEST(LabManifest, AMissingFieldIsARuntimeErrorNamingTheField) {
  const RequiredField fields[] = {
      {"", "schema_version"},
      {"", "source_dir"},
      {"", "labs"},
      {"/labs/0", "id"},
      {"/labs/0", "title"},
      {"/labs/0", "dir"},
      {"/labs/0", "runs"},
      {"/labs/0/runs/0", "variant"},
      {"/labs/0/runs/0", "backend"},
      {"/labs/0/runs/0", "runner"},
      {"/labs/0/runs/0", "tests"},
      {"/labs/0/runs/0/tests/1", "name"},
      {"/labs/0/runs/0/tests/1", "points"},
  };
  for (const RequiredField& field : fields) {
    json doc = valid_manifest();
    doc[json::json_pointer(field.parent)].erase(field.key);
    const std::string where = std::string(field.parent) + "/" + field.key;
    try {
      (void)parse_lab_manifest(doc.dump(), "manifest.json");
      ADD_FAILURE() << "a manifest without " << where << " was accepted";
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_TRUE(contains(message, "manifest.json")) << where << ": " << message;
      EXPECT_TRUE(contains(message, "\"" + std::string(field.key) + "\""))
          << where << ": " << message;
    }
  }
}

TEST(LabManifest, AMissingFieldNamesWhereInTheDocumentItIsMissing) {
  json doc = valid_manifest();
  doc["labs"][0]["runs"][0]["tests"][1].erase("points");
  try {
    (void)parse_lab_manifest(doc.dump(), "manifest.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "labs[0].runs[0].tests[1]")) << e.what();
  }
}

TEST(LabManifest, AFieldOfTheWrongTypeIsARuntimeErrorNamingTheField) {
  json doc = valid_manifest();
  doc["labs"][0]["runs"][0]["tests"][0]["points"] = "five";
  try {
    (void)parse_lab_manifest(doc.dump(), "manifest.json");
    FAIL() << "points given as a string was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "points")) << e.what();
  }
  doc = valid_manifest();
  doc["labs"] = json::object();
  EXPECT_THROW((void)parse_lab_manifest(doc.dump(), "manifest.json"), std::runtime_error);
}

// A file in the temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& stem)
      : path_(fs::temp_directory_path() /
              (stem + "-" +
               std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {}
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(LabManifest, LoadReadsTheFile) {
  const TempFile file("gpulab-grading-test-manifest");
  {
    std::ofstream out(file.path());
    out << valid_manifest().dump(2);
  }
  const LabManifest m = load_lab_manifest(file.path());
  ASSERT_EQ(m.labs.size(), 2u);
  EXPECT_EQ(m.labs[0].runs[0].tests.size(), 2u);
}

TEST(LabManifest, LoadOfAMissingFileIsARuntimeErrorNamingThePath) {
  const fs::path missing = fs::temp_directory_path() / "gpulab-no-such-dir" / "manifest.json";
  try {
    (void)load_lab_manifest(missing);
    FAIL() << "a missing manifest was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), missing.string())) << e.what();
  }
}

TEST(LabManifest, LoadOfAMalformedFileNamesThePath) {
  const TempFile file("gpulab-grading-test-bad-manifest");
  {
    std::ofstream out(file.path());
    out << R"({"schema_version": 1})";
  }
  try {
    (void)load_lab_manifest(file.path());
    FAIL() << "a manifest without source_dir was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), file.path().string())) << e.what();
    EXPECT_TRUE(contains(e.what(), "source_dir")) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// ctest's JUnit report
// ---------------------------------------------------------------------------------------------

// What ctest 3.25 writes (cmCTestTestHandler::WriteJUnitXML): testsuite attributes one per line,
// status "run" / "fail" / "notrun" (with a <skipped> element) / "disabled", attribute values and
// output with &lt; &gt; &amp; &quot; entities. The last case has its attributes on new lines, as
// other JUnit writers (and a hand-edited report) put them.
constexpr const char* kJunit = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="7"
	failures="1"
	disabled="1"
	skipped="2"
	hostname=""
	time="0"
	timestamp="2026-11-22T03:18:37"
	>
	<testcase name="gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean" classname="gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean" time="0.0152787" status="run">
		<system-out>Note: Google Test filter = Lab01Summary.CountMinMaxAndMean
[==========] Running 1 test from 1 test suite.
[ RUN      ] Lab01Summary.CountMinMaxAndMean
[       OK ] Lab01Summary.CountMinMaxAndMean (0 ms)
[  PASSED  ] 1 test.
</system-out>
	</testcase>
	<testcase name="Escaped&lt;float&gt;.A&amp;B &quot;quoted&quot;" classname="Escaped&lt;float&gt;.A&amp;B &quot;quoted&quot;" time="0.01" status="run">
		<system-out>a &lt; b &amp;&amp; "c" &gt; 'd' &apos;e&apos; &#65;&#x42;
</system-out>
	</testcase>
	<testcase name="gpulab.lab01.student.sim/Lab01Summary.RejectsEmptyAndInvalidSamples" classname="gpulab.lab01.student.sim/Lab01Summary.RejectsEmptyAndInvalidSamples" time="0.00543824" status="fail">
		<failure message=""/>
		<system-out>[ RUN      ] Lab01Summary.RejectsEmptyAndInvalidSamples
/work/main/tests/labs/lab01_benchmarking/lab01_test.cpp:61: Failure
Expected: static_cast&lt;void&gt;(summarize_samples(invalid[i])) throws an exception of type std::invalid_argument.
  Actual: it throws nothing.
[  FAILED  ] Lab01Summary.RejectsEmptyAndInvalidSamples (0 ms)
</system-out>
	</testcase>
	<testcase name="gpulab.lab01.student.cuda/Lab01Timing.WarmupRunsAreNotTimed" classname="gpulab.lab01.student.cuda/Lab01Timing.WarmupRunsAreNotTimed" time="0.00888979" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>[  SKIPPED ] Lab01Timing.WarmupRunsAreNotTimed: needs a CUDA device
</system-out>
	</testcase>
	<testcase name="gpulab.lab01.student.cuda/Lab01Timing.StopsAtTheTimeLimit" classname="gpulab.lab01.student.cuda/Lab01Timing.StopsAtTheTimeLimit" time="0" status="notrun">
		<skipped message="Unable to find executable"/>
		<system-out>Unable to find executable: /build/bin/gpulab.test.lab01.student.cuda</system-out>
	</testcase>
	<testcase name="Disabled.Case" classname="Disabled.Case" time="0" status="disabled">
	</testcase>
	<testcase
		name="NewLines.Case"
		classname="NewLines.Case"
		time="0.5"
		status="fail">
		<failure message="Timeout"/>
		<system-out>still running when the timeout hit</system-out>
	</testcase>
</testsuite>
)xml";

TEST(CtestJunit, EveryTestcaseIsRead) {
  const std::map<std::string, JunitCase> cases = parse_ctest_junit(kJunit);
  EXPECT_EQ(cases.size(), 7u);
}

TEST(CtestJunit, StatusRunIsPassedAndFailIsFailed) {
  const auto cases = parse_ctest_junit(kJunit);
  EXPECT_EQ(cases.at("gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean").outcome,
            TestOutcome::passed);
  EXPECT_EQ(cases.at("gpulab.lab01.student.sim/Lab01Summary.RejectsEmptyAndInvalidSamples").outcome,
            TestOutcome::failed);
}

TEST(CtestJunit, NotRunAndDisabledAreSkipped) {
  const auto cases = parse_ctest_junit(kJunit);
  EXPECT_EQ(cases.at("gpulab.lab01.student.cuda/Lab01Timing.WarmupRunsAreNotTimed").outcome,
            TestOutcome::skipped);
  EXPECT_EQ(cases.at("gpulab.lab01.student.cuda/Lab01Timing.StopsAtTheTimeLimit").outcome,
            TestOutcome::skipped);
  EXPECT_EQ(cases.at("Disabled.Case").outcome, TestOutcome::skipped);
  EXPECT_EQ(cases.at("Disabled.Case").output, "");
}

TEST(CtestJunit, EntitiesInNamesAndOutputAreDecoded) {
  const auto cases = parse_ctest_junit(kJunit);
  const auto found = cases.find("Escaped<float>.A&B \"quoted\"");
  ASSERT_NE(found, cases.end()) << "the name was not decoded";
  EXPECT_EQ(found->second.outcome, TestOutcome::passed);
  EXPECT_EQ(found->second.output, "a < b && \"c\" > 'd' 'e' AB\n");
  EXPECT_TRUE(contains(
      cases.at("gpulab.lab01.student.sim/Lab01Summary.RejectsEmptyAndInvalidSamples").output,
      "static_cast<void>(summarize_samples(invalid[i]))"));
}

TEST(CtestJunit, OutputIsTheTestsOwnSystemOut) {
  const auto cases = parse_ctest_junit(kJunit);
  const std::string& passed =
      cases.at("gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean").output;
  EXPECT_EQ(passed.rfind("Note: Google Test filter = Lab01Summary.CountMinMaxAndMean\n", 0), 0u)
      << passed;
  EXPECT_TRUE(contains(passed, "[  PASSED  ] 1 test.\n")) << passed;
  EXPECT_FALSE(contains(passed, "<system-out>")) << passed;
  EXPECT_FALSE(contains(passed, "Escaped")) << "the next test's output leaked in: " << passed;
  EXPECT_EQ(cases.at("gpulab.lab01.student.cuda/Lab01Timing.StopsAtTheTimeLimit").output,
            "Unable to find executable: /build/bin/gpulab.test.lab01.student.cuda");
}

TEST(CtestJunit, AttributesOnNewLinesAreRead) {
  const auto cases = parse_ctest_junit(kJunit);
  const auto found = cases.find("NewLines.Case");
  ASSERT_NE(found, cases.end());
  EXPECT_EQ(found->second.outcome, TestOutcome::failed);
  EXPECT_EQ(found->second.output, "still running when the timeout hit");
}

TEST(CtestJunit, AnEmptySuiteHasNoCases) {
  EXPECT_TRUE(parse_ctest_junit(R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="0"
	>
</testsuite>
)xml")
                  .empty());
}

TEST(CtestJunit, TextThatIsNotAReportIsARuntimeError) {
  for (const char* text : {"", "<html><body>hello</body></html>", "{\"tests\": []}"}) {
    EXPECT_THROW((void)parse_ctest_junit(text), std::runtime_error) << "\"" << text << "\"";
  }
}

TEST(CtestJunit, ATruncatedReportIsARuntimeError) {
  EXPECT_THROW((void)parse_ctest_junit("<testsuite>\n<testcase name=\"a\" status=\"run\""),
               std::runtime_error);
}

TEST(CtestJunit, ATestcaseWithoutNameOrStatusIsARuntimeError) {
  EXPECT_THROW((void)parse_ctest_junit("<testsuite><testcase name=\"a\"></testcase></testsuite>"),
               std::runtime_error);
  EXPECT_THROW(
      (void)parse_ctest_junit("<testsuite><testcase status=\"run\"></testcase></testsuite>"),
      std::runtime_error);
}

TEST(CtestJunit, AMalformedCharacterReferenceIsARuntimeError) {
  // Not something ctest writes, but a damaged or hand-made report must give the documented error,
  // not an exception from deep inside the number parsing.
  for (const char* reference : {"&#xZZ;", "&#;x", "&#99999999999999999999999;"}) {
    const std::string xml = std::string("<testsuite><testcase name=\"a\" status=\"run\">") +
                            "<system-out>" + reference + "</system-out></testcase></testsuite>";
    try {
      (void)parse_ctest_junit(xml);
    } catch (const std::runtime_error&) {
      // the documented error
    } catch (const std::exception& e) {
      ADD_FAILURE() << reference << ": expected std::runtime_error or a decoded report, got "
                    << typeid(e).name() << ": " << e.what();
    }
  }
}

TEST(TestOutcome, Names) {
  EXPECT_EQ(to_string(TestOutcome::passed), "passed");
  EXPECT_EQ(to_string(TestOutcome::failed), "failed");
  EXPECT_EQ(to_string(TestOutcome::skipped), "skipped");
  EXPECT_EQ(to_string(TestOutcome::missing), "missing");
}

// ---------------------------------------------------------------------------------------------
// failure_excerpt, on the output gtest 1.12 prints for one test (ctest runs one per process)
// ---------------------------------------------------------------------------------------------

// `body` between gtest's banners, as ctest captures it for a failed test.
std::string one_test_output(const std::string& name, const std::string& body) {
  std::string out = "Running main() from ./googletest/src/gtest_main.cc\n";
  out += "Note: Google Test filter = " + name + "\n";
  out += "[==========] Running 1 test from 1 test suite.\n";
  out += "[----------] Global test environment set-up.\n";
  out += "[----------] 1 test from Suite\n";
  out += "[ RUN      ] " + name + "\n";
  out += body;
  out += "[  FAILED  ] " + name + " (0 ms)\n";
  out += "[----------] 1 test from Suite (0 ms total)\n";
  out += "\n";
  out += "[----------] Global test environment tear-down\n";
  out += "[==========] 1 test from 1 test suite ran. (0 ms total)\n";
  out += "[  PASSED  ] 0 tests.\n";
  out += "[  FAILED  ] 1 test, listed below:\n";
  out += "[  FAILED  ] " + name + "\n";
  out += "\n";
  out += " 1 FAILED TEST\n";
  return out;
}

TEST(FailureExcerpt, ANotImplementedStubGivesTheExceptionMessageAndNoGtestBanners) {
  const std::string exception_line =
      "C++ exception with description \"lab01: summarize_samples is not implemented yet (fill in "
      "the TODO(lab01) region at labs/lab01_benchmarking/benchmark.cu:30)\" thrown in the test "
      "body.";
  const std::string output = one_test_output("Lab01Summary.CountMinMaxAndMean",
                                             "unknown file: Failure\n" + exception_line + "\n");
  const Lines got = failure_excerpt(output);
  const Lines expected = {"unknown file: Failure", exception_line};
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(FailureExcerpt, AnExpectNearFailureKeepsGotExpectedAndTolerance) {
  const std::string output = one_test_output(
      "Lab01Throughput.Bandwidth",
      "lab01_test.cpp:45: Failure\n"
      "The difference between got and expected is 1, which exceeds tolerance, where\n"
      "got evaluates to 2,\n"
      "expected evaluates to 1, and\n"
      "tolerance evaluates to 0.001.\n"
      "index 3\n");
  const Lines got = failure_excerpt(output);
  const Lines expected = {
      "lab01_test.cpp:45: Failure",
      "The difference between got and expected is 1, which exceeds tolerance, where",
      "got evaluates to 2,",
      "expected evaluates to 1, and",
      "tolerance evaluates to 0.001.",
      "index 3",
  };
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(FailureExcerpt, AnExpectEqFailureKeepsBothSides) {
  const std::string output = one_test_output("Suite.Eq",
                                             "lab01_test.cpp:50: Failure\n"
                                             "Expected equality of these values:\n"
                                             "  got\n"
                                             "    Which is: 2\n"
                                             "  expected\n"
                                             "    Which is: 1\n");
  const Lines got = failure_excerpt(output);
  const Lines expected = {"lab01_test.cpp:50: Failure",
                          "Expected equality of these values:",
                          "  got",
                          "    Which is: 2",
                          "  expected",
                          "    Which is: 1"};
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(FailureExcerpt, KeepsEveryFailureUpToMaxLines) {
  const std::string output = one_test_output("Suite.Two",
                                             "a.cpp:1: Failure\n"
                                             "Value of: x\n"
                                             "a.cpp:2: Failure\n"
                                             "Value of: y\n");
  const Lines all = failure_excerpt(output, 10);
  ASSERT_GE(all.size(), 4u) << joined(all);
  EXPECT_EQ(all[0], "a.cpp:1: Failure");
  EXPECT_EQ(all[1], "Value of: x");
  EXPECT_EQ(all[2], "a.cpp:2: Failure");
  EXPECT_EQ(all[3], "Value of: y");
  EXPECT_EQ(failure_excerpt(output, 3),
            (Lines{"a.cpp:1: Failure", "Value of: x", "a.cpp:2: Failure"}));
  EXPECT_TRUE(failure_excerpt(output, 0).empty());
}

TEST(FailureExcerpt, ATestWhoseNameSaysFailureIsNotItselfAFailureLine) {
  // gtest echoes the name in its banners ("Note: Google Test filter = ...", "[ RUN      ] ..."):
  // only the failure lines gtest writes ("file:line: Failure") start an excerpt.
  const std::string output = one_test_output("Lab05Memory.ReportsAllocationFailure",
                                             "lab05_test.cpp:12: Failure\n"
                                             "Value of: report.failed\n");
  const Lines got = failure_excerpt(output);
  const Lines expected = {"lab05_test.cpp:12: Failure", "Value of: report.failed"};
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(FailureExcerpt, APassingTestsOutputGivesNothing) {
  const std::string output =
      "Running main() from ./googletest/src/gtest_main.cc\n"
      "[ RUN      ] Suite.Ok\n"
      "[       OK ] Suite.Ok (0 ms)\n"
      "[  PASSED  ] 1 test.\n";
  EXPECT_TRUE(failure_excerpt(output).empty()) << joined(failure_excerpt(output));
  EXPECT_TRUE(failure_excerpt("").empty());
}

// ---------------------------------------------------------------------------------------------
// grade_run
// ---------------------------------------------------------------------------------------------

TEST(GradeRun, OnlyPassedTestsEarnTheirPoints) {
  const LabRun run{"student",
                   "sim",
                   "gpulab.lab01.student.run.sim",
                   {{"t/Passed", 10}, {"t/Failed", 20}, {"t/Skipped", 30}, {"t/Missing", 40}}};
  const LabEntry lab{"lab01", "Benchmarking a kernel correctly", "lab01_benchmarking", {run}};
  std::map<std::string, JunitCase> results;
  results["t/Passed"] = {TestOutcome::passed, "[       OK ] Passed\n"};
  results["t/Failed"] = {
      TestOutcome::failed,
      "[ RUN      ] Failed\nx.cpp:3: Failure\nValue of: ok\n[  FAILED  ] Failed\n"};
  results["t/Skipped"] = {TestOutcome::skipped, "[  SKIPPED ] needs a CUDA device\n"};
  results["t/NotInTheManifest"] = {TestOutcome::passed, ""};

  const RunGrade grade = grade_run(lab, run, results);
  EXPECT_EQ(grade.lab, "lab01");
  EXPECT_EQ(grade.title, "Benchmarking a kernel correctly");
  EXPECT_EQ(grade.variant, "student");
  EXPECT_EQ(grade.backend, "sim");
  EXPECT_EQ(grade.earned, 10);
  EXPECT_EQ(grade.possible, 100);
  ASSERT_EQ(grade.tests.size(), 4u) << "one grade per test of the run, in the run's order";

  const struct {
    const char* name;
    int points;
    TestOutcome outcome;
    int earned;
  } expected[] = {{"t/Passed", 10, TestOutcome::passed, 10},
                  {"t/Failed", 20, TestOutcome::failed, 0},
                  {"t/Skipped", 30, TestOutcome::skipped, 0},
                  {"t/Missing", 40, TestOutcome::missing, 0}};
  for (std::size_t i = 0; i < grade.tests.size(); ++i) {
    const TestGrade& t = grade.tests[i];
    EXPECT_EQ(t.name, expected[i].name);
    EXPECT_EQ(t.points, expected[i].points) << t.name;
    EXPECT_EQ(t.outcome, expected[i].outcome)
        << t.name << ": expected " << to_string(expected[i].outcome) << ", got "
        << to_string(t.outcome);
    EXPECT_EQ(t.earned, expected[i].earned) << t.name;
  }
  EXPECT_EQ(grade.tests[1].excerpt, (Lines{"x.cpp:3: Failure", "Value of: ok"}))
      << joined(grade.tests[1].excerpt);
  EXPECT_TRUE(grade.tests[0].excerpt.empty());
  EXPECT_TRUE(grade.tests[2].excerpt.empty()) << "a skip is not a failure to explain";
}

TEST(GradeRun, ARunWithEveryTestPassedEarnsEverything) {
  const LabRun run{"solution", "cuda", "r", {{"a", 60}, {"b", 40}}};
  const LabEntry lab{"lab03", "Identifying the bottleneck", "lab03_bottleneck", {run}};
  const std::map<std::string, JunitCase> results = {{"a", {TestOutcome::passed, ""}},
                                                    {"b", {TestOutcome::passed, ""}}};
  const RunGrade grade = grade_run(lab, run, results);
  EXPECT_EQ(grade.earned, 100);
  EXPECT_EQ(grade.possible, 100);
}

TEST(GradeRun, NoResultsAtAllEarnNothingAndEveryTestIsMissing) {
  const LabRun run{"student", "cuda", "r", {{"a", 60}, {"b", 40}}};
  const LabEntry lab{"lab01", "t", "d", {run}};
  const RunGrade grade = grade_run(lab, run, {});
  EXPECT_EQ(grade.earned, 0);
  EXPECT_EQ(grade.possible, 100);
  for (const TestGrade& t : grade.tests) {
    EXPECT_EQ(t.outcome, TestOutcome::missing) << t.name;
  }
}

}  // namespace
}  // namespace gpulab
