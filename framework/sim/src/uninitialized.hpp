// The sanitizer's check of reads of shared memory no thread wrote (GPULAB_SIM_SANITIZE, docs/sim.md
// "The sanitizer"): on a GPU a block's shared memory starts uninitialized, holding whatever an
// earlier block of any kernel left there, so a read of a byte that no thread of the block wrote
// before it reads a value nobody chose. Before it means: in an earlier phase of the block (between
// earlier barriers), earlier in the reading thread's own order, or, in the same phase, by another
// thread that nothing orders after the read (a lane of its warp whose write a __syncwarp() of both
// puts after the read does not count). A write is a store or an atomicExch: an atomic update
// (atomicAdd, atomicMax, atomicCAS, ...) of a byte no thread wrote reads it, and what it leaves
// there depends on that value. Run after the race check: a phase with a race is reported as the
// race.
//
// Like the race check it judges what the threads did, not the order the simulator ran them in: the
// same reads are reported under every schedule. Internal to framework/sim (counting.cpp collects
// the accesses, block.cpp fails the block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/sim/vector_types.hpp"
#include "races.hpp"

namespace gpulab::sim::detail {

/// A read of shared memory no thread wrote: `read` read bytes that none wrote before it.
struct UninitializedRead {
  SharedAccess read;
  std::uint64_t address = 0;  ///< its first byte that no thread wrote
  std::uint64_t words = 0;    ///< how many 4-byte words the phase read before any write
};

/// Which bytes of a block's shared memory some thread of the block wrote, phase by phase.
class SharedWrites {
 public:
  /// A new block, whose shared memory is the `bytes` at `begin` of each window: nothing written.
  /// Accesses outside every window are not checked.
  struct Window {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0;
  };
  void begin_block(const std::vector<Window>& windows);

  /// The phase's read at the lowest address (then the lowest thread) of bytes no thread wrote
  /// before it, or none; then the phase's writes count as done for the next phases. `accesses` are
  /// the phase's, each thread's in the order it made them (other threads' interleaved in any way),
  /// with no race among them (find_shared_race).
  [[nodiscard]] std::optional<UninitializedRead> end_phase(
      const std::vector<SharedAccess>& accesses);

 private:
  struct Bits {
    Window window;
    std::vector<std::uint64_t> written;  // one bit per byte
  };
  // The window holding `address`'s byte and its index there, or null.
  Bits* find(std::uint64_t address, std::size_t& index);
  // The window holding every byte of [begin, end) and `begin`'s index there, or null.
  Bits* holding(std::uint64_t begin, std::uint64_t end, std::size_t& first);
  bool written(std::uint64_t address);                       // outside every window: true
  bool all_written(std::uint64_t begin, std::uint64_t end);  // every byte of [begin, end)
  void mark(std::uint64_t begin, std::uint64_t end);

  std::vector<Bits> windows_;
};

/// The read in words, for the failure of a block of dimensions `block` whose dynamic shared memory
/// is `dynamic_bytes` at `dynamic_begin`: "a read of shared memory no thread wrote: thread (3,0,0)
/// read 4 bytes of partial, byte 12 of its 1024 (static __shared__ of ...), at k.cu:47, before any
/// thread of the block wrote them; ...".
[[nodiscard]] std::string describe_uninitialized_read(const UninitializedRead& read,
                                                      const dim3& block,
                                                      std::uintptr_t dynamic_begin,
                                                      std::size_t dynamic_bytes);

}  // namespace gpulab::sim::detail
