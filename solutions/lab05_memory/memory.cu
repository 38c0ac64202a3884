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
  std::set<std::uint64_t> held_before;
  for (const LiveAllocation& allocation : live_allocations()) {
    held_before.insert(allocation.id);
  }
  reset_peak_memory_stats();
  const MemoryStats before = memory_stats();
  fn();
  GPULAB_CHECK(cudaDeviceSynchronize());
  const MemoryStats after = memory_stats();
  MemoryUsage usage;
  usage.peak_allocated_bytes = after.peak_allocated_bytes - before.allocated_bytes;
  usage.peak_reserved_bytes = after.peak_reserved_bytes - before.reserved_bytes;
  usage.allocations = after.allocations;
  for (LiveAllocation& allocation : live_allocations()) {  // largest first, kept so
    if (!held_before.contains(allocation.id)) {
      usage.leaked_bytes += allocation.bytes;
      usage.leaks.push_back(std::move(allocation));
    }
  }
  return usage;
  // TODO(lab05) END
}

// ------------------------------------------------------------------------------------------------
// Part 2: a caching allocator
// ------------------------------------------------------------------------------------------------

std::size_t round_block_size(std::size_t bytes) {
  // TODO(lab05) BEGIN: the bin of a request
  const std::size_t unit = bytes <= kSmallLimitBytes ? kSmallRoundBytes : kLargeRoundBytes;
  if (bytes > std::numeric_limits<std::size_t>::max() - (unit - 1)) {
    throw std::length_error("round_block_size: " + std::to_string(bytes) +
                            " bytes rounded up overflows size_t");
  }
  return (bytes + unit - 1) / unit * unit;
  // TODO(lab05) END
}

// TODO(lab05) BEGIN: the allocator's state, and anything its functions share
namespace {

bool out_of_memory(const CudaError& error) {
  return error.error_name() == "cudaErrorMemoryAllocation";
}

}  // namespace

struct CachingAllocator::State {
  struct Block {
    void* pointer = nullptr;
    std::size_t size = 0;           // its bin: round_block_size of the request that made it
    std::size_t requested = 0;      // bytes asked for while handed out
    cudaStream_t stream = nullptr;  // the stream it was last handed out for
    cudaEvent_t freed = nullptr;    // recorded on `stream` when it was last freed
  };

  std::unordered_map<void*, Block> handed_out;
  std::multimap<std::size_t, Block> cached;  // by size
  AllocatorStats stats;

  // Gives a block back to the device (device_free first: if it throws, nothing changed).
  void release(const Block& block) {
    device_free(block.pointer);
    if (block.freed != nullptr) {
      GPULAB_CHECK(cudaEventDestroy(block.freed));
    }
    ++stats.device_frees;
    stats.reserved_bytes -= block.size;
  }
};
// TODO(lab05) END

CachingAllocator::CachingAllocator() : state_(std::make_unique<State>()) {}

CachingAllocator::~CachingAllocator() {
  // TODO(lab05) BEGIN: give every block back, handed out or not (never throw from here)
  try {
    empty_cache();
    for (const auto& entry : state_->handed_out) {
      state_->release(entry.second);
    }
    state_->handed_out.clear();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "CachingAllocator: could not give its memory back: %s\n", e.what());
  }
  // TODO(lab05) END
}

void* CachingAllocator::allocate(std::size_t bytes, cudaStream_t stream) {
  // TODO(lab05) BEGIN: a safe cached block of the bin, else a new one from the device
  if (bytes == 0) {
    return nullptr;
  }
  State& s = *state_;
  const std::size_t size = round_block_size(bytes);
  ++s.stats.requests;
  // A block freed on this stream first: the stream runs the old work before the new. One freed on
  // another stream only once that work is done.
  const auto [first, last] = s.cached.equal_range(size);
  auto pick =
      std::find_if(first, last, [&](const auto& entry) { return entry.second.stream == stream; });
  if (pick == last) {
    pick = std::find_if(first, last, [](const auto& entry) {
      const cudaError_t status = cudaEventQuery(entry.second.freed);
      if (status == cudaErrorNotReady) {
        return false;
      }
      GPULAB_CHECK(status);
      return true;
    });
  }
  State::Block block;
  if (pick != last) {
    block = pick->second;
    s.cached.erase(pick);
    s.stats.cached_bytes -= size;
    ++s.stats.cache_hits;
  } else {
    const CacheReservation reservation;  // reserved memory, not allocated: the pieces are
    try {
      block.pointer = device_malloc(size);
    } catch (const CudaError& error) {
      if (!out_of_memory(error)) {
        throw;
      }
      empty_cache();
      block.pointer = device_malloc(size);
    }
    block.size = size;
    ++s.stats.device_allocations;
    s.stats.reserved_bytes += size;
  }
  block.stream = stream;
  block.requested = bytes;
  s.handed_out.emplace(block.pointer, block);
  s.stats.allocated_bytes += bytes;
  note_cache_allocate(block.pointer, bytes, reinterpret_cast<std::uintptr_t>(stream));
  return block.pointer;
  // TODO(lab05) END
}

