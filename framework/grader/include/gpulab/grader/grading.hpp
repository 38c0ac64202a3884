// Grades: the lab manifest the build writes (cmake/GpulabLabs.cmake), the staging of student
// files, the instructor files' seal, the grade of each graded test from the test runner's exit
// status and its verdict, and the reports (JSON, Gradescope results.json, JUnit XML).
//
// A graded test earns its points only when the test runner (framework/grader/runner.cpp) exited
// 0 AND its verdict file says passed (gpulab/grader/verdict.hpp). Every other disposition earns
// nothing and is listed with its points.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/grader/code_checks.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/sandbox.hpp"
#include "gpulab/grader/verdict.hpp"

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

/// Copies a student file to `to` (its folders created) behind a `#line 1 "<from>"` directive, so
/// compiler errors and __FILE__ name the file the student wrote. Writes only when the staged text
/// differs (an unchanged file is not rebuilt), and not at all when `keep_existing` and `to`
/// exists. Returns whether it wrote; throws std::runtime_error when `from` cannot be read.
bool stage_student_file(const std::filesystem::path& from, const std::filesystem::path& to,
                        bool keep_existing = false);

/// Where a lab's student file is in a submission, relative to its root: labs/<dir>/<file> (a copy
/// of the whole tree) or <dir>/<file> (a folder of lab folders); nullopt when neither exists.
/// Links count as existing: submitted_file_problem refuses them.
[[nodiscard]] std::optional<std::filesystem::path> find_student_file(
    const std::filesystem::path& root, const LabEntry& lab, const std::string& file);

/// The largest student file graded: 1 MiB.
inline constexpr std::uintmax_t kMaxStudentFileBytes = std::uintmax_t{1} << 20;

/// Why `root / relative` cannot be graded as a submitted file, in words that follow its path:
/// "is a symbolic link (to ...)" (the root, a folder on the way or the file itself: a link could
/// name the solution, a classmate's file or a system file), "is not a regular file", "is a hard
/// link (N names)", "is larger than 1 MiB". nullopt for a plain file of the submission.
[[nodiscard]] std::optional<std::string> submitted_file_problem(
    const std::filesystem::path& root, const std::filesystem::path& relative,
    std::uintmax_t max_bytes = kMaxStudentFileBytes);

/// The line (from 1) of `source` where `function` is defined, in the project's layout: the first
/// line that starts at column 0 (not a comment or preprocessor line) and has the name, after a
/// character that cannot be part of a qualified name, followed by "(". nullopt when there is none.
[[nodiscard]] std::optional<int> definition_line(std::string_view source,
                                                 std::string_view function);

/// What the checks of a lab's code found (code_checks.hpp).
struct LabCodeCheck {
  std::vector<std::string> findings;           ///< rules broken, one line each: the lab is rejected
  std::vector<ForbiddenCall> forbidden_calls;  ///< fail the tests covering what they do
};

/// What `lab`'s code does that lab code must not (code_checks.hpp), checked on `run`'s student
/// library: its object code against the lab's namespace and forbidden calls, and what its files
/// include, `files_dir` being the folder they came from (the staged submission, labs/<dir> or
/// solutions/<dir>). Throws std::runtime_error when the code cannot be read.
[[nodiscard]] LabCodeCheck check_lab_code(const LabManifest& manifest, const LabEntry& lab,
                                          const LabRun& run, const std::filesystem::path& build_dir,
                                          const std::filesystem::path& files_dir);

/// The part of check_lab_code that needs no object code: first that `lab`'s files in `files_dir`
/// rename none of their lines (check_line_directives: the rest relies on the compiler's line
/// markers; only those findings when there are any), then what they include and their own
/// preprocessed lines (check_library_sources). Also for a lab that did not compile, before its
/// compiler errors are shown: they could quote a file it must not include.
[[nodiscard]] std::vector<std::string> check_lab_sources(const LabManifest& manifest,
                                                         const LabEntry& lab, const LabRun& run,
                                                         const std::filesystem::path& build_dir,
                                                         const std::filesystem::path& files_dir);

/// What the test runner's exit said about one test.
enum class TestOutcome {
  passed,   ///< exit 0
  failed,   ///< any other exit, a signal, or the grader's own time limit
  skipped,  ///< exit 77: skipped or not graded
  missing,  ///< not run at all (it could not be started)
};

/// "passed", "failed", "skipped", "missing".
[[nodiscard]] std::string_view to_string(TestOutcome outcome) noexcept;

/// The outcome of a test runner's process.
[[nodiscard]] TestOutcome runner_outcome(const ProcessResult& runner);

// ---- the seal of the instructor files ------------------------------------------------------

/// One sealed file: its path relative to the source tree (absolute when outside it) and digest.
struct SealedFile {
  std::string path;
  std::string sha256;
};

/// The instructor files of a tree: what a submission must not change and grading relies on.
/// Everything under CMakeLists.txt, CMakePresets.json, cmake/, framework/, kernels/, tests/,
/// labs/ and the hidden suites' folder, except the labs' student files and Markdown (*.md)
/// documentation (relative paths, sorted); then, by absolute path, what grading runs of the
/// build: the test runner, the lab manifest and ctest's files (every CTestTestfile.cmake).
[[nodiscard]] std::vector<std::string> instructor_files(const LabManifest& manifest);

