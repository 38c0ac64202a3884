// Grades (grades.hpp): a test's from the runner's exit and its verdict, a lab's, and the
// compiler's excerpts.
#include "gpulab/grader/grades.hpp"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>

#include "report_text.hpp"

namespace gpulab {

namespace {

// A compiler's line that reports an error. "error" inside "-Werror" does not count: the compile
// command a build tool echoes before a failure ("FAILED: ..." and the command line) names it.
bool says_error(std::string_view line) {
  for (std::size_t at = line.find("error"); at != std::string_view::npos;
       at = line.find("error", at + 1)) {
    if (at == 0 || line[at - 1] != 'W') {
      return true;
    }
  }
  return false;
}

// A compiler's line that reports a warning: GCC and Clang "file:line:col: warning: ...", nvcc
// "file(line): warning #...".
bool says_warning(std::string_view line) {
  return line.find(": warning:") != std::string_view::npos ||
         line.find("): warning") != std::string_view::npos;
}

// A line of the build tool, not the compiler's: ninja's last line ("ninja: build stopped:
// subcommand failed."), and the progress lines of ninja ("[6/8] Building ...") and make
// ("[ 50%] Building ...").
bool is_build_tool_line(std::string_view line) {
  if (line.starts_with("ninja: build stopped")) {
    return true;
  }
  const std::size_t close = line.find("] ");
  if (!line.starts_with('[') || close == std::string_view::npos) {
    return false;
  }
  const std::string_view inside = line.substr(1, close - 1);
  return !inside.empty() && inside.find_first_not_of("0123456789/% ") == std::string_view::npos;
}

}  // namespace

std::string_view to_string(TestOutcome outcome) noexcept {
  switch (outcome) {
    case TestOutcome::passed:
      return "passed";
    case TestOutcome::failed:
      return "failed";
    case TestOutcome::skipped:
      return "skipped";
    case TestOutcome::missing:
      return "missing";
  }
  return "?";
}

TestOutcome runner_outcome(const ProcessResult& runner) {
  if (!runner.started) {
    return TestOutcome::missing;
  }
  if (runner.timed_out || !runner.exit_code) {
    return TestOutcome::failed;
  }
  return *runner.exit_code == 0    ? TestOutcome::passed
         : *runner.exit_code == 77 ? TestOutcome::skipped
                                   : TestOutcome::failed;
}

std::vector<std::string> reject_forbidden_calls(LabGrade& grade, const LabEntry& lab,
                                                const std::vector<ForbiddenCall>& calls) {
  std::vector<std::string> uncovered;
  for (const ForbiddenCall& call : calls) {
    std::vector<std::string> does;  // of every rule the call matches
    for (const LabForbiddenCall& forbidden : lab.forbidden_calls) {
      if (call.call.starts_with(forbidden.call)) {
        for (const std::string& function : forbidden.does) {
          if (std::find(does.begin(), does.end(), function) == does.end()) {
            does.push_back(function);
          }
        }
      }
    }
    std::string names;
    for (const std::string& function : does) {
      names += (names.empty() ? "" : " and ") + function;
    }
    const std::string detail = call.file + " calls " + call.call +
                               (names.empty() ? "" : ", which does the work of " + names) +
                               ": the lab asks for your own implementation";
    bool covered = false;
    for (TestGrade& test : grade.tests) {
      if (std::find_first_of(test.covers.begin(), test.covers.end(), does.begin(), does.end()) ==
          test.covers.end()) {
        continue;
      }
      covered = true;
      if (test.verdict.disposition != Disposition::rejected) {
        test.earned = 0;
        test.verdict = {Disposition::rejected, detail, {}};
      }
    }
    if (!covered) {
      uncovered.push_back(detail);
    }
  }
  return uncovered;
}

TestGrade grade_test(const GradedTest& test, TestOutcome runner,
                     const std::optional<Verdict>& verdict) {
  TestGrade grade{test.name, test.points, 0, test.hidden, test.covers, test.checks, {}};
  if (!verdict) {
    grade.verdict = {
        Disposition::not_run,
        runner == TestOutcome::missing
            ? std::string("the test runner did not run it")
            : "no verdict file (the test runner: " + std::string(to_string(runner)) + ")",
        {}};
    return grade;
  }
  grade.verdict = *verdict;
  if (verdict->disposition == Disposition::passed && runner != TestOutcome::passed) {
    grade.verdict = {Disposition::failed,
                     "the verdict file says passed but the test runner's exit says " +
                         std::string(to_string(runner)) +
                         " (a verdict file written by the code under test?)",
                     {}};
  }
  grade.earned = grade.verdict.disposition == Disposition::passed ? test.points : 0;
  return grade;
}

void total_lab(LabGrade& lab) {
  lab.earned = 0;
  lab.possible = 0;
  for (const TestGrade& test : lab.tests) {
    lab.earned += test.earned;
    lab.possible += test.points;
  }
}

namespace {

// The lines of a build's output that `pick` chooses, each with the line after it (the source
// line a compiler quotes) unless that one is picked too; at most `max_lines`.
template <typename Pick>
std::vector<std::string> picked_lines(const std::vector<std::string>& all, std::size_t max_lines,
                                      Pick pick) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < all.size() && lines.size() < max_lines; ++i) {
    if (pick(all[i])) {
      lines.push_back(all[i]);
      if (i + 1 < all.size() && lines.size() < max_lines && !pick(all[i + 1]) &&
          !is_build_tool_line(all[i + 1])) {
        lines.push_back(all[++i]);
      }
    }
  }
  return lines;
}

std::vector<std::string> output_lines(std::string_view output) {
  std::vector<std::string> all;
  std::istringstream in{std::string(output)};
  std::string line;
  while (std::getline(in, line)) {
    all.push_back(detail::clean_text(line));
  }
  return all;
}

}  // namespace

std::vector<std::string> compiler_errors(std::string_view output, std::size_t max_lines) {
  const std::vector<std::string> all = output_lines(output);
  std::vector<std::string> lines = picked_lines(all, max_lines, [](std::string_view line) {
    return says_error(line) && !is_build_tool_line(line);
  });
  if (lines.empty()) {
    const std::size_t first = all.size() > max_lines ? all.size() - max_lines : 0;
    lines.assign(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
  }
  return lines;
}

std::vector<std::string> compiler_warnings(std::string_view output, std::size_t max_lines) {
  return picked_lines(output_lines(output), max_lines, says_warning);
}

}  // namespace gpulab
