// What the grader's code checks share (internal to code_checks*.cpp): lines of text, and the maths
// functions lab code may call.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace gpulab::code_checks_detail {

// The lines of `text`, without their newlines.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) {
      break;
    }
    text.remove_prefix(end + 1);
  }
  return lines;
}

// `text` without the spaces and tabs around it (and a carriage return at its end).
inline std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  const std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// <cmath>'s functions, each also with its float (f) and long double (l) suffix.
inline constexpr std::string_view kMathFunctions[] = {
    "acos",  "acosh",     "asin",      "asinh",      "atan",   "atan2",     "atanh",  "cbrt",
    "ceil",  "copysign",  "cos",       "cosh",       "erf",    "erfc",      "exp",    "exp10",
    "exp2",  "expm1",     "fabs",      "fdim",       "floor",  "fma",       "fmax",   "fmin",
    "fmod",  "frexp",     "hypot",     "ilogb",      "ldexp",  "lgamma",    "llrint", "llround",
    "log",   "log10",     "log1p",     "log2",       "logb",   "lrint",     "lround", "modf",
    "nan",   "nearbyint", "nextafter", "nexttoward", "pow",    "remainder", "remquo", "rint",
    "round", "scalbln",   "scalbn",    "sin",        "sincos", "sinh",      "sqrt",   "tan",
    "tanh",  "tgamma",    "trunc"};

}  // namespace gpulab::code_checks_detail
