#include "gpulab/kernels/vector_add.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/common.hpp"
#include "gpulab/runtime/cuda_check.hpp"

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
  verify_launch(
      stream, [&](cudaStream_t s) { launch(s, block_size); },
      "vector_add with " + std::to_string(block_size) + " threads per block");
}

void VectorAddProblem::verify_launch(cudaStream_t stream,
                                     const std::function<void(cudaStream_t)>& launch,
                                     const std::string& what) {
  // On the launch's stream: a gpulab::Stream does not wait for the legacy default stream that
  // fill_bytes would use, so the poison could land after the kernel.
  c_.fill_bytes_async(0xff, stream);
  launch(stream);
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
        throw std::runtime_error(what + " gave a wrong result at index " +
                                 std::to_string(first + j) + " of " + std::to_string(n_) +
                                 ": expected " + std::to_string(chunk_expected[j]) + ", got " +
                                 std::to_string(got[first + j]));
      }
    }
  }
}

std::span<const Level<VectorAddLaunch>> vector_add_levels() {
  static const Level<VectorAddLaunch> levels[] = {
      {1,
       "one element per thread",
       "each thread adds one pair: every access is coalesced",
       &vector_add,
       {GPULAB_KERNEL_REF(vector_add_kernel, kNoDynamicShared)}},
  };
  return levels;
}

namespace {

// The catalog's problem: VectorAddProblem's inputs, any level.
class VectorAddOpProblem final : public OpProblem {
 public:
  explicit VectorAddOpProblem(std::size_t n) : problem_(n) {}
  void launch(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    level_at(vector_add_levels(), index, "vector_add")
        .launch(problem_.a().data(), problem_.b().data(), problem_.c().data(), problem_.size(),
                stream, block_size);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(vector_add_levels(), index, "vector_add");
    problem_.verify_launch(
        stream, [&](cudaStream_t s) { launch(index, s, block_size); },
        describe_level("vector_add", level.number, level.name, block_size));
  }
  // One add per element; read a and b, write c.
  [[nodiscard]] OpCost cost() const override {
    const auto n = static_cast<double>(problem_.size());
    return {n, 12.0 * n};
  }
  [[nodiscard]] std::string describe() const override {
    return std::to_string(problem_.size()) + " floats per vector";
  }

 private:
  VectorAddProblem problem_;
};

}  // namespace

Op vector_add_op() {
  return {
      .name = "vector_add",
      .summary = "c = a + b: the smallest memory-bound kernel, 12 bytes per FLOP",
      .size_means = "floats per vector",
      .default_size = std::size_t{1} << 26,
      .sim_size = std::size_t{1} << 20,
      .test_sizes = {1, 255, 256, 1000, 1 << 16},
      .default_block = 256,
      .levels = erase_levels(vector_add_levels()),
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<VectorAddOpProblem>(n);
      },
  };
}

}  // namespace gpulab::kernels
