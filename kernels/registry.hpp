// Every kernel of kernels/ by name, as a function pointer the CUDA runtime's per-kernel queries
// take (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor,
// cudaFuncSetAttribute). The names are those of the kernel table (gpulab/core/kernel_table.hpp), so
// a kernel's figures from ptxas and from the runtime can be put side by side.
//
// The kernels live in anonymous namespaces inside their .cu files, where only that file can take
// their address: each file exports its own entries (the *_kernel_registry functions below), and
// kernel_registry() collects them. A new kernel gets an entry in its file's list; the registry
// test (tests/kernels/kernel_registry_test.cpp) fails for a table kernel that has none.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gpulab::kernels {

/// One kernel and how its launchers use it.
struct RegisteredKernel {
  std::string_view name;  ///< as in the kernel table, e.g. "vector_add_kernel"
  const void* function;   ///< the __global__ function (its host stub on the cuda backend)
  /// Dynamic shared memory per block the launchers pass, in bytes: {0} for a kernel without
  /// extern __shared__, otherwise each size in use (e.g. gemm_tiled's 16 x 16 and 32 x 32 tiles).
  std::span<const std::uint64_t> dynamic_shared_bytes;
};

/// Every kernel of kernels/, grouped by file (attention, gemm, histogram, reduction, spin,
/// transpose, vector add).
[[nodiscard]] std::vector<RegisteredKernel> kernel_registry();

// Each file's entries (defined in that .cu file).
[[nodiscard]] std::span<const RegisteredKernel> attention_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> gemm_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> histogram_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> transpose_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> reduction_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> spin_kernel_registry();
[[nodiscard]] std::span<const RegisteredKernel> vector_add_kernel_registry();

/// The {0} of kernels that use no dynamic shared memory.
inline constexpr std::uint64_t kNoDynamicShared[] = {0};

}  // namespace gpulab::kernels
