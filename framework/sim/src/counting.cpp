// Memory counting on sim: every load, store and atomic a kernel's CUDA threads make, turned into
// the warp-level requests a GPU would issue, with their sectors, wavefronts and bank conflicts,
// and the global sectors run through a model of the spec's L2.
//
// How accesses are seen. With counting compiled in (GPULAB_SIM_COUNTING, cmake/GpulabBackend.cmake)
// the translated .cu files are built with gpulab's GCC plugin (framework/sim/plugin), which makes
// every load and store call __gpulab_sim_load(address, bytes) or __gpulab_sim_store, defined below
// in this file. Without the plugin (no plugin headers), GCC's -fsanitize=kernel-address checks
// call __asan_{load,store}{1,2,4,8,16,N}_noabort(address) instead, and leave out the store of a
// read-modify-write. No AddressSanitizer runtime is linked: the callbacks are ours.
// When no counted CUDA thread runs on the calling OS thread, a callback returns at once; the cost
// is the call. Atomics report themselves (device.hpp calls count_atomic), their own loads and
// stores are not instrumented.
//
// What an access is. The address decides: the running thread's fiber stack is local memory (counted
// apart, not modeled); the launch's dynamic shared memory and the thread's static TLS block (where
// `__shared__` variables live, minus the built-in variables) are shared memory; a live cudaMalloc
// or cudaMallocHost allocation is global memory; the kernel's arguments are ignored; anything else
// is "other" (a __constant__ variable, or host memory a GPU could not read).
//
// Requests. Each CUDA thread's accesses are logged in order (BlockCounter::record): its addresses,
// and its instructions only where they differ from those of the first lane of its warp to get as
// far (WarpLog). The lanes of a warp that reach the same instruction (the callback's return
// address) for the k-th time form one request. Once every lane of a warp has reached the barrier
// or exited, its requests are complete and are costed (cost_warp): where the lanes made the same
// accesses in the same order, position by position with no lookup; from the first place where
// they differ, by counting each lane's visits per instruction. At the barrier, and at the block's
// end, the warps' global sectors are put in a schedule-independent order (position in the lowest
// lane's sequence, then warp, then lane), so the counts do not depend on the order the simulator
// ran the threads in.
//
// L2. Each block's global sectors are fed to the device's L2 model (gpulab/core/sector_cache.hpp)
// in block order (blocks finish out of order on several workers; a reorder buffer holds the early
// ones), so L2 and DRAM figures are the same with 1 or many workers and under every schedule. The
// atomic sectors are also counted per sector (heavy_hitters.hpp), for the busiest one.
#include "counting.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fiber.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/core/heavy_hitters.hpp"
#include "gpulab/core/sector_cache.hpp"
#include "gpulab/sim/runtime.hpp"
#include "gpulab/sim/wmma.hpp"
#include "op_classes.hpp"
#include "program_image.hpp"
#include "queue.hpp"
#include "settings.hpp"

// What the running CUDA thread's arithmetic added since it started running, per OpClass
// (op_classes.hpp): the gpulab_count_ops plugin (framework/sim/plugin/count_ops.cpp) makes every
// basic block of a translated file add its counts here, one instruction per class (host code too:
// what it adds outside a counted thread is dropped). BlockCounter moves them to the thread they
// belong to whenever a counted thread stops running.
extern "C" {
constinit thread_local std::uint64_t gpulab_sim_ops[gpulab::sim::kOpSlots] = {};
}

namespace gpulab::sim::detail {
namespace {

constexpr unsigned kWarp = 32;

enum class Op : std::uint8_t { load, store, atomic };
enum class Space : std::uint8_t { global, shared };

// An instruction's key: its address, the space it reached and its operation. Accesses with equal
// keys by the lanes of a warp can form one request.
std::uint64_t instruction_key(std::uint64_t pc, Space space, Op op) {
  return (pc << 3) | (static_cast<std::uint64_t>(space) << 2) | static_cast<std::uint64_t>(op);
}
Op op_of(std::uint64_t key) {
  return static_cast<Op>(key & 3u);
}
Space space_of(std::uint64_t key) {
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
// `sectors` ending at `ends[i].second` with position `ends[i].first`.
struct WarpSectors {
  std::vector<std::uint64_t> sectors;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ends;
};

struct Range {
  std::uintptr_t begin = 0;
  std::uintptr_t bytes = 0;
  std::uintptr_t modeled = 0;  // of an allocation: its address in the L2 model (DeviceRange)
  [[nodiscard]] bool contains(std::uintptr_t a) const { return a - begin < bytes; }
};

// How far past an allocation's end an access is described as past it (the sim's guard page and
// the 256-byte rounding before it, with room to spare), rather than as host memory.
constexpr std::uintptr_t kPastTheEndBytes = 64 * 1024;

// Whether `a` is in the executable's own image (its loaded segments: code, constants, __device__
// and __constant__ variables, host globals), where a kernel's accesses to the program's static
// data land on sim.
bool in_program_image(std::uintptr_t a) {
  static const std::vector<ImageRange> segments = program_segments();
  return std::any_of(segments.begin(), segments.end(),
                     [&](const ImageRange& r) { return r.contains(a); });
}

}  // namespace

class LaunchCounter {
 public:
  // `l2`: the device's L2 model as the launch starts; its DRAM traffic from here on is the
  // launch's.
  LaunchCounter(const KernelLaunch& launch, std::vector<Range> globals, const SectorCache& l2)
      : launch_(launch),
        globals_(std::move(globals)),
        dram_reads_before_(l2.dram_sector_reads()),
        dram_writes_before_(l2.dram_sector_writes()) {
    const auto* payload = static_cast<const char*>(launch.call.payload);
    arguments_ = Range{reinterpret_cast<std::uintptr_t>(payload), launch.call.payload_bytes};
  }

