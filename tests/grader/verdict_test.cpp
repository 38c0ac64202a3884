// Unit tests of verdict.hpp: gtest's XML result file (documents shaped like the ones gtest 1.12
// writes with --gtest_output=xml for one test case), the verdict on a test from the evidence the
// runner collects (every path of judge_test), and the verdict file.
#include "gpulab/grader/verdict.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "text_match.hpp"

namespace gpulab {

// gtest prints a disposition by its name.
void PrintTo(Disposition disposition, std::ostream* out) {
  *out << to_string(disposition);
}

namespace {

using gpulab::testing::contains;
using gpulab::testing::joined;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// gtest's result file
// ---------------------------------------------------------------------------------------------

constexpr const char* kHeader = R"xml(<?xml version="1.0" encoding="UTF-8"?>
)xml";

// A passing test, exactly as gtest 1.12 writes it (a self-closing <testcase/>).
constexpr const char* kPassXml = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" time="0" timestamp="2026-11-22T04:30:49.271" name="AllTests">
  <testsuite name="Lab01Summary" tests="1" failures="0" disabled="0" skipped="0" errors="0" time="0" timestamp="2026-11-22T04:30:49.271">
    <testcase name="CountMinMaxAndMean" file="lab01_test.cpp" line="64" status="run" result="completed" time="0" timestamp="2026-11-22T04:30:49.271" classname="Lab01Summary" />
  </testsuite>
</testsuites>
)xml";

// A failed EXPECT_EQ with a streamed message holding < & " ': the message attribute encodes them
// as entities and line breaks as &#x0A;; the CDATA body repeats it raw.
constexpr const char* kFailXml = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1" disabled="0" errors="0" time="0" timestamp="2026-11-22T04:30:49.274" name="AllTests">
  <testsuite name="S" tests="1" failures="1" disabled="0" skipped="0" errors="0" time="0" timestamp="2026-11-22T04:30:49.274">
    <testcase name="Fail" file="t.cpp" line="4" status="run" result="completed" time="0" timestamp="2026-11-22T04:30:49.274" classname="S">
      <failure message="t.cpp:4&#x0A;Expected equality of these values:&#x0A;  got&#x0A;    Which is: 2&#x0A;  1&#x0A;a&lt;b &amp; &quot;c&quot; &apos;d&apos;" type=""><![CDATA[t.cpp:4
Expected equality of these values:
  got
    Which is: 2
  1
a<b & "c" 'd']]></failure>
    </testcase>
  </testsuite>
</testsuites>
)xml";

// GTEST_SKIP() << "needs a CUDA device: no device <0>": gtest puts the location first.
constexpr const char* kSkipXml = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" time="0" timestamp="2026-11-22T04:30:49.276" name="AllTests">
  <testsuite name="S" tests="1" failures="0" disabled="0" skipped="1" errors="0" time="0" timestamp="2026-11-22T04:30:49.276">
    <testcase name="Skip" file="t.cpp" line="5" status="run" result="skipped" time="0" timestamp="2026-11-22T04:30:49.276" classname="S">
      <skipped message="t.cpp:5&#x0A;needs a CUDA device: no device &lt;0&gt;"><![CDATA[t.cpp:5
needs a CUDA device: no device <0>]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
)xml";

