// The sim backend's <mma.h>: tensor-core instructions run only on a GPU.
#pragma once

#error \
    "gpulab sim: tensor-core instructions (nvcuda::wmma, mma.sync) are not simulated. Build this source for the cuda backend only (BACKENDS cuda, cmake/GpulabBackend.cmake) and skip its sim tests with that reason."
