// Lab 02: profiling the components of attention. Fill in the TODO(lab02) regions; lab02.hpp has
// the contract of every function and README.md the background.
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/lab.hpp"
#include "gpulab/core/ranges.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/bench.hpp"
#include "lab02.hpp"

namespace gpulab::lab02 {

Profile profile_attention(const kernels::AttentionConfig& config,
                          kernels::AttentionBuffers& buffers, cudaStream_t stream,
                          const gpulab::BenchOptions& options) {
  // TODO(lab02) BEGIN: per component, a gpulab::ScopedRange around gpulab::measure; then shares
  options.validate();  // before any launch: bad options must not leave half a profile behind
  config.validate();
  Profile profile;
  for (const kernels::Component component : kernels::all_components()) {
    ComponentTiming timing;
    timing.name = std::string(kernels::component_name(component));
    {
      // The range brackets the whole measurement, warm-up included, so in Nsight Systems every
      // launch of this component sits under its name. It closes before the next component's
      // opens: the five ranges follow one another on the timeline.
      const gpulab::ScopedRange range(timing.name);
      const gpulab::Measurement measurement = gpulab::measure(
          [&](cudaStream_t s) { kernels::run_component(component, config, buffers, s); }, stream,
          options);
      // The median: one slow sample (a context switch, a clock change) does not move it.
      timing.time_ms = measurement.summary.median_ms;
    }
    timing.cost = kernels::component_cost(config, component);
    timing.gflop_s = gpulab::flop_rate_gflop_s(timing.cost.flops, timing.time_ms);
    timing.gb_s = gpulab::bandwidth_gb_s(timing.cost.bytes, timing.time_ms);
    profile.total_ms += timing.time_ms;
    profile.components.push_back(std::move(timing));
  }
  for (std::size_t i = 0; i < profile.components.size(); ++i) {
    ComponentTiming& timing = profile.components[i];
    timing.share = timing.time_ms / profile.total_ms;
    if (timing.time_ms > profile.components[profile.bottleneck].time_ms) {
      profile.bottleneck = i;  // strictly greater: the first of equal times stays
    }
  }
  return profile;
  // TODO(lab02) END
}

std::string format_profile(const Profile& profile) {
  // TODO(lab02) BEGIN: check the profile, then the header, a row per component, Total, Bottleneck
  if (profile.components.empty()) {
    throw std::invalid_argument("format_profile: the profile has no components");
  }
  if (profile.bottleneck >= profile.components.size()) {
    throw std::invalid_argument("format_profile: bottleneck " + std::to_string(profile.bottleneck) +
                                " is not an index into " +
                                std::to_string(profile.components.size()) + " components");
  }
  if (!(profile.total_ms > 0)) {
    throw std::invalid_argument("format_profile: total_ms must be positive, got " +
                                std::to_string(profile.total_ms));
  }
  std::ostringstream out;
  out << std::fixed;
  // setw is a minimum width, like printf's: the space written before each number keeps the
  // columns apart even when a number is wider than its column.
  const auto row = [&out](const std::string& name, double time_ms, double percent, double gflop_s,
                          double gb_s) {
    out << std::left << std::setw(20) << name << std::right << ' ' << std::setprecision(4)
        << std::setw(8) << time_ms << ' ' << std::setprecision(1) << std::setw(9) << percent << "% "
        << std::setw(9) << gflop_s << ' ' << std::setw(6) << gb_s << '\n';
  };
  out << "Component           Time (ms)    % Total   GFLOP/s   GB/s\n";
  double flops = 0;
  double bytes = 0;
  for (const ComponentTiming& timing : profile.components) {
    row(timing.name, timing.time_ms, timing.share * 100, timing.gflop_s, timing.gb_s);
    flops += timing.cost.flops;
    bytes += timing.cost.bytes;
  }
  row("Total", profile.total_ms, 100.0, gpulab::flop_rate_gflop_s(flops, profile.total_ms),
      gpulab::bandwidth_gb_s(bytes, profile.total_ms));
  const ComponentTiming& slowest = profile.components[profile.bottleneck];
  out << "Bottleneck: " << slowest.name << " (" << std::setprecision(1) << slowest.share * 100
      << "%)\n";
  return out.str();
  // TODO(lab02) END
}

}  // namespace gpulab::lab02
