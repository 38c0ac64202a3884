// gpulab-sim-bench --rules: the rules' predicted gains (gpulab/core/rules.hpp) against the real
// fixes of the catalog's ladders. For each step whose next level fixes one problem (the transpose's
// column writes, its tile's bank conflicts, the reduction's strided index, the histogram's global
// atomics), the level is counted by line on sim, the rule must name the line the next level
// changes, and its predicted speed-up must be within 2x of the modeled speed-up of the next level,
// on several specs (docs/results/rules-*.md).
#pragma once

namespace gpulab::sim_bench {

/// Prints the table of steps; returns kSuccess when every step's rule names its line and predicts
/// within 2x, else kFailure. Throws VerificationError for a wrong result, std::runtime_error where
/// the build cannot count.
[[nodiscard]] int run_rules_check();

}  // namespace gpulab::sim_bench