  const KernelLaunch& launch() const { return launch_; }
  const Range& arguments() const { return arguments_; }

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

  void block_done(std::uint64_t block, const MemoryCounters& counts,
                  std::vector<std::uint64_t> sectors);
  MemoryCounters finish();

 private:
  void feed(const std::vector<std::uint64_t>& sectors);

  const KernelLaunch& launch_;
  std::vector<Range> globals_;  // sorted by begin
  Range arguments_;
  std::mutex mutex_;
  MemoryCounters totals_;
  std::map<std::uint64_t, std::vector<std::uint64_t>> pending_;  // blocks done out of order
  std::uint64_t next_block_ = 0;
  HeavyHitters atomic_sectors_{1024};  // global atomic requests per sector, in block order
  std::uint64_t dram_reads_before_;
  std::uint64_t dram_writes_before_;
};

namespace {

// The device's L2 model and the record of counted launches.
struct CountingState {
  std::atomic<bool> on{false};
  std::mutex mutex;  // guards launches and the file
  std::vector<CountedLaunch> launches;
  std::string file;      // GPULAB_SIM_COUNTERS: every counted launch appended as one JSON line
  bool cold_l2 = false;  // GPULAB_SIM_CACHE_CONTROL=all: L2 emptied before each counted launch
  std::unique_ptr<SectorCache> l2;  // device thread (and block feeding, under the launch's mutex)
};

CountingState& counting_state() {
  // Never destroyed: work queued without a synchronize runs on the device thread after main.
  static CountingState& state = *new CountingState();
  // The settings leave the file empty where this build cannot count (the device then says why).
  static const bool from_environment = [] {
    const Settings& environment = settings();
    state.cold_l2 = environment.cold_l2;
    if (environment.counters_file.empty()) {
      return false;
    }
    state.file = environment.counters_file;
    state.on.store(true);
    return true;
  }();
  static_cast<void>(from_environment);
  return state;
}

void append_counted_launch(const std::string& file, const CountedLaunch& launch) {
  std::FILE* out = std::fopen(file.c_str(), "a");
  if (out == nullptr) {
    std::fprintf(stderr, "gpulab sim: cannot append to GPULAB_SIM_COUNTERS file '%s'\n",
                 file.c_str());
    return;
  }
  const std::string line = counted_launch_to_json_line(launch) + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fclose(out);
}

// Appends a counted launch to the record (and to GPULAB_SIM_COUNTERS's file).
void keep_counted_launch(const CountedLaunch& launch) {
  CountingState& s = counting_state();
  std::scoped_lock lock(s.mutex);
  if (!s.file.empty()) {
    append_counted_launch(s.file, launch);
  }
  s.launches.push_back(launch);
}

SectorCache& l2_model() {
  CountingState& s = counting_state();
  if (!s.l2) {
    const std::uint64_t bytes = device_spec().l2_bytes;
    s.l2 = std::make_unique<SectorCache>(std::max<std::uint64_t>(bytes, SectorCache::kLineBytes));
  }
  return *s.l2;
}

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
  std::vector<OpCounts> thread_ops;    // per CUDA thread of the block, this phase
  OpCounts* current_ops = nullptr;     // the running thread's
  std::vector<WarpPath> warp_path;     // per warp, this phase
  std::vector<std::uint64_t> sectors;  // (sector << 2) | op, in request order
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
};

GlobalAccessCounts& global_counts(MemoryCounters& c, Op op) {
  return op == Op::load ? c.global_load : op == Op::store ? c.global_store : c.global_atomic;
}

SharedAccessCounts& shared_counts(MemoryCounters& c, Op op) {
  return op == Op::load ? c.shared_load : op == Op::store ? c.shared_store : c.shared_atomic;
}

thread_local BlockCounter* active = nullptr;  // set while a counted CUDA thread runs
thread_local bool in_device_code = false;     // set while any CUDA thread runs
thread_local HostMemoryGap host_gap;          // the last stretch found free of device memory

BlockCounter& this_block_counter() {
  // On the heap: in the static TLS block, beside the kernels' __shared__ variables, its size would
  // move them (and the cache sets they share with the fibers' stacks).
  thread_local const std::unique_ptr<BlockCounter> counter = std::make_unique<BlockCounter>();
  return *counter;
}

bool is_builtin(const BlockCounter& c, std::uintptr_t a) {
  // Four comparisons with no branch between them: the answer is mostly no, and the linker need not
  // put the four next to each other (initialized and zeroed TLS data are apart).
  const auto in = [&](std::size_t i) {
    return static_cast<unsigned>(a - c.builtins[i] < sizeof(dim3));
  };
  return (in(0) | in(1) | in(2) | in(3)) != 0;
}

// Gives `warp` a log for this phase, from the pool.
void BlockCounter::begin_phase_logs(unsigned warp) {
  if (free_logs.empty()) {
    pool.push_back(std::make_unique<WarpLog>());
    free_logs.push_back(pool.back().get());
  }
  warp_logs[warp] = free_logs.back();
  free_logs.pop_back();
}

// Empties `warp`'s log and returns it to the pool.
void BlockCounter::release_log(unsigned warp) {
  WarpLog* log = warp_logs[warp];
  for (LaneLog& lane : log->lanes) {
    lane.size = 0;
    lane.own_from = kNever;
    lane.own.clear();
  }
  log->reference.clear();
  log->diverged = false;
  free_logs.push_back(log);
  warp_logs[warp] = nullptr;
}

// Makes the CUDA thread `linear` the one whose accesses are logged.
void BlockCounter::enter(unsigned linear) {
  park();
  const unsigned warp = linear / kWarp;
  if (warp_logs[warp] == nullptr) {
    begin_phase_logs(warp);
  }
  current_warp = warp_logs[warp];
  current_lane = linear % kWarp;
  current_ops = &thread_ops[linear];
  find_place();
}

// The running CUDA thread stops running (for now): its place in the log and its arithmetic are
// put away.
void BlockCounter::park() {
  if (current_warp != nullptr) {
    save_place();
    current_warp = nullptr;
  }
  if (current_ops != nullptr) {
    for (std::size_t f = 0; f < current_ops->size(); ++f) {
      (*current_ops)[f] += gpulab_sim_ops[f];
      gpulab_sim_ops[f] = 0;
    }
    current_ops = nullptr;
  }
}

// The running thread's LaneLog::size, from its place.
void BlockCounter::save_place() {
  current_warp->lanes[current_lane].size = place;
}

// The running thread's place, from its LaneLog.
void BlockCounter::find_place() {
  const LaneLog& lane = current_warp->lanes[current_lane];
  place = lane.size;
  column = current_warp->addresses.get() + current_lane;
  reference = current_warp->reference.data();
  reference_size = lane.own_from == kNever ? current_warp->reference.size() : 0;
}

// log() past the usual case: the access appended by the general rule.
[[gnu::noinline]] void BlockCounter::log_elsewhere(std::uint64_t key, std::uint64_t address,
                                                   std::uint32_t bytes) {
  save_place();
  current_warp->append(current_lane, key, address, bytes);
  find_place();
}

void BlockCounter::clear_warp_sectors() {
  for (WarpSectors& w : warp_sectors) {
    w.sectors.clear();
    w.ends.clear();
  }
}

[[gnu::always_inline]] inline void BlockCounter::record(std::uintptr_t a, std::uint32_t bytes,
                                                        Op op, std::uint64_t pc) {
  if (stack.contains(a)) {
    ++counts.local_accesses;
    return;
  }
  if (dynamic_shared.contains(a)) {
    log(instruction_key(pc, Space::shared, op), a, bytes);
  } else if (tls.contains(a)) {
    if (!is_builtin(*this, a)) {
      log(instruction_key(pc, Space::shared, op), a, bytes);
    }
  } else if (const InstructionGlobal& g = instruction_globals[slot(pc)];
             g.pc == pc && g.range->contains(a)) {
    // Global memory is logged at its modeled address (DeviceRange).
    log(instruction_key(pc, Space::global, op), a - g.range->begin + g.range->modeled, bytes);
  } else if (!launch->arguments().contains(a)) {  // every thread reads its arguments: not counted
    record_elsewhere(a, bytes, op, pc);
  }
}

// record() past its usual answers (kept out of it, so that they cost it nothing): an instruction's
// first access to global memory, or one to another allocation than its last, or an access that is
// not to global memory (counted, or failing the thread when a GPU could not make it).
[[gnu::noinline]] void BlockCounter::record_elsewhere(std::uintptr_t a, std::uint32_t bytes, Op op,
                                                      std::uint64_t pc) {
  // A new instruction, or one that reached another allocation than the last time: kernels mostly
  // use a few allocations, the last four found are looked at before the sorted list.
  const auto recent = std::find_if(recent_globals.begin(), recent_globals.end(),
                                   [&](const Range* r) { return r != nullptr && r->contains(a); });
  const Range* global = recent != recent_globals.end() ? *recent : launch->global_range(a);
  if (global != nullptr) {
    if (recent == recent_globals.end()) {
      std::rotate(recent_globals.rbegin(), recent_globals.rbegin() + 1, recent_globals.rend());
      recent_globals.front() = global;
    }
    instruction_globals[slot(pc)] = {pc, global};
    log(instruction_key(pc, Space::global, op), a - global->begin + global->modeled, bytes);
    return;
  }
  if (!in_program_image(a)) {
    // Not device, pinned, shared, local, argument or the program's own (__device__ and
    // __constant__) memory: past the end of an allocation, or host memory (a heap or a host
    // stack), which a GPU cannot reach.
    const char* verb = op == Op::store ? "wrote" : op == Op::load ? "read" : "updated";
    char what[384];
    if (const Range* below = launch->global_below(a);
        below != nullptr && a - (below->begin + below->bytes) < kPastTheEndBytes) {
      std::snprintf(what, sizeof what,
                    "%s %u byte(s) at %p, %zu bytes past the end of the allocation of %zu "
                    "bytes at %p (an out-of-bounds access)",
                    verb, bytes, reinterpret_cast<void*>(a),
                    static_cast<std::size_t>(a - (below->begin + below->bytes)),
                    static_cast<std::size_t>(below->bytes), reinterpret_cast<void*>(below->begin));
    } else {
      std::snprintf(what, sizeof what,
                    "%s %u byte(s) of host memory at %p: a kernel reaches only device memory "
                    "(cudaMalloc), pinned memory, shared, local and __device__/__constant__ "
                    "variables",
                    verb, bytes, reinterpret_cast<void*>(a));
    }
    fail_illegal_address(what);
  }
  ++counts.other_accesses;
}

// The CUDA thread `linear` waits at a barrier or exited: when it is its warp's last, the warp's
// requests are complete.
void BlockCounter::lane_done(unsigned linear, bool exited) {
  const unsigned warp = linear / kWarp;
  const std::uint32_t bit = 1u << (linear % kWarp);
  lanes_done[warp] |= bit;
  lanes_exited[warp] |= exited ? bit : 0u;
  const unsigned in_warp = std::min(kWarp, thread_count - warp * kWarp);
  const std::uint32_t all = in_warp == kWarp ? ~0u : (1u << in_warp) - 1;
  if (lanes_done[warp] == all) {
    cost_warp(warp);
    cost_ops(warp);
  }
}

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
      SharedAccessCounts& c = shared_counts(counts, op_of(key));
      c.requests += 1;
      c.wavefronts += 1;
      c.lanes += static_cast<std::uint64_t>(std::popcount(mask));
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
  if (global) {
    WarpSectors& out = warp_sectors[warp];
    cost_global(g, out);
    out.ends.emplace_back(g.position, static_cast<std::uint32_t>(out.sectors.size()));
  } else {
    cost_shared(g);
  }
}

// The bytes of sector `s` (a bit each) that [begin, end) covers.
std::uint32_t sector_bits(std::uint64_t s, std::uint64_t begin, std::uint64_t end) {
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
bool one_word_per_bank(const Group& g, std::uint32_t lanes, Op op) {
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
  unsigned with_sectors = 0;
  for (const WarpSectors& w : warp_sectors) {
    with_sectors += w.ends.empty() ? 0 : 1;
  }
  if (with_sectors == 1) {
    for (WarpSectors& w : warp_sectors) {
      sectors.insert(sectors.end(), w.sectors.begin(), w.sectors.end());
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
          sectors.insert(sectors.end(), w.sectors.begin() + begin,
                         w.sectors.begin() + w.ends[i].second);
        }
      }
    }
  }
  clear_warp_sectors();
}

