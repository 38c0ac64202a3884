// The classes of arithmetic the gpulab_count_ops plugin (count_ops.cpp) counts, shared with the
// sim runtime that reads the counts (src/counting.cpp): each basic block of a translated file adds
// its count of class `c` to gpulab_sim_ops[c], an `extern "C" thread_local std::uint64_t
// gpulab_sim_ops[kOpSlots]` the runtime defines. Both sides index the array with these values.
#pragma once

namespace gpulab::sim {

enum OpClass : unsigned {
  kFp32Fma,     // FP32 fused multiply-adds
  kFp32Other,   // other FP32: add, multiply, min, max, compare
  kFp64,        // FP64 arithmetic
  kInteger,     // integer arithmetic, logic and compares (not addresses or loop control)
  kSpecial,     // special functions: exp, log, sin, cos, sqrt, reciprocal
  kConversion,  // int <-> float, float <-> double
  kBranch,      // conditional branches
  kAddress,     // integer arithmetic that only addresses memory or controls a loop
  kOpClasses    // how many classes
};

/// Elements of gpulab_sim_ops: the classes, rounded up to a power of two.
inline constexpr unsigned kOpSlots = 8;
static_assert(kOpClasses <= kOpSlots);

}  // namespace gpulab::sim
