// The sim backend's <cuda_bf16.h>: half-precision types are not simulated yet.
#pragma once

#error \
    "gpulab sim: <cuda_bf16.h> (half-precision types and intrinsics) is not simulated yet. Build this source for the cuda backend only (guard it with GPULAB_BACKEND_CUDA; tests: BACKENDS cuda in cmake/GpulabBackend.cmake) or use float on sim."
