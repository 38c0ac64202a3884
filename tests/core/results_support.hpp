// What the results tests share (results_json_test.cpp, results_report_test.cpp): metrics of each
// provenance and a sample file of three results.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "gpulab/core/results.hpp"

namespace gpulab::testing {

inline Metric measured(std::string name, double value) {
  return Metric{std::move(name), value, Provenance::measured, "", ""};
}
inline Metric modeled(std::string name, double value, std::string spec) {
  return Metric{std::move(name), value, Provenance::modeled, std::move(spec), ""};
}
inline Metric unavailable(std::string name, std::string reason) {
  return Metric{std::move(name), std::nullopt, Provenance::unavailable, "", std::move(reason)};
}

inline ResultsFile sample_file() {
  ResultsFile file;
  file.context.gpulab_version = "0.1.0";
  file.context.git_revision = "abc123def456";
  file.context.backend = "sim";
  file.context.device = "sim (16 CPU threads)";
  file.context.spec = "H100 SXM";
  file.context.date = "2026-11-22T10:15:00Z";
  file.context.clock = gpulab::TimingClock::modeled;
  file.results.push_back(Result{"vector_add",
                                {{"n", "1048576"}, {"level", "1"}},
                                {measured("time_ms", 0.812), measured("bandwidth_gb_s", 15.5),
                                 modeled("time_ms", 0.00376, "H100 SXM"),
                                 unavailable("sm_efficiency_percent", "needs CUPTI")}});
  file.results.push_back(Result{"vector_add",
                                {{"n", "16777216"}, {"level", "1"}},
                                {measured("time_ms", 12.25), measured("bandwidth_gb_s", 16.4),
                                 modeled("time_ms", 0.0601, "H100 SXM"),
                                 unavailable("sm_efficiency_percent", "needs CUPTI")}});
  file.results.push_back(Result{"softmax",
                                {{"rows", "4096"}, {"cols", "1024"}},
                                {measured("time_ms", 3.5), measured("bytes", 33554432.0)}});
  return file;
}

}  // namespace gpulab::testing
