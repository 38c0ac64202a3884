#include "gpulab/core/counters.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "gpulab/core/json_reader.hpp"

namespace gpulab {
namespace {

void add(GlobalAccessCounts& a, const GlobalAccessCounts& b) {
  a.requests += b.requests;
  a.sectors += b.sectors;
  a.bytes_requested += b.bytes_requested;
  a.lanes += b.lanes;
  a.partial_sectors += b.partial_sectors;
}

void add(SharedAccessCounts& a, const SharedAccessCounts& b) {
  a.requests += b.requests;
  a.wavefronts += b.wavefronts;
  a.bank_conflicts += b.bank_conflicts;
  a.lanes += b.lanes;
}

double ratio(std::uint64_t numerator, std::uint64_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

constexpr std::string_view kOwnPrefix = "gpulab__";

// The raw counters by field name: one table for the writer and the reader.
template <class Counters, class Visit>
void for_each_field(Counters& c, Visit visit) {
  const auto global = [&](const char* prefix, auto& g) {
    visit(std::string(prefix) + "_requests", g.requests);
    visit(std::string(prefix) + "_sectors", g.sectors);
    visit(std::string(prefix) + "_bytes_requested", g.bytes_requested);
    visit(std::string(prefix) + "_lanes", g.lanes);
    visit(std::string(prefix) + "_partial_sectors", g.partial_sectors);
  };
  const auto shared = [&](const char* prefix, auto& s) {
    visit(std::string(prefix) + "_requests", s.requests);
    visit(std::string(prefix) + "_wavefronts", s.wavefronts);
    visit(std::string(prefix) + "_bank_conflicts", s.bank_conflicts);
    visit(std::string(prefix) + "_lanes", s.lanes);
  };
  global("global_load", c.global_load);
  global("global_store", c.global_store);
  global("global_atomic", c.global_atomic);
  shared("shared_load", c.shared_load);
  shared("shared_store", c.shared_store);
  shared("shared_atomic", c.shared_atomic);
  visit("l2_sector_reads", c.l2_sector_reads);
  visit("l2_sector_writes", c.l2_sector_writes);
  visit("l2_sector_hits", c.l2_sector_hits);
  visit("dram_bytes_read", c.dram_bytes_read);
  visit("dram_bytes_written", c.dram_bytes_written);
  visit("local_accesses", c.local_accesses);
  visit("other_accesses", c.other_accesses);
  visit("l2_atomic_busiest_sector", c.l2_atomic_busiest_sector);
  visit("tensor_mma", c.tensor_mma);
  visit("tensor_fp16_flop", c.tensor_fp16_flop);
  visit("tensor_bf16_flop", c.tensor_bf16_flop);
  visit("barrier_instructions", c.barrier_instructions);
  visit("shuffle_instructions", c.shuffle_instructions);
  visit("vote_instructions", c.vote_instructions);
  visit("warp_sync_instructions", c.warp_sync_instructions);
  visit("fp32_fma_instructions", c.fp32_fma_instructions);
  visit("fp32_instructions", c.fp32_instructions);
  visit("fp64_instructions", c.fp64_instructions);
  visit("integer_instructions", c.integer_instructions);
  visit("special_instructions", c.special_instructions);
  visit("conversion_instructions", c.conversion_instructions);
  visit("branch_instructions", c.branch_instructions);
  visit("address_instructions", c.address_instructions);
  visit("fp32_flop", c.fp32_flop);
  visit("path_phases", c.path_phases);
  visit("path_global_phases", c.path_global_phases);
  visit("global_load_runs", c.global_load_runs);
  visit("path_shared_phases", c.path_shared_phases);
  visit("path_shared_requests", c.path_shared_requests);
  visit("path_collectives", c.path_collectives);
  visit("path_arithmetic", c.path_arithmetic);
}

// Fields a line of schema version 1 may lack (added after the version's first files): read as 0.
bool optional_field(std::string_view name) {
  return name == "l2_atomic_busiest_sector" || name.starts_with("tensor_") ||
         name.ends_with("_instructions") || name == "fp32_flop" || name.starts_with("path_") ||
         name == "global_load_runs";
}

std::array<std::uint32_t, 3> read_dim(const nlohmann::json& j, const char* name) {
  const auto& value = j.at(name);
  if (!value.is_array() || value.size() != 3) {
    throw std::runtime_error(std::string("'") + name + "' is not an array of three counts");
  }
  std::array<std::uint32_t, 3> dim{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!value[i].is_number_unsigned() || value[i].get<std::uint64_t>() == 0 ||
        value[i].get<std::uint64_t>() > 0xffffffffu) {
      throw std::runtime_error(std::string("'") + name + "' holds a count out of range");
    }
    dim[i] = value[i].get<std::uint32_t>();
  }
  return dim;
}

}  // namespace

MemoryCounters& MemoryCounters::operator+=(const MemoryCounters& other) {
  add(global_load, other.global_load);
  add(global_store, other.global_store);
  add(global_atomic, other.global_atomic);
  add(shared_load, other.shared_load);
  add(shared_store, other.shared_store);
  add(shared_atomic, other.shared_atomic);
  l2_sector_reads += other.l2_sector_reads;
  l2_sector_writes += other.l2_sector_writes;
  l2_sector_hits += other.l2_sector_hits;
  dram_bytes_read += other.dram_bytes_read;
  dram_bytes_written += other.dram_bytes_written;
  local_accesses += other.local_accesses;
  other_accesses += other.other_accesses;
  l2_atomic_busiest_sector += other.l2_atomic_busiest_sector;
  tensor_mma += other.tensor_mma;
  tensor_fp16_flop += other.tensor_fp16_flop;
  tensor_bf16_flop += other.tensor_bf16_flop;
  barrier_instructions += other.barrier_instructions;
  shuffle_instructions += other.shuffle_instructions;
  vote_instructions += other.vote_instructions;
  warp_sync_instructions += other.warp_sync_instructions;
  fp32_fma_instructions += other.fp32_fma_instructions;
  fp32_instructions += other.fp32_instructions;
  fp64_instructions += other.fp64_instructions;
  integer_instructions += other.integer_instructions;
  special_instructions += other.special_instructions;
  conversion_instructions += other.conversion_instructions;
  branch_instructions += other.branch_instructions;
  address_instructions += other.address_instructions;
  fp32_flop += other.fp32_flop;
  path_phases += other.path_phases;
  path_global_phases += other.path_global_phases;
  global_load_runs += other.global_load_runs;
  path_shared_phases += other.path_shared_phases;
  path_shared_requests += other.path_shared_requests;
  path_collectives += other.path_collectives;
  path_arithmetic += other.path_arithmetic;
  return *this;
}

double MemoryCounters::sectors_per_load_request() const {
  return ratio(global_load.sectors, global_load.requests);
}

double MemoryCounters::sectors_per_store_request() const {
  return ratio(global_store.sectors, global_store.requests);
}

double MemoryCounters::l2_hit_rate_pct() const {
  return 100.0 * ratio(l2_sector_hits, l2_sector_reads + l2_sector_writes);
}

double MemoryCounters::lanes_per_request() const {
  const std::uint64_t lanes = global_load.lanes + global_store.lanes + global_atomic.lanes +
                              shared_load.lanes + shared_store.lanes + shared_atomic.lanes;
  const std::uint64_t requests = global_load.requests + global_store.requests +
                                 global_atomic.requests + shared_load.requests +
                                 shared_store.requests + shared_atomic.requests;
  return ratio(lanes, requests);
}

double MemoryCounters::global_load_efficiency_pct() const {
  return 100.0 * ratio(global_load.bytes_requested, global_load.sectors * 32);
}

std::string counted_launch_to_json_line(const CountedLaunch& launch) {
  nlohmann::json counters = nlohmann::json::object();
  for_each_field(launch.counters,
                 [&](const std::string& name, std::uint64_t value) { counters[name] = value; });
  nlohmann::json line = {
      {"schema_version", kCountedLaunchSchemaVersion},
      {"launch_id", launch.launch_id},
      {"kernel", launch.kernel},
      {"where", launch.where},
      {"spec", launch.spec},
      {"grid", launch.grid},
      {"block", launch.block},
      {"dynamic_shared_bytes", launch.dynamic_shared_bytes},
      {"longest_wait_cycles", launch.longest_wait_cycles},
      {"counters", counters},
  };
  if (launch.registers_per_thread > 0) {
    line["registers_per_thread"] = launch.registers_per_thread;
    line["static_shared_bytes"] = launch.static_shared_bytes;
  }
  if (!launch.lines.empty()) {
    // Per line only the figures it has: most are 0 (a line is one kind of access).
    nlohmann::json lines = nlohmann::json::array();
    for (const SourceLineCounters& l : launch.lines) {
      nlohmann::json figures = nlohmann::json::object();
      for_each_field(l.counters, [&](const std::string& name, std::uint64_t value) {
        if (value != 0) {
          figures[name] = value;
        }
      });
      lines.push_back({{"file", l.file}, {"line", l.line}, {"counters", figures}});
    }
    line["lines"] = std::move(lines);
  }
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

CountedLaunch counted_launch_from_json_line(std::string_view line) {
  try {
    const nlohmann::json j = parse_json(line, "line");
    if (!j.is_object()) {
      throw std::runtime_error("not a JSON object");
    }
    if (j.at("schema_version") != kCountedLaunchSchemaVersion) {
      throw std::runtime_error("schema_version is not " +
                               std::to_string(kCountedLaunchSchemaVersion));
    }
    CountedLaunch launch;
    launch.launch_id = j.at("launch_id").get<std::uint64_t>();
    launch.kernel = j.at("kernel").get<std::string>();
    launch.where = j.at("where").get<std::string>();
    launch.spec = j.at("spec").get<std::string>();
    launch.grid = read_dim(j, "grid");
    launch.block = read_dim(j, "block");
    launch.dynamic_shared_bytes = j.at("dynamic_shared_bytes").get<std::uint64_t>();
    // Fields added after the version's first files: absent means unknown (0).
    launch.longest_wait_cycles = j.value("longest_wait_cycles", std::uint64_t{0});
    launch.registers_per_thread = j.value("registers_per_thread", 0);
    launch.static_shared_bytes = j.value("static_shared_bytes", std::uint64_t{0});
    if (launch.registers_per_thread < 0 || launch.registers_per_thread > 255) {
      throw std::runtime_error("registers_per_thread is not 0 to 255");
    }
    const nlohmann::json& counters = j.at("counters");
    for_each_field(launch.counters, [&](const std::string& name, std::uint64_t& value) {
      if (optional_field(name) && !counters.contains(name)) {
        return;
      }
      const nlohmann::json& field = counters.at(name);
      if (!field.is_number_unsigned()) {
        throw std::runtime_error("counters." + name + " is not a count");
      }
      value = field.get<std::uint64_t>();
    });
    for (const nlohmann::json& l : j.value("lines", nlohmann::json::array())) {
      SourceLineCounters figures;
      figures.file = l.at("file").get<std::string>();
      figures.line = l.at("line").get<unsigned>();
      const nlohmann::json& counts = l.at("counters");
      for_each_field(figures.counters, [&](const std::string& name, std::uint64_t& value) {
        if (const auto found = counts.find(name); found != counts.end()) {
          if (!found->is_number_unsigned()) {
            throw std::runtime_error("lines: counters." + name + " is not a count");
          }
          value = found->get<std::uint64_t>();
        }
      });
      launch.lines.push_back(std::move(figures));
    }
    return launch;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

void add_source_lines(std::vector<SourceLineCounters>& into,
                      const std::vector<SourceLineCounters>& from) {
  const auto place = [](const SourceLineCounters& l) { return std::tie(l.file, l.line); };
  for (const SourceLineCounters& l : from) {
    auto it = std::lower_bound(into.begin(), into.end(), l,
                               [&](const auto& a, const auto& b) { return place(a) < place(b); });
    if (it != into.end() && place(*it) == place(l)) {
      it->counters += l.counters;
    } else {
      into.insert(it, l);
    }
  }
}

std::uint64_t excess_sectors(const MemoryCounters& counters) {
  std::uint64_t excess = 0;
  for (const GlobalAccessCounts* g :
       {&counters.global_load, &counters.global_store, &counters.global_atomic}) {
    const std::uint64_t needed = (g->bytes_requested + 31) / 32;
    excess += g->sectors > needed ? g->sectors - needed : 0;
  }
  return excess;
}

std::vector<CountedLaunch> read_counted_launches(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(path.string() + ": cannot be read");
  }
  std::vector<CountedLaunch> launches;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) {
      continue;
    }
    try {
      launches.push_back(counted_launch_from_json_line(line));
    } catch (const std::exception& e) {
      throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return launches;
}

namespace {

// Every figure of `c`, in the order of `gpulab profile`'s table, as visit(name, unit, count,
// value, description): `count` points at the raw count the figure is, or is null for a derived
// figure (a ratio, a percentage). One table serves reading the figures (counter_metrics) and
// writing ncu's back into the counts (ncu_field).
template <class Counters, class Visit>
void for_each_figure(Counters& c, Visit visit) {
  using Count = decltype(&c.dram_bytes_read);  // const or not, as `c` is
  const auto count = [&](std::string_view name, std::string_view unit, Count field,
                         std::string_view what) {
    visit(name, unit, field, static_cast<double>(*field), what);
  };
  const auto derived = [&](std::string_view name, std::string_view unit, double value,
                           std::string_view what) { visit(name, unit, Count{}, value, what); };
  count("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request", &c.global_load.requests,
        "global load requests (warp-level instructions)");
  count("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", &c.global_load.sectors,
        "32-byte sectors moved by global loads");
  derived("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", "sector",
          c.sectors_per_load_request(), "sectors per global load request (4 for coalesced floats)");
  derived("gpulab__global_ld_efficiency.pct", "%", c.global_load_efficiency_pct(),
          "bytes the lanes asked for over bytes the sectors moved");
  count("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "request", &c.global_store.requests,
        "global store requests");
  count("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sector", &c.global_store.sectors,
        "32-byte sectors moved by global stores");
  derived("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", "sector",
          c.sectors_per_store_request(), "sectors per global store request");
  count("gpulab__global_st_partial_sectors.sum", "sector", &c.global_store.partial_sectors,
        "sectors a store request wrote only part of (each costs the L1-to-L2 path more)");
  count("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "request", &c.global_atomic.requests,
        "global atomic requests");
  count("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "sector", &c.global_atomic.sectors,
        "32-byte sectors touched by global atomics");
  count("gpulab__lts_atom_requests_busiest_sector.max", "request", &c.l2_atomic_busiest_sector,
        "global atomic requests on the busiest sector (they serialize in L2)");
  count("smsp__inst_executed_op_shared_ld.sum", "request", &c.shared_load.requests,
        "shared-memory load requests");
  count("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "wavefront",
        &c.shared_load.wavefronts, "shared-memory load wavefronts");
  count("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "wavefront",
        &c.shared_load.bank_conflicts, "extra wavefronts from bank conflicts (loads)");
  count("smsp__inst_executed_op_shared_st.sum", "request", &c.shared_store.requests,
        "shared-memory store requests");
  count("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "wavefront",
        &c.shared_store.wavefronts, "shared-memory store wavefronts");
  count("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "wavefront",
        &c.shared_store.bank_conflicts, "extra wavefronts from bank conflicts (stores)");
  count("smsp__inst_executed_op_shared_atom.sum", "request", &c.shared_atomic.requests,
        "shared-memory atomic requests");
  count("gpulab__shared_atom_wavefronts.sum", "wavefront", &c.shared_atomic.wavefronts,
        "shared-memory atomic wavefronts (lanes on one bank serialize)");
  derived("gpulab__lanes_per_memory_request.ratio", "lane", c.lanes_per_request(),
          "active lanes per memory request (32 without divergence)");
  count("lts__t_sectors_srcunit_tex_op_read.sum", "sector", &c.l2_sector_reads,
        "sectors read from L2 (loads and atomics)");
  count("lts__t_sectors_srcunit_tex_op_write.sum", "sector", &c.l2_sector_writes,
        "sectors written to L2 (stores and atomics)");
  derived("lts__t_sector_hit_rate.pct", "%", c.l2_hit_rate_pct(), "L2 sector hit rate");
  count("dram__bytes_read.sum", "byte", &c.dram_bytes_read, "DRAM bytes read (L2 misses)");
  count("dram__bytes_write.sum", "byte", &c.dram_bytes_written,
        "DRAM bytes written (dirty L2 sectors)");
  count("gpulab__tensor_mma_sync.sum", "instruction", &c.tensor_mma,
        "warp-level WMMA multiply-accumulates (mma_sync calls)");
  count("gpulab__tensor_fp16_flop.sum", "flop", &c.tensor_fp16_flop,
        "tensor-core FLOPs on half inputs (2 m n k per mma_sync)");
  count("gpulab__tensor_bf16_flop.sum", "flop", &c.tensor_bf16_flop,
        "tensor-core FLOPs on bfloat16 inputs (2 m n k per mma_sync)");
  count("gpulab__inst_executed_barrier.sum", "instruction", &c.barrier_instructions,
        "warp-level __syncthreads (one per warp and barrier)");
  count("gpulab__inst_executed_shfl.sum", "instruction", &c.shuffle_instructions,
        "warp-level shuffles (__shfl*_sync)");
  count("gpulab__inst_executed_vote.sum", "instruction", &c.vote_instructions,
        "warp-level votes (__ballot_sync, __any_sync, __all_sync, __activemask)");
  count("gpulab__inst_executed_warpsync.sum", "instruction", &c.warp_sync_instructions,
        "warp-level __syncwarp");
  count("gpulab__inst_executed_ffma.sum", "instruction", &c.fp32_fma_instructions,
        "warp-level FP32 fused multiply-adds (counted source operations)");
  count("gpulab__inst_executed_fp32.sum", "instruction", &c.fp32_instructions,
        "warp-level FP32 adds, multiplies, min/max and compares");
  count("gpulab__inst_executed_fp64.sum", "instruction", &c.fp64_instructions,
        "warp-level FP64 arithmetic");
  count("gpulab__inst_executed_int.sum", "instruction", &c.integer_instructions,
        "warp-level integer and pointer arithmetic, logic and compares");
  count("gpulab__inst_executed_sfu.sum", "instruction", &c.special_instructions,
        "warp-level special functions (exp, log, sin, cos, sqrt, reciprocal)");
  count("gpulab__inst_executed_cvt.sum", "instruction", &c.conversion_instructions,
        "warp-level conversions (int <-> float, float <-> double)");
  count("gpulab__inst_executed_branch.sum", "instruction", &c.branch_instructions,
        "warp-level conditional branches");
  count("gpulab__inst_executed_address.sum", "instruction", &c.address_instructions,
        "warp-level integer arithmetic that only addresses memory or controls a loop");
  count("gpulab__flop_fp32.sum", "flop", &c.fp32_flop,
        "FP32 operations of all threads (an FMA counts 2)");
  count("gpulab__path_phases.sum", "phase", &c.path_phases,
        "barrier phases of the blocks (barriers + 1 per block)");
  count("gpulab__path_global_phases.sum", "phase", &c.path_global_phases,
        "phases in which a block loaded from global memory");
  count("gpulab__global_load_runs.sum", "run", &c.global_load_runs,
        "runs of global loads with no global store or atomic between them, of every warp");
  count("gpulab__path_shared_phases.sum", "phase", &c.path_shared_phases,
        "phases in which a block used shared memory");
  count("gpulab__path_shared_requests.sum", "request", &c.path_shared_requests,
        "per phase, the most shared requests of one warp, summed over phases and blocks");
  count("gpulab__path_collectives.sum", "instruction", &c.path_collectives,
        "per phase, the most warp collectives of one warp, summed over phases and blocks");
  count("gpulab__path_arithmetic.sum", "instruction", &c.path_arithmetic,
        "per phase, the most arithmetic instructions of one warp, summed over phases and blocks");
}

}  // namespace

std::vector<CounterMetric> counter_metrics(const MemoryCounters& c) {
  std::vector<CounterMetric> metrics;
  for_each_figure(c, [&](std::string_view name, std::string_view unit, const std::uint64_t*,
                         double value, std::string_view what) {
    metrics.push_back({name, unit, value, what});
  });
  return metrics;
}

std::vector<std::string_view> ncu_metric_names() {
  std::vector<std::string_view> names;
  for (const CounterMetric& metric : counter_metrics(MemoryCounters{})) {
    if (!metric.name.starts_with(kOwnPrefix)) {
      names.push_back(metric.name);
    }
  }
  return names;
}

std::string results_metric_name(const CounterMetric& metric) {
  const std::string name(metric.name);
  if (metric.unit == "%") {
    return name + "_percent";
  }
  if (metric.unit == "byte") {
    return name + "_bytes";
  }
  if (metric.name.ends_with(".ratio")) {
    return name + "_ratio";
  }
  return name + "_count";
}

std::vector<Metric> counter_results_metrics(const MemoryCounters& counters, Provenance provenance) {
  std::vector<Metric> metrics;
  for (const CounterMetric& m : counter_metrics(counters)) {
    if (provenance == Provenance::measured && m.name.starts_with(kOwnPrefix)) {
      continue;
    }
    metrics.push_back({results_metric_name(m), m.value, provenance, "", ""});
  }
  return metrics;
}

bool is_counter_metric(std::string_view name) {
  const std::vector<CounterMetric> metrics = counter_metrics(MemoryCounters{});
  return std::any_of(metrics.begin(), metrics.end(),
                     [&](const CounterMetric& metric) { return metric.name == name; });
}

namespace {

// One CSV record: quoted or bare fields separated by commas ("" inside quotes is a quote).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

// "(256, 1, 1)" as three counts; {1, 1, 1} when it is not one.
std::array<std::uint32_t, 3> ncu_dim(const std::string& text) {
  std::array<std::uint32_t, 3> dim{1, 1, 1};
  std::size_t axis = 0;
  std::uint64_t value = 0;
  bool digits = false;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + static_cast<std::uint64_t>(c - '0');
      digits = true;
    } else if (digits) {
      if (axis < 3) {
        dim[axis++] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, value));
      }
      value = 0;
      digits = false;
    }
  }
  return dim;
}

