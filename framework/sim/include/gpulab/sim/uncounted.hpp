// GPULAB_SIM_UNCOUNTED marks a sim function whose own loads and stores the memory counting must not
// see: the atomics and the WMMA operations, which report what a GPU does once, themselves
// (framework/sim/src/counting.cpp). Each compiler plugin reads its compiler's attribute
// (framework/sim/plugin): GCC's no_sanitize_address, clang's disable_sanitizer_instrumentation
// (clang drops no_sanitize_address when AddressSanitizer is off).
#pragma once

#if defined(__clang__)
#define GPULAB_SIM_UNCOUNTED no_sanitize_address, disable_sanitizer_instrumentation
#else
#define GPULAB_SIM_UNCOUNTED no_sanitize_address
#endif
