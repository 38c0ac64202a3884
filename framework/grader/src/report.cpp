// A grading's totals (report.hpp); its files are report_json.cpp, report_gradescope.cpp and
// report_junit.cpp.
#include "gpulab/grader/report.hpp"

namespace gpulab {

int GradeReport::earned() const {
  int sum = 0;
  for (const LabGrade& lab : labs) {
    sum += lab.earned;
  }
  return sum;
}

int GradeReport::possible() const {
  int sum = 0;
  for (const LabGrade& lab : labs) {
    sum += lab.possible;
  }
  return sum;
}

}  // namespace gpulab
