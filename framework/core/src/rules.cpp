#include "gpulab/core/rules.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/traffic_model.hpp"

namespace gpulab {
namespace {

// `value` less `by`, never below 0 (a line that is not the launch's changes nothing wrongly).
void reduce(std::uint64_t& value, std::uint64_t by) {
  value -= std::min(value, by);
}

std::uint64_t needed_sectors(const GlobalAccessCounts& g) {
  return (g.bytes_requested + 31) / 32;
}

std::uint64_t excess(const GlobalAccessCounts& g) {
  return g.sectors > needed_sectors(g) ? g.sectors - needed_sectors(g) : 0;
}

std::string per_request(std::uint64_t count, std::uint64_t requests) {
  return format_fixed(
      static_cast<double>(count) / static_cast<double>(std::max<std::uint64_t>(requests, 1)), 1);
}

// The L2 lookups a fix removes from the line, and what that leaves of its hits and DRAM reads.
void remove_lookups(MemoryCounters& c, const MemoryCounters& line, std::uint64_t reads,
                    std::uint64_t writes, std::uint64_t dram_read_after) {
  reduce(c.l2_sector_reads, reads);
  reduce(c.l2_sector_writes, writes);
  const std::uint64_t lookups = line.l2_sector_reads + line.l2_sector_writes;
  const std::uint64_t left = lookups - std::min(lookups, reads + writes);
  reduce(c.l2_sector_hits, line.l2_sector_hits - std::min(line.l2_sector_hits, left));
  reduce(c.dram_bytes_read, line.dram_bytes_read - std::min(line.dram_bytes_read, dram_read_after));
}

// The words of a line problem, or "" where the line does not have it.
std::string describe(Problem problem, const MemoryCounters& l, std::uint64_t busiest) {
  switch (problem) {
    case Problem::uncoalesced: {
      const std::array<std::pair<const char*, const GlobalAccessCounts*>, 3> kinds = {
          {{"loads", &l.global_load}, {"stores", &l.global_store}, {"atomics", &l.global_atomic}}};
      const auto worst = std::max_element(
          kinds.begin(), kinds.end(),
          [](const auto& a, const auto& b) { return excess(*a.second) < excess(*b.second); });
      const GlobalAccessCounts& g = *worst->second;
      if (excess(g) == 0) {
        return "";
      }
      return std::string("global ") + worst->first + " move " + per_request(g.sectors, g.requests) +
             " sectors per request where " + per_request(needed_sectors(g), g.requests) +
             " would do (the lanes ask for " + per_request(g.bytes_requested, g.requests) +
             " bytes per request): make consecutive lanes access consecutive addresses (a "
             "shared-memory tile turns a column access into rows)";
    }
    case Problem::bank_conflicts: {
      const std::array<std::pair<const char*, const SharedAccessCounts*>, 3> kinds = {
          {{"loads", &l.shared_load}, {"stores", &l.shared_store}, {"atomics", &l.shared_atomic}}};
      const auto worst =
          std::max_element(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
            return a.second->bank_conflicts < b.second->bank_conflicts;
          });
      const SharedAccessCounts& s = *worst->second;
      if (s.bank_conflicts == 0) {
        return "";
      }
      return std::string("shared-memory ") + worst->first + " take " +
             per_request(s.wavefronts, s.requests) + " wavefronts per request where " +
             per_request(s.wavefronts - s.bank_conflicts, s.requests) +
             " would do (bank conflicts: lanes on different words of one bank): pad each row by "
             "one word, or swizzle the index";
    }
    case Problem::atomic_contention:
      if (l.global_atomic.requests == 0 || busiest == 0) {
        return "";
      }
      return "global atomics: " + std::to_string(busiest) +
             " requests on the busiest 32-byte sector, applied one after the other in L2: "
             "privatize (each block's own copy in shared memory, then one global atomic per "
             "element and block)";
    case Problem::tail:
    case Problem::launch_bound:
      break;
  }
  return "";
}

double modeled_seconds(const std::vector<CountedLaunch>& launches, const GpuSpec& spec,
                       const std::function<CountedLaunch(const CountedLaunch&)>& change) {
  double seconds = 0;
  for (const CountedLaunch& launch : launches) {
    seconds += model_launch(change(launch), spec).time_s;
  }
  return seconds;
}

}  // namespace

std::string_view to_string(Problem problem) noexcept {
  switch (problem) {
    case Problem::uncoalesced:
      return "uncoalesced";
    case Problem::bank_conflicts:
      return "bank conflicts";
    case Problem::atomic_contention:
      return "atomic contention";
    case Problem::tail:
      return "tail effect";
    case Problem::launch_bound:
      return "launch-bound";
  }
  return "?";
}

Result finding_result(const std::string& kernel, const Finding& finding,
                      const std::string& spec_name) {
  return Result{result_kind::finding,
                {{"kernel", kernel},
                 {"problem", std::string(to_string(finding.problem))},
                 {"file", finding.file},
                 {"line", std::to_string(finding.line)},
                 {"what", finding.what}},
                {Metric::modeled("speedup_ratio", finding.speedup, spec_name)}};
}

