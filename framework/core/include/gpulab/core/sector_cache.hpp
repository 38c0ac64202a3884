// The L2 model of the sim backend's memory counting: a set-associative, write-back cache of
// 128-byte lines, each of four 32-byte sectors, with least-recently-used replacement.
//
// Reads look up one sector: a hit costs nothing more, a miss reads the sector from DRAM (and
// allocates its line, evicting the least recently used line of the set, whose dirty sectors are
// written to DRAM). Writes allocate the same way but read nothing from DRAM: a GPU's L2 keeps
// per-byte masks, so a partial write needs no fill. write_back() writes every dirty sector to DRAM
// and keeps it, clean: the sim calls it at the end of each kernel, so a kernel's DRAM writes are
// the sectors it wrote (docs/sim.md, "The L2 model").
//
// NVIDIA does not publish its L2s' associativity, set hashing or replacement policy; 16 ways, sets
// by line address modulo the set count, and exact LRU are this model's choices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpulab {

class SectorCache {
 public:
  static constexpr std::uint64_t kSectorBytes = 32;
  static constexpr std::uint64_t kLineBytes = 128;
  static constexpr unsigned kDefaultWays = 16;

  /// A cache of `capacity_bytes` (rounded down to whole sets, at least one set) and `ways` lines
  /// per set. Throws std::invalid_argument for a capacity below one line or zero ways.
  explicit SectorCache(std::uint64_t capacity_bytes, unsigned ways = kDefaultWays);

  /// Reads the sector with index `sector` (byte address / 32); true on a hit.
  bool read(std::uint64_t sector);
  /// Writes the sector (write-allocate, no fill); true when it was present.
  bool write(std::uint64_t sector);
  /// Whether a read of the sector would hit, without reading it (no replacement changes).
  [[nodiscard]] bool holds(std::uint64_t sector) const;
  /// Writes every dirty sector to DRAM; they stay in the cache, clean.
  void write_back();
  /// Empties the cache (dirty sectors are written back first).
  void clear();

  /// Sectors read from DRAM so far (misses of read()).
  [[nodiscard]] std::uint64_t dram_sector_reads() const { return dram_reads_; }
  /// Sectors written to DRAM so far (evictions of dirty sectors and write_back()).
  [[nodiscard]] std::uint64_t dram_sector_writes() const { return dram_writes_; }
  /// Capacity actually modeled: sets x ways x 128 bytes.
  [[nodiscard]] std::uint64_t capacity_bytes() const { return sets_ * ways_ * kLineBytes; }
  [[nodiscard]] unsigned ways() const { return ways_; }

 private:
  struct Line {
    std::uint64_t tag = 0;  // line index + 1; 0: empty
    std::uint64_t last_use = 0;
    std::uint8_t valid = 0;  // one bit per sector
    std::uint8_t dirty = 0;
  };
  Line& find_or_allocate(std::uint64_t line, bool& present);

  std::uint64_t sets_;
  unsigned ways_;
  std::vector<Line> lines_;                 // set-major: lines_[set * ways_ + way]
  std::vector<std::uint64_t> dirty_lines_;  // indices into lines_ that may hold dirty sectors
  std::size_t last_used_ = 0;               // index into lines_ of the line used last
  std::uint64_t clock_ = 0;
  std::uint64_t dram_reads_ = 0;
  std::uint64_t dram_writes_ = 0;
};

}  // namespace gpulab
