// Device memory accounting: what the program holds now and at its peak, what it took from the
// device, and where each allocation was made.
//
//   gpulab::reset_peak_memory_stats();
//   run();                                               // allocates and frees
//   const gpulab::MemoryStats s = gpulab::memory_stats();
//   s.peak_allocated_bytes;                              // the most held at once during run()
//
// What is seen: on sim every cudaMalloc and cudaFree (the runtime reports them); on a GPU the
// framework's own allocations (DeviceBuffer and everything built on it). A DeviceBuffer records
// its caller's file and line; a bare cudaMalloc on sim is recorded without them.
//
// Allocated and reserved, as a caching allocator sees them: memory taken from the device
// (cudaMalloc) is reserved until it is given back (cudaFree); memory handed to the program is
// allocated. A plain allocation is both. A caching allocator that keeps freed blocks makes its
// cudaMalloc calls inside a CacheReservation: those blocks are reserved but not allocated, and
// the pieces it hands out and takes back (note_cache_allocate, note_cache_free) are allocated.
//
// Every function is thread-safe. Nothing here calls the CUDA runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace gpulab {

/// Current and peak device memory, in bytes, and allocation counts.
struct MemoryStats {
  std::size_t allocated_bytes = 0;       ///< held by the program now
  std::size_t peak_allocated_bytes = 0;  ///< the most held at once since the last reset
  std::size_t reserved_bytes = 0;        ///< taken from the device now: allocated + cached
  std::size_t peak_reserved_bytes = 0;   ///< the most taken at once since the last reset
  std::size_t allocations = 0;           ///< allocations made since the last reset
  std::size_t frees = 0;                 ///< allocations freed since the last reset
  std::size_t live_allocations = 0;      ///< allocations made and not freed (whenever made)

  friend bool operator==(const MemoryStats&, const MemoryStats&) = default;
};

/// The accounting now.
[[nodiscard]] MemoryStats memory_stats();

/// Starts new peaks from what is allocated and reserved now, and zeroes the counts of
/// allocations and frees (live_allocations stays).
void reset_peak_memory_stats();

/// One allocation the program holds.
struct LiveAllocation {
  std::uint64_t id = 0;        ///< 1, 2, ... in the order they were made
  std::uintptr_t address = 0;  ///< device address
  std::size_t bytes = 0;       ///< size asked for
  std::uintptr_t stream = 0;   ///< the stream it was made for (0: the default stream)
  std::string file;            ///< source file of the call; empty when unknown
  unsigned line = 0;           ///< its line; 0 when unknown
};

/// Every allocation held now, largest first (ties: oldest first).
[[nodiscard]] std::vector<LiveAllocation> live_allocations();

/// What happened to one block of device memory.
enum class MemoryEventKind {
  allocate,  ///< handed to the program
  free,      ///< returned by the program
  reserve,   ///< taken from the device by a caching allocator and kept
  release,   ///< a cached block given back to the device
};

/// "allocate", "free", "reserve" or "release".
[[nodiscard]] const char* to_string(MemoryEventKind kind) noexcept;

/// One entry of the memory history.
struct MemoryEvent {
  MemoryEventKind kind = MemoryEventKind::allocate;
  std::uint64_t id = 0;             ///< the allocation's id (LiveAllocation::id)
  std::uintptr_t address = 0;       ///< device address
  std::size_t bytes = 0;            ///< its size
  std::uintptr_t stream = 0;        ///< its stream
  std::string file;                 ///< where it was made; empty when unknown
  unsigned line = 0;                ///< 0 when unknown
  double time_ms = 0;               ///< host time since the history started
  std::size_t allocated_after = 0;  ///< MemoryStats::allocated_bytes after the event
  std::size_t reserved_after = 0;   ///< MemoryStats::reserved_bytes after the event
};

/// Starts recording a history of events (clearing the last one), keeping at most `max_events`
/// (the default's file, about 30 MB, stays under the loader's 64 MB); later events are counted
/// in dropped_memory_events() but not kept.
void start_memory_history(std::size_t max_events = 150000);
/// Stops recording; the history recorded so far stays readable.
void stop_memory_history();
/// The events recorded, oldest first.
[[nodiscard]] std::vector<MemoryEvent> memory_history();
/// Events left out because the history was full.
[[nodiscard]] std::size_t dropped_memory_events();

/// What an allocation that did not fit should say: the size asked for, the device's capacity and
/// free memory (cudaMemGetInfo; 0 capacity: unknown), what is allocated and reserved now, the
/// peak, and the largest allocations alive with their source lines (at most `largest`); when
/// what is accounted cannot explain it, that something else holds the memory. Several lines, no
/// trailing newline.
[[nodiscard]] std::string explain_out_of_memory(std::size_t requested_bytes,
                                                std::size_t capacity_bytes, std::size_t free_bytes,
                                                std::size_t largest = 5);

// ---------------------------------------------------------------------------------------------
// What the allocation paths report (the sim runtime, DeviceBuffer, caching allocators).
// ---------------------------------------------------------------------------------------------

// These never throw (the runtime's noexcept calls report through them): when memory for the
// bookkeeping itself runs out, the event is counted as dropped.

/// A device allocation of `bytes` at `address` was made (cudaMalloc succeeded). Its file and line
/// are those of the innermost AllocationSite on this thread, when there is one.
void note_device_malloc(const void* address, std::size_t bytes, std::uintptr_t stream = 0) noexcept;
/// The allocation at `address` was freed (cudaFree), with any caching allocator's pieces still
/// handed out inside it; unknown addresses are ignored.
void note_device_free(const void* address) noexcept;

/// A caching allocator handed out `bytes` at `address` for `stream`. Only a piece that lies inside
/// a live block the allocator reserved (cudaMalloc'd inside a CacheReservation) is counted; any
/// other report is refused (refused_cache_pieces): lab code cannot feed the figures it is graded
/// by with memory that is not its allocator's.
void note_cache_allocate(const void* address, std::size_t bytes,
                         std::uintptr_t stream = 0) noexcept;
/// How many note_cache_allocate reports were refused since the program started.
[[nodiscard]] std::size_t refused_cache_pieces();
/// A caching allocator took back what it handed out at `address`.
void note_cache_free(const void* address) noexcept;

/// While alive, allocations this thread reports are attributed to `where` (DeviceBuffer puts
/// one around its cudaMalloc, so the file and line are its caller's). // not copyable
class AllocationSite {
 public:
  explicit AllocationSite(std::source_location where = std::source_location::current()) noexcept;
  ~AllocationSite();
  AllocationSite(const AllocationSite&) = delete;
  AllocationSite& operator=(const AllocationSite&) = delete;

 private:
  const AllocationSite* outer_;
  std::source_location where_;
  friend struct AllocationSiteAccess;
};

/// While alive, the device allocations this thread reports belong to a caching allocator: they
/// are reserved (reserve and release events), not allocated. // not copyable
class CacheReservation {
 public:
  CacheReservation() noexcept;
  ~CacheReservation();
  CacheReservation(const CacheReservation&) = delete;
  CacheReservation& operator=(const CacheReservation&) = delete;
};

}  // namespace gpulab
