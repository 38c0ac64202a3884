// What the results panels' views (views.cpp, components_view.cpp, roofline_view.cpp,
// sweep_view.cpp, memory_view.cpp, levels_view.cpp) share: reading a result's params and
// metrics. Internal to the model library.
//
// A results file may come from another machine, an older gpulab or a hand edit, so no view
// trusts its content beyond what the loader checked (names, units, finite values): a param that
// is not a number, a missing metric, a zero time or a duplicate only makes the affected point,
// row or op disappear, never an exception or a NaN on screen. These readers give an empty
// optional (or nullptr) for what is missing or malformed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/viewer/views.hpp"

namespace gpulab::viewer::detail {

/// The param's value, or nullptr when the result has none.
[[nodiscard]] const std::string* param(const Result& result, const std::string& key);

/// A whole-string decimal number ("1048576", "1e6"); empty for "abc", "12x", "", "inf".
[[nodiscard]] std::optional<double> parse_number(std::string_view text);

/// A whole-string integer ("256"); empty otherwise.
[[nodiscard]] std::optional<int> parse_int(std::string_view text);

/// The first metric `name` with `provenance` and a finite value; nullptr when there is none.
/// Provenance::measured asks for the run's own figures: measured, or read from the sim's modeled
/// clock (schema 3; the file's clock labels them, as it labels schema 2's, which say "measured").
[[nodiscard]] const Metric* find_metric(const Result& result, std::string_view name,
                                        Provenance provenance);

/// The value of the metric find_metric finds; empty when there is none.
[[nodiscard]] std::optional<double> metric_value(const Result& result, std::string_view name,
                                                 Provenance provenance);

/// A time: only a positive one is usable (a zero time would make every rate infinite).
[[nodiscard]] std::optional<double> time_ms(const Result& result, Provenance provenance);

/// A declared amount of work (FLOPs, bytes): measured or modeled, whichever comes first (the labs
/// write the declared work as measured, the modeled analyses as modeled); never negative.
[[nodiscard]] std::optional<double> work_value(const Result& result, std::string_view name);

/// Decimal GB/s for bytes in time_ms (> 0); empty when it overflows (a denormal time).
[[nodiscard]] std::optional<double> gb_per_s(double bytes, double time_ms);

/// FLOPs of an op: metric flop, else work_gflop x 1e9.
[[nodiscard]] std::optional<double> flops_of(const Result& result);

/// The spec named by the first modeled metric of `results`, else the file's spec.
[[nodiscard]] std::string modeled_spec_of(const std::vector<const Result*>& results,
                                          const ResultsFile& file);

/// "batch=1, seq_len=64": params in their (sorted) map order.
[[nodiscard]] std::string join_params(const std::map<std::string, std::string>& params);

/// The params without `excluded`.
[[nodiscard]] std::map<std::string, std::string> params_without(
    const Result& result, std::initializer_list<std::string_view> excluded);

/// True when the file's measured times are CPU time of the simulation (the sim's host clock).
[[nodiscard]] bool host_clock_times(const ResultsFile& file);

/// A peak for a label: "3350", "1555", "320.5" (up to 6 significant digits, no trailing zeros).
[[nodiscard]] std::string peak_number(double value);

/// Case-insensitive equality for ASCII text.
[[nodiscard]] bool equal_ignoring_case(std::string_view a, std::string_view b);

/// The precision of a result: its param "precision" as parse_precision() reads it ("fp16") or as
/// to_string() writes it ("FP16 tensor", what the labs write); FP32 without the param; empty for
/// a precision gpulab does not know.
[[nodiscard]] std::optional<Precision> precision_of(const Result& result);

/// True when a modeled metric's spec is `spec` (by display name, or by what find_spec makes of it).
[[nodiscard]] bool names_spec(const std::string& metric_spec, const GpuSpec& spec);

}  // namespace gpulab::viewer::detail