std::uint64_t return_address(const void* pc) {
  return reinterpret_cast<std::uint64_t>(pc);
}

}  // namespace

void LaunchCounter::feed(const std::vector<std::uint64_t>& sectors) {
  SectorCache& l2 = l2_model();
  for (const std::uint64_t entry : sectors) {
    const std::uint64_t sector = entry >> 2;
    switch (static_cast<Op>(entry & 3u)) {
      case Op::load:
        totals_.l2_sector_reads += 1;
        totals_.l2_sector_hits += l2.read(sector) ? 1 : 0;
        break;
      case Op::store:
        totals_.l2_sector_writes += 1;
        totals_.l2_sector_hits += l2.write(sector) ? 1 : 0;
        break;
      case Op::atomic:  // a read-modify-write at L2
        atomic_sectors_.add(sector);
        totals_.l2_sector_reads += 1;
        totals_.l2_sector_writes += 1;
        totals_.l2_sector_hits += (l2.read(sector) ? 1 : 0) + (l2.write(sector) ? 1 : 0);
        break;
    }
  }
}

void LaunchCounter::block_done(std::uint64_t block, const MemoryCounters& counts,
                               std::vector<std::uint64_t> sectors) {
  std::scoped_lock lock(mutex_);
  totals_ += counts;
  pending_.emplace(block, std::move(sectors));
  while (!pending_.empty() && pending_.begin()->first == next_block_) {
    feed(pending_.begin()->second);
    pending_.erase(pending_.begin());
    ++next_block_;
  }
}

