// The sim backend's <cuda_runtime_api.h>: gpulab's CPU implementation of the CUDA runtime API.
#pragma once

#include "gpulab/sim/runtime.hpp"
