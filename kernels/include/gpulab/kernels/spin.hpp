// A kernel of known duration: one thread busy-waits on a clock for the requested time. Benchmark
// tests use it to check a timing harness against a kernel whose time is known in advance (an
// event-timed spin of 5 ms must measure at least 5 ms, whatever else the harness adds).
#pragma once

#include <cuda_runtime.h>

namespace gpulab::kernels {

/// The longest spin_kernel accepts: one hour, far beyond any benchmark (a display GPU's watchdog
/// ends a kernel after a few seconds anyway).
inline constexpr double kMaxSpinMilliseconds = 3.6e6;

/// Launches one block of one thread on `stream` that busy-waits for `milliseconds` (never less;
/// on cuda up to 1 us more, one step of the timer) and returns.
/// On cuda the wait is measured with the %globaltimer register (nanoseconds of wall time); on sim
/// with clock64() at the device's clock rate (sim's clock64 is the host's steady clock, scaled).
/// Throws std::invalid_argument for a negative or non-finite duration, or one above
/// kMaxSpinMilliseconds.
void spin_kernel(double milliseconds, cudaStream_t stream = nullptr);

}  // namespace gpulab::kernels
