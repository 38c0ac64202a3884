// Memory counting on sim: a warp's logged accesses turned into requests, sectors and
// wavefronts once every lane of it reached the barrier or exited, and the phase's end
// (counting.cpp describes the mechanism; counting_block.hpp the data).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "counting_block.hpp"

namespace gpulab::sim::detail {
namespace {

// Adds what one request added to the block's counts (now - before) to its instruction's.
void add_difference(GlobalAccessCounts& to, const GlobalAccessCounts& now,
                    const GlobalAccessCounts& before) {
  to.requests += now.requests - before.requests;
  to.sectors += now.sectors - before.sectors;
  to.bytes_requested += now.bytes_requested - before.bytes_requested;
  to.lanes += now.lanes - before.lanes;
  to.partial_sectors += now.partial_sectors - before.partial_sectors;
}

void add_difference(SharedAccessCounts& to, const SharedAccessCounts& now,
                    const SharedAccessCounts& before) {
  to.requests += now.requests - before.requests;
  to.wavefronts += now.wavefronts - before.wavefronts;
  to.bank_conflicts += now.bank_conflicts - before.bank_conflicts;
  to.lanes += now.lanes - before.lanes;
}

}  // namespace

// Adds `warp`'s arithmetic of this phase to the block's counts: per class, its slowest lane's (a
// warp issues an instruction when any of its lanes executes it), and every lane's FP32 FLOPs.
void BlockCounter::cost_ops(unsigned warp) {
  const unsigned first = warp * kWarp;
  const unsigned lanes = std::min(kWarp, thread_count - first);
  OpCounts most{};
  std::uint64_t flop = 0;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    OpCounts& t = thread_ops[first + lane];
    for (std::size_t f = 0; f < t.size(); ++f) {
      most[f] = std::max(most[f], t[f]);
    }
    flop += 2 * t[kFp32Fma] + t[kFp32Other];
    t = {};
  }
  counts.fp32_fma_instructions += most[kFp32Fma];
  counts.fp32_instructions += most[kFp32Other];
  counts.fp64_instructions += most[kFp64];
  counts.integer_instructions += most[kInteger];
  counts.special_instructions += most[kSpecial];
  counts.conversion_instructions += most[kConversion];
  counts.branch_instructions += most[kBranch];
  counts.address_instructions += most[kAddress];
  counts.fp32_flop += flop;
  for (const std::uint64_t v : most) {
    warp_path[warp].arithmetic += v;
  }
}

// Costs the requests of `warp`'s log and returns the log to the pool.
void BlockCounter::cost_warp(unsigned warp) {
  WarpLog* log = warp_logs[warp];
  if (log == nullptr) {
    return;
  }
  // What this warp's requests add to its critical path (WarpPath).
  const auto shared_requests = [&] {
    return counts.shared_load.requests + counts.shared_store.requests +
           counts.shared_atomic.requests;
  };
  const auto global_waits = [&] {
    return counts.global_load.requests + counts.global_atomic.requests;
  };
  const std::uint64_t shared_before = shared_requests();
  const std::uint64_t global_before = global_waits();
  cost_requests(warp, log);
  warp_path[warp].shared += shared_requests() - shared_before;
  warp_path[warp].global |= global_waits() != global_before;
  release_log(warp);
}

