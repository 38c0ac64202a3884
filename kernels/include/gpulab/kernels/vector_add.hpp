// Vector add, c = a + b: the smallest memory-bound kernel (12 bytes moved per FLOP). Lab 01
// benchmarks it across sizes: launch-bound when small, L2-resident, then DRAM-bound.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "gpulab/kernels/common.hpp"
#include "gpulab/runtime/memory.hpp"

namespace gpulab::kernels {

/// CPU reference.
void vector_add_reference(std::span<const float> a, std::span<const float> b, std::span<float> c);

using VectorAddLaunch = void (*)(const float* a, const float* b, float* c, std::size_t n,
                                 cudaStream_t stream, unsigned block_size);

/// c[i] = a[i] + b[i] for i < n, one element per thread, `block_size` threads per block.
void vector_add(const float* a, const float* b, float* c, std::size_t n,
                cudaStream_t stream = nullptr, unsigned block_size = 256);

/// The levels of the vector add, in order (vector_add is level 1).
std::span<const Level<VectorAddLaunch>> vector_add_levels();

/// A vector add ready to verify and time (lab 01, the viewer's bandwidth and block-size
/// experiments): three device vectors of n floats, a and b holding known inputs
/// (a[i] = (i % 1000) / 2, b[i] = 1 - i % 77), c the output. launch() only launches, so it can be
/// timed; verify() checks a launch against vector_add_reference first, since a wrong result must
/// never get a time. // move-only
class VectorAddProblem {
 public:
  /// Allocates the three vectors and uploads a and b (synchronous); c is uninitialised.
  explicit VectorAddProblem(std::size_t n);

  /// Enqueues c = a + b on `stream`, `block_size` threads per block; nothing else.
  void launch(cudaStream_t stream, unsigned block_size = 256);
  /// Poisons c with NaN on `stream` (so an element the launch skips fails), launches, waits for
  /// the stream and compares c with vector_add_reference of the inputs, element by element and
  /// exactly (a + b is one correctly rounded operation on both sides). Throws std::runtime_error
  /// naming the block size, the first wrong index, the expected and the got value.
  void verify(cudaStream_t stream, unsigned block_size = 256);
  /// The same check of another launcher's c = a + b: `launch` enqueues it on the stream it gets;
  /// the error names it as `what` (e.g. "vector_add with 128 threads per block").
  void verify_launch(cudaStream_t stream, const std::function<void(cudaStream_t)>& launch,
                     const std::string& what);

  /// Elements per vector.
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  /// The inputs and the output on the device.
  [[nodiscard]] DeviceBuffer<float>& a() noexcept { return a_; }
  [[nodiscard]] DeviceBuffer<float>& b() noexcept { return b_; }
  [[nodiscard]] DeviceBuffer<float>& c() noexcept { return c_; }

 private:
  std::size_t n_;
  DeviceBuffer<float> a_;
  DeviceBuffer<float> b_;
  DeviceBuffer<float> c_;
};

}  // namespace gpulab::kernels
