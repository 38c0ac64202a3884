// What bounds a lab's work on the sim's time model: the reports' "modeled bound" columns.
//
//   const auto longest = gpulab::labkit::longest_modeled_launch([&] { run_level(stream); },
//                                                               ctx.spec);
//   if (longest) table.add_row({..., longest->bound});  // "L1/shared", "DRAM bandwidth", ...
//
// The work runs once with the sim counting its launches; each launch is modeled on its spec
// (gpulab::model_launch, the rule the modeled clock and `gpulab profile` use) and the one it gives
// the most time is kept. A roofline column places the work's declared FLOPs and bytes against two
// roofs; this is the term of the time model (DRAM, L2, L1/shared, issue, FP32, tensor, atomics,
// latency, launch) that sets the longest kernel's time.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "gpulab/core/specs.hpp"

namespace gpulab::labkit {

/// The launch of some work that the time model gives the most time.
struct LongestLaunch {
  std::string kernel;     ///< its kernel, as counted (e.g. "batched_gemm_kernel")
  std::string bound;      ///< the time model's largest term (to_string(ModelBound))
  double time_s = 0;      ///< its modeled time
  double dram_bytes = 0;  ///< DRAM bytes read and written, counted over every launch of the work
};

/// Runs `work` once, its launches counted, and returns the longest by the time model; a launch on
/// an unknown spec is modeled on `fallback`. nullopt on the cuda backend, in a sim build that
/// cannot count, and when the work launched nothing (it ran all the same). Throws what `work` or
/// the device throws.
[[nodiscard]] std::optional<LongestLaunch> longest_modeled_launch(const std::function<void()>& work,
                                                                  const GpuSpec& fallback);

}  // namespace gpulab::labkit
