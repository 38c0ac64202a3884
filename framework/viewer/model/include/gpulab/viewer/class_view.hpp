// What the Class panel shows, derived from a class summary (gpulab/core/class_summary.hpp) as
// plain data: each lab's students per tenth of its points, and the tests failed by most students
// with their share of the class. Like views.hpp, it takes whatever a loaded summary holds and
// never throws.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/core/class_summary.hpp"

namespace gpulab::viewer {

/// One lab's scores: students per score band.
struct ClassLabScores {
  std::string lab;                    ///< "lab03"
  std::vector<double> students;       ///< per band of ClassView::bands, lowest first
  std::vector<std::string> tooltips;  ///< per band: "lab03, 90-100% of the points: 12 students"
  std::string summary;                ///< "lab03: 12 of 48 at 90% or more, 9 below 10%"
};

/// A test failed by many students.
struct ClassFailedTest {
  std::string test;          ///< "lab03 Lab03Roofline.RidgePointIsPeakOverBandwidth"
  std::size_t students = 0;  ///< who failed it
  double fraction = 0;       ///< of the graded students, 0 to 1
  std::string share;         ///< "12 of 48 (25%)"
};

/// A class summary laid out for the panel.
struct ClassView {
  std::string heading;                  ///< "48 of 50 submissions graded (sim backend); ..."
  std::vector<std::string> bands;       ///< "0-9%", "10-19%", ..., "90-100%"
  std::vector<ClassLabScores> labs;     ///< in the order graded
  std::vector<ClassFailedTest> failed;  ///< most students first
  std::string empty_reason;             ///< set when no submission is graded
};

/// The view of `summary`.
[[nodiscard]] ClassView class_view(const ClassSummary& summary);

}  // namespace gpulab::viewer