// Costs the requests of `warp`'s log (not null).
void BlockCounter::cost_requests(unsigned warp, const WarpLog* log) {
  const unsigned lanes = std::min(kWarp, thread_count - warp * kWarp);
  const std::uint32_t all_lanes = lanes == kWarp ? ~0u : (1u << lanes) - 1;
  // Up to the first position where a lane's instruction differed from the reference, the lanes
  // with an access at position p all made the reference's: p is one request of all of them. Below
  // `all_until` every lane has one.
  std::size_t same_until = log->reference.size();
  std::size_t all_until = same_until;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    const LaneLog& l = log->lanes[lane];
    same_until = std::min(same_until, l.own_from);
    all_until = std::min(all_until, l.size);
  }
  Group& g = scratch_group;
  for (std::size_t p = 0; p < same_until; ++p) {
    const Instruction& instruction = log->reference[p];
    const std::uint32_t bytes = std::max(instruction.bytes, 1u);
    const std::uint64_t* row = log->addresses.get() + p * kWarp;  // the lanes' addresses
    std::uint32_t mask = all_lanes;
    if (p >= all_until) {
      mask = 0;
      for (unsigned lane = 0; lane < lanes; ++lane) {
        mask |= p < log->lanes[lane].size ? 1u << lane : 0u;
      }
    }
    // The lowest and highest address, and whether an access straddles two 4-byte words.
    std::uint64_t low = ~std::uint64_t{0};
    std::uint64_t high = 0;
    bool straddles = bytes > 4;
    if (mask == all_lanes) {
      for (unsigned lane = 0; lane < lanes; ++lane) {
        low = std::min(low, row[lane]);
        high = std::max(high, row[lane]);
        straddles |= row[lane] % 4 + bytes > 4;
      }
    } else {
      for (std::uint32_t m = mask; m != 0; m &= m - 1) {
        const std::uint64_t address = row[std::countr_zero(m)];
        low = std::min(low, address);
        high = std::max(high, address);
        straddles |= address % 4 + bytes > 4;
      }
    }
    const std::uint64_t key = instruction.key;
    if (space_of(key) == Space::shared && op_of(key) != Op::atomic && !straddles &&
        high / 4 - low / 4 < kWarp) {
      // Words among 32 consecutive ones are in different banks (or the same word): the most
      // common shared request, one wavefront.
      const auto lanes_active = static_cast<std::uint64_t>(std::popcount(mask));
      for (SharedAccessCounts* c :
           {&shared_counts(counts, op_of(key)),
            by_line ? &shared_counts(instructions_by_key[key], op_of(key)) : nullptr}) {
        if (c != nullptr) {
          c->requests += 1;
          c->wavefronts += 1;
          c->lanes += lanes_active;
        }
      }
      continue;
    }
    for (std::uint32_t m = mask; m != 0; m &= m - 1) {
      const auto lane = static_cast<unsigned>(std::countr_zero(m));
      g.address[lane] = row[lane];
      g.bytes[lane] = instruction.bytes;
    }
    g.key = key;
    g.mask = mask;
    g.lowest_lane = static_cast<unsigned>(std::countr_zero(mask));
    g.position = static_cast<std::uint32_t>(p);
    cost(warp, g);
  }
  if (log->diverged) {
    cost_divergent(warp, same_until);
  }
}

// The requests of `warp` whose accesses are at or after `from` in its lanes' logs, where the lanes
// took different paths: each lane's k-th visit of an instruction joins that instruction's k-th
// request (the visits before `from` are those of the requests already costed).
void BlockCounter::cost_divergent(unsigned warp, std::size_t from) {
  const WarpLog& log = *warp_logs[warp];
  instructions.clear();
  groups.clear();
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    const LaneLog& l = log.lanes[lane];
    for (std::size_t q = 0; q < l.size; ++q) {
      const Instruction& instruction = log.at(lane, q);
      InstructionVisits& visits = instructions[instruction.key];
      const std::uint32_t k = visits.visits[lane]++;
      if (q < from) {
        continue;
      }
      if (k >= visits.groups.size()) {
        visits.groups.resize(k + 1, kNoGroup);
      }
      if (visits.groups[k] == kNoGroup) {
        visits.groups[k] = static_cast<std::uint32_t>(groups.size());
        Group& created = groups.emplace_back();
        created.key = instruction.key;
        created.lowest_lane = lane;  // lanes come in increasing order
        created.position = static_cast<std::uint32_t>(q);
      }
      Group& g = groups[visits.groups[k]];
      g.mask |= 1u << lane;
      g.address[lane] = log.address(lane, q);
      g.bytes[lane] = instruction.bytes;
    }
  }
  group_order.resize(groups.size());
  for (std::uint32_t i = 0; i < group_order.size(); ++i) {
    group_order[i] = i;
  }
  std::sort(group_order.begin(), group_order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return std::tie(groups[x].position, groups[x].lowest_lane) <
           std::tie(groups[y].position, groups[y].lowest_lane);
  });
  for (const std::uint32_t i : group_order) {
    cost(warp, groups[i]);
  }
}

