// Unit tests of grading.hpp: the lab manifest (schema_version 8), the run that grades a test, the
// test runner's command and
// outcome, staging student files, the seal of the instructor files on a temporary tree, the grade
// of a test from the runner's exit and its verdict, compiler error excerpts, and the three reports:
// JSON, Gradescope's results.json (checked against Gradescope's documented format) and JUnit XML
// (read back with a strict XML reader).
#include "gpulab/grader/grading.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gpulab/grader/sha256.hpp"
#include "temp_dir.hpp"

namespace gpulab {

// gtest prints dispositions and outcomes by their names.
void PrintTo(Disposition disposition, std::ostream* out) {
  *out << to_string(disposition);
}
void PrintTo(TestOutcome outcome, std::ostream* out) {
  *out << to_string(outcome);
}

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

// The message of the std::runtime_error `f` throws ("" and a test failure when it throws nothing
// or something else).
template <typename F>
std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::runtime_error, got " << typeid(e).name() << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected std::runtime_error, nothing was thrown";
  return "";
}

// ---------------------------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------------------------

// Shaped like the <build>/grading/manifest.json that cmake/GpulabLabs.cmake writes.
json valid_manifest() {
  return json::parse(R"({
    "schema_version": 8,
    "source_dir": "/src/gpulab",
    "build_dir": "/b",
    "extra_tests_dir": "/src/gpulab/tests/hidden",
    "test_timeout_s": 120,
    "grade_runner": "/b/bin/gpulab-grade-runner",
    "nm": "/usr/bin/nm",
    "objdump": "/usr/bin/objdump",
    "system_include_dirs": ["/usr/include/c++/12", "/usr/include"],
    "sandbox": {"visible": ["/src/gpulab", "/b"],
                "hidden": ["/src/gpulab/solutions", "/src/gpulab/tests/hidden"]},
    "grading_slots": ["/b/grading/slot0", "/b/grading/slot1"],
    "labs": [
      {"id": "lab01", "title": "Benchmarking a kernel correctly", "dir": "lab01_benchmarking",
       "student_files": ["benchmark.cpp", "timing/timer.cu"],
       "forbidden_calls": [{"call": "gpulab::summarize(", "does": ["summarize_samples"]}],
       "allowed_calls": ["gpulab::flush_l2(", "gpulab::not_implemented("],
       "cuda_calls": ["cudaGetLastError", "cudaLaunchKernel"],
       "runs": [
         {"variant": "student", "slot": 0, "backend": "sim",
          "files_dir": "/src/gpulab/labs/lab01_benchmarking",
          "report": "/b/bin/gpulab.lab01.student.run.sim",
          "library_target": "gpulab.lab01.student.sim",
          "library": "/b/labs/libgpulab.lab01.student.sim.a",
          "tests_target": "gpulab.test.lab01.student.sim",
          "tests_program": "/b/bin/gpulab.test.lab01.student.sim",
          "results_dir": "/b/grading/results/lab01.student.sim",
          "environment": {"GPULAB_SIM_CLOCK": "modeled"},
          "tests": [{"name": "Lab01Summary.CountMinMaxAndMean", "points": 5, "hidden": false,
                     "counted": false, "covers": ["summarize_samples"],
                     "checks": "count, min, max and mean"},
                    {"name": "Lab01Hidden.Robustness", "points": 10, "hidden": true,
                     "counted": true, "covers": ["time_kernel", "summarize_samples"],
                     "checks": "other sizes"}]},
         {"variant": "submission", "slot": 1, "backend": "cuda",
          "files_dir": "/b/grading/slot1/submission/lab01_benchmarking",
          "report": "", "library_target": "l",
          "library": "/b/l.a",
          "tests_target": "",
          "tests_program": "", "results_dir": "", "environment": {}, "tests": []}
       ]},
      {"id": "lab03", "title": "Identifying the bottleneck", "dir": "lab03_bottleneck",
       "student_files": [], "forbidden_calls": [], "allowed_calls": [], "cuda_calls": [],
       "runs": []}
    ]
  })");
}

TEST(LabManifest, ParsesEveryField) {
  const LabManifest m = parse_lab_manifest(valid_manifest().dump(), "manifest.json");
  EXPECT_EQ(m.source_dir, fs::path("/src/gpulab"));
  EXPECT_EQ(m.build_dir, fs::path("/b"));
  EXPECT_EQ(m.sandbox.visible, (std::vector<fs::path>{"/src/gpulab", "/b"}));
  EXPECT_EQ(m.sandbox.hidden,
            (std::vector<fs::path>{"/src/gpulab/solutions", "/src/gpulab/tests/hidden"}));
  EXPECT_TRUE(m.sandbox.writable.empty());
  EXPECT_EQ(m.extra_tests_dir, fs::path("/src/gpulab/tests/hidden"));
  EXPECT_EQ(m.test_timeout_s, 120);
  EXPECT_EQ(m.grade_runner, fs::path("/b/bin/gpulab-grade-runner"));
  EXPECT_EQ(m.nm, fs::path("/usr/bin/nm"));
  EXPECT_EQ(m.objdump, fs::path("/usr/bin/objdump"));
  EXPECT_EQ(m.system_include_dirs, (std::vector<fs::path>{"/usr/include/c++/12", "/usr/include"}));
  EXPECT_EQ(m.labs[0].allowed_calls, (Lines{"gpulab::flush_l2(", "gpulab::not_implemented("}));
  EXPECT_EQ(m.labs[0].cuda_calls, (Lines{"cudaGetLastError", "cudaLaunchKernel"}));
  EXPECT_TRUE(m.labs[1].cuda_calls.empty());
  EXPECT_EQ(m.grading_slots, (std::vector<fs::path>{"/b/grading/slot0", "/b/grading/slot1"}));
  ASSERT_EQ(m.labs.size(), 2u);
  const LabEntry& lab = m.labs[0];
  EXPECT_EQ(lab.id, "lab01");
  EXPECT_EQ(lab.title, "Benchmarking a kernel correctly");
  EXPECT_EQ(lab.dir, "lab01_benchmarking");
  EXPECT_EQ(lab.student_files, (Lines{"benchmark.cpp", "timing/timer.cu"}));
  ASSERT_EQ(lab.forbidden_calls.size(), 1u);
  EXPECT_EQ(lab.forbidden_calls[0].call, "gpulab::summarize(");
  EXPECT_EQ(lab.forbidden_calls[0].does, (Lines{"summarize_samples"}));
  ASSERT_EQ(lab.runs.size(), 2u);
  EXPECT_EQ(lab.runs[0].variant, "student");
  EXPECT_EQ(lab.runs[0].slot, 0);
  EXPECT_EQ(lab.runs[0].backend, "sim");
  EXPECT_EQ(lab.runs[0].files_dir, fs::path("/src/gpulab/labs/lab01_benchmarking"));
  EXPECT_EQ(lab.runs[0].report, fs::path("/b/bin/gpulab.lab01.student.run.sim"));
  EXPECT_EQ(lab.runs[0].library_target, "gpulab.lab01.student.sim");
  EXPECT_EQ(lab.runs[0].library, fs::path("/b/labs/libgpulab.lab01.student.sim.a"));
  EXPECT_EQ(lab.runs[0].tests_target, "gpulab.test.lab01.student.sim");
  EXPECT_EQ(lab.runs[0].tests_program, fs::path("/b/bin/gpulab.test.lab01.student.sim"));
  EXPECT_EQ(lab.runs[0].results_dir, fs::path("/b/grading/results/lab01.student.sim"));
  using Environment = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(lab.runs[0].environment, (Environment{{"GPULAB_SIM_CLOCK", "modeled"}}));
  ASSERT_EQ(lab.runs[0].tests.size(), 2u);
  EXPECT_EQ(lab.runs[0].tests[0].name, "Lab01Summary.CountMinMaxAndMean");
  EXPECT_EQ(lab.runs[0].tests[0].points, 5);
  EXPECT_FALSE(lab.runs[0].tests[0].hidden);
  EXPECT_FALSE(lab.runs[0].tests[0].counted);
  EXPECT_EQ(lab.runs[0].tests[1].points, 10);
  EXPECT_TRUE(lab.runs[0].tests[1].hidden);
  EXPECT_TRUE(lab.runs[0].tests[1].counted);
  EXPECT_EQ(lab.runs[1].variant, "submission");
  EXPECT_EQ(lab.runs[1].slot, 1);
  EXPECT_EQ(lab.runs[1].backend, "cuda");
  EXPECT_EQ(lab.runs[1].files_dir, fs::path("/b/grading/slot1/submission/lab01_benchmarking"));
  EXPECT_EQ(lab.runs[1].report, fs::path());
  EXPECT_TRUE(lab.runs[1].environment.empty());
  EXPECT_TRUE(lab.runs[1].tests.empty());
  EXPECT_EQ(m.labs[1].id, "lab03");
  EXPECT_TRUE(m.labs[1].student_files.empty());
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
  EXPECT_EQ(m.labs[0].runs[0].tests[0].covers, (Lines{"summarize_samples"}));
  EXPECT_EQ(m.labs[0].runs[0].tests[0].checks, "count, min, max and mean");
  EXPECT_EQ(m.labs[0].runs[0].tests[1].covers, (Lines{"time_kernel", "summarize_samples"}));
}

TEST(LabManifest, RejectsAnotherSchemaVersion) {
  for (const int version : {7, 9}) {
    json doc = valid_manifest();
    doc["schema_version"] = version;
    const std::string message = runtime_error_of(
        [&] { (void)parse_lab_manifest(doc.dump(), "build/grading/manifest.json"); });
    EXPECT_TRUE(contains(message, "build/grading/manifest.json")) << message;
    EXPECT_TRUE(contains(message, "schema_version")) << message;
  }
}

TEST(LabManifest, RejectsTextThatIsNotJsonNamingTheSource) {
  for (const char* text : {"", "{", "not json", "[1, 2"}) {
    const std::string message = runtime_error_of([&] { (void)parse_lab_manifest(text, "m.json"); });
    EXPECT_TRUE(contains(message, "m.json")) << text << ": " << message;
  }
}

TEST(LabManifest, ADocumentThatIsNotAnObjectIsARuntimeError) {
  for (const char* text : {"[]", "2", "\"manifest\"", "null"}) {
    const std::string message = runtime_error_of([&] { (void)parse_lab_manifest(text, "m.json"); });
    EXPECT_TRUE(contains(message, "m.json")) << text << ": " << message;
  }
}

// Every required field: a JSON pointer to its parent object, its key, and a value of a wrong type.
struct RequiredField {
  const char* parent;
  const char* key;
  json wrong;
};

