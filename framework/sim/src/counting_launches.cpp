// Memory counting on sim, per launch and per device: each block's global sectors fed to the
// device's L2 model in block order, the counted launch and its record (counted_launches(),
// GPULAB_SIM_COUNTERS), copies and library calls through the same L2, and the public switches of
// gpulab/sim/runtime.hpp (counting.cpp describes the mechanism).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "counting_block.hpp"
#include "debug_info.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/core/sector_cache.hpp"
#include "gpulab/sim/runtime.hpp"
#include "gpulab/sim/sanitizer.hpp"
#include "settings.hpp"

namespace gpulab::sim::detail {
namespace {

// The device's L2 model and the record of counted launches.
struct CountingState {
  std::atomic<bool> on{false};
  std::atomic<bool> sanitize{false};  // the sanitizer checks later launches
  std::atomic<bool> by_line{false};   // later counted launches are also counted per source line
  std::mutex mutex;                   // guards launches and the file
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
    state.sanitize.store(environment.sanitize && counting_compiled());
    state.by_line.store(environment.by_line && counting_compiled());
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

}  // namespace

void LaunchCounter::feed(const BlockSectors& block) {
  SectorCache& l2 = l2_model();
  const bool keyed = !block.keys.empty();
  for (std::size_t i = 0; i < block.sectors.size(); ++i) {
    const std::uint64_t entry = block.sectors[i];
    const std::uint64_t sector = entry >> 2;
    // What this sector did in L2: lookups of reads and writes, hits, and reads that missed.
    MemoryCounters d;
    switch (static_cast<Op>(entry & 3u)) {
      case Op::load:
        d.l2_sector_reads = 1;
        d.l2_sector_hits = l2.read(sector) ? 1 : 0;
        d.dram_bytes_read = 32 * (1 - d.l2_sector_hits);
        break;
      case Op::store:
        d.l2_sector_writes = 1;
        d.l2_sector_hits = l2.write(sector) ? 1 : 0;
        break;
      case Op::atomic: {  // a read-modify-write at L2
        atomic_sectors_.add(sector);
        const bool read = l2.read(sector);
        d.l2_sector_reads = 1;
        d.l2_sector_writes = 1;
        d.l2_sector_hits = (read ? 1 : 0) + (l2.write(sector) ? 1 : 0);
        d.dram_bytes_read = read ? 0 : 32;
        break;
      }
    }
    totals_.l2_sector_reads += d.l2_sector_reads;
    totals_.l2_sector_writes += d.l2_sector_writes;
    totals_.l2_sector_hits += d.l2_sector_hits;
    if (keyed) {
      MemoryCounters& line = instructions_[block.keys[i]];
      line.l2_sector_reads += d.l2_sector_reads;
      line.l2_sector_writes += d.l2_sector_writes;
      line.l2_sector_hits += d.l2_sector_hits;
      line.dram_bytes_read += d.dram_bytes_read;
    }
  }
}

void LaunchCounter::block_done(std::uint64_t block, const MemoryCounters& counts,
                               BlockSectors sectors, const InstructionCounts& instructions) {
  std::scoped_lock lock(mutex_);
  totals_ += counts;
  for (const auto& [key, figures] : instructions) {
    instructions_[key] += figures;
  }
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

std::vector<SourceLineCounters> LaunchCounter::source_lines() const {
  std::vector<SourceLineCounters> lines;
  for (const auto& [key, figures] : instructions_) {
    SourcePlace place = source_place(key >> 3);  // instruction_key(): the address above 3 bits
    add_source_lines(lines, {{std::move(place.file), place.line, figures}});
  }
  return lines;
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
  const bool by_line = launch.kept && counting_state().by_line.load(std::memory_order_relaxed);
  return LaunchCounterPtr(new LaunchCounter(launch, std::move(globals), l2, by_line));
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
  if (counter->by_line()) {
    record.lines = counter->source_lines();
  }
  if (keep) {
    keep_counted_launch(record);
  }
  return record;
}

void record_library_launch(const CountedLaunch& launch) {
  keep_counted_launch(launch);
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

bool set_counting_by_line(bool on) noexcept {
  if (on && !counting_available()) {
    return false;
  }
  detail::counting_state().by_line.store(on, std::memory_order_relaxed);
  return true;
}

bool counting_by_line() noexcept {
  return detail::counting_state().by_line.load(std::memory_order_relaxed);
}

bool set_sanitizing(bool on) noexcept {
  if (on && !counting_available()) {
    return false;
  }
  detail::counting_state().sanitize.store(on, std::memory_order_relaxed);
  return true;
}

bool sanitizing() noexcept {
  return detail::counting_state().sanitize.load(std::memory_order_relaxed);
}

ScopedSanitizing::ScopedSanitizing() : previous_(sanitizing()) {
  if (!set_sanitizing(true)) {
    throw std::runtime_error(counting_unavailable_reason());
  }
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