void BlockCounter::cost(unsigned warp, const Group& g) {
  // A run of loads: the loads a warp issues before a store or atomic, which may need them.
  const Op op = op_of(g.key);
  const bool global = space_of(g.key) == Space::global;
  bool& loading = warp_path[warp].loading;
  if (global && op == Op::load && !loading) {
    counts.global_load_runs += 1;
  }
  if (global || op == Op::atomic) {
    loading = global && op == Op::load;
  }
  WarpSectors& out = warp_sectors[warp];
  if (by_line) [[unlikely]] {
    // The request's figures are also its instruction's: what it adds to the block's counts.
    MemoryCounters& instruction = instructions_by_key[g.key];
    if (global) {
      const GlobalAccessCounts before = global_counts(counts, op);
      cost_global(g, out);
      add_difference(global_counts(instruction, op), global_counts(counts, op), before);
      out.keys.push_back(g.key);
    } else {
      const SharedAccessCounts before = shared_counts(counts, op);
      cost_shared(g);
      add_difference(shared_counts(instruction, op), shared_counts(counts, op), before);
    }
  } else if (global) {
    cost_global(g, out);
  } else {
    cost_shared(g);
  }
  if (global) {
    out.ends.emplace_back(g.position, static_cast<std::uint32_t>(out.sectors.size()));
  }
}

// The bytes of sector `s` (a bit each) that [begin, end) covers.
static std::uint32_t sector_bits(std::uint64_t s, std::uint64_t begin, std::uint64_t end) {
  const std::uint64_t first = std::max(begin, s * 32) - s * 32;
  const std::uint64_t last = std::min(end, s * 32 + 32) - s * 32;  // exclusive
  return static_cast<std::uint32_t>(
      (last - first == 32 ? ~std::uint64_t{0} : (std::uint64_t{1} << (last - first)) - 1) << first);
}

void BlockCounter::cost_global(const Group& g, WarpSectors& out) {
  // Every 32-byte sector any lane touches, once per request, with a bit for each of its bytes
  // that a lane touches. Lanes mostly touch sectors in increasing order, so a lane's sector is
  // merged into the last one, or appended after it, without a search.
  std::vector<std::pair<std::uint64_t, std::uint32_t>>& touched = scratch_sectors;
  touched.clear();
  bool increasing = true;
  std::uint64_t requested = 0;
  // The most common request: the lanes read or write one contiguous span, each the bytes after
  // the previous lane's (a coalesced access).
  const auto first_lane = static_cast<unsigned>(std::countr_zero(g.mask));
  std::uint64_t span_end = g.address[first_lane];
  bool contiguous = true;
  for (std::uint32_t lanes = g.mask; lanes != 0 && contiguous; lanes &= lanes - 1) {
    const auto lane = static_cast<unsigned>(std::countr_zero(lanes));
    contiguous = g.address[lane] == span_end && g.bytes[lane] != 0;
    span_end += g.bytes[lane];
  }
  if (contiguous) {
    const std::uint64_t begin = g.address[first_lane];
    requested = span_end - begin;
    for (std::uint64_t s = begin / 32; s * 32 < span_end; ++s) {
      touched.emplace_back(s, sector_bits(s, begin, span_end));
    }
  }
  for (std::uint32_t lanes = contiguous ? 0 : g.mask; lanes != 0; lanes &= lanes - 1) {
    const auto lane = static_cast<unsigned>(std::countr_zero(lanes));
    const std::uint64_t begin = g.address[lane];
    requested += g.bytes[lane];
    const std::uint64_t end = begin + std::max(g.bytes[lane], 1u);  // exclusive
    for (std::uint64_t s = begin / 32; s * 32 < end; ++s) {
      const std::uint32_t bits = sector_bits(s, begin, end);
      if (!touched.empty() && touched.back().first == s) {
        touched.back().second |= bits;
        continue;
      }
      increasing = increasing && (touched.empty() || touched.back().first < s);
      touched.emplace_back(s, bits);
    }
  }
  if (!increasing) {
    std::sort(touched.begin(), touched.end());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < touched.size(); ++i) {
      if (kept > 0 && touched[kept - 1].first == touched[i].first) {
        touched[kept - 1].second |= touched[i].second;
      } else {
        touched[kept++] = touched[i];
      }
    }
    touched.resize(kept);
  }
  const Op op = op_of(g.key);
  GlobalAccessCounts& c = global_counts(counts, op);
  if (op == Op::store) {
    // Sectors the request writes only in part (not all 32 bytes).
    c.partial_sectors += static_cast<std::uint64_t>(std::count_if(
        touched.begin(), touched.end(), [](const auto& t) { return t.second != ~0u; }));
  }
  c.requests += 1;
  c.sectors += touched.size();
  c.bytes_requested += requested;
  c.lanes += static_cast<std::uint64_t>(std::popcount(g.mask));
  for (const auto& t : touched) {
    out.sectors.push_back((t.first << 2) | static_cast<std::uint64_t>(op));
  }
}

