// The figures the sim gives a kernel: the registers and static shared memory ptxas reported for
// it, found by the launched function's own name (template arguments resolved at the launch) or,
// where only its address is known (cudaFuncGetAttributes, a launch through a pointer), by its
// symbol, in the kernel table of kernel_figures_kernels.cu, which this test program links as a
// lab's programs link their student files' tables (gpulab_add_program_kernel_table in
// cmake/GpulabKernelTable.cmake). Sim only.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/sim/launch.hpp"
#include "gpulab/sim/runtime.hpp"
#include "kernel_figures_kernels.hpp"
#include "test_device.hpp"

namespace {

// The registers and static shared memory the modeled clock recorded for the one launch `launch`
// makes.
template <class Launch>
gpulab::CountedLaunch count_one(Launch launch) {
  const std::vector<gpulab::CountedLaunch> launches = gpulab::sim::count_launches(launch);
  EXPECT_EQ(launches.size(), 1u);
  return launches.empty() ? gpulab::CountedLaunch{} : launches.front();
}

// ptxas's entry for `function` in the kernels' file, for the device's architecture.
std::optional<gpulab::KernelTableEntry> own_entry(std::string_view function) {
  cudaDeviceProp properties{};
  GPULAB_CHECK(cudaGetDeviceProperties(&properties, 0));
  return gpulab::find_launched_kernel(function, gpulab::testing::figures_kernels_file(),
                                      properties.major, properties.minor);
}

TEST(KernelFigures, FunctionNameInReadsGccAndClangSpellings) {
  using gpulab::sim::detail::function_name_in;
  static_assert(function_name_in("constexpr std::string_view f() [with Tag = T; auto F = "
                                 "ns::{anonymous}::k<2, float>; std::string_view = x]") ==
                "ns::{anonymous}::k<2, float>");
  static_assert(function_name_in("std::string_view f() [Tag = T, F = &ns::k<2>]") == "ns::k<2>");
  static_assert(function_name_in("no template argument here").empty());
  // Each compiler's own spelling of the anonymous namespace (the kernel table reads both).
#if defined(__clang__)
  EXPECT_EQ(gpulab::testing::plain_kernel_function_name(), "(anonymous namespace)::plain_kernel");
#else
  EXPECT_EQ(gpulab::testing::plain_kernel_function_name(), "{anonymous}::plain_kernel");
#endif
}

TEST(KernelFigures, ATemplateKernelGetsItsOwnInstantiationsFigures) {
  GPULAB_REQUIRE_COUNTING();
  const auto one = own_entry("{anonymous}::tile_kernel<1>");
  const auto four = own_entry("{anonymous}::tile_kernel<4>");
  if (!one || !four) {
    GTEST_SKIP() << "this build has no ptxas figures for this file: "
                 << gpulab::kernel_table_status();
  }
  EXPECT_EQ(one->static_shared_bytes, 1u * 32 * sizeof(float));
  EXPECT_EQ(four->static_shared_bytes, 4u * 32 * sizeof(float));

  gpulab::DeviceBuffer<float> out(32);
  const gpulab::CountedLaunch launched_one =
      count_one([&] { gpulab::testing::launch_tile_kernel(1, out.data()); });
  const gpulab::CountedLaunch launched_four =
      count_one([&] { gpulab::testing::launch_tile_kernel(4, out.data()); });
  EXPECT_EQ(launched_one.registers_per_thread, one->registers);
  EXPECT_EQ(launched_one.static_shared_bytes, one->static_shared_bytes);
  EXPECT_EQ(launched_four.registers_per_thread, four->registers);
  EXPECT_EQ(launched_four.static_shared_bytes, four->static_shared_bytes);
}

TEST(KernelFigures, AKernelLaunchedByNameOrThroughAPointerHasItsFigures) {
  GPULAB_REQUIRE_COUNTING();
  const auto entry = own_entry("plain_kernel");
  if (!entry) {
    GTEST_SKIP() << "this build has no ptxas figures for this file: "
                 << gpulab::kernel_table_status();
  }
  EXPECT_EQ(entry->static_shared_bytes, 64u * sizeof(float));
  gpulab::DeviceBuffer<float> out(32);
  const gpulab::CountedLaunch direct =
      count_one([&] { gpulab::testing::launch_plain_kernel(out.data()); });
  EXPECT_EQ(direct.registers_per_thread, entry->registers);
  EXPECT_EQ(direct.static_shared_bytes, entry->static_shared_bytes);
  // "kernel", the pointer's name, is no kernel of the file; the function's symbol is.
  const gpulab::CountedLaunch launched =
      count_one([&] { gpulab::testing::launch_plain_kernel_through_pointer(out.data()); });
  EXPECT_EQ(launched.registers_per_thread, entry->registers);
  EXPECT_EQ(launched.static_shared_bytes, entry->static_shared_bytes);
}

// cudaFuncGetAttributes gets an address alone: the function's symbol gives its name (and, for a
// kernel in an anonymous namespace, its file), and so its ptxas figures.
TEST(KernelFigures, TheRuntimesAttributesOfAKernelAreItsFigures) {
  GPULAB_REQUIRE_DEVICE();
  struct Case {
    const char* function;
    const void* address;
    std::uint64_t static_shared_bytes;
  };
  const Case cases[] = {
      {"{anonymous}::tile_kernel<1>", gpulab::testing::tile_kernel_address(1), 32 * sizeof(float)},
      {"{anonymous}::tile_kernel<4>", gpulab::testing::tile_kernel_address(4),
       4 * 32 * sizeof(float)},
      {"{anonymous}::plain_kernel", gpulab::testing::plain_kernel_address(), 64 * sizeof(float)},
      {"gpulab::testing::external_kernel", gpulab::testing::external_kernel_address(),
       16 * sizeof(float)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.function);
    const auto entry = own_entry(c.function);
    if (!entry) {
      GTEST_SKIP() << "this build has no ptxas figures for this file: "
                   << gpulab::kernel_table_status();
    }
    ASSERT_EQ(entry->static_shared_bytes, c.static_shared_bytes);
    cudaFuncAttributes attributes{};
    GPULAB_CHECK(cudaFuncGetAttributes(&attributes, c.address));
    EXPECT_GT(attributes.numRegs, 0);
    EXPECT_EQ(attributes.numRegs, entry->registers);
    EXPECT_EQ(attributes.sharedSizeBytes, c.static_shared_bytes);
    EXPECT_EQ(attributes.localSizeBytes, entry->local_bytes);
    EXPECT_EQ(attributes.maxThreadsPerBlock, 1024);  // a few registers: any block fits
  }
  // Not a function: nothing known, as before any figures existed.
  static const int not_a_kernel = 0;
  cudaFuncAttributes attributes{};
  GPULAB_CHECK(cudaFuncGetAttributes(&attributes, &not_a_kernel));
  EXPECT_EQ(attributes.numRegs, 0);
  EXPECT_EQ(attributes.sharedSizeBytes, 0u);
}

// 128 registers a thread: a warp takes 4096 of a sub-partition's 16384, so an SM's four hold 16
// warps of one block at most, 512 threads. A larger block fails as on a GPU ("too many resources
// requested for launch"), and the runtime says so beforehand.
TEST(KernelFigures, ABlockWithMoreRegistersThanABlockMayHaveDoesNotLaunch) {
  GPULAB_REQUIRE_DEVICE();
  if (!gpulab::occupancy_available()) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: no register limit is known";
  }
  const void* kernel = gpulab::testing::wide_kernel_address();
  gpulab::sim::set_kernel_resources(kernel, 128, 0);
  cudaFuncAttributes attributes{};
  GPULAB_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  EXPECT_EQ(attributes.numRegs, 128);
  EXPECT_EQ(attributes.maxThreadsPerBlock, 512);
  int blocks = -1;
  GPULAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, 512, 0));
  EXPECT_EQ(blocks, 1);

  gpulab::DeviceBuffer<float> out(1024);
  EXPECT_EQ(gpulab::testing::launch_wide_kernel(512, out.data()), cudaSuccess);
  GPULAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(gpulab::testing::launch_wide_kernel(544, out.data()), cudaErrorLaunchOutOfResources);
  // Not sticky: the next launch that fits runs.
  EXPECT_EQ(gpulab::testing::launch_wide_kernel(32, out.data()), cudaSuccess);
  GPULAB_CHECK(cudaDeviceSynchronize());
}

}  // namespace
