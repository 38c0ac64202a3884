// Shared by backend tests: skip (never pass) when this backend has no usable device.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "gpulab/core/device.hpp"

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

}  // namespace gpulab::testing

/// Skips the current test with the reason when no device is usable on this backend.
#define GPULAB_REQUIRE_DEVICE()                              \
  do {                                                       \
    if (!::gpulab::testing::no_device_reason().empty()) {    \
      GTEST_SKIP() << ::gpulab::testing::no_device_reason(); \
    }                                                        \
  } while (false)