// Whether no bank holds two different 4-byte words of the `lanes` of `g` (for atomics, no word
// twice either): a phase served in one wavefront.
static bool one_word_per_bank(const Group& g, std::uint32_t lanes, Op op) {
  std::array<std::uint64_t, kWarp> bank_word;  // NOLINT: read only where `used` has its bit
  std::uint32_t used = 0;
  for (; lanes != 0; lanes &= lanes - 1) {
    const auto lane = static_cast<unsigned>(std::countr_zero(lanes));
    const std::uint64_t last = (g.address[lane] + std::max(g.bytes[lane], 1u) - 1) / 4;
    for (std::uint64_t word = g.address[lane] / 4; word <= last; ++word) {
      const auto bank = static_cast<unsigned>(word % kWarp);
      if ((used & (1u << bank)) == 0) {
        used |= 1u << bank;
        bank_word[bank] = word;
      } else if (bank_word[bank] != word || op == Op::atomic) {
        return false;
      }
    }
  }
  return true;
}

void BlockCounter::cost_shared(const Group& g) {
  // Accesses of 8 and 16 bytes are served in phases of 16 and 8 lanes (CUDA C++ Programming Guide,
  // "Shared Memory" of compute capability 5.x and later); within a phase a request needs one
  // wavefront per distinct 4-byte word in its busiest bank. Atomics on one bank serialize even on
  // the same word.
  const Op op = op_of(g.key);
  SharedAccessCounts& c = shared_counts(counts, op);
  c.requests += 1;
  c.lanes += static_cast<std::uint64_t>(std::popcount(g.mask));
  std::uint32_t widest = 4;
  for (std::uint32_t lanes = g.mask; lanes != 0; lanes &= lanes - 1) {
    widest = std::max(widest, g.bytes[static_cast<unsigned>(std::countr_zero(lanes))]);
  }
  const unsigned words_per_lane = std::min<unsigned>(kWarp, (widest + 3) / 4);
  const unsigned lanes_per_phase = std::max(1u, kWarp / words_per_lane);
  std::uint64_t wavefronts = 0;
  std::uint64_t ideal = 0;
  std::vector<std::uint64_t>& words = scratch_words;
  for (unsigned phase_start = 0; phase_start < kWarp; phase_start += lanes_per_phase) {
    const std::uint32_t phase_lanes =
        lanes_per_phase == kWarp ? ~0u : ((1u << lanes_per_phase) - 1) << phase_start;
    if ((g.mask & phase_lanes) == 0) {
      continue;
    }
    // Mostly each bank holds one word of the phase (or none): then the phase is one wavefront,
    // found without sorting. Otherwise the words are listed, sorted and counted per bank.
    ideal += 1;
    if (one_word_per_bank(g, g.mask & phase_lanes, op)) {
      wavefronts += 1;
      continue;
    }
    words.clear();
    for (std::uint32_t lanes = g.mask & phase_lanes; lanes != 0; lanes &= lanes - 1) {
      const auto lane = static_cast<unsigned>(std::countr_zero(lanes));
      const std::uint64_t first = g.address[lane] / 4;
      const std::uint64_t last = (g.address[lane] + std::max(g.bytes[lane], 1u) - 1) / 4;
      for (std::uint64_t w = first; w <= last; ++w) {
        words.push_back(w);
      }
    }
    std::sort(words.begin(), words.end());
    if (op != Op::atomic) {
      words.erase(std::unique(words.begin(), words.end()), words.end());
    }
    std::array<std::uint32_t, kWarp> per_bank{};
    std::uint32_t busiest = 0;
    for (const std::uint64_t w : words) {
      busiest = std::max(busiest, ++per_bank[w % kWarp]);
    }
    wavefronts += busiest;
  }
  c.wavefronts += wavefronts;
  c.bank_conflicts += wavefronts - ideal;
}

