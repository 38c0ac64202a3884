// Histogram of integer keys into `bins` counters (keys >= bins are ignored):
//   1  global atomics: one atomicAdd on global memory per key; threads hitting the same bin
//      serialize on it;
//   2  privatized: each block counts into its own copy in dynamic shared memory (bins counters),
//      then adds its copy to the global one: one global atomic per bin per block.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

/// CPU reference: counts[key] for every key < counts.size().
void histogram_reference(std::span<const unsigned> keys, std::span<unsigned> counts);

using HistogramLaunch = void (*)(const unsigned* keys, std::size_t n, unsigned* counts,
                                 unsigned bins, cudaStream_t stream, unsigned block_size);

/// counts[0..bins) = the histogram of keys[0..n) (counts are zeroed first), `block_size` threads
/// per block (1..1024; std::invalid_argument otherwise) in a grid-stride loop of at most 1024
/// blocks.
void histogram_global(const unsigned* keys, std::size_t n, unsigned* counts, unsigned bins,
                      cudaStream_t stream = nullptr, unsigned block_size = 256);
void histogram_shared(const unsigned* keys, std::size_t n, unsigned* counts, unsigned bins,
                      cudaStream_t stream = nullptr, unsigned block_size = 256);

/// The levels above, in order.
std::span<const Level<HistogramLaunch>> histogram_levels();

}  // namespace gpulab::kernels
