// Lab 05: memory tracking. The interface of the functions you implement in memory.cu (this header
// is the instructor's: do not edit it).
//
// Four parts, each a question about device memory:
//   1  measure_memory_usage: what does a function cost in memory? Its peak, its allocations, and
//      what it leaves behind (a leak).
//   2  CachingAllocator: why does a framework keep freed memory instead of giving it back, and
//      what makes reusing it across streams safe?
//   3  attention_memory_by_length, fit_growth_exponent: how does attention's memory grow with the
//      sequence? O(S^2) for the levels that hold the scores, O(S) for flash attention.
//   4  store_all_backward, checkpointed_backward, choose_checkpoint_interval: trading compute for
//      memory in a reverse pass.
//
// The framework's memory accounting (gpulab/core/memory_stats.hpp) sees every DeviceBuffer and
// every gpulab::device_malloc on both backends (on sim also every cudaMalloc): memory_stats(),
// reset_peak_memory_stats(), live_allocations(). Your code must not call gpulab::growth_exponent
// (the work of fit_growth_exponent): a call fails the graded tests of that function.
// What lab code may call is an allowlist (docs/grading.md, "Code checks"): `gpulab grade`
// rejects a lab whose code calls anything else, such as a process, thread, signal, file or
// dynamic-loading function, the sim's instruments, or GoogleTest.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "gpulab/core/memory_stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/layer_stack.hpp"

namespace gpulab::lab05 {

// ------------------------------------------------------------------------------------------------
// Part 1: what a function costs in device memory
// ------------------------------------------------------------------------------------------------

/// The device memory one call of a function used, from the memory accounting.
struct MemoryUsage {
  std::size_t peak_allocated_bytes = 0;  ///< the most it held at once, above what was allocated
                                         ///< when it started
  std::size_t peak_reserved_bytes = 0;   ///< the same for reserved memory (allocated + cached)
  std::size_t allocations = 0;           ///< allocations it made
  std::size_t leaked_bytes = 0;          ///< bytes of the allocations it made and did not free
  std::vector<LiveAllocation> leaks;     ///< those allocations, largest first
};

/// Resets the accounting's peaks, runs `fn`, waits for the device (cudaDeviceSynchronize) and
/// says what `fn` used. An exception from `fn` propagates. Calls do not nest: one inside `fn`
/// resets the peak the outer one reads.
[[nodiscard]] MemoryUsage measure_memory_usage(const std::function<void()>& fn);

// ------------------------------------------------------------------------------------------------
// Part 2: a caching allocator
// ------------------------------------------------------------------------------------------------

/// Requests up to this size are rounded to a multiple of kSmallRoundBytes, larger ones to a
/// multiple of kLargeRoundBytes.
inline constexpr std::size_t kSmallLimitBytes = std::size_t{1} << 20;  // 1 MiB
inline constexpr std::size_t kSmallRoundBytes = 512;
inline constexpr std::size_t kLargeRoundBytes = std::size_t{2} << 20;  // 2 MiB

/// The size of the block that serves a request of `bytes` (its bin): 0 for 0; up to
/// kSmallLimitBytes the next multiple of kSmallRoundBytes; above, the next multiple of
/// kLargeRoundBytes. Throws std::length_error when that overflows size_t.
[[nodiscard]] std::size_t round_block_size(std::size_t bytes);

/// What a CachingAllocator did and holds.
struct AllocatorStats {
  std::size_t requests = 0;            ///< allocate() calls for more than 0 bytes
  std::size_t cache_hits = 0;          ///< of those, served by a cached block
  std::size_t device_allocations = 0;  ///< blocks taken from the device (device_malloc)
  std::size_t device_frees = 0;        ///< blocks given back to it (device_free)
  std::size_t allocated_bytes = 0;     ///< bytes asked for by the blocks handed out now
  std::size_t reserved_bytes = 0;      ///< bytes of every block held: handed out or cached
  std::size_t cached_bytes = 0;        ///< bytes of the cached blocks (reserved, not handed out)
};

/// Device memory for one host thread's work on several streams, kept for reuse when freed.
///
/// - allocate(bytes, stream) hands out a block of round_block_size(bytes) for work on `stream`.
///   It reuses a cached block of exactly that size when one is safe to use: one freed on the
///   same stream at once (that stream runs its old work before the new); one freed on another
///   stream only once the work queued on that stream before the free has finished (the event
///   free recorded there reports done: cudaEventQuery). Else it takes a new block from the device
///   with gpulab::device_malloc inside a gpulab::CacheReservation (the accounting then calls the
///   block reserved, not allocated); if that runs out of memory it gives the cache back
///   (empty_cache) and tries once more, then lets the CudaError out. Except on that retry it
///   never waits for the device. It tells the accounting what it handed out:
///   gpulab::note_cache_allocate(pointer, bytes asked for, stream). 0 bytes: nullptr, nothing
///   counted.
/// - free(pointer) takes a block back: gpulab::note_cache_free, an event recorded on the block's
///   stream (the one it was allocated for), and the block kept for reuse. nullptr does nothing;
///   a pointer that is not a block handed out now (never allocated here, or freed already)
///   throws std::invalid_argument and changes nothing.
/// - empty_cache() gives every cached block back to the device (device_free, which waits for
///   the device); blocks handed out stay.
/// - The destructor gives every block back, handed out or not.
class CachingAllocator {
 public:
  CachingAllocator();
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, cudaStream_t stream);
  void free(void* pointer);
  void empty_cache();
  [[nodiscard]] AllocatorStats stats() const;

