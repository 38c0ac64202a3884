// Device memory accounting (memory_stats.hpp): one table of what is held, under one mutex.
#include "gpulab/core/memory_stats.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "gpulab/core/console.hpp"

namespace gpulab {

struct AllocationSiteAccess {
  static const AllocationSite* outer(const AllocationSite& site) { return site.outer_; }
  static const std::source_location& where(const AllocationSite& site) { return site.where_; }
};

namespace {

thread_local const AllocationSite* t_site = nullptr;
thread_local int t_cache_reservations = 0;

// One block: a device allocation (cudaMalloc) or a block a caching allocator handed out.
struct Block {
  LiveAllocation allocation;
  bool allocated = true;  // counts as allocated (false: a caching allocator's reserve)
};

struct Accounting {
  std::mutex mutex;
  std::map<std::uintptr_t, Block> device;  // cudaMalloc'd, by address
  std::map<std::uintptr_t, Block> cached;  // handed out by caching allocators, by address
  MemoryStats stats;
  std::uint64_t next_id = 1;
  bool recording = false;
  std::size_t max_events = 0;
  std::size_t dropped = 0;
  std::size_t refused_pieces = 0;  // note_cache_allocate calls outside every reserved block
  std::vector<MemoryEvent> history;
  std::chrono::steady_clock::time_point history_start;
};

// Never destroyed: a buffer freed by a static destructor at exit still finds it.
Accounting& accounting() {
  static Accounting* const a = new Accounting;
  return *a;
}

LiveAllocation make_allocation(Accounting& a, const void* address, std::size_t bytes,
                               std::uintptr_t stream) {
  LiveAllocation allocation;
  allocation.id = a.next_id++;
  allocation.address = reinterpret_cast<std::uintptr_t>(address);
  allocation.bytes = bytes;
  allocation.stream = stream;
  if (t_site != nullptr) {
    const std::source_location& where = AllocationSiteAccess::where(*t_site);
    allocation.file = where.file_name();
    allocation.line = where.line();
  }
  return allocation;
}

void record(Accounting& a, MemoryEventKind kind, const LiveAllocation& allocation) {
  if (!a.recording) {
    return;
  }
  if (a.history.size() >= a.max_events) {
    ++a.dropped;
    return;
  }
  MemoryEvent event;
  event.kind = kind;
  event.id = allocation.id;
  event.address = allocation.address;
  event.bytes = allocation.bytes;
  event.stream = allocation.stream;
  event.file = allocation.file;
  event.line = allocation.line;
  event.time_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a.history_start)
          .count();
  event.allocated_after = a.stats.allocated_bytes;
  event.reserved_after = a.stats.reserved_bytes;
  a.history.push_back(std::move(event));
}

void add_allocated(MemoryStats& s, std::size_t bytes) {
  s.allocated_bytes += bytes;
  s.peak_allocated_bytes = std::max(s.peak_allocated_bytes, s.allocated_bytes);
  ++s.allocations;
  ++s.live_allocations;
}

void remove_allocated(MemoryStats& s, std::size_t bytes) {
  s.allocated_bytes -= bytes;
  ++s.frees;
  --s.live_allocations;
}

}  // namespace

AllocationSite::AllocationSite(std::source_location where) noexcept
    : outer_(t_site), where_(where) {
  t_site = this;
}

AllocationSite::~AllocationSite() {
  t_site = outer_;
}

CacheReservation::CacheReservation() noexcept {
  ++t_cache_reservations;
}

CacheReservation::~CacheReservation() {
  --t_cache_reservations;
}

MemoryStats memory_stats() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  return a.stats;
}

void reset_peak_memory_stats() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  a.stats.peak_allocated_bytes = a.stats.allocated_bytes;
  a.stats.peak_reserved_bytes = a.stats.reserved_bytes;
  a.stats.allocations = 0;
  a.stats.frees = 0;
}

