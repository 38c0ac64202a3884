// What attention.cu and flash.cu share (levels 3 and 4 are in flash.cu; attention.hpp declares
// their launchers): the kernels of the level table, and the launchers' argument checks.
#pragma once

#include <string>
#include <vector>

#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

/// Level 3's own __global__ functions: one per head-dimension bucket, the catalog's (64) first.
/// (Levels 3 and 4 also launch attention.cu's GEMM for the projections.)
[[nodiscard]] std::vector<KernelRef> flash_attention_kernels();
/// Level 4's own __global__ functions: the WMMA kernel, with the dynamic shared memory the
/// catalog's problem (head_dim 64) launches it with, and the FP16 conversion.
[[nodiscard]] std::vector<KernelRef> flash_attention_wmma_kernels();

/// Throws std::invalid_argument(what) unless `condition`.
void require(bool condition, const std::string& what);
/// Throws std::invalid_argument unless `present`: `what` needs buffers.`intermediate`, which the
/// buffers were allocated without; the message names attention_workspace(level).
void require_intermediate(bool present, const char* what, const char* intermediate, int level);

}  // namespace gpulab::kernels
