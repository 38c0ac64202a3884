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
// Where. This file records the accesses (BlockCounter::record) and holds the callbacks;
// counting_cost.cpp costs a warp's requests, counting_launches.cpp feeds L2 and keeps the counted
// launches; counting_block.hpp holds what they share.
//
// L2. Each block's global sectors are fed to the device's L2 model (gpulab/core/sector_cache.hpp)
// in block order (blocks finish out of order on several workers; a reorder buffer holds the early
// ones), so L2 and DRAM figures are the same with 1 or many workers and under every schedule. The
// atomic sectors are also counted per sector (heavy_hitters.hpp), for the busiest one.
#include "counting.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "counting_block.hpp"
#include "debug_info.hpp"
#include "fiber.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/sim/runtime.hpp"
#include "gpulab/sim/wmma.hpp"
#include "op_classes.hpp"
#include "program_image.hpp"
#include "queue.hpp"

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

// Whether `a` is in the executable's own image (its loaded segments: code, constants, __device__
// and __constant__ variables, host globals), where a kernel's accesses to the program's static
// data land on sim.
bool in_program_image(std::uintptr_t a) {
  static const std::vector<ImageRange> segments = program_segments();
  return std::any_of(segments.begin(), segments.end(),
                     [&](const ImageRange& r) { return r.contains(a); });
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

std::uint64_t return_address(const void* pc) {
  return reinterpret_cast<std::uint64_t>(pc);
}

}  // namespace

// The width of an access callback's `bytes` (op_classes.hpp: the top byte is its alignment).
constexpr std::size_t kWidthMask = (std::size_t{1} << kAlignmentShift) - 1;

// check_alignment past its usual answer: the running CUDA thread's access is not at a multiple
// of the alignment it needs, which faults on a GPU.
[[gnu::noinline, gnu::cold]] void fail_misaligned(std::uintptr_t address, std::size_t bytes,
                                                  bool store, const void* pc) {
  const std::uintptr_t alignment = std::uintptr_t{1} << (bytes >> kAlignmentShift);
  const std::string line = source_line(return_address(pc));
  char what[512];
  std::snprintf(what, sizeof what,
                "misaligned address: %s %zu bytes at %p%s%s, which is %zu bytes past a multiple "
                "of %zu: an access of this type must be at a multiple of %zu on a GPU (a vector "
                "type such as float4 read or written through a pointer that is not aligned to "
                "its size)",
                store ? "wrote" : "read", bytes & kWidthMask, reinterpret_cast<void*>(address),
                line.empty() ? "" : ", at ", line.c_str(),
                static_cast<std::size_t>(address & (alignment - 1)),
                static_cast<std::size_t>(alignment), static_cast<std::size_t>(alignment));
  fail_misaligned_address(what);
}

// Fails the running CUDA thread when its access is not aligned as its callback's `bytes` says.
inline void check_alignment(std::uintptr_t address, std::size_t bytes, bool store, const void* pc) {
  if ((address & ((std::uintptr_t{1} << (bytes >> kAlignmentShift)) - 1)) != 0) [[unlikely]] {
    fail_misaligned(address, bytes, store, pc);
  }
}

// An access outside a counted CUDA thread: an uncounted kernel's is checked for its alignment, host
// code's for device memory.
inline void check_uncounted_access(std::uintptr_t address, std::size_t bytes, bool store,
                                   const void* pc) {
  if (in_device_code) {
    check_alignment(address, bytes, store, pc);
  } else {
    check_host_access(address, bytes & kWidthMask, store, pc);
  }
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
  current_thread = linear;
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
    w.keys.clear();
  }
}