// A metric value as ncu prints it ("1,048,576", "12.5"), scaled by its unit's decimal prefix
// ("Kbyte", "Mbyte", "Gbyte"; none with --print-units base).
double ncu_value(const std::string& text, const std::string& unit) {
  std::string digits;
  for (const char c : text) {
    if (c != ',') {
      digits += c;
    }
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(digits, &used);
  } catch (const std::exception&) {
    throw std::runtime_error("ncu CSV: '" + text + "' is not a number");
  }
  if (used != digits.size()) {
    throw std::runtime_error("ncu CSV: '" + text + "' is not a number");
  }
  if (unit.size() > 4 && unit.ends_with("byte")) {
    switch (unit.front()) {
      case 'K':
        return value * 1e3;
      case 'M':
        return value * 1e6;
      case 'G':
        return value * 1e9;
      case 'T':
        return value * 1e12;
      default:
        break;
    }
  }
  return value;
}

// Where a metric ncu reports goes in `c`; nullptr for derived figures (ratios, percentages), for
// gpulab's own figures (ncu has none of them) and for names gpulab does not count.
std::uint64_t* ncu_field(MemoryCounters& c, std::string_view name) {
  std::uint64_t* found = nullptr;
  for_each_figure(c, [&](std::string_view figure, std::string_view, std::uint64_t* count, double,
                         std::string_view) {
    if (figure == name && !figure.starts_with(kOwnPrefix)) {
      found = count;
    }
  });
  return found;
}

}  // namespace

