// The sim backend's <mma.h>: tensor-core instructions run only on a GPU.
#pragma once

#error \
    "gpulab sim: tensor-core instructions (nvcuda::wmma, mma.sync) are not simulated. Build this source for the cuda backend only (guard it with GPULAB_BACKEND_CUDA; tests: BACKENDS cuda in cmake/GpulabBackend.cmake) and skip its sim tests with that reason."