const std::vector<RequiredField>& required_fields() {
  static const std::vector<RequiredField> fields = {
      {"", "schema_version", "8"},
      {"", "source_dir", 7},
      {"", "build_dir", 7},
      {"", "extra_tests_dir", json::array()},
      {"", "test_timeout_s", "120"},
      {"", "grade_runner", 1},
      {"", "nm", false},
      {"", "objdump", 2},
      {"", "system_include_dirs", "/usr/include"},
      {"", "sandbox", json::array()},
      {"/sandbox", "visible", "/b"},
      {"/sandbox", "hidden", json::object()},
      {"", "grading_slots", "/b/grading/slot0"},
      {"", "labs", json::object()},
      {"/labs/0", "id", 1},
      {"/labs/0", "title", false},
      {"/labs/0", "dir", nullptr},
      {"/labs/0", "student_files", "benchmark.cpp"},
      {"/labs/0", "forbidden_calls", "gpulab::summarize("},
      {"/labs/0", "allowed_calls", "gpulab::flush_l2("},
      {"/labs/0", "cuda_calls", "cudaGetLastError"},
      {"/labs/0/forbidden_calls/0", "call", json::array()},
      {"/labs/0/forbidden_calls/0", "does", "summarize_samples"},
      {"/labs/0", "runs", json::object()},
      {"/labs/0/runs/0", "variant", 0},
      {"/labs/0/runs/0", "slot", "0"},
      {"/labs/0/runs/0", "backend", json::array({"sim"})},
      {"/labs/0/runs/0", "files_dir", json::object()},
      {"/labs/0/runs/0", "report", 1.5},
      {"/labs/0/runs/0", "library_target", 8},
      {"/labs/0/runs/0", "library", 7},
      {"/labs/0/runs/0", "tests_target", false},
      {"/labs/0/runs/0", "tests_program", json::array()},
      {"/labs/0/runs/0", "results_dir", 2},
      {"/labs/0/runs/0", "environment", json::array()},
      {"/labs/0/runs/0", "tests", "none"},
      {"/labs/0/runs/0/tests/1", "name", 3},
      {"/labs/0/runs/0/tests/1", "points", "five"},
      {"/labs/0/runs/0/tests/1", "hidden", "true"},
      {"/labs/0/runs/0/tests/1", "counted", 1},
      {"/labs/0/runs/0/tests/1", "covers", "time_kernel"},
      {"/labs/0/runs/0/tests/1", "checks", json::array()},
  };
  return fields;
}

TEST(LabManifest, AMissingFieldIsARuntimeErrorNamingTheFieldAndTheSource) {
  for (const RequiredField& field : required_fields()) {
    json doc = valid_manifest();
    doc[json::json_pointer(field.parent)].erase(field.key);
    const std::string where = std::string(field.parent) + "/" + field.key;
    const std::string message =
        runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "manifest.json"); });
    EXPECT_TRUE(contains(message, "manifest.json")) << where << ": " << message;
    EXPECT_TRUE(contains(message, "\"" + std::string(field.key) + "\""))
        << where << ": " << message;
  }
}

TEST(LabManifest, AFieldOfTheWrongTypeIsARuntimeErrorNamingTheField) {
  for (const RequiredField& field : required_fields()) {
    json doc = valid_manifest();
    doc[json::json_pointer(field.parent)][field.key] = field.wrong;
    const std::string where = std::string(field.parent) + "/" + field.key;
    const std::string message =
        runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "manifest.json"); });
    EXPECT_TRUE(contains(message, "manifest.json")) << where << ": " << message;
    EXPECT_TRUE(contains(message, field.key)) << where << ": " << message;
  }
}

TEST(LabManifest, AnErrorSaysWhereInTheDocument) {
  json doc = valid_manifest();
  doc["labs"][0]["runs"][0]["tests"][1].erase("points");
  EXPECT_TRUE(contains(runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); }),
                       "labs[0].runs[0].tests[1]"));
  doc = valid_manifest();
  doc["labs"][1]["dir"] = 3;
  EXPECT_TRUE(contains(runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); }),
                       "labs[1].dir"));
}

TEST(LabManifest, ARunInASlotTheBuildDoesNotHaveIsARuntimeError) {
  for (const json& slot : {json(2), json(-1), json(1.5)}) {
    json doc = valid_manifest();
    doc["labs"][0]["runs"][1]["slot"] = slot;
    const std::string message =
        runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); });
    EXPECT_TRUE(contains(message, "labs[0].runs[1].slot")) << slot << ": " << message;
  }
  json doc = valid_manifest();
  doc["grading_slots"][1] = 7;
  EXPECT_TRUE(contains(runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); }),
                       "grading_slots"));
}

TEST(LabManifest, AStudentFileThatIsNotAStringIsARuntimeError) {
  json doc = valid_manifest();
  doc["labs"][0]["student_files"][1] = 42;
  const std::string message =
      runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); });
  EXPECT_TRUE(contains(message, "student_files")) << message;
  EXPECT_TRUE(contains(message, "labs[0]")) << message;
}

using gpulab::testing::TempDir;

void write_file(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

TEST(LabManifest, LoadReadsTheFile) {
  const TempDir dir("gpulab-grading-test-manifest");
  write_file(dir.path() / "manifest.json", valid_manifest().dump(2));
  const LabManifest m = load_lab_manifest(dir.path() / "manifest.json");
  ASSERT_EQ(m.labs.size(), 2u);
  EXPECT_EQ(m.labs[0].runs[0].tests.size(), 2u);
  EXPECT_EQ(m.test_timeout_s, 120);
}

TEST(LabManifest, LoadOfAMissingFileIsARuntimeErrorNamingThePath) {
  const fs::path missing = fs::temp_directory_path() / "gpulab-no-such-dir" / "manifest.json";
  const std::string message = runtime_error_of([&] { (void)load_lab_manifest(missing); });
  EXPECT_TRUE(contains(message, missing.string())) << message;
}

TEST(LabManifest, LoadOfAMalformedFileNamesThePathAndTheField) {
  const TempDir dir("gpulab-grading-test-bad-manifest");
  write_file(dir.path() / "manifest.json", R"({"schema_version": 8})");
  const std::string message =
      runtime_error_of([&] { (void)load_lab_manifest(dir.path() / "manifest.json"); });
  EXPECT_TRUE(contains(message, (dir.path() / "manifest.json").string())) << message;
  EXPECT_TRUE(contains(message, "source_dir")) << message;
}

// ---------------------------------------------------------------------------------------------
// The run that grades a test
// ---------------------------------------------------------------------------------------------

LabRun run_of(std::string variant, std::string backend, int slot) {
  LabRun run;
  run.variant = std::move(variant);
  run.backend = std::move(backend);
  run.slot = slot;
  return run;
}

TEST(FindRun, FindsTheRunOfAVariantBackendAndSlot) {
  LabEntry lab;
  lab.runs = {run_of("student", "sim", 0), run_of("submission", "cuda", 0),
              run_of("submission", "sim", 0), run_of("submission", "cuda", 1)};
  EXPECT_EQ(find_run(lab, "student", "sim"), &lab.runs[0]);
  EXPECT_EQ(find_run(lab, "submission", "cuda"), &lab.runs[1]);
  EXPECT_EQ(find_run(lab, "submission", "sim", 0), &lab.runs[2]);
  EXPECT_EQ(find_run(lab, "submission", "cuda", 1), &lab.runs[3]);
  EXPECT_EQ(find_run(lab, "submission", "sim", 1), nullptr);
  EXPECT_EQ(find_run(lab, "solution", "sim"), nullptr);
}

TEST(GradingRun, ACountedTestOnCudaRunsFromTheSimBuildOfTheSameSlot) {
  LabEntry lab;
  lab.runs = {run_of("submission", "cuda", 0), run_of("submission", "sim", 0),
              run_of("submission", "cuda", 1), run_of("submission", "sim", 1),
              run_of("student", "sim", 1)};
  GradedTest timed;
  timed.name = "Lab04Speed.EachOptimizedLevelIsFasterThanTheOneItImproves";
  GradedTest counted;
  counted.name = "Lab04Traffic.FlashReadsQkvAndWritesOOnce";
  counted.counted = true;
  EXPECT_EQ(grading_run(lab, timed, "cuda", 0), &lab.runs[0]);
  EXPECT_EQ(grading_run(lab, counted, "cuda", 0), &lab.runs[1]) << "the sim's counts grade it";
  EXPECT_EQ(grading_run(lab, counted, "cuda", 1), &lab.runs[3]) << "the grading's own slot";
  EXPECT_EQ(grading_run(lab, timed, "sim", 1), &lab.runs[3]);
  EXPECT_EQ(grading_run(lab, counted, "sim", 1), &lab.runs[3]);
  lab.runs.erase(lab.runs.begin() + 1);  // a build whose slot 0 has no sim run
  EXPECT_EQ(grading_run(lab, counted, "cuda", 0), nullptr);
}

TEST(LabManifest, AnEnvironmentValueThatIsNotAStringIsARuntimeError) {
  json doc = valid_manifest();
  doc["labs"][0]["runs"][0]["environment"]["GPULAB_SIM_CLOCK"] = 1;
  const std::string message =
      runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); });
  EXPECT_TRUE(contains(message, "labs[0].runs[0].environment.GPULAB_SIM_CLOCK")) << message;
}

TEST(LabManifest, GradedTestsNeedAProgramAndAResultFolder) {
  for (const char* key : {"tests_program", "results_dir"}) {
    json doc = valid_manifest();
    doc["labs"][0]["runs"][0][key] = "";
    const std::string message =
        runtime_error_of([&] { (void)parse_lab_manifest(doc.dump(), "m.json"); });
    EXPECT_TRUE(contains(message, "labs[0].runs[0]")) << key << ": " << message;
  }
}

// ---------------------------------------------------------------------------------------------
// Running a graded test: the runner's command and what its exit says
// ---------------------------------------------------------------------------------------------

TEST(RunnerCommand, IsTheCommandCtestRuns) {
  const LabManifest m = parse_lab_manifest(valid_manifest().dump(), "manifest.json");
  const LabRun& run = m.labs[0].runs[0];
  EXPECT_EQ(
      runner_command(m, run, run.tests[1], 120),
      (Lines{"/b/bin/gpulab-grade-runner", "--test", "Lab01Hidden.Robustness", "--out",
             "/b/grading/results/lab01.student.sim", "--timeout", "120", "--sandbox", "auto",
             "--visible", "/src/gpulab", "--visible", "/b", "--hide", "/src/gpulab/solutions",
             "--hide", "/src/gpulab/tests/hidden", "--", "/b/bin/gpulab.test.lab01.student.sim"}));
  EXPECT_EQ(runner_command(m, run, run.tests[0], 2.5)[6], "2.5");
  EXPECT_EQ(runner_command(m, run, run.tests[0], 2.5, "off")[8], "off");
}