[[gnu::always_inline]] inline void BlockCounter::record(std::uintptr_t a, std::uint32_t bytes,
                                                        Op op, std::uint64_t pc) {
  if (stack.contains(a)) {
    ++counts.local_accesses;
    return;
  }
  if (dynamic_shared.contains(a)) {
    log_shared(a, bytes, op, pc);
  } else if (tls.contains(a)) {
    if (!is_builtin(*this, a)) {
      log_shared(a, bytes, op, pc);
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

// An access of the running thread to shared memory, kept for the sanitizer's check of the phase.
[[gnu::noinline]] void BlockCounter::note_shared(std::uintptr_t a, std::uint32_t bytes, Op op,
                                                 std::uint64_t pc) {
  shared_accesses.push_back({a, pc, current_thread, sync_epochs[current_thread], bytes,
                             op != Op::load, op == Op::atomic, atomic_exchange});
}

std::optional<std::string> BlockCounter::check_phase() {
  if (!sanitize) {
    return std::nullopt;
  }
  std::optional<std::string> what;
  const dim3& dims = launch->launch().spec.block;
  if (const std::optional<SharedRace> race = find_shared_race(shared_accesses)) {
    what = describe_shared_race(*race, dims, dynamic_shared.begin, dynamic_shared.bytes);
  } else if (const std::optional<UninitializedRead> read =
                 shared_writes.end_phase(shared_accesses)) {
    what = describe_uninitialized_read(*read, dims, dynamic_shared.begin, dynamic_shared.bytes);
  }
  shared_accesses.clear();
  std::fill(sync_epochs.begin(), sync_epochs.end(), 0);
  return what;
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
  c.sectors.sectors.clear();
  c.sectors.keys.clear();
  c.by_line = counter.by_line();
  c.instructions_by_key.clear();
  c.dynamic_shared = Range{reinterpret_cast<std::uintptr_t>(dynamic_shared), dynamic_shared_bytes};
  c.sanitize = counter.launch().sanitize;
  c.shared_accesses.clear();
  c.sync_epochs.assign(c.sanitize ? thread_count : 0, 0);
  if (c.sanitize) {
    c.shared_writes.begin_block(
        {{c.tls.begin, c.tls.bytes}, {c.dynamic_shared.begin, c.dynamic_shared.bytes}});
  }
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

void counting_warp_collective(WarpOp op, unsigned warp, unsigned lanes) noexcept {
  BlockCounter& block = this_block_counter();
  if (block.sanitize && op == WarpOp::sync) {  // orders the lanes' accesses to shared memory
    for (unsigned lane = 0; lane < kWarp; ++lane) {
      block.sync_epochs[warp * kWarp + lane] += (lanes >> lane) & 1u;
    }
  }
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

std::optional<std::string> counting_end_phase() {
  BlockCounter& c = this_block_counter();
  c.end_phase();
  return c.check_phase();
}

std::optional<std::string> counting_end_block(bool failed) {
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
    return std::nullopt;
  }
  c.end_phase();
  std::optional<std::string> what = c.check_phase();
  c.launch->block_done(c.block, c.counts, std::move(c.sectors), c.instructions_by_key);
  c.sectors = {};
  c.launch = nullptr;
  return what;
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

void count_atomic(const void* address, std::size_t bytes, const void* pc, bool exchange) noexcept {
  if (BlockCounter* c = active; c != nullptr) {
    c->atomic_exchange = exchange;
    c->record(reinterpret_cast<std::uintptr_t>(address), static_cast<std::uint32_t>(bytes),
              Op::atomic, return_address(pc));
    c->atomic_exchange = false;
  }
}

void count_access(const void* address, std::size_t bytes, bool store, const void* pc) noexcept {
  if (BlockCounter* c = active; c != nullptr) {
    c->record(reinterpret_cast<std::uintptr_t>(address), static_cast<std::uint32_t>(bytes),
              store ? Op::store : Op::load, return_address(pc));
  }
}

}  // namespace gpulab::sim::detail

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
// width; its top byte, the alignment the access needs (op_classes.hpp), checked as a GPU does.
extern "C" void __gpulab_sim_load(std::uintptr_t address, std::size_t bytes) {
  if (gpulab::sim::detail::BlockCounter* c = gpulab::sim::detail::active;
      __builtin_expect(c != nullptr, 0)) {
    gpulab::sim::detail::check_alignment(address, bytes, false, __builtin_return_address(0));
    c->record(address, static_cast<std::uint32_t>(bytes), gpulab::sim::detail::Op::load,
              gpulab::sim::detail::return_address(__builtin_return_address(0)));
  } else {
    gpulab::sim::detail::check_uncounted_access(address, bytes, false, __builtin_return_address(0));
  }
}

extern "C" void __gpulab_sim_store(std::uintptr_t address, std::size_t bytes) {
  if (gpulab::sim::detail::BlockCounter* c = gpulab::sim::detail::active;
      __builtin_expect(c != nullptr, 0)) {
    gpulab::sim::detail::check_alignment(address, bytes, true, __builtin_return_address(0));
    c->record(address, static_cast<std::uint32_t>(bytes), gpulab::sim::detail::Op::store,
              gpulab::sim::detail::return_address(__builtin_return_address(0)));
  } else {
    gpulab::sim::detail::check_uncounted_access(address, bytes, true, __builtin_return_address(0));
  }
}

// AddressSanitizer's checks of an access of any width (a build without the plugin): the same, with
// no alignment to check (the top byte is 0).
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
