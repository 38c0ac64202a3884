// The sim backend's device side: what CUDA C++ kernels use beyond plain C++ — qualifiers,
// built-in variables, block and warp synchronization, warp collectives, atomics and the math
// intrinsics — implemented for the sim's CPU execution.
//
// How a kernel runs on sim: each block runs on one worker thread; each CUDA thread of the block
// is a fiber with its own stack. The scheduler runs the threads one after another, in the order
// of the launch's schedule (forward, reverse or shuffled), until each finishes or waits:
// `__syncthreads` waits for the whole block, warp collectives (`__shfl_*_sync`, `__ballot_sync`,
// `__syncwarp`, ...) wait for the lanes named in their mask and then exchange values among them.
// Threads that can never meet (a barrier some threads skip or exited before, a mask naming a lane
// that waits elsewhere) make the launch fail with cudaErrorLaunchFailure and a message that says
// which threads wait where, instead of hanging.
//
// Static `__shared__` variables are per worker thread (`static thread_local`), so all threads of a
// block share them; dynamic shared memory (`extern __shared__ T s[];`, rewritten by the build into
// a call to dynamic_shared<T>()) is allocated per launch with the launch's byte count and filled
// with 0xff bytes (NaN for floats) before each block, as uninitialized shared memory is on a GPU.
#pragma once

#include <math.h>  // NOLINT: CUDA code calls expf, sqrtf, ... in the global namespace

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "gpulab/sim/uncounted.hpp"
#include "gpulab/sim/vector_types.hpp"

// ------------------------------------------------------------------------------------------------
// Qualifiers. Kernels and device functions are ordinary host functions on sim. A device function
// defined in a header must be inline, __forceinline__ or a template (as for relocatable device
// code with nvcc).
// ------------------------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__

// ------------------------------------------------------------------------------------------------
// Built-in variables: per worker thread, set by the scheduler before it resumes a CUDA thread.
// ------------------------------------------------------------------------------------------------
extern thread_local constinit uint3 threadIdx;  // NOLINT: CUDA's names
extern thread_local constinit uint3 blockIdx;   // NOLINT
extern thread_local constinit dim3 blockDim;    // NOLINT
extern thread_local constinit dim3 gridDim;     // NOLINT
inline constexpr int warpSize = 32;             // NOLINT

namespace gpulab::sim::detail {

enum class BarrierOp : int { sync, count, all, any };
enum class WarpOp : int { sync, ballot, any, all, shfl, shfl_up, shfl_down, shfl_xor, active };

/// __syncthreads and its reductions: waits for every thread of the block; returns the reduction.
int block_barrier(BarrierOp op, int predicate, std::source_location where);

/// One warp collective: waits for the lanes in `mask`, then returns this lane's result (the value
/// read from another lane, the ballot, ...). Values travel as 64-bit patterns.
std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int lane_arg,
                              int width, std::source_location where);

/// The current launch's dynamic shared memory for this block.
void* dynamic_shared_memory(std::source_location where);

/// Ends the launch with cudaErrorLaunchFailure (or cudaErrorAssert) and the message.
[[noreturn]] void fail_kernel(bool assertion, const char* message, std::source_location where);

/// Memory counting: an atomic of `bytes` at `address`, made by the instruction at `pc`.
void count_atomic(const void* address, std::size_t bytes, const void* pc,
                  bool exchange = false) noexcept;

/// A cycle counter at the simulated device's clock (from the host's steady clock).
long long clock_cycles() noexcept;

/// What `extern __shared__ T name[];` becomes in the sim build.
template <class T>
T* dynamic_shared(std::source_location where = std::source_location::current()) {
  return static_cast<T*>(dynamic_shared_memory(where));
}

template <class T>
std::uint64_t to_bits(T value) noexcept {
  static_assert(sizeof(T) <= sizeof(std::uint64_t) && std::is_trivially_copyable_v<T>,
                "warp shuffles move values of at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <class T>
T from_bits(std::uint64_t bits) noexcept {
  T value;
  std::memcpy(static_cast<void*>(&value), &bits, sizeof(T));  // T is trivially copyable
  return value;
}

// CUDA atomics are relaxed read-modify-writes of global or shared memory. Threads of one block
// run on one worker thread; blocks run concurrently on several, so these are real atomics. Their
// own loads and stores are not instrumented for memory counting: the atomic functions below report
// each atomic once, with their call site (they are not inlined, so the return address is it).
template <class T, class Update>
__attribute__((GPULAB_SIM_UNCOUNTED)) T atomic_update(T* address, Update update) noexcept {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED));
  return old;
}

}  // namespace gpulab::sim::detail

