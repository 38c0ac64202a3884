// The numeric policy (gpulab/core/numeric.hpp, docs/grading.md) as tests use it: compare_close
// as a gtest assertion and NaN poisoning of device outputs before a kernel runs. (The tolerance
// of the attention forward pass is kernels::forward_tolerance, in kernels/attention.)
//
//   poison(out);                                     // 0xff bytes: NaN
//   launch(..., nullptr);                            // the legacy default stream
//   EXPECT_TRUE(all_close(expected, out.to_vector(), tolerance, "y"));
//
//   poison_async(stream, out);                       // before a launch on a gpulab::Stream
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string_view>

#include "gpulab/core/numeric.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab::testing {

/// compare_close as a gtest assertion: success, or a failure whose message is compare_close's
/// line, prefixed with `what` (which tensor, which seed) when given.
inline ::testing::AssertionResult all_close(std::span<const float> expected,
                                            std::span<const float> got, const Tolerance& tolerance,
                                            std::string_view what = "",
                                            const TensorShape& shape = {}) {
  const CloseResult result = compare_close(expected, got, tolerance, shape);
  if (result.ok) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << (what.empty() ? "" : ": ") << result.message;
}

/// The same for doubles.
inline ::testing::AssertionResult all_close(std::span<const double> expected,
                                            std::span<const double> got, const Tolerance& tolerance,
                                            std::string_view what = "",
                                            const TensorShape& shape = {}) {
  const CloseResult result = compare_close(expected, got, tolerance, shape);
  if (result.ok) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << (what.empty() ? "" : ": ") << result.message;
}

/// Fills device buffers with 0xff bytes before the kernel under test runs: a NaN for float,
/// double and half (all exponent bits set, nonzero mantissa), so an element the kernel never
/// writes fails compare_close. Integer buffers get their maximum value.
/// Poisoning runs on the legacy default stream (DeviceBuffer::fill_bytes): for kernels launched
/// there (stream nullptr). Use poison_async for a kernel on a gpulab::Stream.
template <class... T>
void poison(DeviceBuffer<T>&... buffers) {
  (buffers.fill_bytes(0xff), ...);
}

/// The same poison enqueued on `stream` (DeviceBuffer::fill_bytes_async), so that a kernel
/// launched on it afterwards runs after the fill. A gpulab::Stream is cudaStreamNonBlocking: it
/// does not wait for the legacy default stream that poison() uses, and the NaN could land after
/// (and over) the kernel's output.
template <class... T>
void poison_async(cudaStream_t stream, DeviceBuffer<T>&... buffers) {
  (buffers.fill_bytes_async(0xff, stream), ...);
}

}  // namespace gpulab::testing
