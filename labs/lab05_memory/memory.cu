// Lab 05: memory tracking. Fill in the TODO(lab05) regions; lab05.hpp has the contract of every
// function and README.md the background.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpulab/core/lab.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/layer_stack.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "lab05.hpp"

namespace gpulab::lab05 {

namespace kernels = gpulab::kernels;

// ------------------------------------------------------------------------------------------------
// Part 1: what a function costs in device memory
// ------------------------------------------------------------------------------------------------

MemoryUsage measure_memory_usage(const std::function<void()>& fn) {
  // TODO(lab05) BEGIN: reset the peaks, run fn, wait for the device, say what fn used and left
  static_cast<void>(fn);
  gpulab::not_implemented("lab05", "measure_memory_usage");
  // TODO(lab05) END
}

// ------------------------------------------------------------------------------------------------
// Part 2: a caching allocator
// ------------------------------------------------------------------------------------------------

std::size_t round_block_size(std::size_t bytes) {
  // TODO(lab05) BEGIN: the bin of a request
  static_cast<void>(bytes);
  gpulab::not_implemented("lab05", "round_block_size");
  // TODO(lab05) END
}

// TODO(lab05) BEGIN: the allocator's state, and anything its functions share
struct CachingAllocator::State {};
// TODO(lab05) END

CachingAllocator::CachingAllocator() : state_(std::make_unique<State>()) {}

CachingAllocator::~CachingAllocator() {
  // TODO(lab05) BEGIN: give every block back, handed out or not (never throw from here)
  // TODO(lab05) END
}

void* CachingAllocator::allocate(std::size_t bytes, cudaStream_t stream) {
  // TODO(lab05) BEGIN: a safe cached block of the bin, else a new one from the device
  static_cast<void>(bytes), static_cast<void>(stream);
  gpulab::not_implemented("lab05", "CachingAllocator::allocate");
  // TODO(lab05) END
}

void CachingAllocator::free(void* pointer) {
  // TODO(lab05) BEGIN: an event on the block's stream, and the block into the cache
  static_cast<void>(pointer);
  gpulab::not_implemented("lab05", "CachingAllocator::free");
  // TODO(lab05) END
}

void CachingAllocator::empty_cache() {
  // TODO(lab05) BEGIN: every cached block back to the device
  gpulab::not_implemented("lab05", "CachingAllocator::empty_cache");
  // TODO(lab05) END
}

AllocatorStats CachingAllocator::stats() const {
  // TODO(lab05) BEGIN: the statistics
  gpulab::not_implemented("lab05", "CachingAllocator::stats");
  // TODO(lab05) END
}

// ------------------------------------------------------------------------------------------------
// Part 3: attention's memory against the sequence length
// ------------------------------------------------------------------------------------------------

std::vector<std::size_t> attention_memory_by_length(const kernels::AttentionConfig& config,
                                                    int level, std::span<const int> seq_lens) {
  // TODO(lab05) BEGIN: one measured forward pass per length
  static_cast<void>(config), static_cast<void>(level), static_cast<void>(seq_lens);
  gpulab::not_implemented("lab05", "attention_memory_by_length");
  // TODO(lab05) END
}

double fit_growth_exponent(std::span<const double> lengths, std::span<const double> bytes) {
  // TODO(lab05) BEGIN: least squares on the logs
  static_cast<void>(lengths), static_cast<void>(bytes);
  gpulab::not_implemented("lab05", "fit_growth_exponent");
  // TODO(lab05) END
}

// ------------------------------------------------------------------------------------------------
// Part 4: checkpointing
// ------------------------------------------------------------------------------------------------

namespace {

// The gradient at x[N] into grad_input, where the reverse pass updates it in place.
[[maybe_unused]] void start_gradient(const kernels::LayerStack& stack, const float* grad_output,
                                     float* grad_input, cudaStream_t stream) {
  if (grad_input != grad_output) {
    GPULAB_CHECK(cudaMemcpyAsync(grad_input, grad_output, stack.activation_bytes(),
                                 cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

CheckpointRun store_all_backward(const kernels::LayerStack& stack, const float* input,
                                 float* output, const float* grad_output, float* grad_input,
                                 cudaStream_t stream) {
  // TODO(lab05) BEGIN: keep every layer's input
  static_cast<void>(stack), static_cast<void>(input), static_cast<void>(output);
  static_cast<void>(grad_output), static_cast<void>(grad_input), static_cast<void>(stream);
  gpulab::not_implemented("lab05", "store_all_backward");
  // TODO(lab05) END
}

CheckpointRun checkpointed_backward(const kernels::LayerStack& stack, int k, const float* input,
                                    float* output, const float* grad_output, float* grad_input,
                                    cudaStream_t stream) {
  // TODO(lab05) BEGIN: keep every k-th input, recompute the rest a segment at a time
  static_cast<void>(stack), static_cast<void>(k), static_cast<void>(input);
  static_cast<void>(output), static_cast<void>(grad_output), static_cast<void>(grad_input);
  static_cast<void>(stream);
  gpulab::not_implemented("lab05", "checkpointed_backward");
  // TODO(lab05) END
}

int choose_checkpoint_interval(int layers, std::size_t activation_bytes, std::size_t budget_bytes) {
  // TODO(lab05) BEGIN: the least recomputation that fits the budget
  static_cast<void>(layers), static_cast<void>(activation_bytes);
  static_cast<void>(budget_bytes);
  gpulab::not_implemented("lab05", "choose_checkpoint_interval");
  // TODO(lab05) END
}

}  // namespace gpulab::lab05
