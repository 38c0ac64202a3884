// What labs share: the "not implemented" signal of an untouched student stub, and the rule that a
// lab file and its solution differ only inside TODO regions.
//
// A TODO region in a student file:
//
//   // TODO(lab01) BEGIN: time each sample with two CUDA events on `stream` ...
//   gpulab::not_implemented("lab01", "time_kernel");
//   // TODO(lab01) END
//
// The solution file has the same BEGIN and END lines with the completed code between them.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// Thrown by a student stub that has not been filled in yet. The message names the lab, the
/// function and the file and line of the stub.
class NotImplemented : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws NotImplemented: "lab01: time_kernel is not implemented yet (fill in the TODO(lab01)
/// region at labs/lab01_benchmarking/benchmark.cu:42)".
[[noreturn]] void not_implemented(std::string_view lab, std::string_view function,
                                  std::source_location where = std::source_location::current());

/// Compares a lab file with its solution outside the TODO(`lab`) regions. Returns one line per
/// difference ("line 12 of the lab / line 30 of the solution: ..."), empty when the two agree:
/// same text outside the regions, the same number of regions, identical BEGIN and END lines, and
/// every region closed. `lab` is the tag, e.g. "lab01".
[[nodiscard]] std::vector<std::string> compare_outside_todo(std::string_view lab_text,
                                                            std::string_view solution_text,
                                                            std::string_view lab);

}  // namespace gpulab
