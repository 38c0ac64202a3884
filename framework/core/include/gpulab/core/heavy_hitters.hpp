// The most frequent keys of a long stream in bounded memory: the Misra-Gries summary (J. Misra and
// D. Gries, "Finding repeated elements", Science of Computer Programming 2(2), 1982). The sim's
// memory counting uses it for the sector that took the most global atomics in a launch (the
// time model's same-address contention term), where a launch can scatter atomics over more
// sectors than it could keep one count each for.
//
// With room for k keys, after n keys were added, each key's estimate lies between its true count
// minus n / (k + 1) and its true count; a key seen more than n / (k + 1) times is always kept. When
// the stream has at most k distinct keys, every estimate is exact. Deterministic: the same stream
// gives the same estimates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace gpulab {

class HeavyHitters {
 public:
  /// A summary keeping at most `capacity` keys. Throws std::invalid_argument for 0.
  explicit HeavyHitters(std::size_t capacity);

  /// Counts one occurrence of `key`.
  void add(std::uint64_t key);
  /// The largest estimate over the kept keys (0 before any key): a lower bound on the busiest
  /// key's count, at most n / (capacity + 1) below it, exact with at most `capacity` distinct keys.
  [[nodiscard]] std::uint64_t largest() const;
  /// The estimate of `key`'s count (0 when it is not kept).
  [[nodiscard]] std::uint64_t estimate(std::uint64_t key) const;
  /// Keys added so far.
  [[nodiscard]] std::uint64_t added() const noexcept { return added_; }
  /// Forgets every key.
  void clear();

 private:
  std::size_t capacity_;
  std::uint64_t added_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> counts_;
};

}  // namespace gpulab
