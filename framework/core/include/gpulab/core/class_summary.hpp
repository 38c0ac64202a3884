// Class summaries: what `gpulab grade --roster` found across a class, for the instructor's next
// lecture and for the viewer's Class panel (`gpulab view <out>/summary.json`).
//
// The file is a results file (context, an empty "results") with a "class_summary" object:
//   students, graded, "labs": one object per lab with "lab" and "histogram" (10 counts: the
//   students who earned 0-9%, 10-19%, ..., 90-100% of its points), and "failed_most": the tests
//   failed by most students, as {"test": "lab03 Suite.Name", "students": N}, most first.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/core/results.hpp"

namespace gpulab {

/// One lab's scores across a class.
struct ClassLab {
  std::string lab;                          ///< the lab id, e.g. "lab03"
  std::array<std::size_t, 10> histogram{};  ///< students per tenth of the points (90-100%: last)

  friend bool operator==(const ClassLab&, const ClassLab&) = default;
};

/// A test and how many students failed it.
struct ClassFailure {
  std::string test;          ///< "LAB Suite.Name"
  std::size_t students = 0;  ///< students who failed it

  friend bool operator==(const ClassFailure&, const ClassFailure&) = default;
};

/// A class graded with `gpulab grade --roster`.
struct ClassSummary {
  ResultsContext context;                 ///< as in a results file (backend: the grading's)
  std::size_t students = 0;               ///< submissions in the roster
  std::size_t graded = 0;                 ///< of them, graded (the histograms count these)
  std::vector<ClassLab> labs;             ///< in the order graded
  std::vector<ClassFailure> failed_most;  ///< most students first

  friend bool operator==(const ClassSummary&, const ClassSummary&) = default;
};

/// What a class summary may hold: labs, tests in failed_most, and bytes of a lab id or test name.
inline constexpr std::size_t kMaxClassLabs = 100;
inline constexpr std::size_t kMaxClassFailures = 1000;
inline constexpr std::size_t kMaxClassName = 300;

/// Whether a document read with load_results_json() is a class summary (has "class_summary").
[[nodiscard]] bool is_class_summary(const nlohmann::json& document);

/// The summary as JSON. Throws ResultsError for what class_summary_from_json rejects.
[[nodiscard]] nlohmann::json to_json(const ClassSummary& summary);

/// Reads a summary; `source` prefixes errors. Throws ResultsError naming the field (e.g.
/// "class_summary.labs[1].histogram[3]") for what a results file's context rejects, a missing
/// class_summary, a count that is not a whole number in [0, 2^53], more graded than students, a
/// histogram that is not 10 counts adding up to graded, a repeated lab id, a lab id or test name
/// that is empty, longer than kMaxClassName bytes, not UTF-8 or holds a control character, more
/// than kMaxClassLabs labs or kMaxClassFailures tests, or a test failed by more students than
/// were graded.
[[nodiscard]] ClassSummary class_summary_from_json(const nlohmann::json& document,
                                                   std::string_view source);

/// The label of band `band` (0 to 9) of a histogram: "0-9%", "10-19%", ..., "90-100%".
[[nodiscard]] std::string class_score_band(std::size_t band);

/// The summary for a person (summary.txt, `gpulab show`): how many were graded, each lab's
/// students per tenth of the points, and the tests failed most often with their counts.
[[nodiscard]] std::string render_class_summary(const ClassSummary& summary);

/// Writes a summary file atomically (as save_results), indented; throws ResultsError.
void save_class_summary(const std::filesystem::path& path, const ClassSummary& summary);

}  // namespace gpulab