// The result file of one test case `suite.name` with `body` inside its <testcase>.
std::string one_case_xml(const std::string& suite, const std::string& name, int failures,
                         const std::string& result, const std::string& body) {
  std::string xml = kHeader;
  xml += "<testsuites tests=\"1\" failures=\"" + std::to_string(failures) +
         "\" disabled=\"0\" errors=\"0\" time=\"0\" name=\"AllTests\">\n";
  xml += "  <testsuite name=\"" + suite + "\" tests=\"1\" failures=\"" + std::to_string(failures) +
         "\" disabled=\"0\" skipped=\"0\" errors=\"0\" time=\"0\">\n";
  xml += "    <testcase name=\"" + name + "\" file=\"x.cpp\" line=\"3\" status=\"run\" result=\"" +
         result + "\" time=\"0\" classname=\"" + suite + "\"";
  xml += body.empty() ? " />\n" : ">\n" + body + "\n    </testcase>\n";
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

// An exception that escaped the test body.
std::string thrown_xml(const std::string& suite, const std::string& name, const std::string& what) {
  return one_case_xml(suite, name, 1, "completed",
                      "      <failure message=\"unknown file&#x0A;C++ exception with description "
                      "&quot;" +
                          what +
                          "&quot; thrown in the test body.\" type=\"\"><![CDATA[]]>"
                          "</failure>");
}

TEST(GtestXml, APassingTest) {
  const GtestReport report = parse_gtest_xml(kPassXml);
  EXPECT_EQ(report.tests, 1);
  EXPECT_EQ(report.failures, 0);
  EXPECT_EQ(report.errors, 0);
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_EQ(report.cases[0].name, "Lab01Summary.CountMinMaxAndMean");
  EXPECT_EQ(report.cases[0].status, "run");
  EXPECT_EQ(report.cases[0].result, "completed");
  EXPECT_TRUE(report.cases[0].failures.empty());
  EXPECT_FALSE(report.cases[0].skipped.has_value());
}

TEST(GtestXml, AFailureMessageIsDecoded) {
  const GtestReport report = parse_gtest_xml(kFailXml);
  EXPECT_EQ(report.tests, 1);
  EXPECT_EQ(report.failures, 1);
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_EQ(report.cases[0].name, "S.Fail");
  ASSERT_EQ(report.cases[0].failures.size(), 1u);
  EXPECT_EQ(report.cases[0].failures[0],
            "t.cpp:4\nExpected equality of these values:\n  got\n    Which is: 2\n  1\n"
            "a<b & \"c\" 'd'");
  EXPECT_FALSE(report.cases[0].skipped.has_value());
}

TEST(GtestXml, EveryFailureOfACaseIsKept) {
  const GtestReport report = parse_gtest_xml(one_case_xml(
      "S", "Two", 1, "completed",
      "      <failure message=\"a.cpp:1&#x0A;first\" type=\"\"><![CDATA[]]></failure>\n"
      "      <failure message=\"a.cpp:2&#x0A;second\" type=\"\"><![CDATA[]]></failure>"));
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_EQ(report.cases[0].failures,
            (std::vector<std::string>{"a.cpp:1\nfirst", "a.cpp:2\nsecond"}));
}

TEST(GtestXml, ASkippedTestKeepsItsMessage) {
  const GtestReport report = parse_gtest_xml(kSkipXml);
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_EQ(report.cases[0].result, "skipped");
  ASSERT_TRUE(report.cases[0].skipped.has_value());
  EXPECT_EQ(*report.cases[0].skipped, "t.cpp:5\nneeds a CUDA device: no device <0>");
  EXPECT_TRUE(report.cases[0].failures.empty());
}

TEST(GtestXml, SeveralCasesAreReadInOrder) {
  std::string xml = kHeader;
  xml +=
      "<testsuites tests=\"2\" failures=\"0\" errors=\"0\" name=\"AllTests\">\n"
      "  <testsuite name=\"A\" tests=\"2\">\n"
      "    <testcase name=\"One\" status=\"run\" result=\"completed\" classname=\"A\" />\n"
      "    <testcase name=\"Two\" status=\"notrun\" result=\"suppressed\" classname=\"A\" />\n"
      "  </testsuite>\n</testsuites>\n";
  const GtestReport report = parse_gtest_xml(xml);
  EXPECT_EQ(report.tests, 2);
  ASSERT_EQ(report.cases.size(), 2u);
  EXPECT_EQ(report.cases[0].name, "A.One");
  EXPECT_EQ(report.cases[1].name, "A.Two");
  EXPECT_EQ(report.cases[1].status, "notrun");
  EXPECT_EQ(report.cases[1].result, "suppressed");
}

TEST(GtestXml, ATruncatedFileIsARuntimeError) {
  // Cut where a process killed while writing would leave it.
  const std::string whole = kFailXml;
  for (const std::size_t length : {whole.size() / 4, whole.size() / 2, whole.size() - 16}) {
    EXPECT_THROW((void)parse_gtest_xml(whole.substr(0, length)), std::runtime_error)
        << "cut at " << length;
  }
  EXPECT_THROW((void)parse_gtest_xml(""), std::runtime_error);
}

TEST(GtestXml, ADocumentWithoutTestsuitesIsARuntimeError) {
  for (const char* text :
       {"<?xml version=\"1.0\"?>\n<testsuite name=\"S\" tests=\"1\"></testsuite>\n",
        "{\"tests\": 1}", "[  PASSED  ] 1 test."}) {
    EXPECT_THROW((void)parse_gtest_xml(text), std::runtime_error) << text;
  }
}

TEST(GtestXml, ATestcaseWithoutNameOrStatusIsARuntimeError) {
  EXPECT_THROW((void)parse_gtest_xml("<testsuites tests=\"1\"><testcase classname=\"S\" "
                                     "status=\"run\" /></testsuites>"),
               std::runtime_error);
  EXPECT_THROW((void)parse_gtest_xml("<testsuites tests=\"1\"><testcase name=\"A\" "
                                     "classname=\"S\" /></testsuites>"),
               std::runtime_error);
}

TEST(GtestXml, AMalformedCharacterReferenceIsARuntimeError) {
  for (const char* reference : {"&#xZZ;", "&#99999999999999999999999;", "&#12a;"}) {
    const std::string xml = std::string("<testsuites tests=\"1\"><testcase name=\"A") + reference +
                            "\" classname=\"S\" status=\"run\" /></testsuites>";
    EXPECT_THROW((void)parse_gtest_xml(xml), std::runtime_error) << reference;
  }
}

// ---------------------------------------------------------------------------------------------
// judge_test
// ---------------------------------------------------------------------------------------------

// A test process that exited with `code` after writing `xml`.
TestEvidence exited(int code, std::optional<std::string> xml, std::string output = "") {
  TestEvidence evidence;
  evidence.test = "Lab01Summary.CountMinMaxAndMean";
  evidence.exit_code = code;
  evidence.xml = std::move(xml);
  evidence.output = std::move(output);
  return evidence;
}

std::string describe(const Verdict& verdict) {
  return std::string(to_string(verdict.disposition)) + ": " + verdict.detail +
         "\nexcerpt:" + joined(verdict.excerpt);
}

TEST(JudgeTest, AProgramThatDidNotStartIsNotRun) {
  TestEvidence evidence;
  evidence.test = "S.T";
  evidence.started = false;
  evidence.start_error = "cannot start /bin/missing: No such file or directory";
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::not_run) << describe(verdict);
  EXPECT_EQ(verdict.detail, evidence.start_error);
}

