// The Class panel's data (class_view.hpp).
#include "gpulab/viewer/class_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace gpulab::viewer {
namespace {

std::string students(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " student" : " students");
}

}  // namespace

ClassView class_view(const ClassSummary& summary) {
  ClassView view;
  for (std::size_t b = 0; b < ClassLab{}.histogram.size(); ++b) {
    view.bands.push_back(class_score_band(b));
  }
  const std::size_t missing = summary.students - std::min(summary.graded, summary.students);
  view.heading = std::to_string(summary.graded) + " of " + std::to_string(summary.students) +
                 " submissions graded (" + summary.context.backend + " backend)";
  if (missing > 0) {
    view.heading += "; " + std::to_string(missing) +
                    " not graded (gpulab grade --roster lists them and grades them when run again)";
  }
  if (summary.graded == 0) {
    view.empty_reason = "no submission graded yet";
  }
  for (const ClassLab& lab : summary.labs) {
    ClassLabScores scores{lab.lab, {}, {}, {}};
    for (std::size_t b = 0; b < lab.histogram.size(); ++b) {
      scores.students.push_back(static_cast<double>(lab.histogram[b]));
      scores.tooltips.push_back(lab.lab + ", " + view.bands[b] +
                                " of the points: " + students(lab.histogram[b]));
    }
    scores.summary = lab.lab + ": " + std::to_string(lab.histogram.back()) + " of " +
                     std::to_string(summary.graded) + " at 90% or more, " +
                     std::to_string(lab.histogram.front()) + " below 10%";
    view.labs.push_back(std::move(scores));
  }
  for (const ClassFailure& f : summary.failed_most) {
    const double fraction =
        summary.graded > 0 ? static_cast<double>(f.students) / static_cast<double>(summary.graded)
                           : 0.0;
    view.failed.push_back({f.test, f.students, fraction,
                           std::to_string(f.students) + " of " + std::to_string(summary.graded) +
                               " (" + std::to_string(std::lround(100 * fraction)) + "%)"});
  }
  return view;
}

}  // namespace gpulab::viewer
