// The grade report as Gradescope's results.json (report.hpp's gradescope_json).
#include <nlohmann/json.hpp>

#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/verdict.hpp"
#include "report_text.hpp"

namespace gpulab {

std::string gradescope_json(const GradeReport& report) {
  using nlohmann::json;
  json tests = json::array();
  for (const LabGrade& lab : report.labs) {
    for (const TestGrade& test : lab.tests) {
      tests.push_back(
          {{"name", lab.lab + " " + test.name},
           {"score", test.earned},
           {"max_score", test.points},
           {"status", test.verdict.disposition == Disposition::passed ? "passed" : "failed"},
           {"output", detail::test_output(test)},
           {"visibility", test.hidden ? "after_published" : "visible"}});
    }
  }
  std::string output = "gpulab grade, " + report.backend +
                       " backend: " + std::to_string(report.earned()) + "/" +
                       std::to_string(report.possible()) + " points\n";
  for (const LabGrade& lab : report.labs) {
    output += lab.lab + " " + lab.title + ": " + std::to_string(lab.earned) + "/" +
              std::to_string(lab.possible) + "\n";
    if (!lab.build_errors.empty()) {
      output += "  did not compile:\n";
      for (const std::string& line : lab.build_errors) {
        output += "    " + line + "\n";
      }
    }
    if (!lab.rejected_for.empty()) {
      output += "  rejected before any test ran:\n";
      for (const std::string& line : lab.rejected_for) {
        output += "    " + line + "\n";
      }
    }
    if (!lab.build_warnings.empty()) {
      output += "  compiler warnings (no points lost):\n";
      for (const std::string& line : lab.build_warnings) {
        output += "    " + line + "\n";
      }
    }
  }
  if (report.integrity.checked && !report.integrity.ok()) {
    output += "integrity failure: the grading tree's instructor files changed; no points given\n";
  }
  for (const std::string& problem : report.problems) {
    output += "problem: " + problem + "\n";
  }
  for (const std::string& file : report.ignored) {
    output += "ignored: " + file + "\n";
  }
  const json doc = {{"score", report.earned()},
                    {"output", detail::clean_text(output)},
                    {"visibility", "visible"},
                    {"stdout_visibility", "hidden"},
                    {"tests", tests}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gpulab
