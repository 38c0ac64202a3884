// GPULAB_SIM_ASAN is defined when this translation unit is built with AddressSanitizer (GCC
// defines __SANITIZE_ADDRESS__, Clang answers __has_feature). Internal to the sim runtime.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define GPULAB_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPULAB_SIM_ASAN 1
#endif
#endif
