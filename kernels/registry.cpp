#include "registry.hpp"

namespace gpulab::kernels {

std::vector<RegisteredKernel> kernel_registry() {
  std::vector<RegisteredKernel> all;
  for (const auto file :
       {attention_kernel_registry, gemm_kernel_registry, histogram_kernel_registry,
        reduction_kernel_registry, spin_kernel_registry, transpose_kernel_registry,
        vector_add_kernel_registry}) {
    const std::span<const RegisteredKernel> entries = file();
    all.insert(all.end(), entries.begin(), entries.end());
  }
  return all;
}

}  // namespace gpulab::kernels
