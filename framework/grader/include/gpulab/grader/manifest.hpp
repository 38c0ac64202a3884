// The lab manifest the build writes (<build>/grading/manifest.json, cmake/GpulabLabs.cmake):
// each lab's student files and the rules of its code, and its runs (variant, backend, grading
// slot), each with its graded tests; the run that grades a test, and the test runner's command
// line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/grader/sandbox.hpp"

namespace gpulab {

/// One graded test case.
struct GradedTest {
  std::string name;  ///< the gtest case, "Suite.Name" (ctest: "<lab>.<variant>.<backend>/" first)
  int points = 0;    ///< what it is worth
  bool hidden = false;  ///< from a hidden suite (GPULAB_EXTRA_TESTS_DIR): not shipped to students
  std::vector<std::string> covers;  ///< the lab functions it exercises, e.g. "summarize_samples"
  std::string checks;               ///< what it checks, one line for the student
  /// Judged from the sim's counts (GPULAB_COUNTED_TEST): a cuda grading runs it from the sim build
  /// of the same submission (grading_run).
  bool counted = false;
};

/// One build of a lab: which code (variant), which backend, its report program and its tests.
struct LabRun {
  std::string variant;                  ///< "student", "solution" or "submission"
  int slot = 0;                         ///< the grading slot of a submission run (else 0)
  std::string backend;                  ///< "cuda" or "sim"
  std::filesystem::path files_dir;      ///< where its student files are (staged, for submission)
  std::filesystem::path report;         ///< the report program (empty for the submission variant)
  std::string library_target;           ///< the student files' library target
  std::filesystem::path library;        ///< and its static library
  std::string tests_target;             ///< the graded suites' build target ("" without tests)
  std::filesystem::path tests_program;  ///< the graded suites' program
  std::filesystem::path results_dir;    ///< where the test runner writes each test's verdict
  std::vector<std::pair<std::string, std::string>> environment;  ///< set for every graded test
  std::vector<GradedTest> tests;                                 ///< the graded tests of this build
};

/// A framework function the lab's code must not call, because it does the work of some of the
/// lab's functions.
struct LabForbiddenCall {
  std::string call;               ///< demangled name prefix, e.g. "gpulab::summarize("
  std::vector<std::string> does;  ///< the lab functions whose work it does: "summarize_samples"
};

/// One lab of the manifest.
struct LabEntry {
  std::string id;                          ///< "lab01"
  std::string title;                       ///< "Benchmarking a kernel correctly"
  std::string dir;                         ///< "lab01_benchmarking"
  std::vector<std::string> student_files;  ///< the TODO files, relative to labs/<dir>
  /// Framework functions the lab's code must not call (code_checks.hpp).
  std::vector<LabForbiddenCall> forbidden_calls;
  std::vector<LabRun> runs;
  /// Framework functions the lab's code may call (code_checks.hpp): demangled name prefixes.
  std::vector<std::string> allowed_calls;
  /// The CUDA runtime functions the lab's code may call, by name; empty: all of them.
  std::vector<std::string> cuda_calls{};
};

/// What the build knows about the labs: <build>/grading/manifest.json.
struct LabManifest {
  std::filesystem::path source_dir;       ///< the source tree the build was configured from
  std::filesystem::path build_dir;        ///< the build tree
  std::filesystem::path extra_tests_dir;  ///< hidden suites (GPULAB_EXTRA_TESTS_DIR)
  int test_timeout_s = 0;                 ///< each graded test's time limit
  std::filesystem::path grade_runner;     ///< gpulab-grade-runner, which runs one graded test
  std::filesystem::path nm;               ///< the toolchain's nm, to check lab code
  std::filesystem::path objdump;          ///< the toolchain's objdump, likewise
  /// The compilers' own include folders and the CUDA toolkit's: lab code may include from them.
  std::vector<std::filesystem::path> system_include_dirs;
  /// What a sandboxed test sees beyond the system and its own program (files of the trees its
  /// tests read; none today). Its writable folder is the runner's.
  SandboxSpec sandbox;
  /// The folder of each grading slot (<build>/grading/slot<N>): one `gpulab grade` at a time
  /// stages, builds and runs a submission in a slot; its submission runs have that slot.
  std::vector<std::filesystem::path> grading_slots;
  std::vector<LabEntry> labs;  ///< in lab order
};

/// The run of `lab` for a variant, backend and grading slot (submission runs have one per slot),
/// or nullptr.
[[nodiscard]] const LabRun* find_run(const LabEntry& lab, std::string_view variant,
                                     std::string_view backend, int slot = 0);

/// The run whose program grades `test` in a grading of `lab`'s submission on `backend` in
/// grading slot `slot`: that backend's submission run, except that a counted test graded on cuda
/// runs from the sim's (the same staged files, built for the sim), so that a submission earns the
/// same points on either backend. nullptr when the build has no such run.
[[nodiscard]] const LabRun* grading_run(const LabEntry& lab, const GradedTest& test,
                                        std::string_view backend, int slot);

/// Reads the manifest from JSON text (schema_version 8); throws std::runtime_error naming
/// `source` and the field.
[[nodiscard]] LabManifest parse_lab_manifest(std::string_view text, std::string_view source);
/// Reads <path>; throws std::runtime_error when missing or malformed.
[[nodiscard]] LabManifest load_lab_manifest(const std::filesystem::path& path);

/// The command that runs one graded test of `run` through the test runner, as ctest runs it:
/// grade_runner --test Suite.Name --out results_dir --timeout S --sandbox MODE [--visible DIR]...
/// [--hide DIR]... -- tests_program, MODE being "on", "off" or "auto" (ctest's: sandboxed where
/// bubblewrap works). (The run's environment is set apart, as ctest sets it.)
[[nodiscard]] std::vector<std::string> runner_command(const LabManifest& manifest,
                                                      const LabRun& run, const GradedTest& test,
                                                      double timeout_s,
                                                      std::string_view sandbox = "auto");

}  // namespace gpulab