ProcessResult exited(int code) {
  ProcessResult result;
  result.started = true;
  result.exit_code = code;
  return result;
}

TEST(RunnerOutcome, FollowsTheRunnersExitStatus) {
  EXPECT_EQ(runner_outcome(exited(0)), TestOutcome::passed);
  EXPECT_EQ(runner_outcome(exited(77)), TestOutcome::skipped);
  for (const int code : {1, 2, 76, 78, 255}) {
    EXPECT_EQ(runner_outcome(exited(code)), TestOutcome::failed) << code;
  }
  ProcessResult signalled = exited(0);
  signalled.exit_code.reset();
  signalled.signal = 9;
  EXPECT_EQ(runner_outcome(signalled), TestOutcome::failed);
  ProcessResult timed_out = exited(0);
  timed_out.exit_code.reset();
  timed_out.timed_out = true;
  EXPECT_EQ(runner_outcome(timed_out), TestOutcome::failed);
  EXPECT_EQ(runner_outcome(ProcessResult{}), TestOutcome::missing);
}

TEST(TestOutcome, Names) {
  EXPECT_EQ(to_string(TestOutcome::passed), "passed");
  EXPECT_EQ(to_string(TestOutcome::failed), "failed");
  EXPECT_EQ(to_string(TestOutcome::skipped), "skipped");
  EXPECT_EQ(to_string(TestOutcome::missing), "missing");
}

// ---------------------------------------------------------------------------------------------
// Staging student files
// ---------------------------------------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StageStudentFile, WritesTheFileBehindALineDirectiveNamingTheOriginal) {
  const TempDir dir("gpulab-grading-test-stage");
  const fs::path from = dir.path() / "sub mission" / "a\"b\\c.cu";
  write_file(from, "int x;\n");
  const fs::path to = dir.path() / "staged" / "deep" / "a.cu";
  EXPECT_TRUE(stage_student_file(from, to));
  EXPECT_EQ(read_text(to),
            "#line 1 \"" + (dir.path() / "sub mission").string() + "/a\\\"b\\\\c.cu\"\nint x;\n");
}

TEST(StageStudentFile, RewritesOnlyWhatChanged) {
  const TempDir dir("gpulab-grading-test-restage");
  const fs::path from = dir.path() / "a.cu";
  const fs::path to = dir.path() / "staged" / "a.cu";
  write_file(from, "int x;\n");
  ASSERT_TRUE(stage_student_file(from, to));
  const auto written = fs::last_write_time(to);
  EXPECT_FALSE(stage_student_file(from, to)) << "unchanged: not written again";
  EXPECT_EQ(fs::last_write_time(to), written);
  write_file(from, "int y;\n");
  EXPECT_TRUE(stage_student_file(from, to));
  EXPECT_TRUE(contains(read_text(to), "int y;"));
}

TEST(StageStudentFile, KeepExistingLeavesAStagedFileAlone) {
  const TempDir dir("gpulab-grading-test-keep");
  const fs::path from = dir.path() / "stub.cu";
  const fs::path to = dir.path() / "staged.cu";
  write_file(from, "stub\n");
  write_file(to, "the submission\n");
  EXPECT_FALSE(stage_student_file(from, to, /*keep_existing=*/true));
  EXPECT_EQ(read_text(to), "the submission\n");
  fs::remove(to);
  EXPECT_TRUE(stage_student_file(from, to, /*keep_existing=*/true));
  EXPECT_TRUE(contains(read_text(to), "stub\n"));
}

TEST(StageStudentFile, AnUnreadableFileIsARuntimeErrorNamingIt) {
  const TempDir dir("gpulab-grading-test-stage-missing");
  const fs::path from = dir.path() / "missing.cu";
  const std::string message =
      runtime_error_of([&] { (void)stage_student_file(from, dir.path() / "staged.cu"); });
  EXPECT_TRUE(contains(message, from.string())) << message;
  EXPECT_FALSE(fs::exists(dir.path() / "staged.cu"));
}

TEST(SubmittedFileProblem, APlainFileOfTheSubmissionIsGraded) {
  const TempDir dir("gpulab-grading-test-submitted");
  write_file(dir.path() / "lab01_x/work.cu", "int x;\n");
  EXPECT_EQ(gpulab::submitted_file_problem(dir.path(), "lab01_x/work.cu"), std::nullopt);
}

TEST(SubmittedFileProblem, LinksAnywhereBelowTheRootAreRefused) {
  const TempDir dir("gpulab-grading-test-submitted-links");
  const fs::path root = dir.path() / "alice";
  write_file(dir.path() / "answer.cu", "int answer;\n");
  write_file(root / "lab01_x/other.cu", "int x;\n");
  fs::create_symlink(dir.path() / "answer.cu", root / "lab01_x/work.cu");
  fs::create_directories(root / "real");
  write_file(root / "real/work.cu", "int y;\n");
  fs::create_directory_symlink(root / "real", root / "lab02_y");
  fs::create_directory_symlink(root, dir.path() / "bob");
  const auto problem = [&](const fs::path& at, const fs::path& file) {
    return gpulab::submitted_file_problem(at, file).value_or("(none)");
  };
  const std::string file_link = problem(root, "lab01_x/work.cu");
  EXPECT_TRUE(contains(file_link, "lab01_x/work.cu is a symbolic link (to " +
                                      (dir.path() / "answer.cu").string() + ")"))
      << file_link;
  EXPECT_TRUE(contains(problem(root, "lab02_y/work.cu"), "lab02_y is a symbolic link"))
      << "a linked folder on the way";
  EXPECT_TRUE(
      contains(problem(dir.path() / "bob", "lab01_x/other.cu"),
               "the submission folder " + (dir.path() / "bob").string() + " is a symbolic link"))
      << "a roster's linked student folder";
}

TEST(SubmittedFileProblem, HardLinksOtherFilesAndLargeFilesAreRefused) {
  const TempDir dir("gpulab-grading-test-submitted-kinds");
  write_file(dir.path() / "answer.cu", "int answer;\n");
  fs::create_directories(dir.path() / "sub/lab01_x");
  fs::create_hard_link(dir.path() / "answer.cu", dir.path() / "sub/lab01_x/work.cu");
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/work.cu").value_or("(none)"),
      "is a hard link (2 names)"));
  fs::create_directories(dir.path() / "sub/lab01_x/folder.cu");
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/folder.cu").value_or("(none)"),
      "is not a regular file"));
  write_file(dir.path() / "sub/lab01_x/big.cu", std::string(2048, 'x'));
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/big.cu", 1024).value_or("(none)"),
      "is larger than 1 KiB"));
  EXPECT_EQ(gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/big.cu"), std::nullopt)
      << "2 KiB is far below the 1 MiB a student file may have";
  EXPECT_TRUE(contains(
      gpulab::submitted_file_problem(dir.path() / "sub", "lab01_x/none.cu").value_or("(none)"),
      "does not exist"));
}

// ---------------------------------------------------------------------------------------------
// The seal of the instructor files
// ---------------------------------------------------------------------------------------------

const std::string kHashA = sha256_hex("a");
const std::string kHashB = sha256_hex("b");

TEST(Seal, FormatIsOneSha256sumLinePerFile) {
  const std::vector<SealedFile> seal = {{"CMakeLists.txt", kHashA},
                                        {"/abs/hidden/lab01/h.cpp", kHashB}};
  EXPECT_EQ(format_seal(seal),
            kHashA + "  CMakeLists.txt\n" + kHashB + "  /abs/hidden/lab01/h.cpp\n");
  EXPECT_EQ(format_seal({}), "");
}

TEST(Seal, ParseReadsWhatFormatWrites) {
  const std::vector<SealedFile> seal = {{"CMakeLists.txt", kHashA},
                                        {"labs/lab01 x/with  two spaces.cpp", kHashB},
                                        {"/abs/hidden/lab01/h.cpp", kHashA}};
  const std::vector<SealedFile> back = parse_seal(format_seal(seal), "seal.sha256");
  ASSERT_EQ(back.size(), seal.size());
  for (std::size_t i = 0; i < seal.size(); ++i) {
    EXPECT_EQ(back[i].path, seal[i].path);
    EXPECT_EQ(back[i].sha256, seal[i].sha256) << seal[i].path;
  }
}

TEST(Seal, ParseSkipsEmptyLinesAndReadsALastLineWithoutNewline) {
  const std::vector<SealedFile> back =
      parse_seal("\n" + kHashA + "  a.txt\n\n" + kHashB + "  b.txt", "seal.sha256");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].path, "b.txt");
  EXPECT_EQ(back[1].sha256, kHashB);
}

TEST(Seal, AMalformedLineIsARuntimeErrorNamingTheSourceAndTheLine) {
  std::string upper = kHashA;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  const std::string bad_lines[] = {
      kHashA.substr(0, 63) + "  short.txt",  // 63 digits
      upper + "  upper.txt",                 // sha256sum writes lower case
      kHashA + " one-space.txt",             // one space
      kHashA + "  ",                         // no path
      kHashA,                                // no separator
      "g" + kHashA.substr(1) + "  not-hex.txt",
      "a.txt  " + kHashA,  // the other way round
  };
  for (const std::string& bad : bad_lines) {
    const std::string message = runtime_error_of(
        [&] { (void)parse_seal(kHashB + "  fine.txt\n" + bad + "\n", "grading/seal.sha256"); });
    EXPECT_TRUE(contains(message, "grading/seal.sha256")) << bad << ": " << message;
    EXPECT_TRUE(contains(message, "line 2")) << bad << ": " << message;
  }
}

// A source tree with a file in every place instructor_files looks at and some it does not, and a
// hidden suites' folder outside it.
class SealTree : public ::testing::Test {
 protected:
  SealTree() {
    for (const char* file :
         {"CMakeLists.txt", "CMakePresets.json", "cmake/GpulabLabs.cmake", "framework/core/x.cpp",
          "kernels/k.cu", "tests/framework/t.cpp", "labs/lab01_x/lab.hpp", "labs/lab01_x/README.md",
          "labs/lab02_y/student.cu", "labs/lab01_x/student.cu", "labs/lab01_x/sub/part.cpp",
          "docs/guide.md", "solutions/lab01_x/student.cu", "build/me/CMakeCache.txt",
          "README.md"}) {
      write_file(root() / file, std::string("contents of ") + file + "\n");
    }
    write_file(hidden() / "lab01_x/hidden_test.cpp", "hidden test\n");
    manifest_.source_dir = root();
    manifest_.extra_tests_dir = hidden();
    manifest_.labs = {{"lab01", "One", "lab01_x", {"student.cu", "sub/part.cpp"}, {}, {}, {}},
                      {"lab02", "Two", "lab02_y", {"other.cu"}, {}, {}, {}}};
  }

