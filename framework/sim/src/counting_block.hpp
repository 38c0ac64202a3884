// What memory counting keeps while kernels run (internal to framework/sim's counting*.cpp): the
// access logs of a block's warps (WarpLog), the requests they form (Group), the block's counter
// (BlockCounter) and the launch's (LaunchCounter). counting.cpp records the accesses and holds the
// callbacks, counting_cost.cpp turns a warp's log into requests, sectors and wavefronts, and
// counting_launches.cpp feeds the L2 model and keeps the counted launches; the mechanism is
// described in counting.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "counting.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/core/heavy_hitters.hpp"
#include "gpulab/core/sector_cache.hpp"
#include "op_classes.hpp"
#include "queue.hpp"  // KernelLaunch
#include "races.hpp"
#include "uninitialized.hpp"

namespace gpulab::sim::detail {

enum class Op : std::uint8_t { load, store, atomic };
enum class Space : std::uint8_t { global, shared };

// An instruction's key: its address, the space it reached and its operation. Accesses with equal
// keys by the lanes of a warp can form one request.
inline std::uint64_t instruction_key(std::uint64_t pc, Space space, Op op) {
  return (pc << 3) | (static_cast<std::uint64_t>(space) << 2) | static_cast<std::uint64_t>(op);
}
inline Op op_of(std::uint64_t key) {
  return static_cast<Op>(key & 3u);
}
inline Space space_of(std::uint64_t key) {
  return static_cast<Space>((key >> 2) & 1u);
}

// What a logged access did besides its address: its instruction key and its size in bytes.
struct Instruction {
  std::uint64_t key = 0;
  std::uint32_t bytes = 0;
};

constexpr std::size_t kNever = ~std::size_t{0};

// The accesses of one CUDA thread in the current phase, in order: how many, and their instructions
// where they differ from the warp's reference (WarpLog).
struct LaneLog {
  std::size_t size = 0;
  std::size_t own_from = kNever;  // the first position whose instruction differed, or kNever
  std::vector<Instruction> own;   // the instructions at own_from and after
};

// The accesses of each lane of a warp in the current phase. The lanes of a warp mostly make the
// same accesses in the same order, so the instruction at each position is kept once, in
// `reference` (set by the first lane to reach the position), and a lane logs only addresses until
// its instruction differs from the reference's; from there on it logs its own. The addresses are
// stored position by position (the 32 lanes' addresses at position p together), as they are costed.
struct WarpLog {
  std::array<LaneLog, kWarp> lanes;
  std::unique_ptr<std::uint64_t[]> addresses;  // [position][lane]
  std::size_t capacity = 0;                    // positions
  std::vector<Instruction> reference;
  bool diverged = false;  // some lane has instructions of its own

