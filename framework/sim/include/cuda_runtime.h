// The sim backend's <cuda_runtime.h>: gpulab's CPU implementation of the CUDA runtime.
#pragma once

#include "gpulab/sim/runtime.hpp"

// As in CUDA's cuda_runtime.h: typed overloads, so `float* d; cudaMalloc(&d, bytes);` compiles.
template <class T>
cudaError_t cudaMalloc(T** pointer, std::size_t bytes) noexcept {
  return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}

template <class T>
cudaError_t cudaMallocHost(T** pointer, std::size_t bytes) noexcept {
  return cudaMallocHost(reinterpret_cast<void**>(pointer), bytes);
}
