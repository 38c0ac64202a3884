// The grade report as JSON (report.hpp's report_json): every field of the grading, for scripts
// and the class loop.
#include <nlohmann/json.hpp>

#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/verdict.hpp"

namespace gpulab {

std::string report_json(const GradeReport& report) {
  using nlohmann::json;
  json labs = json::array();
  for (const LabGrade& lab : report.labs) {
    json tests = json::array();
    for (const TestGrade& test : lab.tests) {
      tests.push_back({{"name", test.name},
                       {"points", test.points},
                       {"earned", test.earned},
                       {"hidden", test.hidden},
                       {"covers", test.covers},
                       {"checks", test.checks},
                       {"disposition", to_string(test.verdict.disposition)},
                       {"detail", test.verdict.detail},
                       {"excerpt", test.verdict.excerpt}});
    }
    labs.push_back({{"lab", lab.lab},
                    {"title", lab.title},
                    {"earned", lab.earned},
                    {"possible", lab.possible},
                    {"program", lab.program},
                    {"build_errors", lab.build_errors},
                    {"build_warnings", lab.build_warnings},
                    {"rejected_for", lab.rejected_for},
                    {"defined_at", lab.defined_at},
                    {"tests", tests}});
  }
  const json integrity = {{"checked", report.integrity.checked},
                          {"ok", report.integrity.ok()},
                          {"changed", report.integrity.changed},
                          {"missing", report.integrity.missing},
                          {"added", report.integrity.added}};
  const json doc = {{"schema_version", 2},
                    {"gpulab_version", report.gpulab_version},
                    {"date", report.date},
                    {"submission", report.submission},
                    {"backend", report.backend},
                    {"sandbox", report.sandbox},
                    {"lockdown", report.lockdown},
                    {"earned", report.earned()},
                    {"possible", report.possible()},
                    {"integrity", integrity},
                    {"ignored", report.ignored},
                    {"problems", report.problems},
                    {"labs", labs}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gpulab