void CachingAllocator::free(void* pointer) {
  // TODO(lab05) BEGIN: an event on the block's stream, and the block into the cache
  if (pointer == nullptr) {
    return;
  }
  State& s = *state_;
  const auto it = s.handed_out.find(pointer);
  if (it == s.handed_out.end()) {
    throw std::invalid_argument(
        "CachingAllocator::free: this pointer is not a block handed out by this allocator "
        "(never allocated here, or freed already)");
  }
  State::Block block = it->second;
  if (block.freed == nullptr) {
    GPULAB_CHECK(cudaEventCreateWithFlags(&block.freed, cudaEventDisableTiming));
  }
  GPULAB_CHECK(cudaEventRecord(block.freed, block.stream));
  s.handed_out.erase(it);
  s.stats.allocated_bytes -= block.requested;
  s.stats.cached_bytes += block.size;
  s.cached.emplace(block.size, block);
  note_cache_free(pointer);
  // TODO(lab05) END
}

void CachingAllocator::empty_cache() {
  // TODO(lab05) BEGIN: every cached block back to the device
  State& s = *state_;
  while (!s.cached.empty()) {
    const State::Block block = s.cached.begin()->second;
    s.release(block);
    s.cached.erase(s.cached.begin());
    s.stats.cached_bytes -= block.size;
  }
  // TODO(lab05) END
}

AllocatorStats CachingAllocator::stats() const {
  // TODO(lab05) BEGIN: the statistics
  return state_->stats;
  // TODO(lab05) END
}

// ------------------------------------------------------------------------------------------------
// Part 3: attention's memory against the sequence length
// ------------------------------------------------------------------------------------------------

std::vector<std::size_t> attention_memory_by_length(const kernels::AttentionConfig& config,
                                                    int level, std::span<const int> seq_lens) {
  // TODO(lab05) BEGIN: one measured forward pass per length
  const auto levels = kernels::attention_levels();
  if (level < 0 || level >= static_cast<int>(levels.size())) {
    throw std::invalid_argument("attention_memory_by_length: no level " + std::to_string(level) +
                                " (levels are 0 to " + std::to_string(levels.size() - 1) + ")");
  }
  const kernels::AttentionLaunch launch = levels[static_cast<std::size_t>(level)].launch;
  std::vector<std::size_t> peaks;
  for (const int seq_len : seq_lens) {
    kernels::AttentionConfig at = config;
    at.seq_len = seq_len;
    at.validate();
    const MemoryUsage usage = measure_memory_usage([&] {
      kernels::AttentionBuffers buffers(at, kernels::attention_workspace(level));
      kernels::upload(kernels::make_attention_inputs(at, 1), buffers);
      launch(at, buffers, nullptr);
      GPULAB_CHECK(cudaDeviceSynchronize());
    });
    peaks.push_back(usage.peak_allocated_bytes);
  }
  return peaks;
  // TODO(lab05) END
}

double fit_growth_exponent(std::span<const double> lengths, std::span<const double> bytes) {
  // TODO(lab05) BEGIN: least squares on the logs
  if (lengths.size() != bytes.size() || lengths.size() < 2) {
    throw std::invalid_argument(
        "fit_growth_exponent: needs two or more (length, bytes) pairs, got " +
        std::to_string(lengths.size()) + " lengths and " + std::to_string(bytes.size()) + " sizes");
  }
  std::vector<double> x;
  std::vector<double> y;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (!(lengths[i] > 0) || !(bytes[i] > 0) || !std::isfinite(lengths[i]) ||
        !std::isfinite(bytes[i])) {
      throw std::invalid_argument("fit_growth_exponent: point " + std::to_string(i) +
                                  " is not positive and finite");
    }
    x.push_back(std::log(lengths[i]));
    y.push_back(std::log(bytes[i]));
  }
  const auto n = static_cast<double>(x.size());
  double mean_x = 0;
  double mean_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mean_x += x[i] / n;
    mean_y += y[i] / n;
  }
  double sxx = 0;
  double sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
  }
  if (std::all_of(lengths.begin(), lengths.end(), [&](double l) { return l == lengths[0]; }) ||
      !(sxx > 0)) {
    throw std::invalid_argument("fit_growth_exponent: the lengths are all equal: no slope");
  }
  return sxy / sxx;
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
  const std::uint64_t forwards_before = kernels::layer_forward_count();
  const MemoryUsage usage = measure_memory_usage([&] {
    const int n = stack.layers;
    std::vector<DeviceBuffer<float>> kept;  // x[1] .. x[N-1]; x[0] is input, x[N] output
    const float* x = input;
    for (int i = 0; i < n; ++i) {
      float* next = i + 1 == n ? output : kept.emplace_back(stack.width).data();
      kernels::layer_forward(stack, i, x, next, stream);
      x = next;
    }
    start_gradient(stack, grad_output, grad_input, stream);
    for (int i = n - 1; i >= 0; --i) {
      kernels::layer_reverse(stack, i,
                             i == 0 ? input : kept[static_cast<std::size_t>(i - 1)].data(),
                             grad_input, stream);
    }
    GPULAB_CHECK(cudaStreamSynchronize(stream));
  });
  return {usage.peak_allocated_bytes, kernels::layer_forward_count() - forwards_before};
  // TODO(lab05) END
}

