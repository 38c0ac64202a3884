// The kernels of kernel_figures_test.cu (kernel_figures_kernels.cu), launched one at a time.
#pragma once

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

/// What the sim's launches know plain_kernel as (gpulab::sim::detail::function_name).
std::string_view plain_kernel_function_name();

}  // namespace gpulab::testing