  WarpLog() { grow(); }
  [[gnu::noinline]] void grow() {
    const std::size_t larger = std::max<std::size_t>(64, 2 * capacity);
    auto bigger = std::make_unique_for_overwrite<std::uint64_t[]>(larger * kWarp);
    std::copy(addresses.get(), addresses.get() + capacity * kWarp, bigger.get());
    addresses = std::move(bigger);
    capacity = larger;
  }
  // Logs an access of lane `lane_index` (BlockCounter::log has the usual case inline).
  void append(unsigned lane_index, std::uint64_t key, std::uint64_t address, std::uint32_t bytes) {
    LaneLog& lane = lanes[lane_index];
    const std::size_t p = lane.size++;
    if (p == capacity) {
      grow();
    }
    addresses[p * kWarp + lane_index] = address;
    if (lane.own_from == kNever) [[likely]] {
      if (p < reference.size()) {
        const Instruction& r = reference[p];
        if (r.key == key && r.bytes == bytes) [[likely]] {
          return;
        }
      } else {  // p == reference.size(): the lane matched the reference so far
        reference.push_back({key, bytes});
        return;
      }
      lane.own_from = p;
      diverged = true;
    }
    lane.own.push_back({key, bytes});
  }
  [[nodiscard]] std::uint64_t address(unsigned lane, std::size_t p) const {
    return addresses[p * kWarp + lane];
  }
  // The instruction of `lane`'s access at position `p`.
  [[nodiscard]] const Instruction& at(unsigned lane, std::size_t p) const {
    const LaneLog& l = lanes[lane];
    return p < l.own_from ? reference[p] : l.own[p - l.own_from];
  }
};

// The arithmetic one CUDA thread executed in the current phase, per OpClass.
using OpCounts = std::array<std::uint64_t, kOpClasses>;

// What one warp's critical path holds in the current phase.
struct WarpPath {
  bool global = false;            // it loaded from global memory (or made a global atomic)
  std::uint64_t shared = 0;       // shared-memory requests
  std::uint64_t collectives = 0;  // shuffles, votes, __syncwarp
  std::uint64_t arithmetic = 0;   // counted arithmetic instructions
  bool loading = false;           // its last global request was a load (a run is open)
};

// One warp-level request: the lanes that reached one instruction for the k-th time.
struct Group {
  std::uint64_t key = 0;
  std::uint32_t mask = 0;
  std::uint32_t position = 0;  // index of this access in the lowest lane's sequence
  std::uint32_t lowest_lane = kWarp;
  std::array<std::uint64_t, kWarp> address{};
  std::array<std::uint32_t, kWarp> bytes{};
};

// Per instruction, in a warp whose lanes took different paths: how often each lane reached it,
// and the request of each visit (kNoGroup for visits costed before the paths parted).
struct InstructionVisits {
  std::array<std::uint32_t, kWarp> visits{};
  std::vector<std::uint32_t> groups;
};
constexpr std::uint32_t kNoGroup = ~std::uint32_t{0};

// The global sectors of one warp's costed requests, in their order, each request's run of
// `sectors` ending at `ends[i].second` with position `ends[i].first`; counting by line, the
// request's instruction key is `keys[i]`.
struct WarpSectors {
  std::vector<std::uint64_t> sectors;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ends;
  std::vector<std::uint64_t> keys;
};

// A block's global sectors in request order, (sector << 2) | op, and, counting by line, the
// instruction key of each.
struct BlockSectors {
  std::vector<std::uint64_t> sectors;
  std::vector<std::uint64_t> keys;
};

// Counting by line: the figures of each instruction key (the requests it made, their L2 lookups).
using InstructionCounts = std::unordered_map<std::uint64_t, MemoryCounters>;

struct Range {
  std::uintptr_t begin = 0;
  std::uintptr_t bytes = 0;
  std::uintptr_t modeled = 0;  // of an allocation: its address in the L2 model (DeviceRange)
  [[nodiscard]] bool contains(std::uintptr_t a) const { return a - begin < bytes; }
};

// How far past an allocation's end an access is described as past it (the sim's guard page and
// the 256-byte rounding before it, with room to spare), rather than as host memory.
constexpr std::uintptr_t kPastTheEndBytes = 64 * 1024;

class LaunchCounter {
 public:
  // `l2`: the device's L2 model as the launch starts; its DRAM traffic from here on is the
  // launch's. `by_line`: the launch's figures are also kept per instruction.
  LaunchCounter(const KernelLaunch& launch, std::vector<Range> globals, const SectorCache& l2,
                bool by_line)
      : launch_(launch),
        by_line_(by_line),
        globals_(std::move(globals)),
        dram_reads_before_(l2.dram_sector_reads()),
        dram_writes_before_(l2.dram_sector_writes()) {
    const auto* payload = static_cast<const char*>(launch.call.payload);
    arguments_ = Range{reinterpret_cast<std::uintptr_t>(payload), launch.call.payload_bytes};
  }

  const KernelLaunch& launch() const { return launch_; }
  const Range& arguments() const { return arguments_; }
  bool by_line() const { return by_line_; }

  // The last global range that starts at or below `a`, or null.
  const Range* global_below(std::uintptr_t a) const {
    auto it = std::upper_bound(globals_.begin(), globals_.end(), a,
                               [](std::uintptr_t x, const Range& r) { return x < r.begin; });
    return it == globals_.begin() ? nullptr : &*std::prev(it);
  }

  // The global range holding `a`, or null.
  const Range* global_range(std::uintptr_t a) const {
    auto it = std::upper_bound(globals_.begin(), globals_.end(), a,
                               [](std::uintptr_t x, const Range& r) { return x < r.begin; });
    if (it == globals_.begin()) {
      return nullptr;
    }
    --it;
    return it->contains(a) ? &*it : nullptr;
  }

  // A block's counts, its global sectors and, counting by line, its instructions' figures.
  void block_done(std::uint64_t block, const MemoryCounters& counts, BlockSectors sectors,
                  const InstructionCounts& instructions);
  MemoryCounters finish();
  // Counting by line, after finish(): the figures per source line (debug_info.hpp).
  std::vector<SourceLineCounters> source_lines() const;

 private:
  void feed(const BlockSectors& block);