std::vector<CountedLaunch> parse_ncu_csv(std::string_view text) {
  std::vector<CountedLaunch> launches;
  std::vector<double> hit_rates;  // per launch, percent; applied once its sectors are known
  std::map<std::string, std::size_t> by_id;
  std::vector<std::string> header;
  std::size_t id = 0, kernel = 0, block = 0, grid = 0, name = 0, unit = 0, value = 0;
  std::size_t number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.empty() || line.starts_with("==")) {
      continue;  // ==PROF== and ==WARNING== lines
    }
    const std::vector<std::string> fields = csv_fields(line);
    if (header.empty()) {
      if (fields.empty() || fields.front() != "ID") {
        continue;  // the program's own output before the table
      }
      header = fields;
      const auto column = [&](const char* wanted) {
        const auto it = std::find(header.begin(), header.end(), wanted);
        if (it == header.end()) {
          throw std::runtime_error(std::string("ncu CSV: no \"") + wanted + "\" column");
        }
        return static_cast<std::size_t>(it - header.begin());
      };
      id = column("ID");
      kernel = column("Kernel Name");
      block = column("Block Size");
      grid = column("Grid Size");
      name = column("Metric Name");
      unit = column("Metric Unit");
      value = column("Metric Value");
      continue;
    }
    if (fields.size() != header.size()) {
      throw std::runtime_error("ncu CSV line " + std::to_string(number) + ": " +
                               std::to_string(fields.size()) + " fields, the header has " +
                               std::to_string(header.size()));
    }
    auto [it, added] = by_id.try_emplace(fields[id], launches.size());
    if (added) {
      CountedLaunch launch;
      launch.launch_id = launches.size() + 1;
      launch.kernel = fields[kernel];
      launch.where = "ncu";
      launch.block = ncu_dim(fields[block]);
      launch.grid = ncu_dim(fields[grid]);
      launches.push_back(std::move(launch));
      hit_rates.push_back(-1);
    }
    const double v = ncu_value(fields[value], fields[unit]);
    if (fields[name] == "lts__t_sector_hit_rate.pct") {
      hit_rates[it->second] = v;
    } else if (std::uint64_t* field = ncu_field(launches[it->second].counters, fields[name])) {
      *field = static_cast<std::uint64_t>(std::llround(std::max(0.0, v)));
    }
  }
  if (header.empty()) {
    throw std::runtime_error("ncu CSV: no table (a header line starting with \"ID\")");
  }
  for (std::size_t i = 0; i < launches.size(); ++i) {
    MemoryCounters& c = launches[i].counters;
    if (hit_rates[i] >= 0) {
      c.l2_sector_hits = static_cast<std::uint64_t>(std::llround(
          hit_rates[i] / 100.0 * static_cast<double>(c.l2_sector_reads + c.l2_sector_writes)));
    }
  }
  return launches;
}

}  // namespace gpulab
