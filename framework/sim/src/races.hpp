// The sanitizer's race check on shared memory (GPULAB_SIM_SANITIZE, docs/sim.md "The sanitizer"):
// between two barriers of a block, two CUDA threads that touch the same bytes of shared memory, at
// least one of them writing, race: nothing orders the two accesses, and a GPU may make them in
// either order. Atomics do not race with each other, only with plain accesses. Two lanes of one
// warp are ordered by a __syncwarp() that both took part in between their accesses, as CUDA
// orders them; nothing else of a warp orders memory (a shuffle or a vote does not).
//
// The check runs on what the threads did, not on the order the simulator ran them in: a race is
// found under every schedule, whether or not it changed a value this time. Internal to
// framework/sim (counting.cpp collects the accesses, block.cpp fails the block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/sim/vector_types.hpp"

namespace gpulab::sim::detail {

/// One access of a CUDA thread to shared memory in the current phase of its block.
struct SharedAccess {
  std::uint64_t address = 0;
  std::uint64_t pc = 0;      ///< the instruction after the access (its callback's return address)
  std::uint32_t thread = 0;  ///< the thread's linear index in its block
  std::uint32_t epoch = 0;   ///< the __syncwarp() calls its thread completed before, this phase
  std::uint32_t bytes = 0;
  bool store = false;     ///< it wrote (a store, or an atomic's update)
  bool atomic = false;    ///< an atomic read-modify-write
  bool exchange = false;  ///< an atomicExch: what it stored does not depend on what it read
};

/// A race: `write` wrote bytes that `other`, another thread's access, read or wrote too.
struct SharedRace {
  SharedAccess write;
  SharedAccess other;
  std::uint64_t words = 0;  ///< how many 4-byte words of shared memory raced in the phase
};

/// The race at the lowest address among `accesses` (the phase's, in any order), or none. Threads
/// t and u are lanes of one warp when t / 32 == u / 32. Deterministic: the same set of accesses
/// gives the same answer in any order.
[[nodiscard]] std::optional<SharedRace> find_shared_race(const std::vector<SharedAccess>& accesses);

/// The race in words, for the failure of the block of dimensions `block` whose dynamic shared
/// memory is `dynamic_bytes` at `dynamic_begin`: "a race on shared memory: thread (3,0,0) wrote 4
/// bytes of partial, byte 12 of its 1024 (static __shared__ of ...), at k.cu:47, and thread
/// (131,0,0) read them at k.cu:47, with no barrier between; 64 words of shared memory raced
/// between these two barriers". Source lines and names come from the program's debug information
/// where it has them (debug_info.hpp).
[[nodiscard]] std::string describe_shared_race(const SharedRace& race, const dim3& block,
                                               std::uintptr_t dynamic_begin,
                                               std::size_t dynamic_bytes);

// The words the sanitizer's reports share.

/// Whether two threads of a block are lanes of one warp.
[[nodiscard]] bool same_warp(const SharedAccess& a, const SharedAccess& b);
/// "(x,y,z)": the thread of linear index `linear` in a block of dimensions `block`.
[[nodiscard]] std::string thread_text(std::uint32_t linear, const dim3& block);
/// "at k.cu:47" after `separator`, or nothing where the debug information has no line for `pc`.
[[nodiscard]] std::string line_text(std::uint64_t pc, const char* separator = " ");
/// What holds a byte of shared memory: "dynamic shared memory (extern __shared__), byte 12 of its
/// 4096", the static __shared__ variable and byte (shared_variable_at), or the bare address.
[[nodiscard]] std::string shared_place(std::uint64_t address, std::uintptr_t dynamic_begin,
                                       std::size_t dynamic_bytes);

}  // namespace gpulab::sim::detail
