#include "gpulab/grader/verdict.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpulab/core/json_reader.hpp"

#include "xml_text.hpp"

namespace gpulab {

namespace {

constexpr std::array<std::pair<Disposition, std::string_view>, kDispositionCount> kNames{{
    {Disposition::passed, "passed"},
    {Disposition::failed, "failed"},
    {Disposition::timed_out, "timed_out"},
    {Disposition::crashed, "crashed"},
    {Disposition::out_of_memory, "out_of_memory"},
    {Disposition::exited_early, "exited_early"},
    {Disposition::skipped, "skipped"},
    {Disposition::not_graded, "not_graded"},
    {Disposition::build_failed, "build_failed"},
    {Disposition::rejected, "rejected"},
    {Disposition::not_run, "not_run"},
}};

constexpr std::size_t kMaxExcerpt = 16;

int int_attribute(std::string_view tag, std::string_view name) {
  const std::optional<std::string> value = detail::attribute(tag, name);
  int out = 0;
  if (value) {
    std::from_chars(value->data(), value->data() + value->size(), out);
  }
  return out;
}

std::vector<std::string> lines_of(std::string_view text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line) && lines.size() < max_lines) {
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

// The last lines of the output: what a process printed before it hung or crashed.
std::vector<std::string> last_lines(std::string_view text, std::size_t max_lines) {
  std::vector<std::string> all = lines_of(text, static_cast<std::size_t>(-1));
  if (all.size() > max_lines) {
    all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(max_lines));
  }
  return all;
}

}  // namespace

bool is_failure_location(std::string_view line) {
  if (line == "unknown file") {
    return true;
  }
  const std::size_t colon = line.rfind(':');
  return colon != std::string_view::npos && colon > 0 && colon + 1 < line.size() &&
         line.find_first_not_of("0123456789", colon + 1) == std::string_view::npos &&
         line.substr(0, colon).find(' ') == std::string_view::npos;  // a path, not a sentence
}

