// Rules with a modeled gain: a kernel's problems found in its counts per source line
// (counters.hpp's SourceLineCounters, counted on sim by line), each said in words with its line
// and what fixing it would gain by the time model (traffic_model.hpp), like the rules of Nsight
// Compute's sections with their estimated speed-up. The gain is the kernel's modeled time over its
// modeled time with the problem's figures replaced by those of the fix, on the same spec: modeled,
// never measured. docs/sim.md, "Rules", says what each rule assumes of the fix.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab {

enum class Problem {
  uncoalesced,        ///< a line's global requests move sectors beyond the bytes asked for
  bank_conflicts,     ///< a line's shared-memory requests take more wavefronts than needed
  atomic_contention,  ///< a line's global atomics serialize on one sector in L2
  tail,               ///< the grid's last wave leaves SMs idle
  launch_bound,       ///< launch overhead is most of the kernel's time
};

/// "uncoalesced", "bank conflicts", "atomic contention", "tail effect", "launch-bound".
[[nodiscard]] std::string_view to_string(Problem problem) noexcept;

/// One problem of a kernel.
struct Finding {
  Problem problem = Problem::uncoalesced;
  std::string file;    ///< the line's file, as counted; "" for a problem of the whole kernel
  unsigned line = 0;   ///< 0 for a problem of the whole kernel
  std::string what;    ///< the problem and its fix in words, with the counted figures
  double speedup = 1;  ///< the kernel's modeled time now over its modeled time with the fix
};

/// The problems of one kernel's launches (each counted by line) on `spec`, largest modeled
/// speed-up first, those that would gain at least `min_speedup`. Launches that cannot run on the
/// spec throw as model_time() does.
[[nodiscard]] std::vector<Finding> find_problems(const std::vector<CountedLaunch>& launches,
                                                 const GpuSpec& spec, double min_speedup = 1.05);

/// A finding of `kernel` as a results file's result (result_kind::finding): params kernel,
/// problem (to_string), file, line ("" and "0" for the whole kernel), what; metric speedup_ratio,
/// modeled on `spec_name`.
[[nodiscard]] Result finding_result(const std::string& kernel, const Finding& finding,
                                    const std::string& spec_name);

/// The launch with the figures of `line` changed to those of the fix of `problem` (the others as
/// counted): what find_problems() models. For the line problems only.
[[nodiscard]] CountedLaunch with_fix(const CountedLaunch& launch, Problem problem,
                                     const SourceLineCounters& line);

}  // namespace gpulab
