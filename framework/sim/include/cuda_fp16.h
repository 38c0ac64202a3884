// The sim backend's <cuda_fp16.h>: IEEE binary16 (__half) and pairs of it (__half2), with CUDA's
// conversions, intrinsics and operators, on host and device alike. Conversions and arithmetic
// round exactly as a GPU does (gpulab/sim/float16.hpp): bit for bit the same results as CUDA's
// header and native half arithmetic (tests/sim/float16_test.cu). What is not here: the
// half-precision atomics and the texture and vector-load variants (docs/sim.md).
#pragma once

#include "gpulab/sim/float16_types.hpp"

GPULAB_SIM_FLOAT16_TYPES(__half, __half2, __half_raw, half, Binary16)

#include "gpulab/sim/float16_api.hpp"

// ---- constants ---------------------------------------------------------------------------------
#define CUDART_INF_FP16 __ushort_as_half(static_cast<unsigned short>(0x7C00U))
#define CUDART_NAN_FP16 __ushort_as_half(static_cast<unsigned short>(0x7FFFU))
#define CUDART_MIN_DENORM_FP16 __ushort_as_half(static_cast<unsigned short>(0x0001U))
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half(static_cast<unsigned short>(0x7BFFU))
#define CUDART_NEG_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x8000U))
#define CUDART_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x0000U))
#define CUDART_ONE_FP16 __ushort_as_half(static_cast<unsigned short>(0x3C00U))