// Every lane reached the barrier or exited: costs the warps not costed yet, then appends the
// warps' global sectors to the block's in the order (position, warp).
void BlockCounter::end_phase() {
  const auto warps = static_cast<unsigned>(warp_logs.size());
  for (unsigned warp = 0; warp < warps; ++warp) {
    cost_warp(warp);
    cost_ops(warp);
    lanes_done[warp] = lanes_exited[warp];
  }
  // The phase's share of the block's critical path: its slowest warp's, per kind.
  WarpPath most;
  for (WarpPath& p : warp_path) {
    most.global |= p.global;
    most.shared = std::max(most.shared, p.shared);
    most.collectives = std::max(most.collectives, p.collectives);
    most.arithmetic = std::max(most.arithmetic, p.arithmetic);
    p = {};
  }
  counts.path_phases += 1;
  counts.path_global_phases += most.global ? 1 : 0;
  counts.path_shared_phases += most.shared > 0 ? 1 : 0;
  counts.path_shared_requests += most.shared;
  counts.path_collectives += most.collectives;
  counts.path_arithmetic += most.arithmetic;
  // Counting by line, the instruction key of each sector of request `i` of `w`.
  const auto append_keys = [&](const WarpSectors& w, std::size_t i) {
    const std::uint32_t begin = i == 0 ? 0 : w.ends[i - 1].second;
    sectors.keys.insert(sectors.keys.end(), w.ends[i].second - begin, w.keys[i]);
  };
  unsigned with_sectors = 0;
  for (const WarpSectors& w : warp_sectors) {
    with_sectors += w.ends.empty() ? 0 : 1;
  }
  if (with_sectors == 1) {
    for (const WarpSectors& w : warp_sectors) {
      sectors.sectors.insert(sectors.sectors.end(), w.sectors.begin(), w.sectors.end());
      for (std::size_t i = 0; by_line && i < w.ends.size(); ++i) {
        append_keys(w, i);
      }
    }
  } else if (with_sectors > 1) {
    merge_cursor.assign(warps, 0);
    for (;;) {
      std::uint32_t position = ~std::uint32_t{0};
      for (unsigned warp = 0; warp < warps; ++warp) {
        const WarpSectors& w = warp_sectors[warp];
        if (merge_cursor[warp] < w.ends.size()) {
          position = std::min(position, w.ends[merge_cursor[warp]].first);
        }
      }
      if (position == ~std::uint32_t{0}) {
        break;
      }
      for (unsigned warp = 0; warp < warps; ++warp) {
        const WarpSectors& w = warp_sectors[warp];
        std::size_t& i = merge_cursor[warp];
        for (; i < w.ends.size() && w.ends[i].first == position; ++i) {
          const std::uint32_t begin = i == 0 ? 0 : w.ends[i - 1].second;
          sectors.sectors.insert(sectors.sectors.end(), w.sectors.begin() + begin,
                                 w.sectors.begin() + w.ends[i].second);
          if (by_line) {
            append_keys(w, i);
          }
        }
      }
    }
  }
  clear_warp_sectors();
}

}  // namespace gpulab::sim::detail
