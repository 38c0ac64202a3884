#include "vector/vector_add.hpp"

#include <stdexcept>

#include "common.hpp"
#include "gpulab/core/cuda_check.hpp"

namespace gpulab::kernels {

void vector_add_reference(std::span<const float> a, std::span<const float> b, std::span<float> c) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i] = a[i] + b[i];
  }
}

namespace {

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) {  // the last block may run past the end
    c[i] = a[i] + b[i];
  }
}

}  // namespace

void vector_add(const float* a, const float* b, float* c, std::size_t n, cudaStream_t stream,
                unsigned block_size) {
  if (n == 0) {
    return;
  }
  if (block_size == 0) {
    throw std::invalid_argument("vector_add: block_size must be positive");
  }
  vector_add_kernel<<<ceil_div(n, block_size), block_size, 0, stream>>>(a, b, c, n);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace gpulab::kernels