  const KernelLaunch& launch_;
  bool by_line_;
  InstructionCounts instructions_;
  std::vector<Range> globals_;  // sorted by begin
  Range arguments_;
  std::mutex mutex_;
  MemoryCounters totals_;
  std::map<std::uint64_t, BlockSectors> pending_;  // blocks done out of order
  std::uint64_t next_block_ = 0;
  HeavyHitters atomic_sectors_{1024};  // global atomic requests per sector, in block order
  std::uint64_t dram_reads_before_;
  std::uint64_t dram_writes_before_;
};

// What one worker counts for the block it runs.
struct BlockCounter {
  LaunchCounter* launch = nullptr;
  std::uint64_t block = 0;
  unsigned thread_count = 0;
  std::vector<WarpLog*> warp_logs;             // per warp: its log in this phase, or null
  std::vector<std::unique_ptr<WarpLog>> pool;  // every log; those not in use are in `free_logs`
  std::vector<WarpLog*> free_logs;
  std::vector<std::uint32_t> lanes_done;    // per warp: lanes at the barrier or exited
  std::vector<std::uint32_t> lanes_exited;  // per warp
  std::vector<WarpSectors> warp_sectors;    // per warp, this phase
  // The running CUDA thread's log and its place in it (the position of its next access, copied
  // to its LaneLog::size when it stops running), its column of addresses, and the reference
  // instructions it can match (none once it has instructions of its own).
  WarpLog* current_warp = nullptr;
  unsigned current_lane = 0;
  std::size_t place = 0;
  std::uint64_t* column = nullptr;
  const Instruction* reference = nullptr;
  std::size_t reference_size = 0;
  MemoryCounters counts;
  std::vector<OpCounts> thread_ops;  // per CUDA thread of the block, this phase
  OpCounts* current_ops = nullptr;   // the running thread's
  std::vector<WarpPath> warp_path;   // per warp, this phase
  BlockSectors sectors;
  // Counting by line (the launch's by_line()): each instruction's figures in this block.
  bool by_line = false;
  InstructionCounts instructions_by_key;
  Range dynamic_shared;
  Range tls;
  std::array<std::uintptr_t, 4> builtins{};  // threadIdx, blockIdx, blockDim, gridDim
  Range stack;
  // Per instruction (a small table indexed by its address): the allocation it reached last. An
  // instruction mostly reaches one allocation (vector add's three loads and stores: a, b and c).
  struct InstructionGlobal {
    std::uint64_t pc = 0;
    const Range* range = &kNoRange;
  };
  static constexpr Range kNoRange{};
  std::array<InstructionGlobal, 64> instruction_globals{};
  std::array<const Range*, 4> recent_globals{};  // of this launch, most recent first
  // The sanitizer (GPULAB_SIM_SANITIZE, races.hpp, uninitialized.hpp): the running thread, this
  // phase's accesses to shared memory, how many __syncwarp() calls each thread completed in it,
  // and which bytes of shared memory earlier phases wrote.
  bool sanitize = false;
  unsigned current_thread = 0;
  bool atomic_exchange = false;  // the atomic being recorded is an atomicExch
  std::vector<SharedAccess> shared_accesses;
  std::vector<std::uint32_t> sync_epochs;
  SharedWrites shared_writes;
  static std::size_t slot(std::uint64_t pc) { return (pc ^ (pc >> 7)) % 64; }
  // Scratch space of the costing, kept so that costing a request allocates nothing.
  Group scratch_group;
  std::vector<Group> groups;
  std::vector<std::uint32_t> group_order;
  std::unordered_map<std::uint64_t, InstructionVisits> instructions;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch_sectors;
  std::vector<std::uint64_t> scratch_words;
  std::vector<std::size_t> merge_cursor;

  void begin_phase_logs(unsigned warp);
  void release_log(unsigned warp);
  void clear_warp_sectors();
  void record(std::uintptr_t a, std::uint32_t bytes, Op op, std::uint64_t pc);
  void record_elsewhere(std::uintptr_t a, std::uint32_t bytes, Op op, std::uint64_t pc);
  void note_shared(std::uintptr_t a, std::uint32_t bytes, Op op, std::uint64_t pc);
  // An access to shared memory: logged, and kept for the sanitizer's check when it is on.
  void log_shared(std::uintptr_t a, std::uint32_t bytes, Op op, std::uint64_t pc) {
    log(instruction_key(pc, Space::shared, op), a, bytes);
    if (sanitize) [[unlikely]] {
      note_shared(a, bytes, op, pc);
    }
  }
  void log(std::uint64_t key, std::uint64_t address, std::uint32_t bytes) {
    // The usual case: the access matches the reference (which is never longer than the log's
    // capacity, so the address has room). Only `place` is written: one 8-byte store, which the
    // next access's load of it is forwarded from.
    const std::size_t p = place;
    if (p < reference_size && reference[p].key == key && reference[p].bytes == bytes) [[likely]] {
      column[p * kWarp] = address;
      place = p + 1;
      return;
    }
    log_elsewhere(key, address, bytes);
  }
  void log_elsewhere(std::uint64_t key, std::uint64_t address, std::uint32_t bytes);
  void enter(unsigned linear);
  void park();
  void save_place();
  void find_place();
  void lane_done(unsigned linear, bool exited);
  void cost_warp(unsigned warp);
  void cost_requests(unsigned warp, const WarpLog* log);
  void cost_ops(unsigned warp);
  void cost_divergent(unsigned warp, std::size_t from);
  void cost(unsigned warp, const Group& g);
  void cost_global(const Group& g, WarpSectors& out);
  void cost_shared(const Group& g);
  void end_phase();
  // The sanitizer's checks of the phase that ends: its race, or else its read of shared memory no
  // thread wrote, in words; or none. Starts the next.
  std::optional<std::string> check_phase();
};

inline GlobalAccessCounts& global_counts(MemoryCounters& c, Op op) {
  return op == Op::load ? c.global_load : op == Op::store ? c.global_store : c.global_atomic;
}

inline SharedAccessCounts& shared_counts(MemoryCounters& c, Op op) {
  return op == Op::load ? c.shared_load : op == Op::store ? c.shared_store : c.shared_atomic;
}

}  // namespace gpulab::sim::detail