TEST(JudgeTest, ATimeoutIsTimedOutWithTheLimitAndTheLastLines) {
  TestEvidence evidence = exited(0, std::string(kPassXml),
                                 "line 1\nline 2\nline 3\nline 4\n"
                                 "line 5\nstill looping\n");
  evidence.exit_code.reset();
  evidence.timed_out = true;
  evidence.timeout_s = 2.5;
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::timed_out) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "2.5 s")) << verdict.detail;
  ASSERT_FALSE(verdict.excerpt.empty());
  EXPECT_EQ(verdict.excerpt.back(), "still looping");
  EXPECT_LE(verdict.excerpt.size(), 8u);
}

TEST(JudgeTest, ASignalIsACrashNamingTheSignal) {
  TestEvidence evidence = exited(0, std::nullopt, "[ RUN      ] Lab01Summary.CountMinMaxAndMean\n");
  evidence.exit_code.reset();
  evidence.signal = 11;
  evidence.signal_name = "SIGSEGV (segmentation fault)";
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::crashed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "SIGSEGV")) << verdict.detail;
}

TEST(JudgeTest, ASignalAfterBadAllocIsOutOfMemory) {
  TestEvidence evidence =
      exited(0, std::nullopt,
             "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  "
             "std::bad_alloc\n");
  evidence.exit_code.reset();
  evidence.signal = 6;
  evidence.signal_name = "SIGABRT (aborted)";
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::out_of_memory) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "SIGABRT")) << verdict.detail;
}

TEST(JudgeTest, ExitZeroWithItsPassingResultFileIsPassed) {
  const Verdict verdict = judge_test(exited(0, std::string(kPassXml)));
  EXPECT_EQ(verdict.disposition, Disposition::passed) << describe(verdict);
}

TEST(JudgeTest, ExitZeroWithThePrematureExitFileIsExitedEarly) {
  // exit(0) inside the test: gtest may even have written its file for an earlier run.
  TestEvidence evidence = exited(0, std::string(kPassXml));
  evidence.premature_exit = true;
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::exited_early) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "status 0")) << verdict.detail;
}

TEST(JudgeTest, ExitZeroWithoutAResultFileIsExitedEarly) {
  const Verdict verdict = judge_test(exited(0, std::nullopt,
                                            "[       OK ] Lab01Summary.CountMinMaxAndMean (0 ms)\n"
                                            "[  PASSED  ] 1 test.\n"));
  EXPECT_EQ(verdict.disposition, Disposition::exited_early) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "no result file")) << verdict.detail;
}

