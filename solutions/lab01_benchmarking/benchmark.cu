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
  if (options.warmup_runs < 0 || options.min_samples < 1 || !(options.min_time_ms >= 0) ||
      !(options.target_rel_noise >= 0) || !(options.time_limit_ms > 0)) {
    throw std::invalid_argument("time_kernel: invalid TimingOptions");
  }
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  };
  // Warm-up: the first launches pay for loading the module, raising clocks and filling caches.
  for (int i = 0; i < options.warmup_runs; ++i) {
    launch(stream);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
  }
  Event start;
  Event stop;
  std::vector<double> samples;
  double total_ms = 0;
  while (true) {
    if (options.cold_l2) {
      flush_l2(stream);  // before `start`: the flush must not be part of the sample
    }
    start.record(stream);
    launch(stream);
    stop.record(stream);
    stop.synchronize();  // the host must wait: the events complete on the GPU, later
    samples.push_back(static_cast<double>(Event::elapsed_ms(start, stop)));
    total_ms += samples.back();
    if (static_cast<int>(samples.size()) >= options.min_samples &&
        total_ms >= options.min_time_ms &&
        summarize_samples(samples).rel_noise <= options.target_rel_noise) {
      break;
    }
    if (elapsed_ms() >= options.time_limit_ms) {
      break;
    }
  }
  return samples;
  // TODO(lab01) END
}

Summary summarize_samples(std::span<const double> samples_ms) {
  // TODO(lab01) BEGIN: sort a copy; mean, sample stddev, percentiles by linear interpolation
  if (samples_ms.empty()) {
    throw std::invalid_argument("summarize_samples: no samples");
  }
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  for (const double x : sorted) {
    if (!std::isfinite(x) || x < 0) {
      throw std::invalid_argument("summarize_samples: a sample is negative or not finite");
    }
  }
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<double>(sorted.size());
  auto percentile = [&](double q) {
    const double position = q * (n - 1);
    const auto below = static_cast<std::size_t>(position);
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (sorted[above] - sorted[below]) * (position - std::floor(position));
  };
  Summary s;
  s.count = sorted.size();
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (const double x : sorted) {
    squares += (x - s.mean_ms) * (x - s.mean_ms);
  }
  s.stddev_ms = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.rel_noise = s.mean_ms > 0 ? s.stddev_ms / s.mean_ms : 0.0;
  s.median_ms = percentile(0.5);
  s.p10_ms = percentile(0.1);
  s.p90_ms = percentile(0.9);
  return s;
  // TODO(lab01) END
}

double effective_bandwidth_gb_s(double bytes, double time_ms) {
  // TODO(lab01) BEGIN: bytes per second, in decimal GB
  if (!(time_ms > 0) || !(bytes >= 0)) {
    throw std::invalid_argument("effective_bandwidth_gb_s: need time_ms > 0 and bytes >= 0");
  }
  return bytes / (time_ms * 1e-3) / 1e9;
  // TODO(lab01) END
}

double achieved_gflop_s(double flops, double time_ms) {
  // TODO(lab01) BEGIN: operations per second, in GFLOP/s
  if (!(time_ms > 0) || !(flops >= 0)) {
    throw std::invalid_argument("achieved_gflop_s: need time_ms > 0 and flops >= 0");
  }
  return flops / (time_ms * 1e-3) / 1e9;
  // TODO(lab01) END
}

double fraction_of_peak(double achieved, double peak) {
  // TODO(lab01) BEGIN: the share of the peak reached
  if (!(peak > 0)) {
    throw std::invalid_argument("fraction_of_peak: peak must be positive");
  }
  return achieved / peak;
  // TODO(lab01) END
}

}  // namespace gpulab::lab01