MemoryCounters LaunchCounter::finish() {
  std::scoped_lock lock(mutex_);
  SectorCache& l2 = l2_model();
  l2.write_back();
  totals_.dram_bytes_read = (l2.dram_sector_reads() - dram_reads_before_) * 32;
  totals_.dram_bytes_written = (l2.dram_sector_writes() - dram_writes_before_) * 32;
  totals_.l2_atomic_busiest_sector = atomic_sectors_.largest();
  return totals_;
}

void LaunchCounterDeleter::operator()(LaunchCounter* counter) const noexcept {
  delete counter;
}

bool counting_compiled() noexcept {
#if defined(GPULAB_SIM_COUNTING)
  return true;
#else
  return false;
#endif
}

LaunchCounterPtr begin_counting(const KernelLaunch& launch) {
  if (!launch.counted) {
    return nullptr;
  }
  std::vector<Range> globals;
  for (const DeviceRange& r : device_memory_ranges()) {
    globals.push_back(Range{r.begin, r.bytes, r.modeled});
  }
  std::sort(globals.begin(), globals.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  SectorCache& l2 = l2_model();  // created on the device thread, before workers feed it
  if (counting_state().cold_l2) {
    l2.clear();  // as Nsight Compute's --cache-control all; the write-back is no launch's
  }
  return LaunchCounterPtr(new LaunchCounter(launch, std::move(globals), l2));
}

std::optional<CountedLaunch> finish_counting(LaunchCounterPtr counter, bool failed, bool keep) {
  if (!counter || failed) {
    return std::nullopt;
  }
  const KernelLaunch& launch = counter->launch();
  const LaunchSpec& spec = launch.spec;
  CountedLaunch record;
  record.launch_id = launch.id;
  record.kernel = spec.name;
  record.where = std::string(spec.where.file_name()) + ":" + std::to_string(spec.where.line());
  record.grid = {spec.grid.x, spec.grid.y, spec.grid.z};
  record.block = {spec.block.x, spec.block.y, spec.block.z};
  record.dynamic_shared_bytes = spec.shared_bytes;
  record.spec = device_spec().key;
  if (const auto resources = launched_kernel_resources(
          spec.kernel, spec.function.empty() ? std::string_view(spec.name) : spec.function,
          spec.where.file_name())) {
    record.registers_per_thread = resources->registers_per_thread;
    record.static_shared_bytes = resources->static_shared_bytes;
  }
  record.longest_wait_cycles = launch.longest_wait_cycles.load();
  record.counters = counter->finish();
  if (keep) {
    keep_counted_launch(record);
  }
  return record;
}

void record_library_launch(const CountedLaunch& launch) {
  keep_counted_launch(launch);
}

void counting_begin_block(LaunchCounter& counter, unsigned block_linear, unsigned thread_count,
                          const void* dynamic_shared, std::size_t dynamic_shared_bytes) {
  BlockCounter& c = this_block_counter();
  if (c.tls.bytes == 0) {
    const ImageRange block = thread_local_block();
    if (block.bytes == 0) {
      // Configuring turns counting off where the layout is unknown (cmake/GpulabBackend.cmake).
      std::fprintf(stderr,
                   "gpulab sim: cannot find this thread's thread_local variables (where "
                   "__shared__ variables live): configure with -DGPULAB_SIM_COUNTING=OFF\n");
      std::abort();
    }
    c.tls = Range{block.begin, block.bytes};
    c.builtins = {
        reinterpret_cast<std::uintptr_t>(&threadIdx), reinterpret_cast<std::uintptr_t>(&blockIdx),
        reinterpret_cast<std::uintptr_t>(&blockDim), reinterpret_cast<std::uintptr_t>(&gridDim)};
  }
  c.launch = &counter;
  c.current_warp = nullptr;
  c.block = block_linear;
  c.thread_count = thread_count;
  const unsigned warps = (thread_count + kWarp - 1) / kWarp;
  c.warp_logs.assign(warps, nullptr);
  c.lanes_done.assign(warps, 0);
  c.lanes_exited.assign(warps, 0);
  c.warp_sectors.resize(warps);
  c.counts = MemoryCounters{};
  c.thread_ops.assign(thread_count, OpCounts{});
  c.current_ops = nullptr;
  // What code ran on this OS thread since the last counted thread parked is not the block's (park
  // leaves the array empty).
  std::fill(std::begin(gpulab_sim_ops), std::end(gpulab_sim_ops), 0);
  c.warp_path.assign(warps, WarpPath{});
  c.sectors.clear();
  c.dynamic_shared = Range{reinterpret_cast<std::uintptr_t>(dynamic_shared), dynamic_shared_bytes};
  c.instruction_globals.fill({});
  c.recent_globals.fill(nullptr);
}

void counting_tensor_mma(MatrixElement input, int m, int n, int k) noexcept {
  MemoryCounters& c = this_block_counter().counts;
  const auto flop = std::uint64_t{2} * static_cast<std::uint64_t>(m) *
                    static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(k);
  c.tensor_mma += 1;
  (input == MatrixElement::bf16 ? c.tensor_bf16_flop : c.tensor_fp16_flop) += flop;
}

void counting_barrier(unsigned warps) noexcept {
  this_block_counter().counts.barrier_instructions += warps;
}

void counting_warp_collective(WarpOp op, unsigned warp) noexcept {
  BlockCounter& block = this_block_counter();
  block.warp_path[warp].collectives += 1;
  MemoryCounters& c = block.counts;
  switch (op) {
    case WarpOp::sync:
      c.warp_sync_instructions += 1;
      break;
    case WarpOp::ballot:
    case WarpOp::any:
    case WarpOp::all:
    case WarpOp::active:
      c.vote_instructions += 1;
      break;
    case WarpOp::shfl:
    case WarpOp::shfl_up:
    case WarpOp::shfl_down:
    case WarpOp::shfl_xor:
      c.shuffle_instructions += 1;
      break;
  }
}

void counting_enter_thread(unsigned linear, const Fiber& fiber) noexcept {
  BlockCounter& c = this_block_counter();
  c.enter(linear);
  c.stack = Range{reinterpret_cast<std::uintptr_t>(fiber.stack_bottom()), fiber.stack_bytes()};
  active = &c;
}

void counting_leave_thread() noexcept {
  active = nullptr;
  this_block_counter().park();
}

void counting_thread_done(unsigned linear, bool exited) {
  // The costing may run instrumented copies of library templates (the linker keeps one copy of
  // each, possibly a translated file's): their accesses are not the kernel's.
  active = nullptr;
  BlockCounter& c = this_block_counter();
  c.park();
  c.lane_done(linear, exited);
}

void counting_end_phase() {
  this_block_counter().end_phase();
}

void counting_end_block(bool failed) {
  BlockCounter& c = this_block_counter();
  active = nullptr;
  c.park();
  if (failed) {
    for (unsigned warp = 0; warp < c.warp_logs.size(); ++warp) {
      if (c.warp_logs[warp] != nullptr) {
        c.release_log(warp);
      }
    }
    c.clear_warp_sectors();
    c.launch = nullptr;
    return;
  }
  c.end_phase();
  c.launch->block_done(c.block, c.counts, std::move(c.sectors));
  c.sectors = {};
  c.launch = nullptr;
}

namespace {

// Whether the L2 model is kept: whenever kernels are counted (counting on, or the modeled clock).
bool l2_modeled() {
  return counting_state().on.load(std::memory_order_relaxed) || clock_mode() == ClockMode::modeled;
}

// The modeled sectors of a run inside a device allocation (nullopt outside every allocation).
struct SectorSpan {
  std::uint64_t first;
  std::uint64_t last;
};

std::optional<SectorSpan> modeled_sectors(const std::vector<DeviceRange>& ranges, const void* p,
                                          std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const DeviceRange& r : ranges) {
    if (p != nullptr && bytes > 0 && a - r.begin < r.bytes) {
      const std::uintptr_t modeled = a - r.begin + r.modeled;
      return SectorSpan{modeled / 32, (modeled + bytes - 1) / 32};
    }
  }
  return std::nullopt;
}

}  // namespace