TEST(JudgeTest, ExitZeroWithATruncatedResultFileIsNotPassed) {
  const std::string whole = kPassXml;
  const Verdict verdict = judge_test(exited(0, whole.substr(0, whole.size() / 2)));
  EXPECT_EQ(verdict.disposition, Disposition::exited_early) << describe(verdict);
}

TEST(JudgeTest, ExitZeroWithTheResultOfAnotherTestIsNotPassed) {
  const Verdict verdict =
      judge_test(exited(0, one_case_xml("Lab01Summary", "SomethingElse", 0, "completed", "")));
  EXPECT_NE(verdict.disposition, Disposition::passed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "Lab01Summary.CountMinMaxAndMean")) << verdict.detail;
}

TEST(JudgeTest, ExitZeroWithAResultFileOfTwoTestsIsNotPassed) {
  std::string xml = kHeader;
  xml +=
      "<testsuites tests=\"2\" failures=\"0\" disabled=\"0\" errors=\"0\" name=\"AllTests\">\n"
      "  <testsuite name=\"Lab01Summary\" tests=\"2\" failures=\"0\">\n"
      "    <testcase name=\"CountMinMaxAndMean\" status=\"run\" result=\"completed\" "
      "classname=\"Lab01Summary\" />\n"
      "    <testcase name=\"Other\" status=\"run\" result=\"completed\" "
      "classname=\"Lab01Summary\" />\n"
      "  </testsuite>\n</testsuites>\n";
  const Verdict verdict = judge_test(exited(0, xml));
  EXPECT_NE(verdict.disposition, Disposition::passed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "2 tests")) << verdict.detail;
}

TEST(JudgeTest, ExitZeroWithAFailureInTheResultFileIsFailed) {
  const Verdict verdict =
      judge_test(exited(0, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 1, "completed",
                                        "      <failure message=\"x.cpp:3&#x0A;Value of: ok\" "
                                        "type=\"\"><![CDATA[]]></failure>")));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
}

TEST(JudgeTest, AFailedBooleanAssertionIsDescribedByItsActualLine) {
  const Verdict verdict = judge_test(
      exited(1, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 1, "completed",
                             "      <failure message=\"x.cpp:3&#x0A;Value of: all_close(y,&#x0A;   "
                             " tol)&#x0A;  Actual: "
                             "false (index 3 of 8: expected 1, got nan)&#x0A;Expected: true\" "
                             "type=\"\"><![CDATA[]]></failure>")));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_EQ(verdict.detail, "Actual: false (index 3 of 8: expected 1, got nan)");
}

TEST(JudgeTest, AFailureWithoutAMessageIsDescribedByItsFirstLine) {
  for (const auto& [message, detail] :
       {std::pair{"t.cpp:4&#x0A;Expected equality of these values:&#x0A;  got&#x0A;    Which is: "
                  "2&#x0A;  1",
                  "Expected equality of these values:"},
        std::pair{
            "t.cpp:9&#x0A;Expected: (std::abs(got - expected)) &lt;= (tolerance), actual: 0.5 "
            "vs 1e-09&#x0A;median: expected 2.5, got 3",
            "median: expected 2.5, got 3"},
        std::pair{"t.cpp:9&#x0A;Failed&#x0A;summarize_samples changed the caller's samples",
                  "summarize_samples changed the caller's samples"},
        // The test's message, then what gtest says actually happened.
        std::pair{"t.cpp:7&#x0A;Expected: f(nan) throws an exception of type "
                  "std::invalid_argument.&#x0A;  Actual: it throws nothing.&#x0A;f must throw "
                  "std::invalid_argument for a NaN sample",
                  "f must throw std::invalid_argument for a NaN sample: it throws nothing."},
        // EXPECT_NEAR's operand lines are gtest's wording; the message follows them.
        std::pair{"t.cpp:8&#x0A;The difference between got and want is 0.5, which exceeds tol, "
                  "where&#x0A;got evaluates to 1.5,&#x0A;want evaluates to 2, and&#x0A;tol "
                  "evaluates to 0.4.&#x0A;median of time_kernel vs the framework",
                  "median of time_kernel vs the framework"},
        // Without a message, SCOPED_TRACE's lines are not one.
        std::pair{"t.cpp:9&#x0A;Expected equality of these values:&#x0A;  got.count&#x0A;    "
                  "Which is: 3&#x0A;  want.count&#x0A;    Which is: 4&#x0A;Google Test "
                  "trace:&#x0A;t.cpp:5: random samples, seed 3",
                  "Expected equality of these values:"},
        // Two failures in one message: the first, without a message of its own, says what failed.
        std::pair{"t.cpp:5&#x0A;Expected: f(1.0) doesn't throw an exception.&#x0A;  Actual: it "
                  "throws std::logic_error.&#x0A;t.cpp:6&#x0A;Expected: f(0.0) throws an "
                  "exception of type std::invalid_argument.&#x0A;  Actual: it throws "
                  "nothing.&#x0A;a time of 0 ms gives no bandwidth",
                  "Actual: it throws std::logic_error."}}) {
    const Verdict verdict =
        judge_test(exited(1, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 1, "completed",
                                          std::string("      <failure message=\"") + message +
                                              "\" type=\"\"><![CDATA[]]></failure>")));
    EXPECT_EQ(verdict.detail, detail) << describe(verdict);
  }
}

