// What the views' tests share (views_test.cpp and the *_view_test.cpp beside it): results and
// files made by hand, the test data's files, and a check of hand-computed numbers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/results.hpp"
#include "gpulab/viewer/views.hpp"
#include "test_specs.hpp"

namespace gpulab::viewer::views_test {

inline const std::string kData = GPULAB_VIEWER_TEST_DATA_DIR;

// Every expectation below is a few multiplications and divisions of exact inputs.
inline constexpr double kRel = 1e-12;

inline void expect_close(double got, double expected, const char* what) {
  EXPECT_LE(std::abs(got - expected), std::abs(expected) * kRel + 1e-300)
      << what << ": expected " << expected << ", got " << got;
}

using gpulab::testing::spec;

inline Metric measured(std::string name, double value) {
  return Metric::measured(std::move(name), value);
}

inline Metric modeled(std::string name, double value, std::string spec_name = "H100 SXM") {
  return Metric::modeled(std::move(name), value, std::move(spec_name));
}

inline Metric unavailable(std::string name, std::string reason) {
  return Metric::unavailable(std::move(name), std::move(reason));
}

inline Result result(std::string name, std::map<std::string, std::string> params,
                     std::vector<Metric> metrics) {
  Result r;
  r.name = std::move(name);
  r.params = std::move(params);
  r.metrics = std::move(metrics);
  return r;
}

inline ResultsFile file_of(std::string backend, std::vector<Result> results,
                           std::string spec_name = "H100 SXM") {
  ResultsFile f;
  f.context.gpulab_version = "0.1.0";
  f.context.clock = backend == "sim" ? gpulab::TimingClock::host : gpulab::TimingClock::gpu;
  f.context.backend = std::move(backend);
  f.context.spec = std::move(spec_name);
  f.context.date = "2026-11-22T10:15:00Z";
  f.results = std::move(results);
  return f;
}

inline ResultsFile load(const std::string& name) {
  return load_results(kData + "/" + name);
}

// An attention component with its work and times, as lab02 writes it.
inline Result component(std::string name, std::optional<double> measured_ms,
                        std::optional<double> modeled_ms,
                        std::map<std::string, std::string> shape = {{"seq_len", "64"}}) {
  Result r;
  r.name = "attention_component";
  r.params = std::move(shape);
  r.params["component"] = std::move(name);
  if (measured_ms) {
    r.metrics.push_back(measured("time_ms", *measured_ms));
  }
  if (modeled_ms) {
    r.metrics.push_back(modeled("time_ms", *modeled_ms));
  }
  return r;
}

inline const ComponentsView* view_with_shape(const std::vector<ComponentsView>& views,
                                             const std::string& shape) {
  for (const ComponentsView& v : views) {
    if (v.shape == shape) {
      return &v;
    }
  }
  return nullptr;
}

}  // namespace gpulab::viewer::views_test
