// The kernel table's registry (gpulab/core/kernel_table.hpp) in a program linked without the
// generated table: the lookups find nothing and say why, and a registered table is what they
// search, with its status.
#include <gtest/gtest.h>

#include <array>

#include "gpulab/core/kernel_table.hpp"

namespace gpulab {
namespace {

constexpr std::array<KernelTableEntry, 2> kEntries{{
    {.name = "scale_kernel",
     .signature = "demo::scale_kernel(float*, int)",
     .source = "kernels/demo/scale.cu",
     .sm = 80,
     .registers = 16,
     .static_shared_bytes = 0},
    {.name = "scale_kernel",
     .signature = "demo::scale_kernel(float*, int)",
     .source = "kernels/demo/scale.cu",
     .sm = 90,
     .registers = 18,
     .static_shared_bytes = 0},
}};

// One test: the registry is the process's, and the first assertions need it untouched.
TEST(KernelTableRegistry, IsEmptyAndSaysWhyUntilATableRegistersThenSearchesIt) {
  EXPECT_TRUE(kernel_table().empty());
  EXPECT_NE(kernel_table_status().find("linked without the kernel table"), std::string_view::npos)
      << kernel_table_status();
  EXPECT_FALSE(find_kernel("scale_kernel", 9, 0).has_value());
  EXPECT_FALSE(find_launched_kernel("demo::scale_kernel", "/p/kernels/demo/scale.cu", 9, 0));

  register_kernel_table(kEntries, "");
  EXPECT_EQ(kernel_table().size(), 2U);
  EXPECT_EQ(kernel_table_status(), "");
  const auto found = find_kernel("scale_kernel", 8, 6);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->registers, 16);
  const auto launched =
      find_launched_kernel("demo::scale_kernel", "/p/kernels/demo/scale.cu", 9, 0);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->registers, 18);

  register_kernel_table({}, "this build found no nvcc");
  EXPECT_TRUE(kernel_table().empty());
  EXPECT_EQ(kernel_table_status(), "this build found no nvcc");
}

}  // namespace
}  // namespace gpulab