TEST(IsFailureLocation, IsGtestsLineBeforeAFailure) {
  for (const char* line : {"unknown file", "/src/tests/labs/lab01_test.cpp:213", "t.cpp:4"}) {
    EXPECT_TRUE(is_failure_location(line)) << line;
  }
  for (const char* line : {"", "Expected: 2", "median: expected 2.5, got 3", "t.cpp:", "a:b c:12x",
                           "ratio 1:2 of samples", "the kernel at bottleneck.cpp:42", ":12"}) {
    EXPECT_FALSE(is_failure_location(line)) << line;
  }
}

TEST(JudgeTest, AnExceptionIsDescribedByItsMessage) {
  const Verdict verdict = judge_test(exited(
      1, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 1, "completed",
                      "      <failure message=\"unknown file&#x0A;C++ exception with description "
                      "&quot;lab01: f is not implemented yet&quot; thrown in the test body.\" "
                      "type=\"\"><![CDATA[]]></failure>")));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_EQ(verdict.detail, "exception: lab01: f is not implemented yet");
}

TEST(JudgeTest, ExitZeroWithASkippedOrNotRunCaseIsFailed) {
  // A skip that still exits 0 is not a pass either (graded_main turns a skip into 77).
  for (const auto& [status, result] : {std::pair{"run", "skipped"}, std::pair{"notrun", ""}}) {
    std::string xml = one_case_xml("Lab01Summary", "CountMinMaxAndMean", 0, result, "");
    const std::size_t at = xml.find("status=\"run\"");
    xml.replace(at, 12, std::string("status=\"") + status + "\"");
    const Verdict verdict = judge_test(exited(0, xml));
    EXPECT_EQ(verdict.disposition, Disposition::failed)
        << status << "/" << result << ": " << describe(verdict);
  }
}

TEST(JudgeTest, Exit77WithASkipMessageIsSkippedWithTheReason) {
  const Verdict verdict = judge_test(exited(
      77, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 0, "skipped",
                       "      <skipped message=\"lab01_test.cpp:70&#x0A;needs 2 GiB of memory\">"
                       "<![CDATA[]]></skipped>")));
  EXPECT_EQ(verdict.disposition, Disposition::skipped) << describe(verdict);
  EXPECT_EQ(verdict.detail, "needs 2 GiB of memory");
}

TEST(JudgeTest, Exit77WithoutAResultFileIsSkippedWithoutAReason) {
  const Verdict verdict = judge_test(exited(77, std::nullopt));
  EXPECT_EQ(verdict.disposition, Disposition::skipped) << describe(verdict);
  EXPECT_EQ(verdict.detail, "no reason given");
}

TEST(JudgeTest, Exit77NeedingACudaDeviceIsNotGraded) {
  // gtest's own result file: the reason follows the location line.
  TestEvidence evidence = exited(77, std::string(kSkipXml));
  evidence.test = "S.Skip";
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::not_graded) << describe(verdict);
  EXPECT_EQ(verdict.detail, "needs a CUDA device: no device <0>");
}

TEST(JudgeTest, Exit77WithThePrematureExitFileIsExitedEarly) {
  // exit(77) from the code under test does not make a skip.
  TestEvidence evidence = exited(77, std::nullopt);
  evidence.premature_exit = true;
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::exited_early) << describe(verdict);
}

TEST(JudgeTest, AFailureIsDescribedByTheTestsOwnMessageNotWhereOrGtestsWording) {
  TestEvidence evidence = exited(1, std::string(kFailXml));
  evidence.test = "S.Fail";
  const Verdict verdict = judge_test(evidence);
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_EQ(verdict.detail, "a<b & \"c\" 'd'");
  ASSERT_GE(verdict.excerpt.size(), 2u) << describe(verdict);
  EXPECT_EQ(verdict.excerpt[0], "t.cpp:4");
  EXPECT_EQ(verdict.excerpt.back(), "a<b & \"c\" 'd'");
}

