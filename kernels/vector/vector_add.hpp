// Vector add, c = a + b: the smallest memory-bound kernel (12 bytes moved per FLOP). Lab 01
// benchmarks it across sizes: launch-bound when small, L2-resident, then DRAM-bound.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

namespace gpulab::kernels {

/// CPU reference.
void vector_add_reference(std::span<const float> a, std::span<const float> b, std::span<float> c);

/// c[i] = a[i] + b[i] for i < n, one element per thread, `block_size` threads per block.
void vector_add(const float* a, const float* b, float* c, std::size_t n,
                cudaStream_t stream = nullptr, unsigned block_size = 256);

}  // namespace gpulab::kernels
