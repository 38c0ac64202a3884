// The sim backend's <cuda_runtime.h>: gpulab's CPU implementation of the CUDA runtime.
#pragma once

#include "gpulab/sim/runtime.hpp"