TEST(JudgeTest, TheExcerptHasAtMostSixteenLines) {
  std::string message;
  for (int i = 0; i < 40; ++i) {
    message += "line " + std::to_string(i) + "&#x0A;";
  }
  const Verdict verdict = judge_test(
      exited(1, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 1, "completed",
                             "      <failure message=\"" + message + "\" type=\"\"></failure>")));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_EQ(verdict.excerpt.size(), 16u) << describe(verdict);
}

TEST(JudgeTest, EveryFailureIsShownWholeWhileItFitsThenInOneLineThenCounted) {
  // 13 failures of 4 lines each, one per shape: 4 fit whole in 16 lines, 8 more in a line each
  // (the test's message, which names the shape), and the last is counted.
  std::string body;
  for (int shape = 0; shape < 13; ++shape) {
    body +=
        "      <failure message=\"x.cpp:9&#x0A;Value of: matches(c)&#x0A;  Actual: false (y, "
        "S=" +
        std::to_string(shape) +
        ": index 3 of 8: expected 1, got 2)&#x0A;Expected: true\" type=\"\"></failure>\n";
  }
  const Verdict verdict = judge_test(
      exited(1, one_case_xml("Lab01Summary", "CountMinMaxAndMean", 13, "completed", body)));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_EQ(verdict.detail, "Actual: false (y, S=0: index 3 of 8: expected 1, got 2)");
  ASSERT_EQ(verdict.excerpt.size(), 16u + 8u + 1u) << describe(verdict);
  EXPECT_EQ(verdict.excerpt[12], "x.cpp:9");
  EXPECT_EQ(verdict.excerpt[14], "  Actual: false (y, S=3: index 3 of 8: expected 1, got 2)");
  EXPECT_EQ(verdict.excerpt[16],
            "also failed: Actual: false (y, S=4: index 3 of 8: expected 1, got 2)");
  EXPECT_EQ(verdict.excerpt[23],
            "also failed: Actual: false (y, S=11: index 3 of 8: expected 1, got 2)");
  EXPECT_EQ(verdict.excerpt[24], "and 1 more failure (13 in all)");
}

TEST(JudgeTest, AnIllegalAddressInTheFailureIsACrash) {
  const Verdict verdict =
      judge_test(exited(1, thrown_xml("Lab01Summary", "CountMinMaxAndMean",
                                      "CUDA error cudaErrorIllegalAddress: an illegal memory "
                                      "access was encountered")));
  EXPECT_EQ(verdict.disposition, Disposition::crashed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "cudaErrorIllegalAddress")) << verdict.detail;
}

TEST(JudgeTest, AFailedAllocationInTheFailureIsOutOfMemory) {
  const Verdict verdict =
      judge_test(exited(1, thrown_xml("Lab01Summary", "CountMinMaxAndMean",
                                      "cudaMalloc: cudaErrorMemoryAllocation: out of memory")));
  EXPECT_EQ(verdict.disposition, Disposition::out_of_memory) << describe(verdict);
}

TEST(JudgeTest, ExitOneWithoutAResultFileIsFailedWithTheLastLines) {
  const Verdict verdict =
      judge_test(exited(1, std::nullopt, "graded suite: the filter selected no test\n"));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "exit status 1")) << verdict.detail;
  EXPECT_EQ(verdict.excerpt, std::vector<std::string>{"graded suite: the filter selected no test"});
}

TEST(JudgeTest, ExitOneWithAStickyErrorInTheOutputIsACrash) {
  // No result file (the process died in a destructor, say): the output is all there is.
  const Verdict verdict = judge_test(
      exited(1, std::nullopt, "lab02.cu:40: cudaErrorLaunchFailure: unspecified launch failure\n"));
  EXPECT_EQ(verdict.disposition, Disposition::crashed) << describe(verdict);
}

