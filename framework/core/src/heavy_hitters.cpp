#include "gpulab/core/heavy_hitters.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace gpulab {

HeavyHitters::HeavyHitters(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) {
    throw std::invalid_argument("HeavyHitters: the capacity must be at least one key");
  }
  counts_.reserve(capacity);
}

void HeavyHitters::add(std::uint64_t key) {
  ++added_;
  if (const auto it = counts_.find(key); it != counts_.end()) {
    ++it->second;
    return;
  }
  if (counts_.size() < capacity_) {
    counts_.emplace(key, 1);
    return;
  }
  // No room: this occurrence and one of every kept key cancel out. Each such step removes
  // capacity + 1 occurrences, so it happens at most n / (capacity + 1) times.
  for (auto it = counts_.begin(); it != counts_.end();) {
    it = --it->second == 0 ? counts_.erase(it) : std::next(it);
  }
}

std::uint64_t HeavyHitters::largest() const {
  std::uint64_t most = 0;
  for (const auto& [key, count] : counts_) {
    most = std::max(most, count);
  }
  return most;
}

std::uint64_t HeavyHitters::estimate(std::uint64_t key) const {
  const auto it = counts_.find(key);
  return it == counts_.end() ? 0 : it->second;
}

void HeavyHitters::clear() {
  counts_.clear();
  added_ = 0;
}

}  // namespace gpulab