void count_copy(const void* destination, const void* source, std::size_t bytes) {
  if (!l2_modeled() || bytes == 0) {
    return;
  }
  SectorCache& l2 = l2_model();
  const std::vector<DeviceRange> ranges = device_memory_ranges();
  if (const auto span = modeled_sectors(ranges, source, bytes)) {
    for (std::uint64_t sector = span->first; sector <= span->last; ++sector) {
      l2.read(sector);
    }
  }
  if (const auto span = modeled_sectors(ranges, destination, bytes)) {
    for (std::uint64_t sector = span->first; sector <= span->last; ++sector) {
      l2.write(sector);
    }
  }
  l2.write_back();
}

std::uint64_t count_library_call(const std::vector<MemoryRun>& reads,
                                 const std::vector<MemoryRun>& writes) {
  if (!l2_modeled()) {
    return 0;
  }
  SectorCache& l2 = l2_model();
  const std::vector<DeviceRange> ranges = device_memory_ranges();
  std::vector<SectorSpan> read_spans;
  std::uint64_t held = 0;
  for (const MemoryRun& run : reads) {
    if (const auto span = modeled_sectors(ranges, run.address, run.bytes)) {
      read_spans.push_back(*span);
      for (std::uint64_t sector = span->first; sector <= span->last; ++sector) {
        held += l2.holds(sector) ? 1 : 0;
      }
    }
  }
  for (const SectorSpan& span : read_spans) {
    for (std::uint64_t sector = span.first; sector <= span.last; ++sector) {
      l2.read(sector);
    }
  }
  for (const MemoryRun& run : writes) {
    if (const auto span = modeled_sectors(ranges, run.address, run.bytes)) {
      for (std::uint64_t sector = span->first; sector <= span->last; ++sector) {
        l2.write(sector);
      }
    }
  }
  l2.write_back();
  return held;
}

