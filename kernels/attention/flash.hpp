// What attention.cu's level table needs from flash.cu (levels 3 and 4; attention.hpp declares
// their launchers).
#pragma once

#include <vector>

#include "common.hpp"

namespace gpulab::kernels {

/// Level 3's own __global__ functions: one per head-dimension bucket, the catalog's (64) first.
/// (Levels 3 and 4 also launch attention.cu's GEMM for the projections.)
[[nodiscard]] std::vector<KernelRef> flash_attention_kernels();
/// Level 4's own __global__ functions: the WMMA kernel, with the dynamic shared memory the
/// catalog's problem (head_dim 64) launches it with, and the FP16 conversion.
[[nodiscard]] std::vector<KernelRef> flash_attention_wmma_kernels();

}  // namespace gpulab::kernels
