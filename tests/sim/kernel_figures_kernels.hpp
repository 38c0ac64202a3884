// The kernels of kernel_figures_test.cu (kernel_figures_kernels.cu), launched one at a time.
#pragma once

#include <cuda_runtime.h>

#include <string_view>

namespace gpulab::testing {

/// The kernels' source file, as its launches name it.
const char* figures_kernels_file();

/// tile_kernel<1> or, for any other `tile`, tile_kernel<4>, on 32 threads.
void launch_tile_kernel(int tile, float* out);

/// plain_kernel on 32 threads, launched by name.
void launch_plain_kernel(float* out);

/// plain_kernel on 32 threads, launched through a function pointer variable.
void launch_plain_kernel_through_pointer(float* out);

/// The kernels' addresses, as the CUDA runtime's per-kernel queries take them: tile_kernel<1>
/// or, for any other `tile`, tile_kernel<4>; plain_kernel; gpulab::testing::external_kernel (an
/// external symbol, 16 floats of static shared memory); wide_kernel (whose registers the tests
/// set).
const void* tile_kernel_address(int tile);
const void* plain_kernel_address();
const void* external_kernel_address();
const void* wide_kernel_address();

/// wide_kernel on one block of `threads` threads (out: at least that many floats); the launch's
/// error.
cudaError_t launch_wide_kernel(int threads, float* out);

/// What the sim's launches know plain_kernel as (gpulab::sim::detail::function_name).
std::string_view plain_kernel_function_name();

}  // namespace gpulab::testing
