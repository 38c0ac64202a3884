// The check of reads of shared memory no thread wrote (uninitialized.hpp): a bit per byte of the
// block's shared memory says whether an earlier phase wrote it; the reads of a phase whose bytes
// are not all set are the suspects, and each is cleared by a write of this phase that comes before
// it (the thread's own, earlier) or that nothing puts after it (another thread's).
#include "uninitialized.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gpulab::sim::detail {
namespace {

// The bytes an access touched (an access of no bytes touches its first).
std::uint64_t end_of(const SharedAccess& a) {
  return a.address + std::max<std::uint32_t>(a.bytes, 1);
}

// Calls visit(word, mask) for each 64-bit word of a bit array that bits [first, last) touch, with
// the mask of those bits in it.
template <typename Visit>
void for_each_word(std::size_t first, std::size_t last, Visit&& visit) {
  for (std::size_t word = first / 64; word * 64 < last; ++word) {
    const std::size_t from = std::max(first, word * 64) - word * 64;
    const std::size_t to = std::min(last, word * 64 + 64) - word * 64;
    visit(word,
          to - from == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (to - from)) - 1) << from);
  }
}

// Whether `a` reads a value it uses: a load, or an atomic update of what was there. An atomicExch
// reads too, but what it stores does not depend on it: it sets a value, as a store does.
bool reads(const SharedAccess& a) {
  return (!a.store || a.atomic) && !a.exchange;
}

bool sets(const SharedAccess& a) {
  return a.store && (!a.atomic || a.exchange);
}

}  // namespace

void SharedWrites::begin_block(const std::vector<Window>& windows) {
  windows_.resize(windows.size());
  for (std::size_t i = 0; i < windows.size(); ++i) {
    windows_[i].window = windows[i];
    windows_[i].written.assign((windows[i].bytes + 63) / 64, 0);
  }
}

SharedWrites::Bits* SharedWrites::find(std::uint64_t address, std::size_t& index) {
  for (Bits& bits : windows_) {
    if (address - bits.window.begin < bits.window.bytes) {
      index = address - bits.window.begin;
      return &bits;
    }
  }
  return nullptr;
}

SharedWrites::Bits* SharedWrites::holding(std::uint64_t begin, std::uint64_t end,
                                          std::size_t& first) {
  Bits* bits = find(begin, first);
  return bits != nullptr && end - bits->window.begin <= bits->window.bytes ? bits : nullptr;
}

bool SharedWrites::written(std::uint64_t address) {
  std::size_t i = 0;
  const Bits* bits = find(address, i);
  return bits == nullptr || (bits->written[i / 64] >> (i % 64) & 1u) != 0;
}

bool SharedWrites::all_written(std::uint64_t begin, std::uint64_t end) {
  std::size_t first = 0;
  if (const Bits* bits = holding(begin, end, first)) {
    bool all = true;
    for_each_word(first, first + (end - begin), [&](std::size_t word, std::uint64_t mask) {
      all = all && (bits->written[word] & mask) == mask;
    });
    return all;
  }
  for (std::uint64_t byte = begin; byte < end; ++byte) {  // outside a window, or across its end
    if (!written(byte)) {
      return false;
    }
  }
  return true;
}

void SharedWrites::mark(std::uint64_t begin, std::uint64_t end) {
  std::size_t first = 0;
  if (Bits* bits = holding(begin, end, first)) {
    for_each_word(first, first + (end - begin),
                  [&](std::size_t word, std::uint64_t mask) { bits->written[word] |= mask; });
    return;
  }
  for (std::uint64_t byte = begin; byte < end; ++byte) {  // outside a window, or across its end
    std::size_t i = 0;
    if (Bits* bits = find(byte, i)) {
      bits->written[i / 64] |= std::uint64_t{1} << (i % 64);
    }
  }
}

