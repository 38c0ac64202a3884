// The grade report as JUnit XML (report.hpp's junit_xml), which CI systems read.
#include <cstddef>
#include <sstream>

#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/verdict.hpp"
#include "report_text.hpp"

namespace gpulab {

namespace {

std::string xml_escape(std::string_view in) {
  std::string out;
  for (const char c : detail::clean_text(in)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "&#10;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string junit_xml(const GradeReport& report) {
  // JUnit has three outcomes: a pass, a skip (skipped, not graded) and a failure (the rest).
  const auto is_skip = [](Disposition d) {
    return d == Disposition::skipped || d == Disposition::not_graded;
  };
  struct Counts {
    std::size_t tests = 0;
    std::size_t failures = 0;
    std::size_t skipped = 0;
  };
  const auto count = [&](const LabGrade& lab) {
    Counts counts{lab.tests.size(), 0, 0};
    for (const TestGrade& test : lab.tests) {
      const Disposition d = test.verdict.disposition;
      counts.skipped += is_skip(d) ? 1 : 0;
      counts.failures += d != Disposition::passed && !is_skip(d) ? 1 : 0;
    }
    return counts;
  };
  Counts total;
  for (const LabGrade& lab : report.labs) {
    const Counts counts = count(lab);
    total.tests += counts.tests;
    total.failures += counts.failures;
    total.skipped += counts.skipped;
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpulab grade\" tests=\"" << total.tests << "\" failures=\""
      << total.failures << "\" skipped=\"" << total.skipped << "\">\n";
  for (const LabGrade& lab : report.labs) {
    const Counts counts = count(lab);
    out << "  <testsuite name=\"" << xml_escape(lab.lab) << "\" tests=\"" << counts.tests
        << "\" failures=\"" << counts.failures << "\" skipped=\"" << counts.skipped << "\">\n";
    for (const TestGrade& test : lab.tests) {
      out << "    <testcase classname=\"" << xml_escape(lab.lab) << "\" name=\""
          << xml_escape(test.name) << "\"";
      const Disposition d = test.verdict.disposition;
      if (d == Disposition::passed) {
        out << "/>\n";
        continue;
      }
      const std::string message = xml_escape(detail::test_output(test));
      out << ">\n      ";
      if (is_skip(d)) {
        out << "<skipped message=\"" << message << "\"/>";
      } else {
        out << "<failure type=\"" << to_string(d) << "\" message=\"" << message << "\"/>";
      }
      out << "\n    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  return out.str();
}

}  // namespace gpulab
