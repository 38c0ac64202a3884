// Unit tests of gpulab/labkit/modeled_bound.hpp: the launch of some work that the time model gives
// the most time, as the lab reports' "modeled bound" columns show it. Sim only.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/traffic_model.hpp"
#include "gpulab/kernels/vector_add.hpp"
#include "gpulab/labkit/modeled_bound.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "gpulab/sim/runtime.hpp"
#include "test_device.hpp"

namespace {

using gpulab::labkit::longest_modeled_launch;

TEST(LongestModeledLaunch, IsTheLaunchTheTimeModelGivesTheMostTime) {
  GPULAB_REQUIRE_COUNTING();
  const gpulab::GpuSpec spec = gpulab::default_spec();
  const std::size_t n = std::size_t{1} << 20;
  gpulab::DeviceBuffer<float> a(n);
  gpulab::DeviceBuffer<float> b(n);
  gpulab::DeviceBuffer<float> c(n);
  const gpulab::Stream stream;
  // A small add, then a large one: the second is the longest, and its DRAM traffic is counted
  // with the first's.
  const auto work = [&] {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2(stream.get()));  // each run from DRAM
    gpulab::kernels::vector_add(a.data(), b.data(), c.data(), 1024, stream.get());
    gpulab::kernels::vector_add(a.data(), b.data(), c.data(), n, stream.get());
    stream.synchronize();
  };
  const auto launches = gpulab::sim::count_launches(work);
  ASSERT_EQ(launches.size(), 2u);
  const gpulab::ModeledTime large = gpulab::model_launch(launches[1], spec);
  const auto longest = longest_modeled_launch(work, spec);
  ASSERT_TRUE(longest.has_value());
  EXPECT_EQ(longest->kernel, launches[1].kernel);
  EXPECT_EQ(longest->bound, std::string(gpulab::to_string(large.bound)));
  EXPECT_DOUBLE_EQ(longest->time_s, large.time_s);
  EXPECT_GE(longest->dram_bytes, static_cast<double>(launches[1].counters.dram_bytes_read));
  EXPECT_EQ(longest->bound, "DRAM bandwidth") << "a 4 MB vector add streams from DRAM";
}

TEST(LongestModeledLaunch, NothingLaunchedIsNoBoundButTheWorkRan) {
  GPULAB_REQUIRE_COUNTING();
  bool ran = false;
  EXPECT_FALSE(longest_modeled_launch([&] { ran = true; }, gpulab::default_spec()).has_value());
  EXPECT_TRUE(ran);
}

}  // namespace
