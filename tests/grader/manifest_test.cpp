// Unit tests of manifest.hpp: the lab manifest (schema_version 8), the run that grades a test,
// and the test runner's command.
#include "gpulab/grader/manifest.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "grader_support.hpp"
#include "temp_dir.hpp"
#include "text_match.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Lines = std::vector<std::string>;

using gpulab::testing::contains;
using gpulab::testing::runtime_error_of;
using gpulab::testing::TempDir;
using gpulab::testing::write_file;

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
// Running a graded test: the runner's command
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

}  // namespace
}  // namespace gpulab
