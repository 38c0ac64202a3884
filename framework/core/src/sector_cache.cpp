#include "gpulab/core/sector_cache.hpp"

#include <bit>
#include <stdexcept>

namespace gpulab {

SectorCache::SectorCache(std::uint64_t capacity_bytes, unsigned ways) : sets_(0), ways_(ways) {
  if (ways == 0 || capacity_bytes < kLineBytes) {
    throw std::invalid_argument("L2 model: a cache needs at least one line and one way");
  }
  sets_ = capacity_bytes / (kLineBytes * ways);
  if (sets_ == 0) {
    sets_ = 1;
    ways_ = static_cast<unsigned>(capacity_bytes / kLineBytes);
  }
  lines_.resize(sets_ * ways_);
}

SectorCache::Line& SectorCache::find_or_allocate(std::uint64_t line, bool& present) {
  // The line used last (accesses come in runs of one line's sectors) is already the most recent of
  // its set: marking it used again would change no replacement.
  if (Line& last = lines_[last_used_]; last.tag == line + 1) {
    present = true;
    return last;
  }
  Line* set = &lines_[(line % sets_) * ways_];
  Line* empty = nullptr;
  Line* least_recent = nullptr;
  for (unsigned way = 0; way < ways_; ++way) {
    Line& candidate = set[way];
    if (candidate.tag == line + 1) {
      present = true;
      candidate.last_use = ++clock_;
      last_used_ = static_cast<std::size_t>(&candidate - lines_.data());
      return candidate;
    }
    if (candidate.tag == 0) {
      empty = empty == nullptr ? &candidate : empty;
    } else if (least_recent == nullptr || candidate.last_use < least_recent->last_use) {
      least_recent = &candidate;
    }
  }
  Line* victim = empty != nullptr ? empty : least_recent;
  present = false;
  dram_writes_ += static_cast<std::uint64_t>(std::popcount(victim->dirty));
  *victim = Line{line + 1, ++clock_, 0, 0};
  last_used_ = static_cast<std::size_t>(victim - lines_.data());
  return *victim;
}

bool SectorCache::read(std::uint64_t sector) {
  bool present = false;
  Line& line = find_or_allocate(sector / 4, present);
  const auto bit = static_cast<std::uint8_t>(1u << (sector % 4));
  if ((line.valid & bit) != 0) {
    return true;
  }
  line.valid |= bit;
  ++dram_reads_;
  return false;
}

bool SectorCache::write(std::uint64_t sector) {
  bool present = false;
  Line& line = find_or_allocate(sector / 4, present);
  const auto bit = static_cast<std::uint8_t>(1u << (sector % 4));
  const bool hit = (line.valid & bit) != 0;
  if (line.dirty == 0) {
    dirty_lines_.push_back(static_cast<std::uint64_t>(&line - lines_.data()));
  }
  line.valid |= bit;
  line.dirty |= bit;
  return hit;
}

bool SectorCache::holds(std::uint64_t sector) const {
  const std::uint64_t line = sector / 4;
  const Line* set = &lines_[(line % sets_) * ways_];
  for (unsigned way = 0; way < ways_; ++way) {
    if (set[way].tag == line + 1) {
      return (set[way].valid & (1u << (sector % 4))) != 0;
    }
  }
  return false;
}

void SectorCache::write_back() {
  for (const std::uint64_t index : dirty_lines_) {
    Line& line = lines_[index];
    dram_writes_ += static_cast<std::uint64_t>(std::popcount(line.dirty));
    line.dirty = 0;
  }
  dirty_lines_.clear();
}

void SectorCache::clear() {
  write_back();
  for (Line& line : lines_) {
    line = Line{};
  }
}

}  // namespace gpulab
