// The race check on shared memory (races.hpp): each access to a word that something wrote cut
// into the 4-byte words it touched, sorted by word, and each word's accesses compared pairwise,
// after dropping repeats (a thread that adds to its own element in a loop makes one load and one
// store of it, however often).
#include "races.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "debug_info.hpp"

namespace gpulab::sim::detail {
namespace {

// An access's part in one 4-byte word.
struct WordPart {
  std::uint64_t word = 0;    // address / 4
  std::uint32_t access = 0;  // its index in the accesses
  std::uint8_t mask = 0;     // the bytes of the word it touched
};

// Whether nothing orders `a` and `b`, two accesses of one phase, with at least one writing: they
// race, unless they are one thread's, both atomic, or lanes of one warp with a __syncwarp() of
// both between them.
bool race(const SharedAccess& a, const SharedAccess& b) {
  if (a.thread == b.thread || !(a.store || b.store) || (a.atomic && b.atomic)) {
    return false;
  }
  return !same_warp(a, b) || a.epoch == b.epoch;
}

}  // namespace

std::optional<SharedRace> find_shared_race(const std::vector<SharedAccess>& accesses) {
  if (std::none_of(accesses.begin(), accesses.end(),
                   [](const SharedAccess& a) { return a.store; })) {
    return std::nullopt;
  }
  // Only words something wrote can race: most accesses of a phase are reads of what an earlier
  // phase wrote (a tile staged before the barrier), left out before the sort. The words written
  // are marked in a table by their low bits: a read of another word with the same bits is kept
  // (and found not to race), never one of a written word dropped.
  const auto each_word = [](const SharedAccess& a, auto&& visit) {
    const std::uint64_t end = a.address + std::max<std::uint32_t>(a.bytes, 1);
    for (std::uint64_t word = a.address / 4; word * 4 < end; ++word) {
      const std::uint64_t from = std::max(a.address, word * 4);
      const std::uint64_t to = std::min(end, word * 4 + 4);
      visit(word, static_cast<std::uint8_t>(((1u << (to - from)) - 1) << (from - word * 4)));
    }
  };
  std::uint64_t stores = 0;
  for (const SharedAccess& a : accesses) {
    stores += a.store ? 1 : 0;
  }
  // About 16 bits per word written (an access writes at most 4 words): few false keeps.
  const std::uint64_t bits = std::bit_ceil(std::max<std::uint64_t>(64, 64 * stores));
  std::vector<std::uint64_t> written(bits / 64, 0);
  for (const SharedAccess& a : accesses) {
    if (a.store) {
      each_word(a, [&](std::uint64_t word, std::uint8_t) {
        written[word % bits / 64] |= std::uint64_t{1} << (word % 64);
      });
    }
  }
  std::vector<WordPart> parts;
  for (std::uint32_t i = 0; i < accesses.size(); ++i) {
    each_word(accesses[i], [&](std::uint64_t word, std::uint8_t mask) {
      if ((written[word % bits / 64] >> (word % 64) & 1u) != 0) {
        parts.push_back({word, i, mask});
      }
    });
  }
  // By word, then by what the access was, so that the answer does not depend on the accesses'
  // order; repeats (the same thread, kind, epoch and bytes) follow each other.
  const auto key = [&](const WordPart& p) {
    const SharedAccess& a = accesses[p.access];
    return std::tuple(p.word, a.thread, a.epoch, a.store, a.atomic, p.mask, a.pc, a.address,
                      a.bytes);
  };
  std::sort(parts.begin(), parts.end(),
            [&](const WordPart& x, const WordPart& y) { return key(x) < key(y); });
  const auto same = [&](const WordPart& x, const WordPart& y) {
    const SharedAccess& a = accesses[x.access];
    const SharedAccess& b = accesses[y.access];
    return x.word == y.word && a.thread == b.thread && a.epoch == b.epoch && a.store == b.store &&
           a.atomic == b.atomic && x.mask == y.mask;
  };
  parts.erase(std::unique(parts.begin(), parts.end(), same), parts.end());

  std::optional<SharedRace> found;
  std::uint64_t words = 0;
  std::vector<std::size_t> plain;  // of the word being checked: its non-atomic accesses
  for (std::size_t begin = 0; begin < parts.size();) {
    std::size_t end = begin + 1;
    while (end < parts.size() && parts[end].word == parts[begin].word) {
      ++end;
    }
    plain.clear();
    for (std::size_t i = begin; i < end; ++i) {
      if (!accesses[parts[i].access].atomic) {
        plain.push_back(i);
      }
    }
    // An atomic races with plain accesses only: a word of atomics alone has no race.
    bool raced = false;
    for (std::size_t i = begin; i < end && !raced && !plain.empty(); ++i) {
      const SharedAccess& write = accesses[parts[i].access];
      if (!write.store) {
        continue;
      }
      const auto check = [&](std::size_t j) {
        const SharedAccess& other = accesses[parts[j].access];
        if ((parts[i].mask & parts[j].mask) == 0 || !race(write, other)) {
          return false;
        }
        if (!found) {
          found = SharedRace{write, other, 0};
        }
        return true;
      };
      if (write.atomic) {
        raced = std::any_of(plain.begin(), plain.end(), check);
      } else {
        for (std::size_t j = begin; j < end && !raced; ++j) {
          raced = check(j);
        }
      }
    }
    words += raced ? 1 : 0;
    begin = end;
  }
  if (found) {
    found->words = words;
  }
  return found;
}

std::string describe_shared_race(const SharedRace& race, const dim3& block,
                                 std::uintptr_t dynamic_begin, std::size_t dynamic_bytes) {
  const SharedAccess& write = race.write;
  const SharedAccess& other = race.other;
  const std::string where = shared_place(write.address, dynamic_begin, dynamic_bytes);
  const auto verb = [](const SharedAccess& a) {
    return a.atomic ? "updated atomically" : a.store ? "wrote" : "read";
  };
  return "a race on shared memory: thread " + thread_text(write.thread, block) + " " + verb(write) +
         " " + std::to_string(write.bytes) + (write.bytes == 1 ? " byte" : " bytes") + " of " +
         where + line_text(write.pc, ", ") + ", and thread " + thread_text(other.thread, block) +
         " " + verb(other) + " " + (other.bytes == write.bytes ? "them" : "some of them") +
         line_text(other.pc) + ", with no " +
         (same_warp(write, other) ? "__syncwarp() or __syncthreads()" : "__syncthreads()") +
         " between the two; " + std::to_string(race.words) +
         (race.words == 1 ? " word" : " words") +
         " (4 bytes) of shared memory raced between these two barriers";
}

bool same_warp(const SharedAccess& a, const SharedAccess& b) {
  constexpr std::uint32_t kWarpSize = 32;
  return a.thread / kWarpSize == b.thread / kWarpSize;
}

std::string thread_text(std::uint32_t linear, const dim3& block) {
  return "(" + std::to_string(linear % block.x) + "," + std::to_string(linear / block.x % block.y) +
         "," + std::to_string(linear / (block.x * block.y)) + ")";
}

std::string line_text(std::uint64_t pc, const char* separator) {
  const std::string line = source_line(pc);
  return line.empty() ? "" : separator + ("at " + line);
}

std::string shared_place(std::uint64_t address, std::uintptr_t dynamic_begin,
                         std::size_t dynamic_bytes) {
  if (address - dynamic_begin < dynamic_bytes) {
    return "dynamic shared memory (extern __shared__), byte " +
           std::to_string(address - dynamic_begin) + " of its " + std::to_string(dynamic_bytes);
  }
  if (std::string variable = shared_variable_at(address); !variable.empty()) {
    return variable;
  }
  char text[64];
  std::snprintf(text, sizeof text, "shared memory at %p",
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)));
  return text;
}

}  // namespace gpulab::sim::detail
