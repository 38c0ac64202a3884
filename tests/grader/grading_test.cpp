// Unit tests of grading.hpp: the lab manifest (schema_version 8), the run that grades a test, the
// test runner's command and outcome, staging student files, the seal of the instructor files on a
// temporary tree, the grade of a test from the runner's exit and its verdict, and compiler error
// excerpts. The reports: reports_test.cpp.
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
#include "text_match.hpp"

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

using gpulab::testing::contains;
using gpulab::testing::joined;

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

}  // namespace
}  // namespace gpulab
