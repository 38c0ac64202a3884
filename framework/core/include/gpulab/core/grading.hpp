// Grades from ctest: the lab manifest the build writes (cmake/GpulabLabs.cmake), ctest's JUnit
// report, and the points of every graded test that passed.
//
// A graded test earns its points only when ctest ran it and it passed; failed, timed-out,
// skipped and not-run tests earn nothing (a skip is never a pass: graded suites exit 77 when a
// test skips, which ctest reports as not run).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// One graded test case as ctest knows it.
struct GradedTest {
  std::string
      name;        ///< ctest name, e.g. "gpulab.lab01.student.sim/Lab01Summary.CountMinMaxAndMean"
  int points = 0;  ///< what it is worth
};

/// One build of a lab: which code (variant), which backend, its report program and its tests.
struct LabRun {
  std::string variant;  ///< "student" or "solution"
  std::string backend;  ///< "cuda" or "sim"
  std::string runner;   ///< report program in the build's bin/, e.g. "gpulab.lab01.student.run.sim"
  std::vector<GradedTest> tests;  ///< the graded tests of this build
};

/// One lab of the manifest.
struct LabEntry {
  std::string id;     ///< "lab01"
  std::string title;  ///< "Benchmarking a kernel correctly"
  std::string dir;    ///< "lab01_benchmarking"
  std::vector<LabRun> runs;
};

/// What the build knows about the labs: <build>/grading/manifest.json.
struct LabManifest {
  std::filesystem::path source_dir;  ///< the source tree the build was configured from
  std::vector<LabEntry> labs;        ///< in lab order
};

/// Reads the manifest from JSON text; throws std::runtime_error naming `source` and the field.
[[nodiscard]] LabManifest parse_lab_manifest(std::string_view text, std::string_view source);
/// Reads <path>; throws std::runtime_error when missing or malformed.
[[nodiscard]] LabManifest load_lab_manifest(const std::filesystem::path& path);

/// What ctest says happened to one test.
enum class TestOutcome {
  passed,   ///< ran and passed
  failed,   ///< ran and failed, crashed or timed out
  skipped,  ///< skipped or not run
  missing,  ///< not in ctest's report at all
};

/// "passed", "failed", "skipped", "missing".
[[nodiscard]] std::string_view to_string(TestOutcome outcome) noexcept;

/// One test case from ctest's JUnit report (ctest --output-junit).
struct JunitCase {
  TestOutcome outcome = TestOutcome::missing;
  std::string output;  ///< the test's output (system-out), XML entities decoded
};

/// Parses ctest's JUnit XML: test name -> outcome (status "run" passed, "fail" failed, anything
/// else skipped) and output. Throws std::runtime_error when the text is not such a report.
[[nodiscard]] std::map<std::string, JunitCase> parse_ctest_junit(std::string_view xml);

/// The lines of a failing test's output a student needs: gtest's failure lines and the lines
/// after them (expected / got / tolerance), or an exception's message; at most `max_lines`.
[[nodiscard]] std::vector<std::string> failure_excerpt(std::string_view output,
                                                       std::size_t max_lines = 6);

/// The grade of one test.
struct TestGrade {
  std::string name;  ///< ctest name
  int points = 0;    ///< possible
  int earned = 0;    ///< points if passed, else 0
  TestOutcome outcome = TestOutcome::missing;
  std::vector<std::string> excerpt;  ///< failure_excerpt of a failed test
};

/// The grade of one lab build.
struct RunGrade {
  std::string lab;      ///< "lab01"
  std::string title;    ///< the lab's title
  std::string variant;  ///< "student" or "solution"
  std::string backend;  ///< "cuda" or "sim"
  int earned = 0;       ///< sum of earned points
  int possible = 0;     ///< sum of points (100 for a complete lab)
  std::vector<TestGrade> tests;
};

/// Grades one build of a lab from ctest's results.
[[nodiscard]] RunGrade grade_run(const LabEntry& lab, const LabRun& run,
                                 const std::map<std::string, JunitCase>& results);

}  // namespace gpulab
