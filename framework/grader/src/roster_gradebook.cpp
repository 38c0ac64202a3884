// A roster's class files (roster.hpp): each student's grade read back from its grade.json, the
// gradebook CSV, the class summary and similarity.txt.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/core/class_summary.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/roster.hpp"
#include "gpulab/grader/similarity.hpp"
#include "roster_run.hpp"

namespace gpulab {

namespace {

std::string csv_field(const std::string& value) {
  std::string text = value;
  if (!text.empty() && std::string("=+-@").find(text.front()) != std::string::npos) {
    text.insert(text.begin(), '\'');  // never a formula in a spreadsheet
  }
  if (text.find_first_of(",\"\n\r") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

}  // namespace

namespace detail {

using nlohmann::json;

std::optional<StudentGrade> read_grade(const std::string& student, const fs::path& dir) {
  const std::optional<std::string> text = read_file(dir / "grade.json");
  if (!text) {
    return std::nullopt;
  }
  try {
    const json doc = json::parse(*text);
    StudentGrade grade;
    grade.row.student = student;
    grade.row.status = "graded";
    for (const json& lab : doc.at("labs")) {
      const std::string id = lab.at("lab").get<std::string>();
      grade.row.earned[id] = lab.at("earned").get<int>();
      grade.row.possible[id] = lab.at("possible").get<int>();
      for (const json& test : lab.at("tests")) {
        if (test.at("disposition").get<std::string>() != "passed") {
          grade.failed.push_back(id + " " + test.at("name").get<std::string>());
        }
      }
    }
    grade.problems = doc.at("problems").get<std::vector<std::string>>();
    return grade;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

void Roster::write_class_files() const {
  std::vector<GradebookRow> rows;
  ClassSummary summary;
  summary.context = make_context(backend_, "", "");
  summary.students = submissions_.size();
  for (const std::string& lab : labs_) {
    summary.labs.push_back({lab, {}});
  }
  std::map<std::string, std::size_t> failures;  // by "lab test": students who failed it
  for (const RosterSubmission& s : submissions_) {
    const fs::path dir = out_ / folder_name_for(s.student);
    std::optional<StudentGrade> grade;
    if (read_file(dir / "stamp") == stamps_.at(s.student)) {
      grade = read_grade(s.student, dir);
    }
    if (!grade) {
      rows.push_back({s.student, {}, {}, "not graded"});
      continue;
    }
    ++summary.graded;
    for (ClassLab& lab : summary.labs) {
      const int possible = std::max(1, grade->row.possible[lab.lab]);
      lab.histogram[static_cast<std::size_t>(
          std::clamp(10 * grade->row.earned[lab.lab] / possible, 0, 9))]++;
    }
    for (const std::string& test : grade->failed) {
      ++failures[test];
    }
    rows.push_back(std::move(grade->row));
  }
  write_file_atomically(out_ / "gradebook.csv", gradebook_csv(labs_, rows));

  for (const auto& [test, students] : failures) {
    summary.failed_most.push_back({test, students});
  }
  // Most students first, then by test (the map's order): a total order, so no stable sort is
  // needed (libstdc++ 12's stable_sort trips clang 19's deprecation warnings).
  std::ranges::sort(summary.failed_most, [](const ClassFailure& a, const ClassFailure& b) {
    return a.students != b.students ? a.students > b.students : a.test < b.test;
  });
  summary.failed_most.resize(std::min<std::size_t>(summary.failed_most.size(), 15));
  save_class_summary(out_ / "summary.json", summary);
  const std::string text = render_class_summary(summary);
  write_file_atomically(out_ / "summary.txt", text);
  // Submissions that look alike, for the instructor to read (similarity.hpp).
  std::vector<std::pair<std::string, fs::path>> students;
  for (const RosterSubmission& s : submissions_) {
    students.emplace_back(s.student, s.folder);
  }
  write_file_atomically(out_ / "similarity.txt",
                        class_similarity_report(students, lab_entries_, manifest_.source_dir));
  std::cout << "\n"
            << text << "\ngradebook: " << (out_ / "gradebook.csv").string()
            << "; each student's reports in " << out_.string() << "/<student>/"
            << "; submissions that look alike (to read, never a grade): "
            << (out_ / "similarity.txt").string() << std::endl;
}

}  // namespace detail

std::string gradebook_csv(const std::vector<std::string>& labs,
                          const std::vector<GradebookRow>& rows) {
  std::string csv = "student";
  for (const std::string& lab : labs) {
    csv += "," + lab;
  }
  csv += ",total,possible,status\n";
  for (const GradebookRow& row : rows) {
    csv += csv_field(row.student);
    int total = 0;
    int possible = 0;
    for (const std::string& lab : labs) {
      const auto earned = row.earned.find(lab);
      csv += "," + (earned != row.earned.end() ? std::to_string(earned->second) : std::string());
      total += earned != row.earned.end() ? earned->second : 0;
      const auto of = row.possible.find(lab);
      possible += of != row.possible.end() ? of->second : 0;
    }
    const bool graded = !row.earned.empty();
    csv += "," + (graded ? std::to_string(total) : std::string()) + "," +
           (graded ? std::to_string(possible) : std::string()) + "," + csv_field(row.status) + "\n";
  }
  return csv;
}

}  // namespace gpulab