std::vector<LiveAllocation> live_allocations() {
  Accounting& a = accounting();
  std::vector<LiveAllocation> live;
  {
    std::scoped_lock lock(a.mutex);
    for (const auto* table : {&a.device, &a.cached}) {
      for (const auto& [address, block] : *table) {
        if (block.allocated) {
          live.push_back(block.allocation);
        }
      }
    }
  }
  std::sort(live.begin(), live.end(), [](const LiveAllocation& x, const LiveAllocation& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.id < y.id;
  });
  return live;
}

const char* to_string(MemoryEventKind kind) noexcept {
  switch (kind) {
    case MemoryEventKind::allocate:
      return "allocate";
    case MemoryEventKind::free:
      return "free";
    case MemoryEventKind::reserve:
      return "reserve";
    case MemoryEventKind::release:
      return "release";
  }
  return "unknown";
}

void start_memory_history(std::size_t max_events) {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  a.recording = true;
  a.max_events = max_events;
  a.dropped = 0;
  a.history.clear();
  a.history_start = std::chrono::steady_clock::now();
}

void stop_memory_history() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  a.recording = false;
}

std::vector<MemoryEvent> memory_history() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  return a.history;
}

std::size_t refused_cache_pieces() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  return a.refused_pieces;
}

std::size_t dropped_memory_events() {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  return a.dropped;
}

std::string explain_out_of_memory(std::size_t requested_bytes, std::size_t capacity_bytes,
                                  std::size_t free_bytes, std::size_t largest) {
  const MemoryStats s = memory_stats();
  const std::vector<LiveAllocation> live = live_allocations();
  const auto bytes = [](std::size_t b) { return format_bytes(static_cast<double>(b)); };
  std::string text =
      "out of device memory: asked for " + bytes(requested_bytes) + " (" +
      std::to_string(requested_bytes) + " bytes) on a device of " +
      (capacity_bytes > 0 ? bytes(capacity_bytes) + " with " + bytes(free_bytes) + " free"
                          : std::string("unknown size")) +
      "\n";
  const std::size_t cached =
      s.reserved_bytes > s.allocated_bytes ? s.reserved_bytes - s.allocated_bytes : 0;
  text += "  now: " + bytes(s.allocated_bytes) + " allocated in " +
          std::to_string(s.live_allocations) + " allocation(s), " + bytes(s.reserved_bytes) +
          " reserved (" + bytes(cached) + " of it cached, free for reuse); peak " +
          bytes(s.peak_allocated_bytes) + " allocated";
  const std::size_t in_use = capacity_bytes > free_bytes ? capacity_bytes - free_bytes : 0;
  if (capacity_bytes > 0 && requested_bytes > capacity_bytes) {
    text += "\n  the request alone is larger than the device";
  } else if (in_use > s.reserved_bytes) {
    text += "\n  " + bytes(in_use - s.reserved_bytes) +
            " in use is not accounted here: the CUDA context, other processes, or allocations "
            "not made through gpulab (a bare cudaMalloc on a GPU)";
  }
  if (live.empty()) {
    return text;
  }
  text += "\n  largest allocations alive:";
  for (std::size_t i = 0; i < live.size() && i < largest; ++i) {
    const LiveAllocation& l = live[i];
    text += "\n    " + bytes(l.bytes) + "  " +
            (l.file.empty() ? std::string("(no source line: a bare cudaMalloc)")
                            : l.file + ":" + std::to_string(l.line));
  }
  if (live.size() > largest) {
    text += "\n    ... and " + std::to_string(live.size() - largest) + " smaller";
  }
  return text;
}

