// The classes of arithmetic the gpulab_count_ops plugins (count_ops.cpp for GCC,
// count_ops_llvm.cpp for clang) count, shared with the sim runtime that reads the counts
// (src/counting.cpp): each basic block of a translated file adds its count of class `c` to
// gpulab_sim_ops[c], an `extern "C" thread_local std::uint64_t gpulab_sim_ops[kOpSlots]` the
// runtime defines. Both sides index the array with these values. Below them, the counting rules
// the two plugins share, and the layout of the access callbacks' width argument.
#pragma once

#include <array>
#include <string_view>

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

/// The access callbacks' `bytes` argument (__gpulab_sim_load and __gpulab_sim_store, inserted by
/// the GCC plugin's `memory` argument): the access's width in the low bits and, from this bit on,
/// the base-2 logarithm of the alignment it needs (0 where nothing is known: no check).
inline constexpr unsigned kAlignmentShift = 56;

/// Elements of gpulab_sim_ops: the classes, rounded up to a power of two.
inline constexpr unsigned kOpSlots = 8;
static_assert(kOpClasses <= kOpSlots);

/// A basic block's counts, per class.
using BlockCounts = std::array<unsigned, kOpClasses>;

/// An integer division or remainder of `n` lanes by a value the compiler does not know: a GPU has
/// no divide instruction, and nvcc emits a sequence (the CUDA C++ Programming Guide: integer
/// division and modulo "compile to up to 20 instructions"). On an H200, `tid % (2 * s)` executed
/// 15 warp instructions more than a multiply in its place, 3 of them on the special-function pipe
/// (docs/results/h200-sxm-2026-11-30.md): a conversion to float, a reciprocal, a conversion back
/// and 12 integer multiply-adds, adds and compares.
inline void count_integer_division(unsigned n, BlockCounts& c) {
  c[kInteger] += 12 * n;
  c[kConversion] += 2 * n;
  c[kSpecial] += n;
}

/// Whether a call of the math library function `name` is a special function (one each).
inline bool is_special_function(std::string_view name) {
  constexpr std::string_view kNames[] = {
      "expf", "exp2f",   "exp10f", "expm1f", "logf", "log2f", "log10f", "log1pf", "sinf", "cosf",
      "tanf", "sincosf", "sqrtf",  "cbrtf",  "powf", "tanhf", "erff",   "exp",    "exp2", "log",
      "log2", "log10",   "sin",    "cos",    "tan",  "sqrt",  "pow",    "tanh",   "erf"};
  for (const std::string_view n : kNames) {
    if (name == n) {
      return true;
    }
  }
  return false;
}

}  // namespace gpulab::sim