  [[nodiscard]] fs::path root() const { return dir_.path() / "src"; }
  [[nodiscard]] fs::path hidden() const { return dir_.path() / "hidden"; }

  TempDir dir_{"gpulab-grading-test-tree"};
  LabManifest manifest_;
};

TEST_F(SealTree, InstructorFilesAreTheSealedFoldersLessTheStudentFiles) {
  Lines expected = {"CMakeLists.txt",
                    "CMakePresets.json",
                    "cmake/GpulabLabs.cmake",
                    "framework/core/x.cpp",
                    "kernels/k.cu",
                    "labs/lab01_x/lab.hpp",     // not labs/lab01_x/README.md: documentation
                    "labs/lab02_y/student.cu",  // a student file of lab01's name, in lab02
                    "tests/framework/t.cpp",
                    (hidden() / "lab01_x/hidden_test.cpp").generic_string()};
  std::sort(expected.begin(), expected.end());
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST_F(SealTree, AHiddenFolderInsideTheSealedFoldersIsListedOnce) {
  write_file(root() / "tests/hidden/lab01_x/h.cpp", "hidden\n");
  manifest_.extra_tests_dir = root() / "tests/hidden";
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(std::count(got.begin(), got.end(), "tests/hidden/lab01_x/h.cpp"), 1) << joined(got);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size()) << joined(got);
  for (const std::string& file : got) {
    EXPECT_FALSE(fs::path(file).is_absolute()) << file;
  }
}

TEST_F(SealTree, AHiddenFolderElsewhereInTheTreeIsSealedByRelativePath) {
  write_file(root() / "hidden/lab01_x/h.cpp", "hidden\n");
  manifest_.extra_tests_dir = root() / "hidden";
  const Lines got = instructor_files(manifest_);
  EXPECT_EQ(std::count(got.begin(), got.end(), "hidden/lab01_x/h.cpp"), 1) << joined(got);
}

TEST_F(SealTree, WithoutAHiddenFolderNothingOutsideTheTreeIsListed) {
  manifest_.extra_tests_dir.clear();
  for (const std::string& file : instructor_files(manifest_)) {
    EXPECT_FALSE(fs::path(file).is_absolute()) << file;
  }
  manifest_.extra_tests_dir = dir_.path() / "no-such-folder";
  EXPECT_EQ(instructor_files(manifest_).size(), 8u);
}

TEST_F(SealTree, SealFilesHashesEachFile) {
  const Lines files = instructor_files(manifest_);
  const std::vector<SealedFile> seal = seal_files(manifest_, files);
  ASSERT_EQ(seal.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(seal[i].path, files[i]);
    const fs::path path = fs::path(files[i]).is_absolute() ? fs::path(files[i]) : root() / files[i];
    EXPECT_EQ(seal[i].sha256, sha256_file(path)) << files[i];
  }
  const auto top = std::find_if(seal.begin(), seal.end(),
                                [](const SealedFile& f) { return f.path == "CMakeLists.txt"; });
  ASSERT_NE(top, seal.end());
  EXPECT_EQ(top->sha256, sha256_hex("contents of CMakeLists.txt\n"));
}

TEST_F(SealTree, TheSealIsWhatSha256sumChecks) {
  if (std::system("sha256sum --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs coreutils sha256sum";
  }
  write_file(dir_.path() / "seal.sha256",
             format_seal(seal_files(manifest_, instructor_files(manifest_))));
  const std::string check = "cd '" + root().string() + "' && sha256sum --check --quiet '" +
                            (dir_.path() / "seal.sha256").string() + "'";
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
  write_file(root() / "kernels/k.cu", "changed\n");
  EXPECT_NE(std::system((check + " > /dev/null 2>&1").c_str()), 0) << "a change goes unnoticed";
}

TEST_F(SealTree, AnUnchangedTreePassesTheCheck) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.checked);
  EXPECT_TRUE(check.ok()) << "changed:" << joined(check.changed)
                          << "\nmissing:" << joined(check.missing)
                          << "\nadded:" << joined(check.added);
}

TEST_F(SealTree, ChangedMissingAndAddedFilesAreFound) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  const std::string hidden_test = (hidden() / "lab01_x/hidden_test.cpp").generic_string();
  write_file(root() / "framework/core/x.cpp", "changed by the code under test\n");
  write_file(hidden_test, "changed too\n");
  fs::remove(root() / "kernels/k.cu");
  write_file(root() / "tests/framework/new_test.cpp", "added\n");
  write_file(hidden() / "lab01_x/new_hidden.cpp", "added\n");

  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.checked);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.changed, (Lines{hidden_test, "framework/core/x.cpp"})) << joined(check.changed);
  EXPECT_EQ(check.missing, Lines{"kernels/k.cu"}) << joined(check.missing);
  EXPECT_EQ(check.added, (Lines{(hidden() / "lab01_x/new_hidden.cpp").generic_string(),
                                "tests/framework/new_test.cpp"}))
      << joined(check.added);
}

TEST_F(SealTree, StudentFilesAndOtherFoldersMayChange) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  write_file(root() / "labs/lab01_x/student.cu", "the student's work\n");
  write_file(root() / "labs/lab01_x/sub/part.cpp", "more work\n");
  write_file(root() / "build/me/new.o", "build output\n");
  write_file(root() / "docs/guide.md", "notes\n");
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_TRUE(check.ok()) << "changed:" << joined(check.changed)
                          << "\nadded:" << joined(check.added);
}

TEST_F(SealTree, WhatGradingRunsOfTheBuildIsSealedByAbsolutePath) {
  const fs::path build = dir_.path() / "build";
  manifest_.build_dir = build;
  manifest_.grade_runner = build / "bin/gpulab-grade-runner";
  const Lines build_files = {(build / "CTestTestfile.cmake").generic_string(),
                             (build / "bin/gpulab-grade-runner").generic_string(),
                             (build / "grading/manifest.json").generic_string(),
                             (build / "tests/labs/CTestTestfile.cmake").generic_string()};
  for (const std::string& file : build_files) {
    write_file(file, "build file " + file + "\n");
  }
  write_file(build / "tests/labs/other.cmake", "not run by grading\n");
  const Lines got = instructor_files(manifest_);
  ASSERT_GE(got.size(), build_files.size());
  EXPECT_EQ(Lines(got.end() - 4, got.end()), build_files) << joined(got);
  const std::vector<SealedFile> seal = seal_files(manifest_, got);
  write_file(build / "tests/labs/CTestTestfile.cmake", "rewritten by the code under test\n");
  write_file(build / "bin/gpulab-grade-runner", "rewritten too\n");
  const IntegrityCheck check = check_integrity(manifest_, seal);
  EXPECT_EQ(check.changed, (Lines{build_files[1], build_files[3]})) << joined(check.changed);
}

TEST(DefaultSealPath, IsOutsideTheBuildInTheUsersStateFolder) {
  const fs::path one = default_seal_path("/work/build/default", "/state", "/home/me");
  EXPECT_EQ(one.parent_path(), fs::path("/state/gpulab/seals"));
  EXPECT_TRUE(one.filename().string().starts_with("default-")) << one;
  EXPECT_EQ(one.extension(), ".sha256");
  EXPECT_EQ(default_seal_path("/work/build/default", "", "/home/me").parent_path(),
            fs::path("/home/me/.local/state/gpulab/seals"));
  EXPECT_EQ(default_seal_path("/work/build/default/", "/state", ""), one)
      << "the same folder written with a trailing slash";
  EXPECT_NE(default_seal_path("/other/build/default", "/state", ""), one)
      << "two builds of the same name elsewhere";
  const std::string message = runtime_error_of([] { (void)default_seal_path("/b", "", ""); });
  EXPECT_TRUE(contains(message, "--seal")) << message;
}

TEST_F(SealTree, AFileChangedToTheSameBytesIsNotChanged) {
  const std::vector<SealedFile> seal = seal_files(manifest_, instructor_files(manifest_));
  write_file(root() / "kernels/k.cu", "contents of kernels/k.cu\n");
  EXPECT_TRUE(check_integrity(manifest_, seal).ok());
}

TEST(IntegrityCheck, ADefaultCheckWasNotMade) {
  const IntegrityCheck check;
  EXPECT_FALSE(check.checked);
  EXPECT_TRUE(check.ok());
  IntegrityCheck changed;
  changed.changed = {"a"};
  EXPECT_FALSE(changed.ok());
  IntegrityCheck missing;
  missing.missing = {"a"};
  EXPECT_FALSE(missing.ok());
  IntegrityCheck added;
  added.added = {"a"};
  EXPECT_FALSE(added.ok());
}

// ---------------------------------------------------------------------------------------------
// definition_line
// ---------------------------------------------------------------------------------------------

TEST(DefinitionLine, FindsTheDefinitionAtColumnZeroNotACallOrACommentOrAnotherName) {
  const std::string source =
      "// summarize_samples(x) in a comment\n"
      "#define X summarize_samples(1)\n"
      "namespace gpulab::lab01 {\n"
      "double my_summarize_samples(double x) { return x; }\n"
      "  const auto s = summarize_samples(samples);\n"
      "Summary summarize_samples(std::span<const double> samples_ms) {\n"
      "std::vector<double> time_kernel(const Launch& launch,\n"
      "                                cudaStream_t stream) {\n";
  EXPECT_EQ(definition_line(source, "summarize_samples"), 6);
  EXPECT_EQ(definition_line(source, "time_kernel"), 7);
  EXPECT_EQ(definition_line(source, "fraction_of_peak"), std::nullopt);
  EXPECT_EQ(definition_line("", "f"), std::nullopt);
  EXPECT_EQ(definition_line("int f(int);\nint gpulab::lab01::f(int x) {}", "f"), 1)
      << "a declaration at column 0 counts: the project's student files have none";
}