  struct State;  ///< what the allocator keeps: yours to define in memory.cu

 private:
  std::unique_ptr<State> state_;
};

// ------------------------------------------------------------------------------------------------
// Part 3: attention's memory against the sequence length
// ------------------------------------------------------------------------------------------------

/// For each length in `seq_lens`, the device memory one forward pass of attention level `level`
/// (kernels::attention_levels()[level]: 0 unfused ... 4 flash on tensor cores) holds at its
/// peak: measure_memory_usage around allocating kernels::AttentionBuffers(config with that
/// seq_len, kernels::attention_workspace(level)), uploading kernels::make_attention_inputs(.., 1)
/// and running the level. Throws std::invalid_argument for a level outside 0..4 or a config the
/// level cannot run.
[[nodiscard]] std::vector<std::size_t> attention_memory_by_length(
    const kernels::AttentionConfig& config, int level, std::span<const int> seq_lens);

/// The exponent p of bytes ~ c * length^p: the least-squares slope of log(bytes) against
/// log(length). Throws std::invalid_argument for fewer than two points, spans of different sizes,
/// a value that is not positive and finite, or lengths that are all equal.
[[nodiscard]] double fit_growth_exponent(std::span<const double> lengths,
                                         std::span<const double> bytes);

// ------------------------------------------------------------------------------------------------
// Part 4: checkpointing
// ------------------------------------------------------------------------------------------------

/// What one pass through a layer stack cost.
struct CheckpointRun {
  std::size_t peak_bytes = 0;        ///< measure_memory_usage(pass).peak_allocated_bytes
  std::uint64_t forward_layers = 0;  ///< kernels::layer_forward calls the pass made
};

/// A forward pass through the stack (gpulab/kernels/layer_stack.hpp) from `input`
/// to `output` (x[N]), keeping every layer's input, then the reverse pass from `grad_output` (the
/// gradient at x[N]) to `grad_input` (the gradient at x[0]), layer N-1 first. Device pointers of
/// stack.width floats, owned by the caller; everything else the pass allocates itself and frees
/// before it returns. Runs on `stream` and waits for it (through measure_memory_usage).
CheckpointRun store_all_backward(const kernels::LayerStack& stack, const float* input,
                                 float* output, const float* grad_output, float* grad_input,
                                 cudaStream_t stream);

/// The same pass keeping only every k-th layer input (x[0], x[k], x[2k], ...) from the forward
/// pass: the reverse of each segment of k layers first recomputes that segment's inputs from its
/// kept one. Peak at most (ceil(N/k) + k + 1) activations of stack.activation_bytes(); the output
/// and gradient bit-identical to store_all_backward's; at most 2N - ceil(N/k) forwards. Throws
/// std::invalid_argument for k outside [1, N].
CheckpointRun checkpointed_backward(const kernels::LayerStack& stack, int k, const float* input,
                                    float* output, const float* grad_output, float* grad_input,
                                    cudaStream_t stream);

/// The k for a memory budget: the smallest k in [1, layers] (least recomputation) whose bound
/// (ceil(layers/k) + k + 1) * activation_bytes is at most budget_bytes. Throws
/// std::invalid_argument when no k fits, or for layers < 1 or activation_bytes 0.
[[nodiscard]] int choose_checkpoint_interval(int layers, std::size_t activation_bytes,
                                             std::size_t budget_bytes);

}  // namespace gpulab::lab05
