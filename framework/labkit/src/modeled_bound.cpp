#include "gpulab/labkit/modeled_bound.hpp"

#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/traffic_model.hpp"

#if !GPULAB_BACKEND_CUDA
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab::labkit {

std::optional<LongestLaunch> longest_modeled_launch(const std::function<void()>& work,
                                                    const GpuSpec& fallback) {
#if GPULAB_BACKEND_CUDA
  work();
  static_cast<void>(fallback);
  return std::nullopt;
#else
  if (!sim::counting_available()) {
    work();
    return std::nullopt;
  }
  std::optional<LongestLaunch> longest;
  double dram_bytes = 0;
  for (const CountedLaunch& launch : sim::count_launches(work)) {
    dram_bytes +=
        static_cast<double>(launch.counters.dram_bytes_read + launch.counters.dram_bytes_written);
    const ModeledTime modeled = model_launch(launch, find_spec(launch.spec).value_or(fallback));
    if (!longest || modeled.time_s > longest->time_s) {
      longest = LongestLaunch{.kernel = launch.kernel,
                              .bound = std::string(to_string(modeled.bound)),
                              .time_s = modeled.time_s};
    }
  }
  if (longest) {
    longest->dram_bytes = dram_bytes;
  }
  return longest;
#endif
}

}  // namespace gpulab::labkit