CountedLaunch with_fix(const CountedLaunch& launch, Problem problem,
                       const SourceLineCounters& line) {
  CountedLaunch fixed = launch;
  MemoryCounters& c = fixed.counters;
  const MemoryCounters& l = line.counters;
  switch (problem) {
    case Problem::uncoalesced: {
      // Coalesced: each request moves the sectors its lanes' bytes fill, whole, and reads from
      // DRAM no more than those.
      const std::uint64_t load = excess(l.global_load);
      const std::uint64_t store = excess(l.global_store);
      const std::uint64_t atomic = excess(l.global_atomic);
      reduce(c.global_load.sectors, load);
      reduce(c.global_store.sectors, store);
      reduce(c.global_atomic.sectors, atomic);
      if (store > 0) {
        reduce(c.global_store.partial_sectors, l.global_store.partial_sectors);
      }
      remove_lookups(c, l, load + atomic, store + atomic,
                     32 * (needed_sectors(l.global_load) + needed_sectors(l.global_atomic)));
      break;
    }
    case Problem::bank_conflicts:
      for (auto kind : {&MemoryCounters::shared_load, &MemoryCounters::shared_store,
                        &MemoryCounters::shared_atomic}) {
        reduce((c.*kind).wavefronts, (l.*kind).bank_conflicts);
        reduce((c.*kind).bank_conflicts, (l.*kind).bank_conflicts);
      }
      break;
    case Problem::atomic_contention: {
      // Privatized: the line's atomics go to shared memory (a wavefront each, conflicts unknown),
      // and each block adds its copy to global memory once (a request and a sector per block on
      // the busiest sector).
      const std::uint64_t blocks = std::uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
      const GlobalAccessCounts& g = l.global_atomic;
      const std::uint64_t requests = std::min(g.requests, blocks);
      c.shared_atomic.requests += g.requests;
      c.shared_atomic.wavefronts += g.requests;
      c.shared_atomic.lanes += g.lanes;
      reduce(c.global_atomic.requests, g.requests - requests);
      reduce(c.global_atomic.sectors, g.sectors - std::min(g.sectors, requests));
      reduce(c.global_atomic.lanes, g.lanes - std::min(g.lanes, requests));
      reduce(c.global_atomic.bytes_requested,
             g.bytes_requested - std::min(g.bytes_requested, 4 * requests));
      const std::uint64_t removed = g.sectors - std::min(g.sectors, requests);
      remove_lookups(c, l, removed, removed, l.dram_bytes_read);
      c.l2_atomic_busiest_sector = std::min(c.l2_atomic_busiest_sector, blocks);
      break;
    }
    case Problem::tail:
    case Problem::launch_bound:
      break;
  }
  return fixed;
}

std::vector<Finding> find_problems(const std::vector<CountedLaunch>& launches, const GpuSpec& spec,
                                   double min_speedup) {
  std::vector<Finding> findings;
  if (launches.empty()) {
    return findings;
  }
  const auto as_counted = [](const CountedLaunch& launch) { return launch; };
  const double now = modeled_seconds(launches, spec, as_counted);
  std::vector<SourceLineCounters> lines;
  std::uint64_t busiest = 0;
  for (const CountedLaunch& launch : launches) {
    add_source_lines(lines, launch.lines);
    busiest = std::max(busiest, launch.counters.l2_atomic_busiest_sector);
  }
  for (const SourceLineCounters& line : lines) {
    for (const Problem problem :
         {Problem::uncoalesced, Problem::bank_conflicts, Problem::atomic_contention}) {
      std::string what = describe(problem, line.counters, busiest);
      if (what.empty()) {
        continue;
      }
      const double fixed = modeled_seconds(launches, spec, [&](const CountedLaunch& launch) {
        const auto own = std::find_if(launch.lines.begin(), launch.lines.end(), [&](const auto& l) {
          return l.file == line.file && l.line == line.line;
        });
        return own == launch.lines.end() ? launch : with_fix(launch, problem, *own);
      });
      findings.push_back({problem, line.file, line.line, std::move(what), now / fixed});
    }
  }
  // The whole kernel: its grid's last wave, and its launches' overhead.
  double without_tail = 0;
  double launch_overhead = 0;
  ModeledTime first;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const ModeledTime m = model_launch(launches[i], spec);
    if (i == 0) {
      first = m;
    }
    without_tail += m.launch_s + (m.time_s - m.launch_s) / m.tail_factor;
    launch_overhead += m.launch_s;
  }
  if (first.tail_factor > 1) {
    const double last = first.waves - (std::ceil(first.waves) - 1);
    findings.push_back(
        {Problem::tail, "", 0,
         "the grid runs in " + format_fixed(first.waves, 2) + " waves of " +
             std::to_string(first.active_blocks_per_sm) + " blocks per SM on " + spec.name + "'s " +
             std::to_string(spec.sm_count) + " SMs; the last keeps " + format_fixed(100 * last, 0) +
             "% of them busy: a grid of whole waves (a multiple of the resident blocks), or more "
             "work per block, removes the tail",
         now / without_tail});
  }
  if (launch_overhead > 0.5 * now) {
    findings.push_back(
        {Problem::launch_bound, "", 0,
         "launch overhead is " + format_fixed(100 * launch_overhead / now, 0) +
             "% of the kernel's modeled time (" + std::to_string(launches.size()) +
             (launches.size() == 1 ? " launch" : " launches") +
             "): its work is too small for the GPU; give each launch more work (a larger batch), "
             "or fuse it with the kernel before or after it",
         now / (now - launch_overhead)});
  }
  std::erase_if(findings, [&](const Finding& f) { return !(f.speedup >= min_speedup); });
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.speedup > b.speedup; });
  return findings;
}

}  // namespace gpulab
