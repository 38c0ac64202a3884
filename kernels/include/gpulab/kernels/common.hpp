// Shared by the reference kernels: grid arithmetic and the level table entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gpulab::kernels {

/// Blocks needed to cover `n` items with `per_block` items per block.
constexpr unsigned ceil_div(std::size_t n, std::size_t per_block) noexcept {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

/// One __global__ function, as the CUDA runtime's per-kernel queries take it
/// (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor) and as the kernel table
/// (gpulab/core/kernel_table.hpp) names it, so ptxas's figures and the runtime's can be put side
/// by side. Kernels live in anonymous namespaces of their .cu file: only that file can make one.
struct KernelRef {
  std::string_view name;  ///< e.g. "vector_add_kernel"
  const void* function;   ///< the __global__ function (its host stub on the cuda backend)
  /// Dynamic shared memory per block its launchers pass, in bytes: {0} for a kernel without
  /// extern __shared__, otherwise each size in use (e.g. gemm_tiled's 16 x 16 and 32 x 32 tiles),
  /// the one its level in the catalog launches with first.
  std::span<const std::uint64_t> dynamic_shared_bytes;
};

/// The {0} of kernels that use no dynamic shared memory.
inline constexpr std::uint64_t kNoDynamicShared[] = {0};

/// KernelRef{"name", &name, shared}: GPULAB_KERNEL_REF(vector_add_kernel, kNoDynamicShared).
#define GPULAB_KERNEL_REF(kernel, dynamic_shared_bytes)                         \
  ::gpulab::kernels::KernelRef {                                                \
#kernel, reinterpret_cast < const void*>(&(kernel)), (dynamic_shared_bytes) \
  }

/// One rung of an op's optimization ladder (gpulab/kernels/catalog.hpp): tests,
/// `gpulab bench`, the viewer and the sim benchmark list these instead of switching on level
/// numbers.
template <class Launch>
struct Level {
  int number;
  std::string_view name;
  std::string_view teaches;  // what this level adds over the previous one
  Launch launch;
  std::vector<KernelRef> kernels;  // the __global__ functions `launch` launches
};

}  // namespace gpulab::kernels
