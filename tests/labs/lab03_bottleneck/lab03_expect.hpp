// Expectations of the Lab 03 autograder, shared by the public suite (lab03_test.cpp) and the hidden
// one (tests/hidden/lab03_bottleneck). These helpers compute the expected values from the spec
// database's fields and from the formulas, written here independently of the lab, of its solution
// and of the framework's gpulab/core/roofline.hpp; never from the solution or from stored answers:
//   peak             spec.<precision>_tflop_s * 1e12 FLOP/s;  bandwidth  dram_bandwidth_gb_s * 1e9
//   roof time        max(flops / peak, bytes / bandwidth)
//   bound            memory when flops / bytes < peak / bandwidth, else compute; latency when the
//                    slowest component runs below kLatencyFractionOfRoof of its roof and is
//                    shorter than kShortKernelMs (the rule constants are the lab header's)
// Along with them, the checks whose messages say what was expected and what came back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/roofline.hpp"
#include "gpulab/core/specs.hpp"
#include "lab03.hpp"

namespace gpulab::lab03_expect {

// The names both suites use; `using namespace gpulab::lab03_expect;` brings them in with the
// helpers.
namespace lab03 = gpulab::lab03;
using gpulab::GpuSpec;
using gpulab::OpCost;
using gpulab::Precision;
using lab03::BoundKind;
using lab03::OpKind;

// Internal linkage: each suite gets its own copy of every helper, which no definition in lab
// code can replace at link time (the grader's code checks reject one anyway).
namespace {

// The quantities are a few multiplications and divisions of doubles, exact up to rounding, so
// 1e-9 separates a rounding difference (1e-16) from any formula mistake (1e-3 and up).
inline constexpr double kRelTol = 1e-9;

inline constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16,
                                            Precision::bf16};

// ------------------------------------------------------------------------------------------------
// The formulas, written here independently of the lab
// ------------------------------------------------------------------------------------------------

inline GpuSpec spec_named(std::string_view name) {
  const std::optional<GpuSpec> spec = find_spec(name);
  if (!spec) {
    throw std::runtime_error("the spec database has no GPU named \"" + std::string(name) + "\"");
  }
  return *spec;
}

inline std::string precision_name(Precision precision) {
  return std::string(to_string(precision));
}

// Every name lab03.hpp allows a message to give a precision, lowercase: to_string's short name
// and the long ones.
inline std::vector<std::string> precision_names(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return {"fp32", "float32"};
    case Precision::tf32:
      return {"tf32", "tensorfloat-32", "tensorfloat32"};
    case Precision::fp16:
      return {"fp16", "float16"};
    case Precision::bf16:
      return {"bf16", "bfloat16"};
  }
  return {precision_name(precision)};
}

inline double bytes_per_element(Precision precision) {
  return precision == Precision::fp16 || precision == Precision::bf16 ? 2.0 : 4.0;
}

// The spec's peak for the precision in FLOP/s; 0 where it has none.
inline double peak_of(const GpuSpec& spec, Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return spec.fp32_tflop_s * 1e12;
    case Precision::tf32:
      return spec.tf32_tensor_tflop_s * 1e12;
    case Precision::fp16:
      return spec.fp16_tensor_tflop_s * 1e12;
    case Precision::bf16:
      return spec.bf16_tensor_tflop_s * 1e12;
  }
  return 0;
}

inline double bandwidth_of(const GpuSpec& spec) {
  return spec.dram_bandwidth_gb_s * 1e9;
}

// A GEMM of an m x k by a k x n matrix: 2*m*n*k FLOPs; each of the three matrices moved once.
inline OpCost expected_gemm_cost(std::int64_t m, std::int64_t n, std::int64_t k,
                                 Precision precision) {
  const double rows = double(m), cols = double(n), inner = double(k);
  return {2 * rows * cols * inner,
          (rows * inner + inner * cols + rows * cols) * bytes_per_element(precision)};
}

// A GPU of the spec database at a precision it has a peak for, with its two roofs.
struct GpuRoof {
  GpuSpec spec;
  Precision precision = Precision::fp32;
  double peak = 0;       // peak_of(spec, precision), > 0
  double bandwidth = 0;  // bandwidth_of(spec)
};

// The GPUs named, each at every one of `precisions` it has a peak for (the others are passed
// over), in that order.
inline std::vector<GpuRoof> roofs_with_peak(std::span<const std::string_view> names,
                                            std::span<const Precision> precisions) {
  std::vector<GpuRoof> roofs;
  for (const std::string_view name : names) {
    const GpuSpec spec = spec_named(name);
    for (const Precision precision : precisions) {
      const double peak = peak_of(spec, precision);
      if (peak > 0) {
        roofs.push_back({spec, precision, peak, bandwidth_of(spec)});
      }
    }
  }
  return roofs;
}

inline std::vector<GpuRoof> roofs_with_peak(std::span<const std::string_view> names,
                                            std::initializer_list<Precision> precisions) {
  return roofs_with_peak(names, std::span<const Precision>(precisions.begin(), precisions.size()));
}

// max(flops / peak, bytes / bandwidth), in ms.
inline double roof_time_ms(const OpCost& cost, double peak, double bandwidth) {
  return std::max(cost.flops / peak, cost.bytes / bandwidth) * 1e3;
}