namespace {

// gtest's own wording in a failure message, around the assertion's operands: not what the test
// says about the failure.
bool is_gtest_wording(std::string_view line) {
  for (const std::string_view prefix :
       {"Expected", "Value of:", "Failed", "The difference between", "Actual:"}) {
    if (line.starts_with(prefix)) {
      return true;
    }
  }
  if (line.find(" evaluates to ") != std::string_view::npos) {
    return true;  // EXPECT_NEAR's operands: "got.median_ms evaluates to 1.5,"
  }
  return line.empty() || line.front() == ' ';  // operands and "Which is:" lines are indented
}

// What the first failure says, in one line: the test's own message (what it streamed into the
// assertion) where it has one, followed by what gtest says actually happened when it says so (an
// exception or boolean assertion's "Actual:" line); without a message that "Actual:" line, else
// the first line after the location. An exception that escaped the test is named by its message.
std::string failure_detail(const std::vector<std::string>& lines) {
  const auto trimmed = [](const std::string& line) {
    return line.substr(std::min(line.find_first_not_of(' '), line.size()));
  };
  // gtest's wording of an exception that escaped the test: its message is the detail.
  constexpr std::string_view prefix = "C++ exception with description \"";
  constexpr std::string_view suffix = "\" thrown in the test body.";
  std::string message;  // the test's own words
  std::string actual;   // gtest's "Actual: ..." line
  std::string first;    // the first line after the location
  bool in_failure = false;
  for (const std::string& line : lines) {
    if (line.starts_with(prefix) && line.ends_with(suffix)) {
      return "exception: " +
             line.substr(prefix.size(), line.size() - prefix.size() - suffix.size());
    }
    if (is_failure_location(line) || line == "Google Test trace:") {
      if (in_failure) {
        break;  // the next failure, or SCOPED_TRACE's lines: the first failure says what failed
      }
      continue;
    }
    in_failure = true;
    if (!is_gtest_wording(line)) {
      message = line;
      break;  // the message ends the failure
    }
    if (trimmed(line).starts_with("Actual:")) {
      actual = trimmed(line);
    } else if (first.empty()) {
      first = trimmed(line);
    }
  }
  // "must throw for a NaN sample: it throws nothing.", "y: false (index 3 ...)"
  if (!message.empty()) {
    return actual.empty() ? message : message + ": " + trimmed(actual.substr(7));
  }
  std::string detail = actual.empty() ? first : actual;
  if (detail.starts_with("Value of:")) {
    detail.clear();
  }
  return detail;
}

// The failures' lines worth showing: each failure in full while they fit in kMaxExcerpt lines (the
// first always, cut to fit); each later one in one line, what it says (failure_detail), up to
// kMaxSummaries of them; then how many more there were. So a test that fails on many shapes names
// each (its message says which) or counts them.
std::vector<std::string> failures_excerpt(const std::vector<std::string>& failures) {
  constexpr std::size_t kMaxSummaries = 8;
  std::vector<std::string> excerpt;
  std::size_t next = 0;
  for (; next < failures.size(); ++next) {
    std::vector<std::string> lines = lines_of(failures[next], kMaxExcerpt);
    if (next > 0 && excerpt.size() + lines.size() > kMaxExcerpt) {
      break;
    }
    excerpt.insert(excerpt.end(), lines.begin(), lines.end());
  }
  for (std::size_t summaries = 0; next < failures.size() && summaries < kMaxSummaries;
       ++next, ++summaries) {
    const std::string detail = failure_detail(lines_of(failures[next], kMaxExcerpt));
    excerpt.push_back("also failed: " + (detail.empty() ? "(no message)" : detail));
  }
  if (next < failures.size()) {
    const std::size_t more = failures.size() - next;
    excerpt.push_back("and " + std::to_string(more) + " more failure" + (more == 1 ? "" : "s") +
                      " (" + std::to_string(failures.size()) + " in all)");
  }
  return excerpt;
}

// A skip's reason as gtest writes it into the result file: "path/to/file.cpp:12\n<reason>"; the
// reason alone.
std::string skip_reason(const std::string& message) {
  const std::size_t newline = message.find('\n');
  if (newline != std::string::npos &&
      is_failure_location(std::string_view(message).substr(0, newline))) {
    return message.substr(newline + 1);
  }
  return message;
}

bool mentions_out_of_memory(std::string_view text) {
  for (const std::string_view needle :
       {"cudaErrorMemoryAllocation", "std::bad_alloc", "CUBLAS_STATUS_ALLOC_FAILED"}) {
    if (text.find(needle) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view to_string(Disposition disposition) noexcept {
  for (const auto& [value, name] : kNames) {
    if (value == disposition) {
      return name;
    }
  }
  return "?";
}

std::string display_name(Disposition disposition) {
  std::string name(to_string(disposition));
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

std::optional<Disposition> parse_disposition(std::string_view name) noexcept {
  for (const auto& [value, text] : kNames) {
    if (text == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::optional<std::string> sticky_cuda_error(std::string_view text) {
  // The errors after which the CUDA context is unusable (CUDA Runtime API, cudaError enum:
  // "the process must be terminated and relaunched").
  for (const std::string_view name :
       {"cudaErrorIllegalAddress", "cudaErrorLaunchFailure", "cudaErrorMisalignedAddress",
        "cudaErrorInvalidAddressSpace", "cudaErrorInvalidPc", "cudaErrorIllegalInstruction",
        "cudaErrorHardwareStackError", "cudaErrorAssert", "cudaErrorLaunchTimeout",
        "cudaErrorECCUncorrectable"}) {
    if (text.find(name) != std::string_view::npos) {
      return std::string(name);
    }
  }
  return std::nullopt;
}

std::optional<std::string> sim_kernel_diagnosis(std::string_view text) {
  constexpr std::string_view kPrefix = "gpulab sim: ";
  constexpr std::size_t kMaxChars = 600;
  for (std::size_t at = text.find(kPrefix); at != std::string_view::npos;
       at = text.find(kPrefix, at + 1)) {
    if ((at == 0 || text[at - 1] == '\n') &&
        text.substr(at + kPrefix.size()).starts_with("kernel ")) {
      std::string_view line = text.substr(at + kPrefix.size());
      // To the end of its line, or to a double quote: gtest quotes an exception's message
      // ("C++ exception with description \"...\" thrown in the test body.").
      line = line.substr(0, line.find_first_of("\n\""));
      return line.size() <= kMaxChars ? std::string(line)
                                      : std::string(line.substr(0, kMaxChars)) + "...";
    }
  }
  return std::nullopt;
}

GtestReport parse_gtest_xml(std::string_view xml) {
  const std::size_t root = xml.find("<testsuites");
  if (root == std::string_view::npos) {
    throw std::runtime_error("not a gtest result file (no <testsuites> element)");
  }
  if (xml.find("</testsuites>") == std::string_view::npos) {
    throw std::runtime_error("truncated gtest result file (no </testsuites>)");
  }
  GtestReport report;
  const std::string_view root_tag = xml.substr(root, xml.find('>', root) - root);
  report.tests = int_attribute(root_tag, "tests");
  report.failures = int_attribute(root_tag, "failures");
  report.errors = int_attribute(root_tag, "errors");
  std::size_t pos = root;
  while ((pos = xml.find("<testcase", pos)) != std::string_view::npos) {
    const std::size_t tag_end = xml.find('>', pos);
    if (tag_end == std::string_view::npos) {
      throw std::runtime_error("truncated gtest result file");
    }
    const std::string_view tag = xml.substr(pos, tag_end - pos);
    const std::optional<std::string> name = detail::attribute(tag, "name");
    const std::optional<std::string> suite = detail::attribute(tag, "classname");
    const std::optional<std::string> status = detail::attribute(tag, "status");
    if (!name || !suite || !status) {
      throw std::runtime_error("gtest result file: a <testcase> without name, classname or status");
    }
    GtestCase entry{*suite + "." + *name,
                    *status,
                    detail::attribute(tag, "result").value_or(""),
                    {},
                    std::nullopt};
    std::size_t end = xml.find("<testcase", tag_end);
    const std::string_view body =
        tag.ends_with("/")
            ? std::string_view{}
            : xml.substr(tag_end,
                         end == std::string_view::npos ? std::string_view::npos : end - tag_end);
    for (std::size_t at = 0; (at = body.find("<failure", at)) != std::string_view::npos; ++at) {
      const std::string_view failure = body.substr(at, body.find('>', at) - at);
      entry.failures.push_back(detail::attribute(failure, "message").value_or("(no message)"));
    }
    if (const std::size_t at = body.find("<skipped"); at != std::string_view::npos) {
      entry.skipped =
          detail::attribute(body.substr(at, body.find('>', at) - at), "message").value_or("");
    }
    report.cases.push_back(std::move(entry));
    pos = tag_end;
  }
  return report;
}

Verdict judge_test(const TestEvidence& evidence) {
  if (!evidence.started) {
    return {Disposition::not_run, evidence.start_error, {}};
  }
  if (evidence.timed_out) {
    std::ostringstream detail;
    detail << "killed after " << evidence.timeout_s
           << " s, with every process it started (an endless loop in a kernel or in host code?)";
    return {Disposition::timed_out, detail.str(), last_lines(evidence.output, 4)};
  }
  if (evidence.signal) {
    if (mentions_out_of_memory(evidence.output)) {
      return {Disposition::out_of_memory,
              "killed by " + evidence.signal_name +
                  " after running "
                  "out of memory",
              last_lines(evidence.output, 4)};
    }
    return {Disposition::crashed, "killed by " + evidence.signal_name,
            last_lines(evidence.output, 4)};
  }

  std::optional<GtestReport> report;
  std::string xml_problem;
  if (evidence.xml) {
    try {
      report = parse_gtest_xml(*evidence.xml);
    } catch (const std::exception& e) {
      xml_problem = e.what();
    }
  } else {
    xml_problem = "no result file was written";
  }
  const GtestCase* found = nullptr;
  if (report) {
    for (const GtestCase& c : report->cases) {
      if (c.name == evidence.test) {
        found = &c;
      }
    }
    if (found == nullptr) {
      xml_problem = "the result file does not report " + evidence.test;
    } else if (report->cases.size() != 1 || report->tests != 1) {
      xml_problem = "the result file reports " + std::to_string(report->tests) +
                    " tests, not exactly " + evidence.test;
    }
  }
  const int code = evidence.exit_code.value_or(-1);

  if (evidence.premature_exit) {
    return {Disposition::exited_early,
            "the test process exited with status " + std::to_string(code) +
                " before the test finished (exit() or _exit() in the code under test?)",
            last_lines(evidence.output, 4)};
  }
  if (code == 0) {
    if (!xml_problem.empty()) {
      return {Disposition::exited_early,
              "exit status 0, but " + xml_problem + ": no evidence the test ran to completion",
              last_lines(evidence.output, 4)};
    }
    const bool clean =
        found->status == "run" && (found->result.empty() || found->result == "completed") &&
        found->failures.empty() && !found->skipped && report->failures == 0 && report->errors == 0;
    if (clean) {
      return {Disposition::passed, "", {}};
    }
    return {Disposition::failed,
            "exit status 0, but the result file does not report a pass (status " + found->status +
                ", result " + found->result + ")",
            {}};
  }
  if (code == 77) {
    std::string reason = found != nullptr && found->skipped ? skip_reason(*found->skipped) : "";
    if (reason.empty()) {
      reason = "no reason given";
    }
    if (reason.starts_with("needs a CUDA device")) {
      return {Disposition::not_graded, reason, {}};
    }
    return {Disposition::skipped, reason, {}};
  }

  // A failure. Its description comes from the result file when there is one, else the output.
  std::vector<std::string> excerpt;
  std::string text;
  if (found != nullptr && !found->failures.empty()) {
    for (const std::string& failure : found->failures) {
      text += failure + "\n";
    }
    excerpt = failures_excerpt(found->failures);
  } else {
    text = evidence.output;
    excerpt = last_lines(evidence.output, 6);
  }
  if (const std::optional<std::string> sticky = sticky_cuda_error(text)) {
    // What went wrong in the kernel first, where the sim said it (its exception's message, else
    // its output).
    std::optional<std::string> why = sim_kernel_diagnosis(text);
    if (!why) {
      why = sim_kernel_diagnosis(evidence.output);
    }
    return {Disposition::crashed,
            (why ? *why + "; " : "") + "CUDA error " + *sticky + " (the CUDA context is lost)",
            std::move(excerpt)};
  }
  if (mentions_out_of_memory(text)) {
    return {Disposition::out_of_memory, "ran out of memory", std::move(excerpt)};
  }
  std::string detail;
  if (found == nullptr) {
    detail = "exit status " + std::to_string(code) + "; " + xml_problem;
  } else if (found->failures.empty()) {
    detail = "exit status " + std::to_string(code) + ", but the result file reports no failure";
  } else {
    detail = failure_detail(excerpt);
  }
  return {Disposition::failed, detail, std::move(excerpt)};
}

std::string verdict_to_json(const std::string& test, const Verdict& verdict, double duration_s) {
  const nlohmann::json doc = {{"schema_version", 1},
                              {"test", test},
                              {"disposition", to_string(verdict.disposition)},
                              {"detail", verdict.detail},
                              {"excerpt", verdict.excerpt},
                              {"duration_s", duration_s}};
  // Invalid UTF-8 from the code under test is replaced, never a reason to lose the verdict.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Verdict parse_verdict_json(std::string_view text, std::string_view source) {
  const auto fail = [&](const std::string& what) -> Verdict {
    throw std::runtime_error(std::string(source) + ": " + what);
  };
  nlohmann::json doc = parse_json(text, source);  // JsonError: "SOURCE:LINE:COLUMN: ..."
  if (!doc.is_object() || !doc.contains("schema_version") ||
      !doc["schema_version"].is_number_integer() || doc["schema_version"] != 1) {
    return fail("not a verdict file of schema_version 1");
  }
  if (!doc.contains("disposition") || !doc["disposition"].is_string()) {
    return fail("missing \"disposition\"");
  }
  const std::optional<Disposition> disposition =
      parse_disposition(doc["disposition"].get<std::string>());
  if (!disposition) {
    return fail("unknown disposition \"" + doc["disposition"].get<std::string>() + "\"");
  }
  Verdict verdict{*disposition, {}, {}};
  if (doc.contains("detail") && doc["detail"].is_string()) {
    verdict.detail = doc["detail"].get<std::string>();
  }
  if (doc.contains("excerpt") && doc["excerpt"].is_array()) {
    for (const auto& line : doc["excerpt"]) {
      if (line.is_string()) {
        verdict.excerpt.push_back(line.get<std::string>());
      }
    }
  }
  return verdict;
}

}  // namespace gpulab
