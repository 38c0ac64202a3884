// How far the time model is from real GPUs: modeled times set beside measured ones for the same
// kernel, op, level, size and spec, summed up the way issue 37 states its goals.
//
//   error        |modeled / measured - 1|, per kernel; its mean over the kernels
//   worst ratio  max(modeled / measured, measured / modeled): how many times off the worst is
//   order        per ladder (the levels of one op at one size), whether the model ranks every pair
//                of levels as the measurements do
#pragma once

#include <string>
#include <vector>

namespace gpulab {

/// One kernel measured on a GPU and modeled for the same spec.
struct FidelityPoint {
  std::string ladder;  ///< the levels compared with each other, e.g. "transpose 8192"
  std::string name;    ///< the kernel within it, e.g. "level 2 (coalesced)"
  double measured_ms = 0;
  double modeled_ms = 0;
};

/// Whether one ladder keeps its measured order on the model.
struct LadderOrder {
  std::string ladder;
  bool kept = true;
  std::string first_swap;  ///< when not kept: the first pair the model ranks the other way
};

/// The summary of a set of points.
struct FidelitySummary {
  double mean_abs_error = 0;         ///< mean of |modeled / measured - 1|
  double worst_ratio = 1;            ///< max(modeled / measured, measured / modeled)
  std::string worst;                 ///< "ladder: name" of the worst point
  std::vector<LadderOrder> ladders;  ///< in order of first appearance
};

/// Summarizes `points`. Throws std::invalid_argument for none, or for a time that is not finite
/// and positive, naming the point.
[[nodiscard]] FidelitySummary summarize_fidelity(const std::vector<FidelityPoint>& points);

}  // namespace gpulab
