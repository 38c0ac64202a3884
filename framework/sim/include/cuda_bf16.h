// The sim backend's <cuda_bf16.h>: bfloat16 (__nv_bfloat16) and pairs of it (__nv_bfloat162),
// with CUDA's conversions, intrinsics and operators, on host and device alike. Conversions and
// arithmetic round exactly as a GPU does (gpulab/sim/float16.hpp; tests/sim/float16_test.cu).
// What is not here: the bfloat16 atomics and the texture and vector-load variants (docs/sim.md).
#pragma once

#include "gpulab/sim/float16_types.hpp"

GPULAB_SIM_FLOAT16_TYPES(__nv_bfloat16, __nv_bfloat162, __nv_bfloat16_raw, bfloat16, Bfloat16)

#include "gpulab/sim/float16_api.hpp"

// ---- constants ---------------------------------------------------------------------------------
#define CUDART_INF_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F80U))
#define CUDART_NAN_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7FFFU))
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0001U))
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F7FU))
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x8000U))
#define CUDART_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0000U))
#define CUDART_ONE_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x3F80U))