std::optional<UninitializedRead> SharedWrites::end_phase(
    const std::vector<SharedAccess>& accesses) {
  // The suspects: reads of a byte no earlier phase wrote, and those bytes.
  std::vector<std::uint32_t> suspects;
  std::vector<std::uint64_t> unwritten;
  for (std::uint32_t i = 0; i < accesses.size(); ++i) {
    const SharedAccess& a = accesses[i];
    if (!reads(a) || all_written(a.address, end_of(a))) {
      continue;
    }
    suspects.push_back(i);
    for (std::uint64_t byte = a.address; byte < end_of(a); ++byte) {
      if (!written(byte)) {
        unwritten.push_back(byte);
      }
    }
  }
  std::optional<UninitializedRead> found;
  if (!suspects.empty()) {
    std::sort(unwritten.begin(), unwritten.end());
    unwritten.erase(std::unique(unwritten.begin(), unwritten.end()), unwritten.end());
    // This phase's writes of those bytes, by byte: (byte, the write's index).
    std::vector<std::pair<std::uint64_t, std::uint32_t>> writes;
    for (std::uint32_t i = 0; i < accesses.size(); ++i) {
      const SharedAccess& a = accesses[i];
      for (std::uint64_t byte = a.address; sets(a) && byte < end_of(a); ++byte) {
        if (std::binary_search(unwritten.begin(), unwritten.end(), byte)) {
          writes.emplace_back(byte, i);
        }
      }
    }
    std::sort(writes.begin(), writes.end());
    // Whether the write `w` (at index wi) puts a value in place before the read `r` (at ri): the
    // reading thread's own earlier write, or another thread's that nothing orders after the read.
    // With no race in the phase, another thread's write of a byte the read touched is a lane of
    // its warp on the other side of a __syncwarp(), or an atomicExch beside an atomic read.
    const auto before = [&](std::uint32_t wi, std::uint32_t ri) {
      const SharedAccess& w = accesses[wi];
      const SharedAccess& r = accesses[ri];
      if (w.thread == r.thread) {
        return wi < ri;
      }
      return !(same_warp(w, r) && w.epoch > r.epoch);
    };
    std::vector<std::uint64_t> words;
    for (const std::uint32_t ri : suspects) {
      const SharedAccess& r = accesses[ri];
      for (std::uint64_t byte = r.address; byte < end_of(r); ++byte) {
        if (written(byte)) {
          continue;
        }
        const auto [first, last] =
            std::equal_range(writes.begin(), writes.end(), std::pair(byte, std::uint32_t{0}),
                             [](const auto& x, const auto& y) { return x.first < y.first; });
        if (std::any_of(first, last, [&](const auto& w) { return before(w.second, ri); })) {
          continue;
        }
        words.push_back(byte / 4);
        if (!found || std::tuple(byte, r.thread, r.address, r.pc) <
                          std::tuple(found->address, found->read.thread, found->read.address,
                                     found->read.pc)) {
          found = UninitializedRead{r, byte, 0};
        }
      }
    }
    if (found) {
      std::sort(words.begin(), words.end());
      found->words =
          static_cast<std::uint64_t>(std::unique(words.begin(), words.end()) - words.begin());
    }
  }
  for (const SharedAccess& a : accesses) {
    if (sets(a)) {
      mark(a.address, end_of(a));
    }
  }
  return found;
}

std::string describe_uninitialized_read(const UninitializedRead& read, const dim3& block,
                                        std::uintptr_t dynamic_begin, std::size_t dynamic_bytes) {
  const SharedAccess& r = read.read;
  const std::uint64_t bytes = std::max<std::uint32_t>(r.bytes, 1);
  return "a read of shared memory that no thread wrote: thread " + thread_text(r.thread, block) +
         " " + (r.atomic ? "updated atomically " : "read ") + std::to_string(bytes) +
         (bytes == 1 ? " byte" : " bytes") + " of " +
         shared_place(r.address, dynamic_begin, dynamic_bytes) + line_text(r.pc, ", ") +
         ", before any thread of its block wrote " + (bytes == 1 ? "it" : "them") +
         " (a block's shared memory starts uninitialized on a GPU, holding whatever an earlier "
         "block left there: write it, or zero it, before a barrier and then read it); " +
         std::to_string(read.words) + (read.words == 1 ? " word" : " words") +
         " (4 bytes) of shared memory " + (read.words == 1 ? "was" : "were") +
         " read before any write between these two barriers";
}

}  // namespace gpulab::sim::detail