// ------------------------------------------------------------------------------------------------
// Synchronization
// ------------------------------------------------------------------------------------------------
inline void __syncthreads(std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::block_barrier(gpulab::sim::detail::BarrierOp::sync, 0, where);
}
inline int __syncthreads_count(int predicate,
                               std::source_location where = std::source_location::current()) {
  return gpulab::sim::detail::block_barrier(gpulab::sim::detail::BarrierOp::count, predicate,
                                            where);
}
inline int __syncthreads_and(int predicate,
                             std::source_location where = std::source_location::current()) {
  return gpulab::sim::detail::block_barrier(gpulab::sim::detail::BarrierOp::all, predicate, where);
}
inline int __syncthreads_or(int predicate,
                            std::source_location where = std::source_location::current()) {
  return gpulab::sim::detail::block_barrier(gpulab::sim::detail::BarrierOp::any, predicate, where);
}
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::warp_collective(gpulab::sim::detail::WarpOp::sync, mask, 0, 0, warpSize,
                                       where);
}
inline void __threadfence_block() noexcept {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence() noexcept {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_system() noexcept {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
[[noreturn]] inline void __trap(std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::fail_kernel(false, "__trap() called", where);
}
inline long long clock64() noexcept {
  return gpulab::sim::detail::clock_cycles();
}

// ------------------------------------------------------------------------------------------------
// Warp collectives
// ------------------------------------------------------------------------------------------------
// The lanes of the warp that reach this __activemask before the block next waits (every other
// lane has exited or waits elsewhere): on sim, the lanes a GPU would have converged here.
inline unsigned __activemask(std::source_location where = std::source_location::current()) {
  return static_cast<unsigned>(gpulab::sim::detail::warp_collective(
      gpulab::sim::detail::WarpOp::active, 0xffffffffu, 0, 0, warpSize, where));
}
inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location where = std::source_location::current()) {
  return static_cast<unsigned>(gpulab::sim::detail::warp_collective(
      gpulab::sim::detail::WarpOp::ballot, mask, predicate != 0 ? 1 : 0, 0, warpSize, where));
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return static_cast<int>(gpulab::sim::detail::warp_collective(
      gpulab::sim::detail::WarpOp::any, mask, predicate != 0 ? 1 : 0, 0, warpSize, where));
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return static_cast<int>(gpulab::sim::detail::warp_collective(
      gpulab::sim::detail::WarpOp::all, mask, predicate != 0 ? 1 : 0, 0, warpSize, where));
}

#define GPULAB_SIM_SHUFFLE(name, op, Arg)                                          \
  template <class T>                                                               \
  T name(unsigned mask, T var, Arg lane_arg, int width = warpSize,                 \
         std::source_location where = std::source_location::current()) {           \
    return gpulab::sim::detail::from_bits<T>(gpulab::sim::detail::warp_collective( \
        gpulab::sim::detail::WarpOp::op, mask, gpulab::sim::detail::to_bits(var),  \
        static_cast<int>(lane_arg), width, where));                                \
  }
GPULAB_SIM_SHUFFLE(__shfl_sync, shfl, int)
GPULAB_SIM_SHUFFLE(__shfl_up_sync, shfl_up, unsigned)
GPULAB_SIM_SHUFFLE(__shfl_down_sync, shfl_down, unsigned)
GPULAB_SIM_SHUFFLE(__shfl_xor_sync, shfl_xor, int)
#undef GPULAB_SIM_SHUFFLE

// ------------------------------------------------------------------------------------------------
// Atomics (return the old value)
// ------------------------------------------------------------------------------------------------
// `exchange`: what it stores does not depend on what it read (atomicExch), which the sanitizer's
// check of reads of shared memory no thread wrote takes as a write that sets a value.
#define GPULAB_SIM_ATOMIC_OP(name, T, expression, exchange)                                       \
  __attribute__((noinline, GPULAB_SIM_UNCOUNTED)) inline T name(T* address, T val) noexcept {     \
    gpulab::sim::detail::count_atomic(address, sizeof(T), __builtin_return_address(0), exchange); \
    return gpulab::sim::detail::atomic_update(address, [val](T old) { return expression; });      \
  }
#define GPULAB_SIM_ATOMIC(name, T, expression) GPULAB_SIM_ATOMIC_OP(name, T, expression, false)
GPULAB_SIM_ATOMIC(atomicAdd, int, old + val)
GPULAB_SIM_ATOMIC(atomicAdd, unsigned int, old + val)
GPULAB_SIM_ATOMIC(atomicAdd, unsigned long long, old + val)
GPULAB_SIM_ATOMIC(atomicAdd, float, old + val)
GPULAB_SIM_ATOMIC(atomicAdd, double, old + val)
GPULAB_SIM_ATOMIC(atomicSub, int, old - val)
GPULAB_SIM_ATOMIC(atomicSub, unsigned int, old - val)
GPULAB_SIM_ATOMIC_OP(atomicExch, int, (static_cast<void>(old), val), true)
GPULAB_SIM_ATOMIC_OP(atomicExch, unsigned int, (static_cast<void>(old), val), true)
GPULAB_SIM_ATOMIC_OP(atomicExch, unsigned long long, (static_cast<void>(old), val), true)
GPULAB_SIM_ATOMIC_OP(atomicExch, float, (static_cast<void>(old), val), true)
GPULAB_SIM_ATOMIC(atomicMax, int, old < val ? val : old)
GPULAB_SIM_ATOMIC(atomicMax, unsigned int, old < val ? val : old)
GPULAB_SIM_ATOMIC(atomicMax, long long, old < val ? val : old)
GPULAB_SIM_ATOMIC(atomicMax, unsigned long long, old < val ? val : old)
GPULAB_SIM_ATOMIC(atomicMin, int, val < old ? val : old)
GPULAB_SIM_ATOMIC(atomicMin, unsigned int, val < old ? val : old)
GPULAB_SIM_ATOMIC(atomicMin, long long, val < old ? val : old)
GPULAB_SIM_ATOMIC(atomicMin, unsigned long long, val < old ? val : old)
GPULAB_SIM_ATOMIC(atomicAnd, int, old& val)
GPULAB_SIM_ATOMIC(atomicAnd, unsigned int, old& val)
GPULAB_SIM_ATOMIC(atomicAnd, unsigned long long, old& val)
GPULAB_SIM_ATOMIC(atomicOr, int, old | val)
GPULAB_SIM_ATOMIC(atomicOr, unsigned int, old | val)
GPULAB_SIM_ATOMIC(atomicOr, unsigned long long, old | val)
GPULAB_SIM_ATOMIC(atomicXor, int, old ^ val)
GPULAB_SIM_ATOMIC(atomicXor, unsigned int, old ^ val)
GPULAB_SIM_ATOMIC(atomicXor, unsigned long long, old ^ val)
GPULAB_SIM_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
GPULAB_SIM_ATOMIC(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)
#undef GPULAB_SIM_ATOMIC
#undef GPULAB_SIM_ATOMIC_OP

#define GPULAB_SIM_ATOMIC_CAS(T)                                                                   \
  __attribute__((noinline, GPULAB_SIM_UNCOUNTED)) inline T atomicCAS(T* address, T compare,        \
                                                                     T val) noexcept {             \
    gpulab::sim::detail::count_atomic(address, sizeof(T), __builtin_return_address(0));            \
    __atomic_compare_exchange(address, &compare, &val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return compare;                                                                                \
  }
GPULAB_SIM_ATOMIC_CAS(int)
GPULAB_SIM_ATOMIC_CAS(unsigned int)
GPULAB_SIM_ATOMIC_CAS(unsigned long long)
GPULAB_SIM_ATOMIC_CAS(unsigned short)
#undef GPULAB_SIM_ATOMIC_CAS

// ------------------------------------------------------------------------------------------------
// Loads, integer and float intrinsics, min/max
// ------------------------------------------------------------------------------------------------
template <class T>
T __ldg(const T* address) noexcept {
  return *address;
}

// CUDA's min and max overloads (math_functions.hpp): the same set, so a call that is ambiguous
// with nvcc is ambiguous here too.
#define GPULAB_SIM_MIN_MAX(A, B, R)                                                       \
  constexpr R min(A a, B b) noexcept {                                                    \
    return static_cast<R>(b) < static_cast<R>(a) ? static_cast<R>(b) : static_cast<R>(a); \
  }                                                                                       \
  constexpr R max(A a, B b) noexcept {                                                    \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); \
  }
GPULAB_SIM_MIN_MAX(int, int, int)
GPULAB_SIM_MIN_MAX(unsigned int, unsigned int, unsigned int)
GPULAB_SIM_MIN_MAX(int, unsigned int, unsigned int)
GPULAB_SIM_MIN_MAX(unsigned int, int, unsigned int)
GPULAB_SIM_MIN_MAX(long, long, long)
GPULAB_SIM_MIN_MAX(unsigned long, unsigned long, unsigned long)
GPULAB_SIM_MIN_MAX(long, unsigned long, unsigned long)
GPULAB_SIM_MIN_MAX(unsigned long, long, unsigned long)
GPULAB_SIM_MIN_MAX(long long, long long, long long)
GPULAB_SIM_MIN_MAX(unsigned long long, unsigned long long, unsigned long long)
GPULAB_SIM_MIN_MAX(long long, unsigned long long, unsigned long long)
GPULAB_SIM_MIN_MAX(unsigned long long, long long, unsigned long long)
GPULAB_SIM_MIN_MAX(float, float, float)
GPULAB_SIM_MIN_MAX(double, double, double)
GPULAB_SIM_MIN_MAX(float, double, double)
GPULAB_SIM_MIN_MAX(double, float, double)
#undef GPULAB_SIM_MIN_MAX

inline float __expf(float x) noexcept {
  return expf(x);
}
inline float __logf(float x) noexcept {
  return logf(x);
}
inline float __log2f(float x) noexcept {
  return log2f(x);
}
inline float __powf(float x, float y) noexcept {
  return powf(x, y);
}
inline float __sinf(float x) noexcept {
  return sinf(x);
}
inline float __cosf(float x) noexcept {
  return cosf(x);
}
inline float __tanf(float x) noexcept {
  return tanf(x);
}
inline float __fdividef(float x, float y) noexcept {
  return x / y;
}
inline float __frcp_rn(float x) noexcept {
  return 1.0f / x;
}
inline float __fsqrt_rn(float x) noexcept {
  return sqrtf(x);
}
inline float __fmaf_rn(float x, float y, float z) noexcept {
  return fmaf(x, y, z);
}
inline float __fadd_rn(float x, float y) noexcept {
  return x + y;
}
inline float __fsub_rn(float x, float y) noexcept {
  return x - y;
}
inline float __fmul_rn(float x, float y) noexcept {
  return x * y;
}
inline float __saturatef(float x) noexcept {
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;  // NaN gives 0, as on a GPU
}
inline float rsqrtf(float x) noexcept {
  return 1.0f / sqrtf(x);
}
inline double rsqrt(double x) noexcept {
  return 1.0 / sqrt(x);
}
inline int __float2int_rn(float x) noexcept {
  return static_cast<int>(nearbyintf(x));
}
inline int __float2int_rz(float x) noexcept {
  return static_cast<int>(x);
}
inline float __int2float_rn(int x) noexcept {
  return static_cast<float>(x);
}
inline int __float_as_int(float x) noexcept {
  return gpulab::sim::detail::from_bits<int>(gpulab::sim::detail::to_bits(x));
}
inline float __int_as_float(int x) noexcept {
  return gpulab::sim::detail::from_bits<float>(gpulab::sim::detail::to_bits(x));
}
inline unsigned __float_as_uint(float x) noexcept {
  return gpulab::sim::detail::from_bits<unsigned>(gpulab::sim::detail::to_bits(x));
}
inline float __uint_as_float(unsigned x) noexcept {
  return gpulab::sim::detail::from_bits<float>(gpulab::sim::detail::to_bits(x));
}
inline long long __double_as_longlong(double x) noexcept {
  return gpulab::sim::detail::from_bits<long long>(gpulab::sim::detail::to_bits(x));
}
inline double __longlong_as_double(long long x) noexcept {
  return gpulab::sim::detail::from_bits<double>(gpulab::sim::detail::to_bits(x));
}
inline int __popc(unsigned x) noexcept {
  return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) noexcept {
  return __builtin_popcountll(x);
}
inline int __clz(int x) noexcept {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) noexcept {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) noexcept {
  return __builtin_ffs(x);
}
inline int __ffsll(long long x) noexcept {
  return __builtin_ffsll(x);
}
inline unsigned __brev(unsigned x) noexcept {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1u) {
    r = (r << 1u) | (x & 1u);
  }
  return r;
}
// 24-bit multiplies: the low 32 bits of the product of the low 24 bits of each operand.
inline int __mul24(int x, int y) noexcept {
  const auto low24 = [](int v) { return static_cast<long long>(v << 8) >> 8; };
  return static_cast<int>(static_cast<unsigned long long>(low24(x) * low24(y)) & 0xffffffffu);
}
inline unsigned __umul24(unsigned x, unsigned y) noexcept {
  return (x & 0xffffffu) * (y & 0xffffffu);
}
inline int __mulhi(int x, int y) noexcept {
  return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
inline unsigned __umulhi(unsigned x, unsigned y) noexcept {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
