#include "gpulab/kernels/spin.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab::kernels {
namespace {

// The clock the spin reads, and its ticks per millisecond: the only backend difference, kept in
// one place.
//   cuda: %globaltimer, a nanosecond wall clock. clock64() counts SM cycles, and the SM clock
//         changes with boost and throttling, so a cycle count does not map to a fixed time.
//   sim:  inline PTX is not C++ (the host compiler cannot run it), but sim's clock64() is the
//         host's steady clock scaled by the device's clock rate, so cycles / rate is wall time.
#if defined(GPULAB_BACKEND_SIM)
__device__ long long clock_ticks() {
  return clock64();
}

constexpr double kTickStep = 1.0;  // clock64 advances by about one cycle

double ticks_per_ms() {
  int device = 0;
  GPULAB_CHECK(cudaGetDevice(&device));
  int khz = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<double>(khz);  // kHz = cycles per millisecond
}
#else
__device__ long long clock_ticks() {
  long long ns = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// %globaltimer advances in steps of up to 1 us on some GPUs (32 ns on others): a reading can lag
// the true time by one step, so the spin waits one step longer than asked.
constexpr double kTickStep = 1000.0;

double ticks_per_ms() {
  return 1e6;
}  // nanoseconds
#endif

__global__ void spin_wait_kernel(long long ticks) {
  const long long start = clock_ticks();
  while (clock_ticks() - start < ticks) {
  }
}

}  // namespace

void spin_kernel(double milliseconds, cudaStream_t stream) {
  if (!std::isfinite(milliseconds) || milliseconds < 0.0 || milliseconds > kMaxSpinMilliseconds) {
    std::ostringstream message;
    message << "spin_kernel: milliseconds must be finite, >= 0 and at most "
            << static_cast<long long>(kMaxSpinMilliseconds) << " (one hour), got " << milliseconds;
    throw std::invalid_argument(message.str());
  }
  // Rounded up, so the kernel never waits less than asked.
  const double ticks = std::ceil(milliseconds * ticks_per_ms()) + kTickStep;
  spin_wait_kernel<<<1, 1, 0, stream>>>(static_cast<long long>(ticks));
  GPULAB_CHECK_LAUNCH();
}

std::span<const KernelRef> spin_kernels() {
  static const KernelRef entries[] = {GPULAB_KERNEL_REF(spin_wait_kernel, kNoDynamicShared)};
  return entries;
}

}  // namespace gpulab::kernels
