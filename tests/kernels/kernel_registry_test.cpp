// The kernel registry (kernels/registry.hpp), on every backend: every kernel has one entry with a
// distinct name and function, and the names are those of the kernel table, both ways.
#include "registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "gpulab/core/kernel_table.hpp"

namespace gpulab::kernels {
namespace {

TEST(KernelRegistry, NamesAndFunctionsAreDistinct) {
  const std::vector<RegisteredKernel> registry = kernel_registry();
  ASSERT_FALSE(registry.empty());
  std::set<std::string_view> names;
  std::set<const void*> functions;
  for (const RegisteredKernel& kernel : registry) {
    EXPECT_TRUE(names.insert(kernel.name).second) << kernel.name << " is registered twice";
    EXPECT_NE(kernel.function, nullptr) << kernel.name;
    EXPECT_TRUE(functions.insert(kernel.function).second) << kernel.name << "'s function again";
    EXPECT_FALSE(kernel.dynamic_shared_bytes.empty()) << kernel.name << ": {0} when none";
    for (const std::uint64_t bytes : kernel.dynamic_shared_bytes) {
      EXPECT_LE(bytes, 48u * 1024u) << kernel.name << ": above 48 KiB needs an opt-in";
    }
  }
}

TEST(KernelRegistry, CollectsEveryFilesEntries) {
  std::size_t count = 0;
  for (const auto file :
       {attention_kernel_registry, gemm_kernel_registry, histogram_kernel_registry,
        reduction_kernel_registry, spin_kernel_registry, transpose_kernel_registry,
        vector_add_kernel_registry}) {
    count += file().size();
  }
  EXPECT_EQ(kernel_registry().size(), count);
}

TEST(KernelRegistry, EveryEntryIsInTheKernelTable) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
  }
  const std::vector<std::string_view> names = kernel_names();
  for (const RegisteredKernel& kernel : kernel_registry()) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), kernel.name))
        << kernel.name << " is registered but not in the kernel table (a typo in its name?)";
  }
}

TEST(KernelRegistry, EveryKernelOfTheTableIsRegistered) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
  }
  const std::vector<RegisteredKernel> registry = kernel_registry();
  for (const KernelTableEntry& entry : kernel_table()) {
    if (!entry.source.starts_with("kernels/")) {
      continue;  // a lab's reference kernel (solutions/), not part of kernels/
    }
    const bool registered =
        std::any_of(registry.begin(), registry.end(),
                    [&](const RegisteredKernel& kernel) { return kernel.name == entry.name; });
    EXPECT_TRUE(registered) << entry.name << " (" << entry.source
                            << ") has no entry in its file's *_kernel_registry()";
  }
}

}  // namespace
}  // namespace gpulab::kernels