namespace {

// Takes the piece at `it` out of the cached table, as note_cache_free does; returns the next.
std::map<std::uintptr_t, Block>::iterator erase_cached_piece(
    Accounting& a, std::map<std::uintptr_t, Block>::iterator it) {
  remove_allocated(a.stats, it->second.allocation.bytes);
  record(a, MemoryEventKind::free, it->second.allocation);
  return a.cached.erase(it);
}

// Takes `it` out of the device table, as cudaFree does, with the pieces a caching allocator still
// had handed out inside it.
void erase_device_block(Accounting& a, std::map<std::uintptr_t, Block>::iterator it) {
  const Block& block = it->second;
  const std::uintptr_t end = block.allocation.address + block.allocation.bytes;
  for (auto piece = a.cached.lower_bound(block.allocation.address);
       piece != a.cached.end() && piece->first < end;) {
    piece = erase_cached_piece(a, piece);
  }
  a.stats.reserved_bytes -= block.allocation.bytes;
  if (block.allocated) {
    remove_allocated(a.stats, block.allocation.bytes);
    record(a, MemoryEventKind::free, block.allocation);
  } else {
    record(a, MemoryEventKind::release, block.allocation);
  }
  a.device.erase(it);
}

}  // namespace

void note_device_malloc(const void* address, std::size_t bytes, std::uintptr_t stream) noexcept {
  if (address == nullptr) {
    return;
  }
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  try {
    const auto key = reinterpret_cast<std::uintptr_t>(address);
    if (const auto stale = a.device.find(key); stale != a.device.end()) {
      erase_device_block(a, stale);  // its free was never reported: the device reused the address
    }
    const bool reserve = t_cache_reservations > 0;
    Block block{make_allocation(a, address, bytes, stream), !reserve};
    a.stats.reserved_bytes += bytes;
    a.stats.peak_reserved_bytes = std::max(a.stats.peak_reserved_bytes, a.stats.reserved_bytes);
    if (reserve) {
      record(a, MemoryEventKind::reserve, block.allocation);
    } else {
      add_allocated(a.stats, bytes);
      record(a, MemoryEventKind::allocate, block.allocation);
    }
    a.device.emplace(key, std::move(block));
  } catch (...) {  // no memory for the bookkeeping: the allocation goes unrecorded
    ++a.dropped;
  }
}

void note_device_free(const void* address) noexcept {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  try {
    if (const auto it = a.device.find(reinterpret_cast<std::uintptr_t>(address));
        it != a.device.end()) {
      erase_device_block(a, it);
    }
  } catch (...) {
    ++a.dropped;
  }
}

void note_cache_allocate(const void* address, std::size_t bytes, std::uintptr_t stream) noexcept {
  if (address == nullptr) {
    return;
  }
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  try {
    const auto key = reinterpret_cast<std::uintptr_t>(address);
    // Only a piece of a block the allocator reserved (made inside a CacheReservation) counts:
    // reporting memory that is not its own would feed the accounting figures of nothing.
    const auto after = a.device.upper_bound(key);
    const auto owner = after == a.device.begin() ? a.device.end() : std::prev(after);
    if (owner == a.device.end() || owner->second.allocated ||
        key - owner->first > owner->second.allocation.bytes ||
        bytes > owner->second.allocation.bytes - (key - owner->first)) {
      ++a.refused_pieces;
      return;
    }
    if (const auto stale = a.cached.find(key); stale != a.cached.end()) {
      // Handed out again without being taken back: the allocator forgot to report the free.
      erase_cached_piece(a, stale);
    }
    Block block{make_allocation(a, address, bytes, stream), true};
    add_allocated(a.stats, bytes);
    record(a, MemoryEventKind::allocate, block.allocation);
    a.cached.emplace(key, std::move(block));
  } catch (...) {
    ++a.dropped;
  }
}

void note_cache_free(const void* address) noexcept {
  Accounting& a = accounting();
  std::scoped_lock lock(a.mutex);
  try {
    if (const auto it = a.cached.find(reinterpret_cast<std::uintptr_t>(address));
        it != a.cached.end()) {
      erase_cached_piece(a, it);
    }
  } catch (...) {
    ++a.dropped;
  }
}

}  // namespace gpulab
