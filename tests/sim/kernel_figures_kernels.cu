// The kernels of kernel_figures_test.cu, in a file of their own: the test program's kernel table
// is ptxas's report of this file (tests/sim/CMakeLists.txt).
#include "kernel_figures_kernels.hpp"

#include <cuda_runtime.h>

namespace {

// Each instantiation declares a different amount of static shared memory (Tile x 32 floats), so
// the figures say which instantiation they belong to.
template <int Tile>
__global__ void tile_kernel(float* out) {
  __shared__ float tile[Tile * 32];
  tile[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + Tile) % 32];  // the 32 elements the block wrote
}

__global__ void plain_kernel(float* out) {
  __shared__ float tile[64];
  tile[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = tile[31 - threadIdx.x];  // the 32 elements the block wrote
}

// Takes any block size; the test gives it registers of its own choosing (set_kernel_resources).
__global__ void wide_kernel(float* out) {
  out[threadIdx.x] = 2.0f;
}

// Launched as `tile_kernel<Tile>`: the name the launch writes is not the instantiation's, the
// function it names is.
template <int Tile>
void launch_tile(float* out) {
  tile_kernel<Tile><<<1, 32>>>(out);
}

}  // namespace

namespace gpulab::testing {

// An external symbol: its name is one in the program, whichever file it is in.
__global__ void external_kernel(float* out) {
  __shared__ float tile[16];
  tile[threadIdx.x % 16] = 3.0f;
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 16];
}

const void* tile_kernel_address(int tile) {
  return tile == 1 ? reinterpret_cast<const void*>(&tile_kernel<1>)
                   : reinterpret_cast<const void*>(&tile_kernel<4>);
}

const void* plain_kernel_address() {
  return reinterpret_cast<const void*>(&plain_kernel);
}

const void* external_kernel_address() {
  return reinterpret_cast<const void*>(&external_kernel);
}

const void* wide_kernel_address() {
  return reinterpret_cast<const void*>(&wide_kernel);
}

cudaError_t launch_wide_kernel(int threads, float* out) {
  wide_kernel<<<1, threads>>>(out);
  return cudaGetLastError();
}

const char* figures_kernels_file() {
  return __FILE__;
}

void launch_tile_kernel(int tile, float* out) {
  if (tile == 1) {
    launch_tile<1>(out);
  } else {
    launch_tile<4>(out);
  }
}

void launch_plain_kernel(float* out) {
  plain_kernel<<<1, 32>>>(out);
}

void launch_plain_kernel_through_pointer(float* out) {
  // A variable, not a constant: the launch knows the expression's text ("kernel") alone.
  void (*volatile pointer)(float*) = plain_kernel;
  void (*kernel)(float*) = pointer;
  kernel<<<1, 32>>>(out);
}

#if !defined(GPULAB_BACKEND_CUDA)
std::string_view plain_kernel_function_name() {
  return gpulab::sim::detail::function_name<int, plain_kernel>();
}
#endif

}  // namespace gpulab::testing
