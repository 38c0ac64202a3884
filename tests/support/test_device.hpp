// Shared by backend tests: skip (never pass) when this backend has no usable device.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "gpulab/runtime/device_query.hpp"

namespace gpulab::testing {

/// Empty when a device is usable; otherwise why not, for GTEST_SKIP.
inline const std::string& no_device_reason() {
  static const std::string reason = [] {
    const DeviceQuery query = query_devices();
    if (query.usable()) {
      return std::string();
    }
    return "needs a CUDA device: " + query.unavailable->error_name + ": " +
           query.unavailable->reason;
  }();
  return reason;
}

/// What a launch with an impossible configuration (more than 1024 threads per block, a grid or
/// block dimension out of range or 0) fails with. CUDA's documentation names
/// cudaErrorInvalidConfiguration; the CUDA 13.0 runtime returned cudaErrorInvalidValue for every
/// such launch on an H200 (driver 580.159.04, docs/results/h200-sxm-2026-11-26.md), and the sim
/// does as CUDA 13 does.
#if defined(GPULAB_BACKEND_CUDA) && CUDART_VERSION < 13000
inline constexpr cudaError_t kImpossibleLaunchError = cudaErrorInvalidConfiguration;
#else
inline constexpr cudaError_t kImpossibleLaunchError = cudaErrorInvalidValue;
#endif

}  // namespace gpulab::testing

/// Skips the current test with the reason when no device is usable on this backend.
#define GPULAB_REQUIRE_DEVICE()                              \
  do {                                                       \
    if (!::gpulab::testing::no_device_reason().empty()) {    \
      GTEST_SKIP() << ::gpulab::testing::no_device_reason(); \
    }                                                        \
  } while (false)

#if defined(GPULAB_BACKEND_SIM)
namespace gpulab::testing {

/// The sim's modeled clock for one scope (the process otherwise uses GPULAB_SIM_CLOCK, host by
/// default); ok() is false, and the clock unchanged, in a build that cannot count.
class ModeledClock {
 public:
  ModeledClock()
      : previous_(sim::clock_mode()), ok_(sim::set_clock_mode(sim::ClockMode::modeled)) {}
  ~ModeledClock() { sim::set_clock_mode(previous_); }
  ModeledClock(const ModeledClock&) = delete;
  ModeledClock& operator=(const ModeledClock&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  sim::ClockMode previous_;
  bool ok_;
};

}  // namespace gpulab::testing

/// Skips the current test with the reason in a sim build that cannot count memory traffic
/// (counting is compiled out of AddressSanitizer builds, the asan preset).
#define GPULAB_REQUIRE_COUNTING()                                   \
  do {                                                              \
    if (!::gpulab::sim::counting_available()) {                     \
      GTEST_SKIP() << ::gpulab::sim::counting_unavailable_reason(); \
    }                                                               \
  } while (false)

/// Skips the current test in a sim build whose kernels count no arithmetic (compiled without the
/// gpulab_count_ops plugin), or that cannot count at all.
#if defined(GPULAB_SIM_COUNT_OPS)
#define GPULAB_REQUIRE_COUNTED_ARITHMETIC() GPULAB_REQUIRE_COUNTING()
#else
#define GPULAB_REQUIRE_COUNTED_ARITHMETIC() \
  GTEST_SKIP() << "this build's kernels count no arithmetic (no GCC plugin headers)"
#endif
#endif
