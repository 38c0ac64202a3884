// The kernel table and its lookups. The table's data is generated at build time from ptxas's
// report (cmake/GpulabKernelTable.cmake) and registers itself (register_kernel_table).
#include "gpulab/core/kernel_table.hpp"

#include <algorithm>

namespace gpulab {

std::vector<std::string_view> kernel_names() {
  std::vector<std::string_view> names;
  for (const KernelTableEntry& entry : kernel_table()) {
    names.push_back(entry.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<KernelTableEntry> find_kernel(std::string_view name, int cc_major, int cc_minor) {
  // A cubin runs on its own architecture and newer minor versions of it, so the closest build not
  // newer than the device is what the driver would load (across a major version the driver
  // JIT-compiles PTX instead, and the older figures are an estimate).
  const int sm = cc_major * 10 + cc_minor;
  std::optional<KernelTableEntry> best;
  for (const KernelTableEntry& entry : kernel_table()) {
    if (entry.name == name && entry.sm <= sm && (!best || entry.sm > best->sm)) {
      best = entry;
    }
  }
  return best;
}

namespace {

// `text` without its trailing bracketed group (an argument list "(...)" or template arguments
// "<...>"), nested brackets included; unchanged when it does not end in `close`.
std::string_view drop_trailing_group(std::string_view text, char open, char close) {
  if (text.empty() || text.back() != close) {
    return text;
  }
  int depth = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    if (text[i] == close) {
      ++depth;
    } else if (text[i] == open && --depth == 0) {
      return text.substr(0, i);
    }
  }
  return text;
}

// `name` without trailing spaces and its parameter list: "void k<2>(float*) " -> "void k<2>".
std::string_view function_part(std::string_view name) {
  while (!name.empty() && name.back() == ' ') {
    name.remove_suffix(1);
  }
  return drop_trailing_group(name, '(', ')');
}

// Where the last part of `name` starts: after its last space outside brackets (a return type
// before it) and, with `scopes`, its last "::" outside brackets (a qualifier before it).
std::size_t last_top_level_start(std::string_view name, bool scopes) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(' || c == '<') {
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      --depth;
    } else if (depth == 0 && c == ' ') {
      start = i + 1;
    } else if (depth == 0 && scopes && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      start = i + 2;
    }
  }
  return start;
}

// The project's table, as the generated table registered it.
struct ProjectTable {
  std::span<const KernelTableEntry> entries;
  std::string_view status =
      "this program was linked without the kernel table (gpulab.kernel_table)";
};

ProjectTable& project_table() {
  static ProjectTable table;  // filled during static initialization (see the header)
  return table;
}

// The kernels of files built into this program alone, and the files nvcc could not compile.
struct ProgramKernels {
  std::vector<KernelTableEntry> entries;
  std::vector<KernelSourceFailure> failures;
};

ProgramKernels& program_kernels() {
  static ProgramKernels kernels;  // filled during static initialization (see the header)
  return kernels;
}

// Whether `launch_file` is the file `source` names: the same path, or a path ending in
// "/<source>" (the table's sources are relative to the project root, launches' absolute).
bool same_file(std::string_view launch_file, std::string_view source) {
  return !source.empty() && launch_file.ends_with(source) &&
         (launch_file.size() == source.size() ||
          launch_file[launch_file.size() - source.size() - 1] == '/');
}

// Whether `candidate` is a better architecture than `best` for a device of architecture `sm`:
// the newest not newer than the device (the cubin the driver would load), else the oldest newer
// one (a program's own table may have only the graded spec's architecture: an estimate).
bool closer_architecture(const KernelTableEntry& candidate,
                         const std::optional<KernelTableEntry>& best, int sm) {
  if (!best) {
    return true;
  }
  const bool fits = candidate.sm <= sm;
  const bool best_fits = best->sm <= sm;
  if (fits != best_fits) {
    return fits;
  }
  return fits ? candidate.sm > best->sm : candidate.sm < best->sm;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_identifier_char(char c) {
  return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

std::span<const KernelTableEntry> kernel_table() {
  return project_table().entries;
}

std::string_view kernel_table_status() {
  return project_table().status;
}

void register_kernel_table(std::span<const KernelTableEntry> entries, std::string_view status) {
  project_table() = {.entries = entries, .status = status};
}

void register_program_kernels(std::span<const KernelTableEntry> entries,
                              std::span<const KernelSourceFailure> failures) {
  ProgramKernels& kernels = program_kernels();
  kernels.entries.insert(kernels.entries.end(), entries.begin(), entries.end());
  kernels.failures.insert(kernels.failures.end(), failures.begin(), failures.end());
}

std::string canonical_kernel_name(std::string_view name) {
  constexpr std::string_view kGccAnonymous = "{anonymous}";
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::string text;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i).starts_with(kGccAnonymous)) {
      text += kAnonymous;
      i += kGccAnonymous.size() - 1;
    } else {
      text += name[i];
    }
  }
  // The parameter list, then the return type (everything before the last space outside brackets).
  std::string_view view = function_part(text);
  view = view.substr(last_top_level_start(view, false));
  // Integer literal suffixes (3u, 4ul, 5LL) in template arguments: a number's digits, then letters
  // that end the token.
  std::string canonical;
  for (std::size_t i = 0; i < view.size(); ++i) {
    canonical += view[i];
    const bool starts_number = is_digit(view[i]) && (i == 0 || !is_identifier_char(view[i - 1]));
    if (!starts_number) {
      continue;
    }
    std::size_t end = i + 1;
    while (end < view.size() && is_digit(view[end])) {
      canonical += view[end++];
    }
    std::size_t suffix = end;
    while (suffix < view.size() && (view[suffix] == 'u' || view[suffix] == 'U' ||
                                    view[suffix] == 'l' || view[suffix] == 'L')) {
      ++suffix;
    }
    if (suffix < view.size() && is_identifier_char(view[suffix])) {
      suffix = end;  // not a suffix: part of a longer token
    }
    i = suffix - 1;
  }
  return canonical;
}

std::optional<KernelTableEntry> find_launched_kernel(std::string_view function,
                                                     std::string_view launch_file, int cc_major,
                                                     int cc_minor) {
  const int sm = cc_major * 10 + cc_minor;
  const std::string wanted = canonical_kernel_name(function);
  const std::string wanted_short = kernel_short_name(function);
  std::optional<KernelTableEntry> exact;
  std::optional<KernelTableEntry> by_short_name;
  std::string_view short_name_signature;
  bool short_name_ambiguous = false;
  const auto consider = [&](const KernelTableEntry& entry) {
    if (!same_file(launch_file, entry.source)) {
      return;
    }
    if (kernel_short_name(entry.name) == wanted_short) {
      if (!short_name_signature.empty() && short_name_signature != entry.signature) {
        short_name_ambiguous = true;
      }
      short_name_signature = entry.signature;
      if (closer_architecture(entry, by_short_name, sm)) {
        by_short_name = entry;
      }
    }
    if (closer_architecture(entry, exact, sm) && canonical_kernel_name(entry.signature) == wanted) {
      exact = entry;
    }
  };
  for (const KernelTableEntry& entry : kernel_table()) {
    consider(entry);
  }
  for (const KernelTableEntry& entry : program_kernels().entries) {
    consider(entry);
  }
  if (exact) {
    return exact;
  }
  return short_name_ambiguous ? std::nullopt : by_short_name;
}

namespace {

// The file name of a path: what follows its last '/'.
std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<KernelTableEntry> find_kernel_symbol(std::string_view symbol,
                                                   std::string_view source_name, int cc_major,
                                                   int cc_minor) {
  const int sm = cc_major * 10 + cc_minor;
  const std::string wanted = canonical_kernel_name(symbol);
  const auto find_in = [&](std::span<const KernelTableEntry> entries, bool& ambiguous) {
    std::optional<KernelTableEntry> best;
    for (const KernelTableEntry& entry : entries) {
      if ((!source_name.empty() && file_name(entry.source) != source_name) ||
          canonical_kernel_name(entry.signature) != wanted) {
        continue;
      }
      ambiguous = ambiguous || (best && best->source != entry.source);
      if (closer_architecture(entry, best, sm)) {
        best = entry;
      }
    }
    return best;
  };
  const ProgramKernels& program = program_kernels();
  bool ambiguous = false;
  if (auto own = find_in(program.entries, ambiguous); own || ambiguous) {
    return ambiguous ? std::nullopt : own;
  }
  if (!source_name.empty() && std::any_of(program.failures.begin(), program.failures.end(),
                                          [&](const KernelSourceFailure& f) {
                                            return file_name(f.source) == source_name;
                                          })) {
    return std::nullopt;
  }
  auto project = find_in(kernel_table(), ambiguous);
  return ambiguous ? std::nullopt : project;
}

std::optional<std::string_view> kernel_source_failure(std::string_view launch_file) {
  for (const KernelSourceFailure& failure : program_kernels().failures) {
    if (same_file(launch_file, failure.source)) {
      return failure.why;
    }
  }
  return std::nullopt;
}

KernelResources resources_of(const KernelTableEntry& entry) {
  KernelResources resources;
  resources.registers_per_thread = entry.registers;
  resources.static_shared_bytes = entry.static_shared_bytes;
  resources.max_threads_per_block = 0;  // ptxas does not report __launch_bounds__
  return resources;
}

std::string kernel_short_name(std::string_view launch_name) {
  const std::string_view name = drop_trailing_group(function_part(launch_name), '<', '>');
  // The last qualifier, outside any brackets ("(anonymous namespace)::k", "<unnamed>::k"), and
  // after the return type Nsight Compute puts before a template's name ("void k<float>(...)").
  return std::string(name.substr(last_top_level_start(name, true)));
}

std::optional<KernelResources> table_resources(std::string_view launch_name, const GpuSpec& spec) {
  const auto entry = find_kernel(kernel_short_name(launch_name), spec.cc_major, spec.cc_minor);
  return entry ? std::optional(resources_of(*entry)) : std::nullopt;
}

LaunchShape launch_shape(const CountedLaunch& launch) {
  LaunchShape shape;
  shape.grid = launch.grid;
  shape.block = launch.block;
  shape.dynamic_shared_bytes = launch.dynamic_shared_bytes;
  if (launch.registers_per_thread > 0) {
    shape.resources.registers_per_thread = launch.registers_per_thread;
    shape.resources.static_shared_bytes = launch.static_shared_bytes;
    shape.resources_known = true;
  }
  return shape;
}

ModeledTime model_launch(const CountedLaunch& launch, const GpuSpec& spec) {
  ModeledTime m = model_time(launch.counters, launch_shape(launch), spec);
  const double wait_s =
      m.launch_s + static_cast<double>(launch.longest_wait_cycles) / (spec.boost_clock_mhz * 1e6);
  if (wait_s > m.time_s) {
    m.time_s = wait_s;
    m.bound = ModelBound::clock_wait;
  }
  return m;
}

}  // namespace gpulab
