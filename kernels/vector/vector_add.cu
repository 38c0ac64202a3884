#include "vector/vector_add.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "gpulab/core/cuda_check.hpp"
#include "registry.hpp"

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

namespace {

// VectorAddProblem's inputs at indices first .. first + a.size() - 1: small integers and halves,
// exact in fp32, with sums that are not all equal.
void fill_inputs(std::size_t first, std::span<float> a, std::span<float> b) {
  for (std::size_t j = 0; j < a.size(); ++j) {
    const std::size_t i = first + j;
    a[j] = static_cast<float>(i % 1000) * 0.5F;
    b[j] = 1.0F - static_cast<float>(i % 77);
  }
}

// Elements of the reference verify() computes at a time: the inputs are regenerated a chunk at a
// time instead of kept, which at lab 01's largest size (2^28) would be 2 GiB of host memory.
constexpr std::size_t kVerifyChunk = std::size_t{1} << 20;

}  // namespace

VectorAddProblem::VectorAddProblem(std::size_t n) : n_(n), a_(n), b_(n), c_(n) {
  std::vector<float> host_a(n);
  std::vector<float> host_b(n);
  fill_inputs(0, host_a, host_b);
  a_.copy_from(host_a);
  b_.copy_from(host_b);
}

void VectorAddProblem::launch(cudaStream_t stream, unsigned block_size) {
  vector_add(a_.data(), b_.data(), c_.data(), n_, stream, block_size);
}

void VectorAddProblem::verify(cudaStream_t stream, unsigned block_size) {
  // On the launch's stream: a gpulab::Stream does not wait for the legacy default stream that
  // fill_bytes would use, so the poison could land after the kernel.
  c_.fill_bytes_async(0xff, stream);
  launch(stream, block_size);
  GPULAB_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> got = c_.to_vector();
  std::vector<float> a(std::min(n_, kVerifyChunk));
  std::vector<float> b(a.size());
  std::vector<float> expected(a.size());
  for (std::size_t first = 0; first < n_; first += kVerifyChunk) {
    const std::size_t count = std::min(kVerifyChunk, n_ - first);
    const std::span<float> chunk_a(a.data(), count);
    const std::span<float> chunk_b(b.data(), count);
    const std::span<float> chunk_expected(expected.data(), count);
    fill_inputs(first, chunk_a, chunk_b);
    vector_add_reference(chunk_a, chunk_b, chunk_expected);
    for (std::size_t j = 0; j < count; ++j) {
      if (got[first + j] != chunk_expected[j]) {  // true for the NaN poison too
        throw std::runtime_error("vector_add with " + std::to_string(block_size) +
                                 " threads per block gave a wrong result at index " +
                                 std::to_string(first + j) + " of " + std::to_string(n_) +
                                 ": expected " + std::to_string(chunk_expected[j]) + ", got " +
                                 std::to_string(got[first + j]));
      }
    }
  }
}

std::span<const RegisteredKernel> vector_add_kernel_registry() {
  static const RegisteredKernel entries[] = {
      {"vector_add_kernel", reinterpret_cast<const void*>(&vector_add_kernel), kNoDynamicShared},
  };
  return entries;
}

}  // namespace gpulab::kernels