TEST(JudgeTest, AKernelFailureOnSimLeadsTheDetailWithTheSimsDiagnosis) {
  const std::string diagnosis =
      "kernel tile_kernel (launched at attention.cu:169) failed in block (0,0,0): divergent "
      "__syncthreads: threads 0-39 wait at __syncthreads (attention.cu:128); threads 40-63 have "
      "exited";
  // From the exception's message in the result file (a sim CudaError ends with it).
  const Verdict thrown = judge_test(exited(
      1, thrown_xml("Lab01Summary", "CountMinMaxAndMean",
                    "CUDA error cudaErrorLaunchFailure (719) at stream.hpp:85 in "
                    "cudaStreamSynchronize(s): unspecified launch failure&#x0A;gpulab sim: " +
                        diagnosis)));
  EXPECT_EQ(thrown.disposition, Disposition::crashed) << describe(thrown);
  EXPECT_EQ(thrown.detail,
            diagnosis + "; CUDA error cudaErrorLaunchFailure (the CUDA context is lost)");
  // From the output when the failure does not carry it.
  const Verdict printed = judge_test(
      exited(1, thrown_xml("Lab01Summary", "CountMinMaxAndMean", "cudaErrorLaunchFailure"),
             "gpulab sim: " + diagnosis + "\n"));
  EXPECT_EQ(printed.detail, thrown.detail);
  // Without one, the detail is the CUDA error's alone.
  const Verdict plain = judge_test(
      exited(1, thrown_xml("Lab01Summary", "CountMinMaxAndMean", "cudaErrorLaunchFailure")));
  EXPECT_EQ(plain.detail, "CUDA error cudaErrorLaunchFailure (the CUDA context is lost)");
}

TEST(JudgeTest, ExitOneWithAPassingResultFileIsFailed) {
  const Verdict verdict = judge_test(exited(1, std::string(kPassXml)));
  EXPECT_EQ(verdict.disposition, Disposition::failed) << describe(verdict);
  EXPECT_TRUE(contains(verdict.detail, "reports no failure")) << verdict.detail;
}

TEST(JudgeTest, PrintedPassLinesNeverMakeAPass) {
  const std::string forged =
      "[ RUN      ] Lab01Summary.CountMinMaxAndMean\n"
      "[       OK ] Lab01Summary.CountMinMaxAndMean (0 ms)\n"
      "[  PASSED  ] 1 test.\n";
  for (const int code : {0, 1, 77}) {
    const Verdict verdict = judge_test(exited(code, std::nullopt, forged));
    EXPECT_NE(verdict.disposition, Disposition::passed) << "exit " << code << " without XML";
  }
  // The forged lines with a real passing result file, but exit status 1: not a pass.
  const Verdict verdict = judge_test(exited(1, std::string(kPassXml), forged));
  EXPECT_NE(verdict.disposition, Disposition::passed) << describe(verdict);
}

// ---------------------------------------------------------------------------------------------
// The verdict file
// ---------------------------------------------------------------------------------------------

TEST(VerdictJson, RoundTrip) {
  const Verdict verdict{Disposition::crashed,
                        "killed by SIGSEGV (segmentation fault)",
                        {"line \"one\"", "line\ttwo"}};
  const std::string text = verdict_to_json("S.T", verdict, 1.25);
  const json doc = json::parse(text);
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("test"), "S.T");
  EXPECT_EQ(doc.at("disposition"), "crashed");
  EXPECT_DOUBLE_EQ(doc.at("duration_s").get<double>(), 1.25);
  const Verdict back = parse_verdict_json(text, "S.T.verdict.json");
  EXPECT_EQ(back.disposition, verdict.disposition);
  EXPECT_EQ(back.detail, verdict.detail);
  EXPECT_EQ(back.excerpt, verdict.excerpt);
}

TEST(VerdictJson, EveryDispositionRoundTrips) {
  for (int i = 0; i < kDispositionCount; ++i) {
    const auto disposition = static_cast<Disposition>(i);
    const Verdict back =
        parse_verdict_json(verdict_to_json("S.T", {disposition, "d", {}}, 0), "v.json");
    EXPECT_EQ(back.disposition, disposition) << to_string(disposition);
  }
}

TEST(VerdictJson, InvalidUtf8InTheDetailDoesNotThrow) {
  const Verdict verdict{Disposition::failed, "bad \xff\xfe bytes \xc3", {"\x80 alone"}};
  std::string text;
  ASSERT_NO_THROW(text = verdict_to_json("S.T", verdict, 0));
  Verdict back;
  ASSERT_NO_THROW(back = parse_verdict_json(text, "v.json")) << text;
  EXPECT_EQ(back.disposition, Disposition::failed);
  EXPECT_TRUE(contains(back.detail, "bad ")) << back.detail;
  EXPECT_TRUE(contains(back.detail, " bytes ")) << back.detail;
  ASSERT_EQ(back.excerpt.size(), 1u);
  EXPECT_TRUE(contains(back.excerpt[0], " alone")) << back.excerpt[0];
}

