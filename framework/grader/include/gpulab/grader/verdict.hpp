// The verdict on one graded test case, from evidence the code under test cannot forge by printing.
//
// gpulab-grade-runner runs each graded test case in its own process and hands judge_test what it
// saw: how the process ended (exit status, signal, time limit), whether gtest's premature-exit
// file was left behind (TEST_PREMATURE_EXIT_FILE: gtest creates it before the tests run and
// deletes it when RUN_ALL_TESTS returns, so it survives exit() inside a test), and gtest's XML
// result file. A test passes only when all of these agree: exit status 0, no premature-exit file,
// and a result file reporting exactly the expected test case, run to completion without failure.
// Printed text never makes a pass; it only helps to describe a failure (what kind of crash,
// which lines to show), which earns nothing either way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// What happened to a graded test case. Only `passed` earns points.
enum class Disposition {
  passed,         ///< ran to completion and passed
  failed,         ///< ran and an assertion failed (or an exception escaped)
  timed_out,      ///< killed at its time limit, with every process it started
  crashed,        ///< ended by a signal, or by a CUDA error that breaks the context
  out_of_memory,  ///< device or host memory ran out
  exited_early,   ///< its process exited before the test finished (exit() in the code)
  skipped,        ///< the test skipped itself (reason in the detail)
  not_graded,     ///< it cannot run here, e.g. it needs a CUDA device
  build_failed,   ///< the lab's code did not compile
  rejected,       ///< the lab's code does what lab code must not (code_checks.hpp)
  not_run,        ///< never ran (e.g. grading stopped, or its program is missing)
};
/// How many Disposition values there are (they count up from 0).
inline constexpr int kDispositionCount = 11;

/// "passed", "failed", "timed_out", ... (the JSON name; the console writes '_' as a space).
[[nodiscard]] std::string_view to_string(Disposition disposition) noexcept;
/// to_string for people: "timed out", "out of memory", ...
[[nodiscard]] std::string display_name(Disposition disposition);

/// True for gtest's location line before a failure: "unknown file" or "path/to/file.cpp:123".
[[nodiscard]] bool is_failure_location(std::string_view line);
/// The inverse of to_string; nullopt for an unknown name.
[[nodiscard]] std::optional<Disposition> parse_disposition(std::string_view name) noexcept;

/// One test case of a gtest XML result file.
struct GtestCase {
  std::string name;    ///< "Suite.Name"
  std::string status;  ///< "run" or "notrun"
  std::string result;  ///< "completed", "skipped", "suppressed" (absent in old gtest: "")
  std::vector<std::string> failures;   ///< each <failure message="...">, decoded
  std::optional<std::string> skipped;  ///< the <skipped message="..."> of a skipped test
};

/// A gtest XML result file (--gtest_output=xml).
struct GtestReport {
  int tests = 0;     ///< <testsuites tests=...>
  int failures = 0;  ///< <testsuites failures=...>
  int errors = 0;    ///< <testsuites errors=...>
  std::vector<GtestCase> cases;
};

/// Parses gtest's XML; throws std::runtime_error when the text is not such a file (truncated,
/// no <testsuites> element, a <testcase> without name or status).
[[nodiscard]] GtestReport parse_gtest_xml(std::string_view xml);

/// Everything the runner observed about one test process.
struct TestEvidence {
  std::string test;                ///< the test case it had to run: "Suite.Name"
  bool started = true;             ///< false: its program could not be started
  std::string start_error;         ///< why not
  bool timed_out = false;          ///< killed at the time limit
  double timeout_s = 0;            ///< the limit
  std::optional<int> exit_code;    ///< its exit status, when it exited
  std::optional<int> signal;       ///< the signal that ended it, when one did
  std::string signal_name;         ///< "SIGSEGV (segmentation fault)"
  bool premature_exit = false;     ///< gtest's premature-exit file was left behind
  std::optional<std::string> xml;  ///< the result file, when it was written
  std::string output;              ///< what it printed (to describe failures only)
};

/// The verdict on one test.
struct Verdict {
  Disposition disposition = Disposition::not_run;
  std::string detail;  ///< one line: why this disposition
  /// The failure lines worth showing: whole failures in at most 16 lines, then a line for each
  /// of up to 8 more ("also failed: ..."), then how many more there were.
  std::vector<std::string> excerpt;
};

/// The verdict from the evidence (see the top of this file). Exit status 77 is the graded
/// suites' "skipped" (tests/labs/graded_main.cpp); a skip whose reason starts with "needs a CUDA
/// device" is `not_graded`.
[[nodiscard]] Verdict judge_test(const TestEvidence& evidence);

/// The verdict file the runner writes (JSON, schema_version 1).
[[nodiscard]] std::string verdict_to_json(const std::string& test, const Verdict& verdict,
                                          double duration_s);
/// Reads a verdict file's text; throws std::runtime_error naming `source` when malformed.
[[nodiscard]] Verdict parse_verdict_json(std::string_view text, std::string_view source);

/// The CUDA error names that leave a context unusable (a "sticky" error: every later CUDA call
/// in the process fails with it), e.g. cudaErrorIllegalAddress; the first one `text` mentions.
[[nodiscard]] std::optional<std::string> sticky_cuda_error(std::string_view text);

/// The sim's diagnosis of the kernel that failed, the first `text` holds: what follows "gpulab
/// sim: " at the start of a line that goes on "kernel " (what the sim prints and a sim
/// CudaError's message ends with: which kernel, launched where, failed in which block and threads,
/// and why), to the end of the line or a double quote (gtest quotes an exception's message), at
/// most 600 characters; nullopt when there is none.
[[nodiscard]] std::optional<std::string> sim_kernel_diagnosis(std::string_view text);

}  // namespace gpulab
