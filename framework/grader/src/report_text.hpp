// Text from the code under test as the grade reports carry it (report_json.cpp,
// report_gradescope.cpp, report_junit.cpp) and grades.cpp's compiler excerpts: internal.
#pragma once

#include <string>
#include <string_view>

#include "gpulab/grader/grades.hpp"

namespace gpulab::detail {

/// `in`, safe for JSON and XML: invalid UTF-8, U+FFFE, U+FFFF and control characters other than
/// newline and tab become '?'.
[[nodiscard]] std::string clean_text(std::string_view in);

/// What a student reads about one test: its disposition, detail and failure lines, cleaned.
[[nodiscard]] std::string test_output(const TestGrade& test);

}  // namespace gpulab::detail
