// The sim backend's <cuda_runtime.h>: gpulab's CPU implementation of the CUDA runtime.
#pragma once

#include "gpulab/sim/device.hpp"
#include "gpulab/sim/launch.hpp"
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

template <class T>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, T* kernel) noexcept {
  return cudaFuncGetAttributes(attributes, reinterpret_cast<const void*>(kernel));
}

template <class T>
cudaError_t cudaFuncSetAttribute(T* kernel, cudaFuncAttribute attribute, int value) noexcept {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attribute, value);
}

template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int* blocks, T* kernel, int block_size, std::size_t dynamic_shared_bytes) noexcept {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      blocks, reinterpret_cast<const void*>(kernel), block_size, dynamic_shared_bytes);
}

template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t bytes,
                               std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) noexcept {
  return cudaMemcpyToSymbol(const_cast<T*>(&symbol), sizeof(T), src, bytes, offset, kind);
}

template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t bytes,
                                 std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) noexcept {
  return cudaMemcpyFromSymbol(dst, &symbol, sizeof(T), bytes, offset, kind);
}