TEST(RejectForbiddenCalls, FailsTheTestsCoveringTheWorkTheCallDoesAndNamesIt) {
  LabEntry lab;
  lab.forbidden_calls = {{"gpulab::summarize(", {"summarize_samples"}},
                         {"gpulab::measure(", {"time_kernel"}},
                         {"gpulab::quantile(", {"unused_helper"}}};
  LabGrade grade;
  for (const auto& [name, covers] :
       {std::pair{"Summary.Mean", Lines{"summarize_samples"}},
        std::pair{"Timing.Order", Lines{"time_kernel"}},
        std::pair{"Both.Errors", Lines{"time_kernel", "summarize_samples"}}}) {
    grade.tests.push_back(
        grade_test({name, 5, false, covers, "x"}, TestOutcome::missing, std::nullopt));
  }
  const std::vector<ForbiddenCall> calls = {
      {"benchmark.cu", "gpulab::summarize(std::span<double const>)"},
      {"benchmark.cu", "gpulab::quantile(double)"}};
  const Lines uncovered = reject_forbidden_calls(grade, lab, calls);
  EXPECT_EQ(grade.tests[0].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(grade.tests[0].verdict.detail,
            "benchmark.cu calls gpulab::summarize(std::span<double const>), which does the work "
            "of summarize_samples: the lab asks for your own implementation");
  EXPECT_EQ(grade.tests[1].verdict.disposition, Disposition::not_run) << "time_kernel is its own";
  EXPECT_EQ(grade.tests[2].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(uncovered, (Lines{"benchmark.cu calls gpulab::quantile(double), which does the work "
                              "of unused_helper: the lab asks for your own implementation"}))
      << "a call no test covers rejects the lab";
  EXPECT_TRUE(reject_forbidden_calls(grade, lab, {}).empty());
}

TEST(RejectForbiddenCalls, ACallMatchingSeveralRulesFailsTheTestsOfEach) {
  LabEntry lab;
  lab.forbidden_calls = {{"gpulab::Roofline::", {"ridge_point"}},
                         {"gpulab::Roofline::bound(", {"place_on_roofline"}}};
  LabGrade grade;
  for (const auto& [name, covers] : {std::pair{"Ridge.Point", Lines{"ridge_point"}},
                                     std::pair{"Place.Op", Lines{"place_on_roofline"}}}) {
    grade.tests.push_back(
        grade_test({name, 5, false, covers, "x"}, TestOutcome::missing, std::nullopt));
  }
  EXPECT_TRUE(
      reject_forbidden_calls(grade, lab,
                             {{"bottleneck.cpp", "gpulab::Roofline::bound(gpulab::OpCost const&)"}})
          .empty());
  EXPECT_EQ(grade.tests[0].verdict.disposition, Disposition::rejected);
  EXPECT_EQ(grade.tests[1].verdict.disposition, Disposition::rejected);
  EXPECT_NE(grade.tests[1].verdict.detail.find("the work of ridge_point and place_on_roofline"),
            std::string::npos)
      << grade.tests[1].verdict.detail;
}

// ---------------------------------------------------------------------------------------------
// grade_test, total_lab
// ---------------------------------------------------------------------------------------------

const GradedTest kTest{
    "Lab01Summary.CountMinMaxAndMean", 5, false, {"summarize_samples"}, "count, min, max and mean"};

std::string describe(const TestGrade& grade) {
  return std::string(to_string(grade.verdict.disposition)) + " " + std::to_string(grade.earned) +
         "/" + std::to_string(grade.points) + ": " + grade.verdict.detail;
}

TEST(GradeTest, PassedByTheRunnerAndTheVerdictEarnsThePoints) {
  const TestGrade grade =
      grade_test(kTest, TestOutcome::passed, Verdict{Disposition::passed, "", {}});
  EXPECT_EQ(grade.name, "Lab01Summary.CountMinMaxAndMean");
  EXPECT_EQ(grade.points, 5);
  EXPECT_EQ(grade.earned, 5) << describe(grade);
  EXPECT_FALSE(grade.hidden);
  EXPECT_EQ(grade.covers, (Lines{"summarize_samples"}));
  EXPECT_EQ(grade.checks, "count, min, max and mean");
  EXPECT_EQ(grade.verdict.disposition, Disposition::passed);
}

TEST(GradeTest, HiddenIsKept) {
  const GradedTest hidden{"Lab01Hidden.Robustness", 10, true, {"f"}, "what it checks"};
  const TestGrade grade =
      grade_test(hidden, TestOutcome::passed, Verdict{Disposition::passed, "", {}});
  EXPECT_TRUE(grade.hidden);
  EXPECT_EQ(grade.earned, 10);
}

TEST(GradeTest, AVerdictOfPassedThatTheRunnersExitDisagreesWithEarnsNothing) {
  for (const TestOutcome runner :
       {TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
    const TestGrade grade = grade_test(kTest, runner, Verdict{Disposition::passed, "", {}});
    EXPECT_EQ(grade.earned, 0) << describe(grade);
    EXPECT_EQ(grade.verdict.disposition, Disposition::failed) << describe(grade);
    EXPECT_TRUE(contains(grade.verdict.detail, "verdict file says passed")) << describe(grade);
    EXPECT_TRUE(contains(grade.verdict.detail, "exit says " + std::string(to_string(runner))))
        << describe(grade);
  }
}

TEST(GradeTest, NoVerdictIsNotRun) {
  for (const TestOutcome runner :
       {TestOutcome::passed, TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
    const TestGrade grade = grade_test(kTest, runner, std::nullopt);
    EXPECT_EQ(grade.earned, 0) << describe(grade);
    EXPECT_EQ(grade.points, 5);
    EXPECT_EQ(grade.verdict.disposition, Disposition::not_run) << describe(grade);
    EXPECT_FALSE(grade.verdict.detail.empty());
  }
  EXPECT_TRUE(contains(grade_test(kTest, TestOutcome::passed, std::nullopt).verdict.detail,
                       "no verdict file (the test runner: passed)"));
  EXPECT_TRUE(contains(grade_test(kTest, TestOutcome::missing, std::nullopt).verdict.detail,
                       "the test runner did not run it"));
}

TEST(GradeTest, EveryOtherDispositionEarnsNothingAndIsKept) {
  for (int i = 0; i < kDispositionCount; ++i) {
    const auto disposition = static_cast<Disposition>(i);
    if (disposition == Disposition::passed) {
      continue;
    }
    for (const TestOutcome runner :
         {TestOutcome::passed, TestOutcome::failed, TestOutcome::skipped, TestOutcome::missing}) {
      const Verdict verdict{disposition, "why", {"line 1", "line 2"}};
      const TestGrade grade = grade_test(kTest, runner, verdict);
      EXPECT_EQ(grade.earned, 0) << to_string(disposition) << "/" << to_string(runner);
      EXPECT_EQ(grade.points, 5);
      EXPECT_EQ(grade.verdict.disposition, disposition) << to_string(runner);
      EXPECT_EQ(grade.verdict.detail, "why");
      EXPECT_EQ(grade.verdict.excerpt, (Lines{"line 1", "line 2"}));
    }
  }
}

TestGrade graded(const std::string& name, int points, bool passed, bool hidden = false) {
  return grade_test({name, points, hidden, {"f"}, "what it checks"},
                    passed ? TestOutcome::passed : TestOutcome::failed,
                    Verdict{passed ? Disposition::passed : Disposition::failed, "", {}});
}

TEST(TotalLab, SumsEarnedAndPossible) {
  LabGrade lab;
  lab.earned = 999;  // recomputed, not added to
  lab.possible = 999;
  lab.tests = {graded("S.A", 5, true), graded("S.B", 10, false), graded("S.C", 20, true, true)};
  total_lab(lab);
  EXPECT_EQ(lab.earned, 25);
  EXPECT_EQ(lab.possible, 35);
  lab.tests.clear();
  total_lab(lab);
  EXPECT_EQ(lab.earned, 0);
  EXPECT_EQ(lab.possible, 0);
}

// ---------------------------------------------------------------------------------------------
// compiler_errors
// ---------------------------------------------------------------------------------------------

TEST(CompilerErrors, GccErrorsWithTheSourceLineAfterEach) {
  const std::string output =
      "[1/3] Building CXX object labs/CMakeFiles/lab01.dir/lab01_benchmarking/benchmark.cpp.o\n"
      "FAILED: labs/CMakeFiles/lab01.dir/lab01_benchmarking/benchmark.cpp.o\n"
      "/usr/bin/c++ -I/src/framework/core/include -O2 -g -Wall -Wextra -Werror -std=c++20 -o "
      "benchmark.cpp.o -c /src/labs/lab01_benchmarking/benchmark.cpp\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp: In function 'double total(const "
      "std::vector<double>&)':\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp:31:10: error: 'totl' was not declared in this "
      "scope; did you mean 'total'?\n"
      "   31 |   return totl;\n"
      "      |          ^~~~\n"
      "/src/labs/lab01_benchmarking/benchmark.cpp:40:3: error: expected ';' before '}' token\n"
      "   40 |   }\n"
      "      |   ^\n"
      "ninja: build stopped: subcommand failed.\n";
  const Lines expected = {
      "/src/labs/lab01_benchmarking/benchmark.cpp:31:10: error: 'totl' was not declared in this "
      "scope; did you mean 'total'?",
      "   31 |   return totl;",
      "/src/labs/lab01_benchmarking/benchmark.cpp:40:3: error: expected ';' before '}' token",
      "   40 |   }",
  };
  const Lines got = compiler_errors(output);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(CompilerErrors, AWarningMadeAnErrorIsAnError) {
  const Lines got = compiler_errors(
      "x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]\n"
      "    3 |   int n = 0;\n");
  EXPECT_EQ(got, (Lines{"x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]",
                        "    3 |   int n = 0;"}));
}

TEST(CompilerErrors, NvccErrors) {
  const std::string output =
      "FAILED: labs/CMakeFiles/lab02.dir/lab02_profiling/kernels.cu.o\n"
      "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -Werror all-warnings -lineinfo "
      "-c /src/labs/lab02_profiling/kernels.cu -o kernels.cu.o\n"
      "/src/labs/lab02_profiling/kernels.cu(27): error: identifier \"blockIdxx\" is undefined\n"
      "      int i = blockIdxx.x * blockDim.x + threadIdx.x;\n"
      "              ^\n"
      "\n"
      "1 error detected in the compilation of \"/src/labs/lab02_profiling/kernels.cu\".\n"
      "ninja: build stopped: subcommand failed.\n";
  const Lines expected = {
      "/src/labs/lab02_profiling/kernels.cu(27): error: identifier \"blockIdxx\" is undefined",
      "      int i = blockIdxx.x * blockDim.x + threadIdx.x;",
      "1 error detected in the compilation of \"/src/labs/lab02_profiling/kernels.cu\".",
  };
  const Lines got = compiler_errors(output);
  EXPECT_EQ(got, expected) << "expected:" << joined(expected) << "\ngot:" << joined(got);
}

TEST(CompilerErrors, AtMostMaxLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "x.cpp:" + std::to_string(i) + ":1: error: e" + std::to_string(i) + "\n";
  }
  const Lines got = compiler_errors(output, 5);
  ASSERT_EQ(got.size(), 5u) << joined(got);
  EXPECT_EQ(got.front(), "x.cpp:0:1: error: e0");
  EXPECT_EQ(got.back(), "x.cpp:4:1: error: e4");
  EXPECT_EQ(compiler_errors(output).size(), 12u);
}

TEST(CompilerWarnings, GccAndNvccWarningsWithTheSourceLineAfterEach) {
  const std::string output =
      "[1/3] Building CXX object labs/CMakeFiles/lab01.dir/benchmark.cpp.o\n"
      "/home/a/sub/benchmark.cpp: In function 'double total(const std::vector<double>&)':\n"
      "/home/a/sub/benchmark.cpp:31:10: warning: use of old-style cast to 'double' "
      "[-Wold-style-cast]\n"
      "   31 |   return (double)n;\n"
      "      |          ^~~~~~~~\n"
      "/home/a/sub/kernels.cu(27): warning #177-D: variable \"x\" was declared but never "
      "referenced\n"
      "      int x = 0;\n"
      "[2/3] Linking CXX static library labs/liblab01.a\n";
  const Lines expected = {
      "/home/a/sub/benchmark.cpp:31:10: warning: use of old-style cast to 'double' "
      "[-Wold-style-cast]",
      "   31 |   return (double)n;",
      "/home/a/sub/kernels.cu(27): warning #177-D: variable \"x\" was declared but never "
      "referenced",
      "      int x = 0;",
  };
  EXPECT_EQ(compiler_warnings(output), expected) << joined(compiler_warnings(output));
}

TEST(CompilerWarnings, AWarningWithoutASourceLineDoesNotTakeTheBuildToolsNextLine) {
  // The kernel table's note that nvcc cannot compile a student's file (kernel_table_ptxas.cmake)
  // is one line; the build's progress lines after it are ninja's and make's, not source.
  const std::string output =
      "/s/attention.cu: warning: nvcc cannot compile this file, so on a GPU it would not build\n"
      "[6/8] Writing the kernel table of gpulab.lab04.submission.kernel_table\n"
      "/s/memory.cu: warning: nvcc cannot compile this file\n"
      "[ 50%] Building CXX object labs/CMakeFiles/x.dir/memory.cu.o\n";
  const Lines expected = {
      "/s/attention.cu: warning: nvcc cannot compile this file, so on a GPU it would not build",
      "/s/memory.cu: warning: nvcc cannot compile this file",
  };
  EXPECT_EQ(compiler_warnings(output), expected) << joined(compiler_warnings(output));
}

TEST(CompilerWarnings, NoneWithoutAWarningAndErrorsAreNotWarnings) {
  EXPECT_TRUE(compiler_warnings("").empty());
  EXPECT_TRUE(compiler_warnings("[1/2] Building CXX object a.o\n[2/2] Linking a\n").empty());
  EXPECT_TRUE(compiler_warnings("x.cpp:3:7: error: unused variable 'n' [-Werror=unused-variable]\n")
                  .empty());
  EXPECT_TRUE(compiler_warnings("-Wall -Wextra -Wno-warning-option-name\n").empty());
}

TEST(CompilerWarnings, AtMostMaxLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "x.cpp:" + std::to_string(i) + ":1: warning: w" + std::to_string(i) + "\n";
  }
  const Lines got = compiler_warnings(output, 5);
  ASSERT_EQ(got.size(), 5u) << joined(got);
  EXPECT_EQ(got.back(), "x.cpp:4:1: warning: w4");
  EXPECT_EQ(compiler_warnings(output).size(), 12u);
}

TEST(CompilerErrors, WithoutAnErrorLineTheLastLines) {
  std::string output;
  for (int i = 0; i < 20; ++i) {
    output += "line " + std::to_string(i) + "\n";
  }
  Lines expected;
  for (int i = 8; i < 20; ++i) {
    expected.push_back("line " + std::to_string(i));
  }
  EXPECT_EQ(compiler_errors(output), expected) << joined(compiler_errors(output));
  EXPECT_EQ(compiler_errors("only\ntwo\n"), (Lines{"only", "two"}));
  EXPECT_TRUE(compiler_errors("").empty());
}

TEST(CompilerErrors, ControlCharactersAndInvalidUtf8AreReplaced) {
  const Lines got = compiler_errors("x.cpp:1:1: \x1b[01;31merror:\x1b[m bad \xff byte \xc3\xa9\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "x.cpp:1:1: ?[01;31merror:?[m bad ? byte \xc3\xa9");
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

// Two labs: lab01 with a pass, a failure, a hidden pass and a hidden time-out; lab02 that did not
// compile.
GradeReport sample_report() {
  GradeReport report;
  report.submission = "/submissions/alice";
  report.backend = "sim";
  report.date = "2026-11-22T04:30:00Z";
  report.gpulab_version = "0.1.0";
  report.sandbox = "bubblewrap";
  report.integrity.checked = true;
  report.ignored = {"tests/labs/lab01_benchmarking/lab01_test.cpp"};
  report.problems = {"lab03: no runner"};

  LabGrade lab01;
  lab01.lab = "lab01";
  lab01.title = "Benchmarking a kernel correctly";
  lab01.program = "/b/bin/gpulab.test.lab01.submission1.sim";
  lab01.build_warnings = {"benchmark.cu:31:10: warning: use of old-style cast to 'double'",
                          "   31 |   return (double)n;"};
  lab01.defined_at = {{"summarize_samples", "labs/lab01_benchmarking/benchmark.cu:27"}};
  lab01.tests.push_back(grade_test({"Lab01Summary.Count", 5, false, {"f"}, "what it checks"},
                                   TestOutcome::passed, Verdict{Disposition::passed, "", {}}));
  lab01.tests.push_back(grade_test(
      {"Lab01Summary.Median", 10, false, {"summarize_samples"}, "the median"}, TestOutcome::failed,
      Verdict{Disposition::failed,
              "Expected equality of these values:",
              {"lab01_test.cpp:73", "Expected equality of these values:", "  median(x)"}}));
  lab01.tests.push_back(grade_test({"Lab01Hidden.Big", 20, true, {"f"}, "what it checks"},
                                   TestOutcome::passed, Verdict{Disposition::passed, "", {}}));
  lab01.tests.push_back(
      grade_test({"Lab01Hidden.Slow", 15, true, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::timed_out, "killed after 120 s", {"still running"}}));
  total_lab(lab01);

  LabGrade lab02;
  lab02.lab = "lab02";
  lab02.title = "Profiling";
  lab02.build_errors = {"kernels.cu(27): error: identifier \"blockIdxx\" is undefined"};
  lab02.tests.push_back(
      grade_test({"Lab02.Copy", 50, false, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::build_failed, "the lab's code did not compile", {}}));
  total_lab(lab02);

  report.labs = {lab01, lab02};
  return report;
}

TEST(GradeReport, EarnedAndPossibleSumTheLabs) {
  const GradeReport report = sample_report();
  EXPECT_EQ(report.labs[0].earned, 25);
  EXPECT_EQ(report.labs[0].possible, 50);
  EXPECT_EQ(report.earned(), 25);
  EXPECT_EQ(report.possible(), 100);
  EXPECT_EQ(GradeReport{}.earned(), 0);
  EXPECT_EQ(GradeReport{}.possible(), 0);
}

TEST(ReportJson, HasEveryField) {
  const json doc = json::parse(report_json(sample_report()));
  EXPECT_EQ(doc.at("schema_version"), 2);
  EXPECT_EQ(doc.at("gpulab_version"), "0.1.0");
  EXPECT_EQ(doc.at("date"), "2026-11-22T04:30:00Z");
  EXPECT_EQ(doc.at("submission"), "/submissions/alice");
  EXPECT_EQ(doc.at("backend"), "sim");
  EXPECT_EQ(doc.at("sandbox"), "bubblewrap");
  EXPECT_EQ(doc.at("earned"), 25);
  EXPECT_EQ(doc.at("possible"), 100);
  const json& integrity = doc.at("integrity");
  EXPECT_EQ(integrity.at("checked"), true);
  EXPECT_EQ(integrity.at("ok"), true);
  EXPECT_EQ(integrity.at("changed"), json::array());
  EXPECT_EQ(integrity.at("missing"), json::array());
  EXPECT_EQ(integrity.at("added"), json::array());
  EXPECT_EQ(doc.at("ignored"), json({"tests/labs/lab01_benchmarking/lab01_test.cpp"}));
  EXPECT_EQ(doc.at("problems"), json({"lab03: no runner"}));

  const json& labs = doc.at("labs");
  ASSERT_EQ(labs.size(), 2u);
  EXPECT_EQ(labs[0].at("lab"), "lab01");
  EXPECT_EQ(labs[0].at("title"), "Benchmarking a kernel correctly");
  EXPECT_EQ(labs[0].at("earned"), 25);
  EXPECT_EQ(labs[0].at("possible"), 50);
  EXPECT_EQ(labs[0].at("program"), "/b/bin/gpulab.test.lab01.submission1.sim");
  EXPECT_EQ(labs[0].at("build_errors"), json::array());
  EXPECT_EQ(labs[0].at("build_warnings"),
            json({"benchmark.cu:31:10: warning: use of old-style cast to 'double'",
                  "   31 |   return (double)n;"}));
  EXPECT_EQ(labs[1].at("build_warnings"), json::array());
  ASSERT_EQ(labs[0].at("tests").size(), 4u);
  const json& median = labs[0].at("tests")[1];
  EXPECT_EQ(median.at("name"), "Lab01Summary.Median");
  EXPECT_EQ(median.at("points"), 10);
  EXPECT_EQ(median.at("earned"), 0);
  EXPECT_EQ(median.at("hidden"), false);
  EXPECT_EQ(median.at("covers"), json({"summarize_samples"}));
  EXPECT_EQ(median.at("checks"), "the median");
  EXPECT_EQ(labs[0].at("defined_at"),
            json({{"summarize_samples", "labs/lab01_benchmarking/benchmark.cu:27"}}));
  EXPECT_EQ(median.at("disposition"), "failed");
  EXPECT_EQ(median.at("detail"), "Expected equality of these values:");
  EXPECT_EQ(median.at("excerpt"),
            json({"lab01_test.cpp:73", "Expected equality of these values:", "  median(x)"}));
  EXPECT_EQ(labs[0].at("tests")[2].at("hidden"), true);
  EXPECT_EQ(labs[0].at("tests")[3].at("disposition"), "timed_out");
  EXPECT_EQ(labs[1].at("build_errors"),
            json({"kernels.cu(27): error: identifier \"blockIdxx\" is undefined"}));
  EXPECT_EQ(labs[1].at("tests")[0].at("disposition"), "build_failed");
}

TEST(ReportJson, AFailedIntegrityCheckIsReported) {
  GradeReport report = sample_report();
  report.integrity.changed = {"framework/core/x.cpp"};
  report.integrity.added = {"tests/new.cpp"};
  const json integrity = json::parse(report_json(report)).at("integrity");
  EXPECT_EQ(integrity.at("ok"), false);
  EXPECT_EQ(integrity.at("changed"), json({"framework/core/x.cpp"}));
  EXPECT_EQ(integrity.at("added"), json({"tests/new.cpp"}));
}

TEST(ReportJson, InvalidUtf8IsReplacedNotThrown) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict.detail = "bad \xff\xc3 bytes";
  std::string text;
  ASSERT_NO_THROW(text = report_json(report));
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(text)) << text;
}

// Checks `doc` against Gradescope's documented results.json format (autograder specifications:
// "Output Format"); returns what is wrong, one line each.
Lines gradescope_problems(const json& doc) {
  Lines problems;
  const std::set<std::string> visibilities = {"hidden", "after_due_date", "after_published",
                                              "visible"};
  const auto check_visibility = [&](const json& object, const char* key, const std::string& where) {
    if (object.contains(key) && (!object.at(key).is_string() ||
                                 !visibilities.contains(object.at(key).get<std::string>()))) {
      problems.push_back(where + "." + key + " is not one of Gradescope's visibilities");
    }
  };
  if (!doc.is_object()) {
    return {"not an object"};
  }
  if (!doc.contains("score") || !doc.at("score").is_number()) {
    problems.push_back("no numeric \"score\"");
  }
  if (doc.contains("output") && !doc.at("output").is_string()) {
    problems.push_back("\"output\" is not a string");
  }
  check_visibility(doc, "visibility", "top");
  check_visibility(doc, "stdout_visibility", "top");
  if (!doc.contains("tests") || !doc.at("tests").is_array()) {
    problems.push_back("no \"tests\" array");
    return problems;
  }
  double sum = 0;
  for (std::size_t i = 0; i < doc.at("tests").size(); ++i) {
    const json& test = doc.at("tests")[i];
    const std::string where = "tests[" + std::to_string(i) + "]";
    if (!test.is_object()) {
      problems.push_back(where + " is not an object");
      continue;
    }
    for (const char* key : {"score", "max_score"}) {
      if (!test.contains(key) || !test.at(key).is_number()) {
        problems.push_back(where + " has no numeric \"" + key + "\"");
      }
    }
    for (const char* key : {"name", "output"}) {
      if (!test.contains(key) || !test.at(key).is_string()) {
        problems.push_back(where + " has no string \"" + key + "\"");
      }
    }
    if (!test.contains("visibility")) {
      problems.push_back(where + " has no \"visibility\"");
    }
    check_visibility(test, "visibility", where);
    if (test.contains("status") && test.at("status") != "passed" && test.at("status") != "failed") {
      problems.push_back(where + ".status is neither \"passed\" nor \"failed\"");
    }
    if (test.contains("score") && test.at("score").is_number()) {
      sum += test.at("score").get<double>();
    }
  }
  if (doc.contains("score") && doc.at("score").is_number() &&
      doc.at("score").get<double>() != sum) {
    problems.push_back("score " + doc.at("score").dump() + " is not the sum of the tests' scores " +
                       std::to_string(sum));
  }
  return problems;
}

TEST(GradescopeJson, FollowsGradescopesFormat) {
  const json doc = json::parse(gradescope_json(sample_report()));
  const Lines problems = gradescope_problems(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems) << "\n" << doc.dump(2);
  EXPECT_EQ(doc.at("score"), 25);
  ASSERT_EQ(doc.at("tests").size(), 5u);
}

TEST(GradescopeJson, TheFormatCheckCatchesWhatItShould) {
  // The check above is only as good as this: each broken document is caught.
  const json good = json::parse(gradescope_json(sample_report()));
  ASSERT_TRUE(gradescope_problems(good).empty());
  std::vector<json> broken(7, good);
  broken[0].erase("score");
  broken[1]["score"] = 26;
  broken[2]["tests"][0]["visibility"] = "students";
  broken[3]["tests"][1].erase("max_score");
  broken[4]["tests"][2]["name"] = 3;
  broken[5]["tests"][3]["score"] = "15";
  broken[6]["tests"][0]["status"] = "ok";
  for (std::size_t i = 0; i < broken.size(); ++i) {
    EXPECT_FALSE(gradescope_problems(broken[i]).empty()) << "broken document " << i;
  }
}

TEST(GradescopeJson, EachTestHasItsScoreVisibilityAndOutput) {
  const json doc = json::parse(gradescope_json(sample_report()));
  const json& tests = doc.at("tests");
  const struct {
    const char* name;
    int score;
    int max_score;
    const char* visibility;
    const char* status;
  } expected[] = {
      {"lab01 Lab01Summary.Count", 5, 5, "visible", "passed"},
      {"lab01 Lab01Summary.Median", 0, 10, "visible", "failed"},
      {"lab01 Lab01Hidden.Big", 20, 20, "after_published", "passed"},
      {"lab01 Lab01Hidden.Slow", 0, 15, "after_published", "failed"},
      {"lab02 Lab02.Copy", 0, 50, "visible", "failed"},
  };
  ASSERT_EQ(tests.size(), std::size(expected));
  for (std::size_t i = 0; i < tests.size(); ++i) {
    EXPECT_EQ(tests[i].at("name"), expected[i].name);
    EXPECT_EQ(tests[i].at("score"), expected[i].score) << expected[i].name;
    EXPECT_EQ(tests[i].at("max_score"), expected[i].max_score) << expected[i].name;
    EXPECT_EQ(tests[i].at("visibility"), expected[i].visibility) << expected[i].name;
    EXPECT_EQ(tests[i].at("status"), expected[i].status) << expected[i].name;
  }
  const std::string median = tests[1].at("output").get<std::string>();
  EXPECT_TRUE(contains(median, "failed: Expected equality of these values:")) << median;
  EXPECT_TRUE(contains(median, "lab01_test.cpp:73\n")) << median;
  const std::string slow = tests[3].at("output").get<std::string>();
  EXPECT_TRUE(contains(slow, "timed out: killed after 120 s")) << slow;
}

TEST(GradescopeJson, AFailedTestWorthNothingIsStillFailed) {
  GradeReport report = sample_report();
  report.labs[0].tests[1] =
      grade_test({"S.Zero", 0, false, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::crashed, "killed by SIGSEGV", {}});
  const json doc = json::parse(gradescope_json(report));
  EXPECT_EQ(doc.at("tests")[1].at("status"), "failed");
}

TEST(GradescopeJson, TheOutputSummarizesTheGrade) {
  GradeReport report = sample_report();
  report.integrity.changed = {"framework/core/x.cpp"};
  const std::string output = json::parse(gradescope_json(report)).at("output").get<std::string>();
  EXPECT_TRUE(contains(output, "25/100")) << output;
  EXPECT_TRUE(contains(output, "lab01 Benchmarking a kernel correctly: 25/50")) << output;
  EXPECT_TRUE(contains(output, "did not compile")) << output;
  EXPECT_TRUE(contains(output, "blockIdxx")) << output;
  EXPECT_TRUE(contains(output, "compiler warnings (no points lost):\n    benchmark.cu:31:10"))
      << output;
  EXPECT_TRUE(contains(output, "integrity failure")) << output;
  EXPECT_TRUE(contains(output, "problem: lab03: no runner")) << output;
  EXPECT_TRUE(contains(output, "ignored: tests/labs/lab01_benchmarking/lab01_test.cpp")) << output;
}

TEST(GradescopeJson, InvalidUtf8AndControlCharactersGiveValidJson) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict.detail = "bad \xff\xc3 bytes \x01\x1b[0m";
  report.labs[0].tests[1].verdict.excerpt = {"\xc0\xaf overlong \xed\xa0\x80 surrogate"};
  report.problems = {"\xfe problem"};
  json doc;
  ASSERT_NO_THROW(doc = json::parse(gradescope_json(report)));
  EXPECT_TRUE(gradescope_problems(doc).empty()) << joined(gradescope_problems(doc));
  const std::string output = doc.at("tests")[1].at("output").get<std::string>();
  EXPECT_TRUE(contains(output, "bad ?? bytes ??[0m")) << output;
  EXPECT_FALSE(contains(output, "\x1b")) << output;
}

// ---- JUnit XML, read back with a strict reader -----------------------------------------------

// An element of an XML document: attributes decoded, character data (text and CDATA) joined.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;

  [[nodiscard]] const std::string& attribute(const std::string& key) const {
    const auto found = attributes.find(key);
    if (found == attributes.end()) {
      throw std::runtime_error("<" + name + "> has no attribute " + key);
    }
    return found->second;
  }
};

// The code point of the UTF-8 sequence at in[i], advancing i; throws on malformed UTF-8
// (overlong forms, surrogates and values past U+10FFFF included).
char32_t next_code_point(std::string_view in, std::size_t& i) {
  const auto byte = [&](std::size_t k) -> unsigned {
    if (k >= in.size()) {
      throw std::runtime_error("XML: truncated UTF-8 at byte " + std::to_string(i));
    }
    return static_cast<unsigned char>(in[k]);
  };
  const unsigned lead = byte(i);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead < 0x80) {
    length = 1;
    code = lead;
  } else if ((lead & 0xe0) == 0xc0) {
    length = 2;
    code = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
    code = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
    code = lead & 0x07;
  } else {
    throw std::runtime_error("XML: invalid UTF-8 lead byte at byte " + std::to_string(i));
  }
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned next = byte(i + k);
    if ((next & 0xc0) != 0x80) {
      throw std::runtime_error("XML: invalid UTF-8 at byte " + std::to_string(i));
    }
    code = (code << 6) | (next & 0x3f);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
    throw std::runtime_error("XML: invalid UTF-8 sequence at byte " + std::to_string(i));
  }
  i += length;
  return code;
}

// XML 1.0 "Char".
bool is_xml_char(char32_t c) {
  return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
         (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// A reader of well-formed XML 1.0 documents without a DTD: an optional XML declaration,
// elements, attributes, character and entity references, CDATA and comments. Anything else,
// or a document that is not well-formed, throws std::runtime_error.
class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : in_(text) {}

  XmlElement document() {
    for (std::size_t i = 0; i < in_.size();) {
      const std::size_t at = i;
      if (!is_xml_char(next_code_point(in_, i))) {
        pos_ = at;
        fail("a character XML does not allow");
      }
    }
    if (at("<?xml")) {
      const std::size_t end = in_.find("?>");
      if (end == std::string_view::npos) {
        fail("unterminated XML declaration");
      }
      pos_ = end + 2;
    }
    skip_space();
    XmlElement root = element();
    skip_space();
    if (pos_ != in_.size()) {
      fail("content after the root element");
    }
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML, byte " + std::to_string(pos_) + ": " + what);
  }
  [[nodiscard]] bool at(std::string_view s) const { return in_.substr(pos_).starts_with(s); }
  void expect(std::string_view s) {
    if (!at(s)) {
      fail("expected \"" + std::string(s) + "\"");
    }
    pos_ += s.size();
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_space() {
    while (pos_ < in_.size() && is_space(in_[pos_])) {
      ++pos_;
    }
  }
  std::string name() {
    const std::size_t begin = pos_;
    while (pos_ < in_.size() &&
           (std::isalnum(static_cast<unsigned char>(in_[pos_])) != 0 ||
            std::string_view("_-.:").find(in_[pos_]) != std::string_view::npos)) {
      ++pos_;
    }
    if (pos_ == begin || std::isdigit(static_cast<unsigned char>(in_[begin])) != 0) {
      fail("expected a name");
    }
    return std::string(in_.substr(begin, pos_ - begin));
  }
  void reference(std::string& out) {
    expect("&");
    const std::size_t semi = in_.find(';', pos_);
    if (semi == std::string_view::npos) {
      fail("unterminated reference");
    }
    const std::string_view ref = in_.substr(pos_, semi - pos_);
    if (ref == "amp") {
      out += '&';
    } else if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (ref.starts_with('#')) {
      const bool hex = ref.starts_with("#x");
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      const std::string_view allowed = hex ? "0123456789abcdefABCDEF" : "0123456789";
      if (digits.empty() || digits.size() > 8 ||
          digits.find_first_not_of(allowed) != std::string_view::npos) {
        fail("bad character reference");
      }
      const auto code =
          static_cast<char32_t>(std::stoul(std::string(digits), nullptr, hex ? 16 : 10));
      if (!is_xml_char(code)) {
        fail("a character reference to a character XML does not allow");
      }
      append_utf8(out, code);
    } else {
      fail("unknown entity &" + std::string(ref) + ";");
    }
    pos_ = semi + 1;
  }
  std::string attribute_value() {
    expect("\"");
    std::string value;
    while (true) {
      if (pos_ >= in_.size()) {
        fail("unterminated attribute value");
      }
      const char c = in_[pos_];
      if (c == '"') {
        ++pos_;
        return value;
      }
      if (c == '<') {
        fail("'<' in an attribute value");
      }
      if (c == '&') {
        reference(value);
        continue;
      }
      value += is_space(c) ? ' ' : c;  // attribute-value normalization
      ++pos_;
    }
  }
  XmlElement element() {
    expect("<");
    XmlElement e;
    e.name = name();
    while (true) {
      const std::size_t before = pos_;
      skip_space();
      if (at("/>")) {
        pos_ += 2;
        return e;
      }
      if (at(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) {
        fail("expected white space before an attribute");
      }
      std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      if (!e.attributes.emplace(key, attribute_value()).second) {
        fail("attribute " + key + " given twice");
      }
    }
    while (true) {
      if (pos_ >= in_.size()) {
        fail("unterminated element <" + e.name + ">");
      }
      if (at("</")) {
        pos_ += 2;
        if (name() != e.name) {
          fail("end tag does not match <" + e.name + ">");
        }
        skip_space();
        expect(">");
        return e;
      }
      if (at("<![CDATA[")) {
        const std::size_t end = in_.find("]]>", pos_);
        if (end == std::string_view::npos) {
          fail("unterminated CDATA section");
        }
        e.text += in_.substr(pos_ + 9, end - pos_ - 9);
        pos_ = end + 3;
      } else if (at("<!--")) {
        const std::size_t end = in_.find("-->", pos_);
        if (end == std::string_view::npos) {
          fail("unterminated comment");
        }
        pos_ = end + 3;
      } else if (at("<")) {
        e.children.push_back(element());
      } else if (at("&")) {
        reference(e.text);
      } else if (at("]]>")) {
        fail("\"]]>\" in text");
      } else {
        e.text += in_[pos_++];
      }
    }
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

XmlElement read_xml(std::string_view text) {
  return XmlReader(text).document();
}

TEST(XmlReader, RejectsDocumentsThatAreNotWellFormed) {
  // The reader below is only as good as this: each broken document is refused.
  for (const char* text : {
           "",
           "<a>",
           "<a></b>",
           "<a><b></a></b>",
           "<a x=\"1\" x=\"2\"/>",
           "<a x=\"<\"/>",
           "<a x=\"&unknown;\"/>",
           "<a x=\"&#0;\"/>",
           "<a>&</a>",
           "<a>\x01</a>",
           "<a>\xff</a>",
           "<a>\xc0\xaf</a>",
           "<a>\xed\xa0\x80</a>",
           "<a>\xef\xbf\xbf</a>",
           "<a/><b/>",
           "<a x=1/>",
       }) {
    EXPECT_THROW((void)read_xml(text), std::runtime_error) << text;
  }
  const XmlElement a = read_xml(
      "<?xml version=\"1.0\"?>\n<a x=\"&lt;&#10;&#x41;\">t<b/>"
      "<![CDATA[<raw>]]>\xc3\xa9</a>\n");
  EXPECT_EQ(a.attribute("x"), "<\nA");
  EXPECT_EQ(a.text, "t<raw>\xc3\xa9");
  ASSERT_EQ(a.children.size(), 1u);
  EXPECT_EQ(a.children[0].name, "b");
}

int int_attribute(const XmlElement& e, const std::string& key) {
  return std::stoi(e.attribute(key));
}

TEST(JunitXml, IsWellFormedWithTheRightCounts) {
  const std::string text = junit_xml(sample_report());
  XmlElement root;
  ASSERT_NO_THROW(root = read_xml(text)) << text;
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(int_attribute(root, "tests"), 5);
  EXPECT_EQ(int_attribute(root, "failures"), 3);
  EXPECT_EQ(int_attribute(root, "skipped"), 0);
  ASSERT_EQ(root.children.size(), 2u);

  const XmlElement& lab01 = root.children[0];
  EXPECT_EQ(lab01.name, "testsuite");
  EXPECT_EQ(lab01.attribute("name"), "lab01");
  EXPECT_EQ(int_attribute(lab01, "tests"), 4);
  EXPECT_EQ(int_attribute(lab01, "failures"), 2);
  ASSERT_EQ(lab01.children.size(), 4u);
  const XmlElement& count = lab01.children[0];
  EXPECT_EQ(count.name, "testcase");
  EXPECT_EQ(count.attribute("classname"), "lab01");
  EXPECT_EQ(count.attribute("name"), "Lab01Summary.Count");
  EXPECT_TRUE(count.children.empty()) << "a pass has no <failure> or <skipped>";
  const XmlElement& median = lab01.children[1];
  ASSERT_EQ(median.children.size(), 1u);
  EXPECT_EQ(median.children[0].name, "failure");
  EXPECT_EQ(median.children[0].attribute("type"), "failed");
  EXPECT_EQ(median.children[0].attribute("message"),
            "failed: Expected equality of these values:\nlab01_test.cpp:73\n"
            "Expected equality of these values:\n  median(x)\n");
  ASSERT_EQ(lab01.children[3].children.size(), 1u);
  EXPECT_EQ(lab01.children[3].children[0].attribute("type"), "timed_out");

  const XmlElement& lab02 = root.children[1];
  EXPECT_EQ(int_attribute(lab02, "tests"), 1);
  EXPECT_EQ(int_attribute(lab02, "failures"), 1);
  ASSERT_EQ(lab02.children.size(), 1u);
  ASSERT_EQ(lab02.children[0].children.size(), 1u);
  EXPECT_EQ(lab02.children[0].children[0].attribute("type"), "build_failed");
}

TEST(JunitXml, SkippedAndNotGradedAreSkipsNotFailures) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict = {Disposition::skipped, "needs 2 GiB", {}};
  report.labs[0].tests[3].verdict = {Disposition::not_graded, "needs a CUDA device: none", {}};
  const XmlElement root = read_xml(junit_xml(report));
  EXPECT_EQ(int_attribute(root, "tests"), 5);
  EXPECT_EQ(int_attribute(root, "failures"), 1);
  EXPECT_EQ(int_attribute(root, "skipped"), 2);
  const XmlElement& lab01 = root.children.at(0);
  EXPECT_EQ(int_attribute(lab01, "failures"), 0);
  EXPECT_EQ(int_attribute(lab01, "skipped"), 2);
  ASSERT_EQ(lab01.children.at(1).children.size(), 1u);
  EXPECT_EQ(lab01.children[1].children[0].name, "skipped");
  EXPECT_EQ(lab01.children[1].children[0].attribute("message"), "skipped: needs 2 GiB\n");
  EXPECT_EQ(lab01.children.at(3).children.at(0).attribute("message"),
            "not graded: needs a CUDA device: none\n");
}

TEST(JunitXml, EscapesMarkupControlCharactersAndInvalidUtf8) {
  GradeReport report = sample_report();
  TestGrade& test = report.labs[0].tests[1];
  test.name = "Suite<float>.A&B \"q\"";
  test.verdict.detail = "a<b && c>d \"quoted\" 'single' ]]> \x01\x1b[31m\r";
  test.verdict.excerpt = {"bad \xff byte, cut \xc3", "overlong \xc0\xaf surrogate \xed\xa0\x80",
                          "not a character \xef\xbf\xbf, past U+10FFFF \xf4\x90\x80\x80",
                          "kept: \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"};
  report.labs[0].lab = "lab<01>&";
  const std::string text = junit_xml(report);
  XmlElement root;
  ASSERT_NO_THROW(root = read_xml(text)) << text;
  const XmlElement& lab01 = root.children.at(0);
  EXPECT_EQ(lab01.attribute("name"), "lab<01>&");
  const XmlElement& tc = lab01.children.at(1);
  EXPECT_EQ(tc.attribute("name"), "Suite<float>.A&B \"q\"");
  EXPECT_EQ(tc.attribute("classname"), "lab<01>&");
  const std::string& message = tc.children.at(0).attribute("message");
  EXPECT_EQ(message,
            "failed: a<b && c>d \"quoted\" 'single' ]]> ??[31m?\n"
            "bad ? byte, cut ?\n"
            "overlong ?? surrogate ???\n"
            "not a character ???, past U+10FFFF ????\n"
            "kept: \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\n");
}

TEST(JunitXml, AnEmptyReportIsWellFormed) {
  const XmlElement root = read_xml(junit_xml(GradeReport{}));
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(int_attribute(root, "tests"), 0);
  EXPECT_TRUE(root.children.empty());
}

}  // namespace
}  // namespace gpulab
