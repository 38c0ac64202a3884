// spin_kernel (kernels/timing/): a kernel of known duration, on both backends. Timed with CUDA
// events as a benchmark harness would time it: the measurement must never be shorter than the
// requested duration (the point of a known-duration kernel); the upper bound is generous, since
// launch latency and, on sim, a busy host add time.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/spin.hpp"
#include "gpulab/runtime/stream.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {
namespace {

class SpinKernel : public ::testing::TestWithParam<double> {};

TEST_P(SpinKernel, EventTimeIsAtLeastTheRequestedDuration) {
  GPULAB_REQUIRE_DEVICE();
  const double ms = GetParam();
  Stream stream;
  Event start, stop;
  spin_kernel(0.0, stream);  // warm-up: the first launch of a kernel pays for loading its module
  stream.synchronize();
  start.record(stream);
  spin_kernel(ms, stream);
  stop.record(stream);
  stop.synchronize();
  const double elapsed_ms = static_cast<double>(Event::elapsed_ms(start, stop));
  EXPECT_GE(elapsed_ms, ms);
#if defined(GPULAB_BACKEND_SIM)
  // The sim's kernel runs on a CPU thread that other tests running in parallel can take the
  // core from: the overshoot bounds the scheduler, not the kernel, so it is only loosely bound.
  EXPECT_LE(elapsed_ms, ms * 1.5 + 100.0);
#else
  EXPECT_LE(elapsed_ms, ms * 1.5 + 1.0);
#endif
}

std::string milliseconds_name(const ::testing::TestParamInfo<double>& info) {
  return std::to_string(static_cast<int>(info.param)) + "ms";
}

INSTANTIATE_TEST_SUITE_P(Milliseconds, SpinKernel, ::testing::Values(5.0, 20.0), milliseconds_name);

TEST(SpinKernelZero, ReturnsWithoutWaiting) {
  GPULAB_REQUIRE_DEVICE();
  Stream stream;
  Event start, stop;
  spin_kernel(0.0, stream);
  stream.synchronize();
  start.record(stream);
  spin_kernel(0.0, stream);
  stop.record(stream);
  stop.synchronize();
#if defined(GPULAB_BACKEND_SIM)
  // As above: on sim the bound is the host scheduler's, which parallel tests load (6.7 ms once in
  // a CI run); a kernel that spun for real would still take far longer than a zero-length one.
  EXPECT_LE(Event::elapsed_ms(start, stop), 100.0);
#else
  EXPECT_LE(Event::elapsed_ms(start, stop), 5.0);  // launch latency only
#endif
}

TEST(SpinKernelArguments, NegativeNonFiniteAndOverlongDurationsThrow) {
  for (const double ms : {-1.0, -1e-9, std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(), kMaxSpinMilliseconds * 2}) {
    SCOPED_TRACE("ms = " + std::to_string(ms));
    EXPECT_THROW(spin_kernel(ms, nullptr), std::invalid_argument);
  }
}

}  // namespace
}  // namespace gpulab::kernels