/// Where a build's seal is kept unless the user names a file: outside the build, which code
/// under test may write where there is no sandbox, in `<state>/gpulab/seals/`, `<state>` being
/// `xdg_state_home` ($XDG_STATE_HOME) or else `<home>/.local/state`; the file is named after the
/// build folder and a digest of its absolute path. Throws std::runtime_error when both are
/// empty.
[[nodiscard]] std::filesystem::path default_seal_path(const std::filesystem::path& build_dir,
                                                      std::string_view xdg_state_home,
                                                      std::string_view home);

/// Hashes `files` (as instructor_files names them) under manifest.source_dir.
[[nodiscard]] std::vector<SealedFile> seal_files(const LabManifest& manifest,
                                                 const std::vector<std::string>& files);

/// The seal as text: one "<sha256>  <path>" line per file, the format `sha256sum -c` checks.
[[nodiscard]] std::string format_seal(const std::vector<SealedFile>& seal);
/// Reads format_seal's text; throws std::runtime_error naming `source` on a malformed line.
[[nodiscard]] std::vector<SealedFile> parse_seal(std::string_view text, std::string_view source);

/// How a tree compares with a seal.
struct IntegrityCheck {
  bool checked = false;              ///< false when no check was made
  std::vector<std::string> changed;  ///< sealed files whose digest differs
  std::vector<std::string> missing;  ///< sealed files that are gone
  std::vector<std::string> added;    ///< instructor files that are not in the seal
  [[nodiscard]] bool ok() const { return changed.empty() && missing.empty() && added.empty(); }
};

/// Compares the instructor files of the tree with the seal.
[[nodiscard]] IntegrityCheck check_integrity(const LabManifest& manifest,
                                             const std::vector<SealedFile>& seal);

// ---- grades ----------------------------------------------------------------------------------

/// The grade of one test.
struct TestGrade {
  std::string name;  ///< "Suite.Name"
  int points = 0;    ///< possible
  int earned = 0;    ///< points when passed, else 0
  bool hidden = false;
  std::vector<std::string> covers;  ///< GradedTest::covers
  std::string checks;               ///< GradedTest::checks
  Verdict verdict;                  ///< disposition, detail, excerpt
};

/// A test's grade from the test runner's exit and its verdict (nullopt: no verdict file).
/// Passed only when both say so; a disagreement is a failure that says so.
[[nodiscard]] TestGrade grade_test(const GradedTest& test, TestOutcome runner,
                                   const std::optional<Verdict>& verdict);

/// The grade of one lab.
struct LabGrade {
  std::string lab;                        ///< "lab01"
  std::string title;                      ///< the lab's title
  int earned = 0;                         ///< sum of earned points
  int possible = 0;                       ///< sum of points
  std::string program;                    ///< the graded tests' program, built from the code
  std::vector<std::string> build_errors;  ///< the compiler's first errors when it did not build
  /// The compiler's warnings (never fatal: no points lost).
  std::vector<std::string> build_warnings;
  /// What its code does that lab code must not (code_checks.hpp): no test ran.
  std::vector<std::string> rejected_for;
  /// Where each function its tests cover is defined in the graded files: "<file>:<line>".
  std::map<std::string, std::string> defined_at;
  std::vector<TestGrade> tests;
};

/// Marks rejected, not to be run, the tests of `grade` that cover a lab function whose work a
/// forbidden call in the code does (the functions of every rule of `lab`'s forbidden_calls the
/// call matches), the detail naming the call and the file. Returns one line for each call no test
/// covers: then the whole lab is rejected.
[[nodiscard]] std::vector<std::string> reject_forbidden_calls(
    LabGrade& grade, const LabEntry& lab, const std::vector<ForbiddenCall>& calls);

/// Sums a lab's tests into earned and possible.
void total_lab(LabGrade& lab);

/// The first error lines of a compiler's output (lines with "error" and the one after each), at
/// most `max_lines`; the last lines when none says "error".
[[nodiscard]] std::vector<std::string> compiler_errors(std::string_view output,
                                                       std::size_t max_lines = 12);

/// The compiler's warnings in a build's output (each warning line and the one after it, the
/// source line), at most `max_lines`; none when it warned of nothing.
[[nodiscard]] std::vector<std::string> compiler_warnings(std::string_view output,
                                                         std::size_t max_lines = 12);

/// A whole grading: one submission, one backend, every lab graded.
struct GradeReport {
  std::string submission;  ///< what was graded (a path)
  std::string backend;     ///< "sim" or "cuda"
  std::string date;        ///< ISO 8601, UTC
  std::string gpulab_version;
  /// Where the tests ran: "bubblewrap", or "none: <why>" (sandbox.hpp).
  std::string sandbox;
  /// How the test processes were locked down: "seccomp", or "none: <why>" (lockdown.hpp).
  std::string lockdown;
  IntegrityCheck integrity;           ///< the instructor files before and after grading
  std::vector<std::string> ignored;   ///< submission files not graded (e.g. a changed test)
  std::vector<std::string> problems;  ///< what went wrong in grading itself
  std::vector<LabGrade> labs;
  [[nodiscard]] int earned() const;
  [[nodiscard]] int possible() const;
};

/// The report as JSON (schema_version 2), for scripts and the class loop.
[[nodiscard]] std::string report_json(const GradeReport& report);
/// Gradescope's results.json: score, output, and one test per graded test case (score,
/// max_score, name, output, visibility: hidden suites "after_published", others "visible").
[[nodiscard]] std::string gradescope_json(const GradeReport& report);
/// JUnit XML: one <testsuite> per lab, one <testcase> per graded test, <failure> or <skipped>
/// with the disposition and detail.
[[nodiscard]] std::string junit_xml(const GradeReport& report);

}  // namespace gpulab