CheckpointRun checkpointed_backward(const kernels::LayerStack& stack, int k, const float* input,
                                    float* output, const float* grad_output, float* grad_input,
                                    cudaStream_t stream) {
  // TODO(lab05) BEGIN: keep every k-th input, recompute the rest a segment at a time
  const int n = stack.layers;
  if (k < 1 || k > n) {
    throw std::invalid_argument("checkpointed_backward: k = " + std::to_string(k) +
                                " outside [1, " + std::to_string(n) + "]");
  }
  const std::uint64_t forwards_before = kernels::layer_forward_count();
  const MemoryUsage usage = measure_memory_usage([&] {
    const int segments = (n + k - 1) / k;
    // kept[j] = x[j k] for j >= 1 (segment j's input); segment 0's is `input`.
    std::vector<DeviceBuffer<float>> kept(static_cast<std::size_t>(segments));
    {
      DeviceBuffer<float> scratch(k > 1 ? stack.width : 0);  // the inputs not kept, in place
      const float* x = input;
      for (int i = 0; i < n; ++i) {
        float* next = nullptr;
        if (i + 1 == n) {
          next = output;
        } else if ((i + 1) % k == 0) {
          next = (kept[static_cast<std::size_t>((i + 1) / k)] = DeviceBuffer<float>(stack.width))
                     .data();
        } else {
          next = scratch.data();
        }
        kernels::layer_forward(stack, i, x, next, stream);
        x = next;
      }
      GPULAB_CHECK(cudaStreamSynchronize(stream));
    }
    start_gradient(stack, grad_output, grad_input, stream);
    for (int j = segments - 1; j >= 0; --j) {
      const int start = j * k;
      const int end = std::min(n, start + k);
      const float* segment_input = j == 0 ? input : kept[static_cast<std::size_t>(j)].data();
      std::vector<DeviceBuffer<float>> inputs;  // x[start + 1] .. x[end - 1], recomputed
      for (int i = start; i + 1 < end; ++i) {
        const float* in = inputs.empty() ? segment_input : inputs.back().data();
        kernels::layer_forward(stack, i, in, inputs.emplace_back(stack.width).data(), stream);
      }
      for (int i = end - 1; i >= start; --i) {
        kernels::layer_reverse(
            stack, i,
            i == start ? segment_input : inputs[static_cast<std::size_t>(i - start - 1)].data(),
            grad_input, stream);
      }
      GPULAB_CHECK(cudaStreamSynchronize(stream));
      inputs.clear();
      kept[static_cast<std::size_t>(j)].reset();  // segment j is done: its input is not needed
    }
  });
  return {usage.peak_allocated_bytes, kernels::layer_forward_count() - forwards_before};
  // TODO(lab05) END
}

int choose_checkpoint_interval(int layers, std::size_t activation_bytes, std::size_t budget_bytes) {
  // TODO(lab05) BEGIN: the least recomputation that fits the budget
  if (layers < 1 || activation_bytes == 0) {
    throw std::invalid_argument(
        "choose_checkpoint_interval: needs layers >= 1 and activations "
        "of at least one byte");
  }
  std::size_t least = std::numeric_limits<std::size_t>::max();
  for (int k = 1; k <= layers; ++k) {
    const auto n = static_cast<std::size_t>(layers);  // no int overflow near INT_MAX layers
    const auto z = static_cast<std::size_t>(k);
    const std::size_t activations = (n + z - 1) / z + z + 1;
    if (activations <= budget_bytes / activation_bytes) {
      return k;
    }
    least = std::min(least, activations);
  }
  throw std::invalid_argument(
      "choose_checkpoint_interval: a budget of " + std::to_string(budget_bytes) + " bytes holds " +
      std::to_string(budget_bytes / activation_bytes) + " activations; checkpointing " +
      std::to_string(layers) + " layers needs at least " + std::to_string(least));
  // TODO(lab05) END
}

}  // namespace gpulab::lab05