TEST(VerdictJson, UnknownFieldsAreIgnoredAndOptionalOnesMayBeMissing) {
  const Verdict back = parse_verdict_json(
      R"({"schema_version": 1, "disposition": "passed", "from_the_future": [1, 2]})", "v.json");
  EXPECT_EQ(back.disposition, Disposition::passed);
  EXPECT_TRUE(back.detail.empty());
  EXPECT_TRUE(back.excerpt.empty());
}

TEST(VerdictJson, AMalformedFileIsARuntimeErrorNamingTheSource) {
  for (const char* text : {
           "",
           "{",
           "[]",
           R"({"disposition": "passed"})",
           R"({"schema_version": 2, "disposition": "passed"})",
           R"({"schema_version": "1", "disposition": "passed"})",
           R"({"schema_version": 1})",
           R"({"schema_version": 1, "disposition": 3})",
           R"({"schema_version": 1, "disposition": "great"})",
       }) {
    try {
      (void)parse_verdict_json(text, "out/S.T.verdict.json");
      ADD_FAILURE() << text << ": accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "out/S.T.verdict.json")) << text << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << text << ": expected std::runtime_error, got " << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Names and sticky errors
// ---------------------------------------------------------------------------------------------

TEST(DispositionNames, RoundTripForAll) {
  const char* names[] = {"passed",        "failed",       "timed_out", "crashed",
                         "out_of_memory", "exited_early", "skipped",   "not_graded",
                         "build_failed",  "rejected",     "not_run"};
  static_assert(std::size(names) == kDispositionCount);
  for (int i = 0; i < kDispositionCount; ++i) {
    const auto disposition = static_cast<Disposition>(i);
    EXPECT_EQ(to_string(disposition), names[i]);
    EXPECT_EQ(parse_disposition(names[i]), disposition) << names[i];
  }
  EXPECT_EQ(parse_disposition("Passed"), std::nullopt);
  EXPECT_EQ(parse_disposition(""), std::nullopt);
  EXPECT_EQ(parse_disposition("timed out"), std::nullopt);
}

TEST(DispositionNames, DisplayNamesUseSpaces) {
  EXPECT_EQ(display_name(Disposition::passed), "passed");
  EXPECT_EQ(display_name(Disposition::timed_out), "timed out");
  EXPECT_EQ(display_name(Disposition::out_of_memory), "out of memory");
  EXPECT_EQ(display_name(Disposition::not_graded), "not graded");
}

TEST(StickyCudaError, NamesTheFirstStickyErrorMentioned) {
  EXPECT_EQ(sticky_cuda_error("CUDA error cudaErrorIllegalAddress at lab.cu:3"),
            "cudaErrorIllegalAddress");
  EXPECT_EQ(sticky_cuda_error("cudaErrorLaunchFailure"), "cudaErrorLaunchFailure");
  EXPECT_EQ(sticky_cuda_error("x cudaErrorMisalignedAddress"), "cudaErrorMisalignedAddress");
  EXPECT_EQ(sticky_cuda_error("device-side cudaErrorAssert triggered"), "cudaErrorAssert");
}

TEST(SimKernelDiagnosis, TheRestOfTheFirstLineThatStartsWithTheSimsKernelFailure) {
  EXPECT_EQ(sim_kernel_diagnosis("x\ngpulab sim: kernel k (launched at a.cu:3) failed\nmore"),
            "kernel k (launched at a.cu:3) failed");
  EXPECT_EQ(sim_kernel_diagnosis("gpulab sim: kernel k failed"), "kernel k failed");
  // Not at the start of a line, not a kernel's failure, or none at all.
  EXPECT_EQ(sim_kernel_diagnosis("said gpulab sim: kernel k failed"), std::nullopt);
  EXPECT_EQ(sim_kernel_diagnosis("gpulab sim: warning: GPULAB_SIM_WORKERS=0"), std::nullopt);
  EXPECT_EQ(sim_kernel_diagnosis(""), std::nullopt);
  // A long one is cut.
  const std::optional<std::string> cut =
      sim_kernel_diagnosis("gpulab sim: kernel " + std::string(5000, 'x'));
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->size(), 603U);
  EXPECT_TRUE(cut->ends_with("..."));
}

TEST(StickyCudaError, RecoverableErrorsAreNotSticky) {
  for (const char* text : {"", "cudaErrorMemoryAllocation: out of memory", "cudaErrorInvalidValue",
                           "cudaErrorInvalidConfiguration", "cudaSuccess", "illegal address"}) {
    EXPECT_EQ(sticky_cuda_error(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace gpulab