inline std::string describe(const OpCost& cost) {
  std::ostringstream text;
  text.precision(12);
  text << "{flops " << cost.flops << ", bytes " << cost.bytes << "}";
  return text.str();
}

inline std::string lower(std::string_view text) {
  std::string result(text);
  std::ranges::transform(result, result.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

inline std::string bound_name(lab03::BoundKind bound) {
  return std::string(lab03::to_string(bound));
}

// ------------------------------------------------------------------------------------------------
// Checks with messages that say what was expected and what came back
// ------------------------------------------------------------------------------------------------

// |got - expected| <= rel * |expected| (so an expected 0 must be exactly 0); NaN fails.
inline ::testing::AssertionResult near_rel(double expected, double got, double rel = kRelTol) {
  const double tolerance = rel * std::fabs(expected);
  if (std::fabs(got - expected) <= tolerance) {
    return ::testing::AssertionSuccess();
  }
  std::ostringstream text;
  text.precision(12);
  text << "expected " << expected << ", got " << got << " (relative tolerance " << rel
       << ", i.e. +-" << tolerance << ")";
  return ::testing::AssertionFailure() << text.str();
}

inline ::testing::AssertionResult same_cost(const OpCost& expected, const OpCost& got) {
  const ::testing::AssertionResult flops = near_rel(expected.flops, got.flops);
  const ::testing::AssertionResult bytes = near_rel(expected.bytes, got.bytes);
  if (flops && bytes) {
    return ::testing::AssertionSuccess();
  }
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << "expected " << describe(expected) << ", got " << describe(got) << ":";
  if (!flops) {
    failure << " flops " << flops.message() << ";";
  }
  if (!bytes) {
    failure << " bytes " << bytes.message() << ";";
  }
  return failure;
}

// Runs `call`; passes only when it throws std::invalid_argument (its message lands in *message).
inline ::testing::AssertionResult throws_invalid_argument(const std::function<void()>& call,
                                                          std::string* message = nullptr) {
  try {
    call();
  } catch (const std::invalid_argument& error) {
    if (message != nullptr) {
      *message = error.what();
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& error) {
    return ::testing::AssertionFailure()
           << "expected std::invalid_argument, got another exception: " << error.what();
  }
  return ::testing::AssertionFailure() << "expected std::invalid_argument, but it returned";
}

// ------------------------------------------------------------------------------------------------
// The bottleneck of a profile
// ------------------------------------------------------------------------------------------------

struct ExpectedBottleneck {
  std::size_t index = 0;
  double share = 0;
  lab03::BoundKind bound = lab03::BoundKind::memory;
};

// The bottleneck by the rules of the lab, derived from the formulas.
inline ExpectedBottleneck derive_bottleneck(const std::vector<lab03::ComponentProfile>& profile,
                                            double peak, double bandwidth) {
  ExpectedBottleneck expected;
  double total_ms = 0;
  for (std::size_t i = 0; i < profile.size(); ++i) {
    total_ms += profile[i].time_ms;
    if (profile[i].time_ms > profile[expected.index].time_ms) {
      expected.index = i;
    }
  }
  const lab03::ComponentProfile& slowest = profile[expected.index];
  expected.share = slowest.time_ms / total_ms;
  const double fraction = roof_time_ms(slowest.cost, peak, bandwidth) / slowest.time_ms;
  if (fraction < lab03::kLatencyFractionOfRoof && slowest.time_ms < lab03::kShortKernelMs) {
    expected.bound = lab03::BoundKind::latency;
  } else {
    expected.bound = slowest.cost.flops / slowest.cost.bytes < peak / bandwidth
                         ? lab03::BoundKind::memory
                         : lab03::BoundKind::compute;
  }
  return expected;
}

// The hand check of a test's premise: the derivation finds `name` the slowest component of
// `profile`, and `bound` its bound.
inline ::testing::AssertionResult derived_as(const std::vector<lab03::ComponentProfile>& profile,
                                             const ExpectedBottleneck& expected,
                                             std::string_view name, BoundKind bound) {
  const lab03::ComponentProfile& slowest = profile[expected.index];
  if (slowest.name == name && expected.bound == bound) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "the derivation finds " << slowest.name << " (" << bound_name(expected.bound)
         << "-bound), the hand check " << name << " (" << bound_name(bound) << "-bound)";
}

// Compares a Bottleneck with the derivation; `context` says which profile it was.
inline void expect_bottleneck(const std::vector<lab03::ComponentProfile>& profile,
                              const ExpectedBottleneck& expected, const lab03::Bottleneck& got,
                              const std::string& context) {
  const lab03::ComponentProfile& component = profile[expected.index];
  EXPECT_EQ(got.index, expected.index) << context << ": the slowest component is " << component.name
                                       << " (" << component.time_ms << " ms)";
  EXPECT_EQ(got.name, component.name) << context;
  EXPECT_TRUE(near_rel(expected.share, got.share))
      << context << ": share of " << component.name << " = its time / the total time";
  EXPECT_EQ(bound_name(got.bound), bound_name(expected.bound))
      << context << ": bound of " << component.name;
  EXPECT_EQ(got.recommendation, lab03::recommendation(component.kind, expected.bound))
      << context << ": the recommendation is the table's entry for ("
      << lab03::to_string(component.kind) << ", " << bound_name(expected.bound) << ")";
}

}  // namespace

}  // namespace gpulab::lab03_expect