void reset_l2_model() {
  CountingState& s = counting_state();
  if (s.l2) {
    s.l2->clear();
  }
}

void device_code_enter() noexcept {
  in_device_code = true;
}

void device_code_leave() noexcept {
  in_device_code = false;
}

namespace {

// check_host_access past its quick answers: the access looked up among the allocations.
[[gnu::noinline, gnu::cold]] void look_up_host_access(std::uintptr_t address, std::size_t bytes,
                                                      bool store, const void* pc) noexcept {
  const auto touched = device_memory_at(address, bytes, host_gap);
  if (!touched) {
    return;
  }
  // As on a GPU, where host code that dereferences a device pointer faults: the program ends,
  // saying what it touched and which instruction did.
  Dl_info info{};
  const bool named = dladdr(pc, &info) != 0;
  const auto base = named ? reinterpret_cast<std::uintptr_t>(info.dli_fbase) : 0;
  std::fprintf(stderr,
               "gpulab sim: host code %s %zu byte(s) at %p, inside device memory (the cudaMalloc "
               "allocation of %zu bytes at %p), at instruction %p (%s+0x%zx%s%s): on a GPU host "
               "code cannot reach device memory; copy it with cudaMemcpy, or do the work in a "
               "kernel\n",
               store ? "wrote" : "read", bytes, reinterpret_cast<void*>(address), touched->second,
               reinterpret_cast<void*>(touched->first), pc,
               named && info.dli_fname != nullptr ? info.dli_fname : "?",
               reinterpret_cast<std::uintptr_t>(pc) - base,
               named && info.dli_sname != nullptr ? ", in " : "",
               named && info.dli_sname != nullptr ? info.dli_sname : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace

// Every instrumented access of host code comes here: the usual answers first, small enough for
// the access callbacks below to inline.
void check_host_access(std::uintptr_t address, std::size_t bytes, bool store,
                       const void* pc) noexcept {
  if (in_device_code || bytes == 0) {
    return;
  }
  if (address >= host_gap.begin && address + bytes <= host_gap.end &&
      host_gap.generation == device_memory_generation.load(std::memory_order_acquire)) {
    return;  // the stretch last found free of device memory, unchanged since
  }
  look_up_host_access(address, bytes, store, pc);
}

void count_atomic(const void* address, std::size_t bytes, const void* pc) noexcept {
  if (BlockCounter* c = active; c != nullptr) {
    c->record(reinterpret_cast<std::uintptr_t>(address), static_cast<std::uint32_t>(bytes),
              Op::atomic, return_address(pc));
  }
}

void count_access(const void* address, std::size_t bytes, bool store, const void* pc) noexcept {
  if (BlockCounter* c = active; c != nullptr) {
    c->record(reinterpret_cast<std::uintptr_t>(address), static_cast<std::uint32_t>(bytes),
              store ? Op::store : Op::load, return_address(pc));
  }
}

}  // namespace gpulab::sim::detail

namespace gpulab::sim {

bool counting_available() noexcept {
  return detail::counting_compiled();
}

std::string counting_unavailable_reason() {
  if (detail::counting_compiled()) {
    return "";
  }
#if defined(GPULAB_SIM_ASAN_BUILD)
  return "memory counting is not available in an AddressSanitizer build (the asan preset): its "
         "kernels carry ASan's checks instead of the counting callbacks";
#else
  return "memory counting is not available in this build: the sim's kernels were compiled without "
         "the access callbacks (GPULAB_SIM_COUNTING=OFF, or a compiler other than GCC)";
#endif
}

bool set_counting(bool on) noexcept {
  if (on && !counting_available()) {
    return false;
  }
  detail::counting_state().on.store(on, std::memory_order_relaxed);
  return true;
}

bool counting() noexcept {
  return detail::counting_state().on.load(std::memory_order_relaxed);
}

std::vector<CountedLaunch> counted_launches() {
  detail::CountingState& s = detail::counting_state();
  std::scoped_lock lock(s.mutex);
  return s.launches;
}

void clear_counted_launches() {
  detail::CountingState& s = detail::counting_state();
  std::scoped_lock lock(s.mutex);
  s.launches.clear();
}

}  // namespace gpulab::sim

#if defined(GPULAB_SIM_COUNTING)
// Only in builds whose kernels call them: in an AddressSanitizer build these names belong to ASan's
// runtime, and defining them here would take them from it.
// ------------------------------------------------------------------------------------------------
// The callbacks GCC's -fsanitize=kernel-address calls before every load and store of an
// instrumented translation unit (with asan-instrumentation-with-call-threshold=0).
// ------------------------------------------------------------------------------------------------
#define GPULAB_SIM_ACCESS(kind, op, n)                                               \
  extern "C" void __asan_##kind##n##_noabort(std::uintptr_t address) {               \
    if (gpulab::sim::detail::BlockCounter* c = gpulab::sim::detail::active;          \
        __builtin_expect(c != nullptr, 0)) {                                         \
      c->record(address, n, gpulab::sim::detail::Op::op,                             \
                gpulab::sim::detail::return_address(__builtin_return_address(0)));   \
    } else {                                                                         \
      gpulab::sim::detail::check_host_access(                                        \
          address, n, gpulab::sim::detail::Op::op == gpulab::sim::detail::Op::store, \
          __builtin_return_address(0));                                              \
    }                                                                                \
  }
GPULAB_SIM_ACCESS(load, load, 1)
GPULAB_SIM_ACCESS(load, load, 2)
GPULAB_SIM_ACCESS(load, load, 4)
GPULAB_SIM_ACCESS(load, load, 8)
GPULAB_SIM_ACCESS(load, load, 16)
GPULAB_SIM_ACCESS(store, store, 1)
GPULAB_SIM_ACCESS(store, store, 2)
GPULAB_SIM_ACCESS(store, store, 4)
GPULAB_SIM_ACCESS(store, store, 8)
GPULAB_SIM_ACCESS(store, store, 16)
#undef GPULAB_SIM_ACCESS

// The callbacks gpulab's GCC plugin inserts before every load and store in place of
// AddressSanitizer's, where it is loaded with its `memory` argument (framework/sim/plugin):
// AddressSanitizer's checks leave out the store of a read-modify-write. `bytes` is the access's
// width.
extern "C" void __gpulab_sim_load(std::uintptr_t address, std::size_t bytes) {
  if (gpulab::sim::detail::BlockCounter* c = gpulab::sim::detail::active;
      __builtin_expect(c != nullptr, 0)) {
    c->record(address, static_cast<std::uint32_t>(bytes), gpulab::sim::detail::Op::load,
              gpulab::sim::detail::return_address(__builtin_return_address(0)));
  } else {
    gpulab::sim::detail::check_host_access(address, bytes, false, __builtin_return_address(0));
  }
}

extern "C" void __gpulab_sim_store(std::uintptr_t address, std::size_t bytes) {
  if (gpulab::sim::detail::BlockCounter* c = gpulab::sim::detail::active;
      __builtin_expect(c != nullptr, 0)) {
    c->record(address, static_cast<std::uint32_t>(bytes), gpulab::sim::detail::Op::store,
              gpulab::sim::detail::return_address(__builtin_return_address(0)));
  } else {
    gpulab::sim::detail::check_host_access(address, bytes, true, __builtin_return_address(0));
  }
}

// AddressSanitizer's checks of an access of any width (a build without the plugin): the same.
extern "C" void __asan_loadN_noabort(std::uintptr_t address, std::size_t bytes)
    __attribute__((alias("__gpulab_sim_load")));
extern "C" void __asan_storeN_noabort(std::uintptr_t address, std::size_t bytes)
    __attribute__((alias("__gpulab_sim_store")));

// Called before a noreturn call (throw, abort): nothing to do without shadow memory.
extern "C" void __asan_handle_no_return() {}

// Around the dynamic initialization of an instrumented file's globals (ASan's init-order check):
// nothing to check here.
extern "C" void __asan_before_dynamic_init(const char* /*module*/) {}
extern "C" void __asan_after_dynamic_init() {}
#endif  // GPULAB_SIM_COUNTING
