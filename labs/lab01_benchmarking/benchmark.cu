// Lab 01: benchmarking a kernel correctly. Fill in the TODO(lab01) regions; lab01.hpp has the
// contract of every function and README.md the background.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/lab.hpp"
#include "gpulab/runtime/bench.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/stream.hpp"
#include "lab01.hpp"

namespace gpulab::lab01 {

std::vector<double> time_kernel(const Launch& launch, cudaStream_t stream,
                                const TimingOptions& options) {
  // TODO(lab01) BEGIN: validate the options, warm up, then sample with two gpulab::Event
  static_cast<void>(launch), static_cast<void>(stream), static_cast<void>(options);
  gpulab::not_implemented("lab01", "time_kernel");
  // TODO(lab01) END
}

Summary summarize_samples(std::span<const double> samples_ms) {
  // TODO(lab01) BEGIN: sort a copy; mean, sample stddev, percentiles by linear interpolation
  static_cast<void>(samples_ms);
  gpulab::not_implemented("lab01", "summarize_samples");
  // TODO(lab01) END
}

double effective_bandwidth_gb_s(double bytes, double time_ms) {
  // TODO(lab01) BEGIN: bytes per second, in decimal GB
  static_cast<void>(bytes), static_cast<void>(time_ms);
  gpulab::not_implemented("lab01", "effective_bandwidth_gb_s");
  // TODO(lab01) END
}

double achieved_gflop_s(double flops, double time_ms) {
  // TODO(lab01) BEGIN: operations per second, in GFLOP/s
  static_cast<void>(flops), static_cast<void>(time_ms);
  gpulab::not_implemented("lab01", "achieved_gflop_s");
  // TODO(lab01) END
}

double fraction_of_peak(double achieved, double peak) {
  // TODO(lab01) BEGIN: the share of the peak reached
  static_cast<void>(achieved), static_cast<void>(peak);
  gpulab::not_implemented("lab01", "fraction_of_peak");
  // TODO(lab01) END
}

}  // namespace gpulab::lab01
