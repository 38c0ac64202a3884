// Lookups over the kernel table. The table itself (kernel_table(), kernel_table_status()) is
// generated at build time from ptxas's report (cmake/GpulabKernelTable.cmake).
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

KernelResources resources_of(const KernelTableEntry& entry) {
  KernelResources resources;
  resources.registers_per_thread = entry.registers;
  resources.static_shared_bytes = entry.static_shared_bytes;
  resources.max_threads_per_block = 0;  // ptxas does not report __launch_bounds__
  return resources;
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

}  // namespace

std::string kernel_short_name(std::string_view launch_name) {
  std::string_view name = launch_name;
  while (!name.empty() && name.back() == ' ') {
    name.remove_suffix(1);
  }
  name = drop_trailing_group(name, '(', ')');
  name = drop_trailing_group(name, '<', '>');
  // The last qualifier, outside any brackets ("(anonymous namespace)::k", "<unnamed>::k"), and
  // after the return type Nsight Compute puts before a template's name ("void k<float>(...)").
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(' || c == '<') {
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      --depth;
    } else if (depth == 0 &&
               (c == ' ' || (c == ':' && i + 1 < name.size() && name[i + 1] == ':'))) {
      start = c == ' ' ? i + 1 : i + 2;
    }
  }
  return std::string(name.substr(start));
}

std::optional<KernelResources> table_resources(std::string_view launch_name, const GpuSpec& spec) {
  const auto entry = find_kernel(kernel_short_name(launch_name), spec.cc_major, spec.cc_minor);
  return entry ? std::optional(resources_of(*entry)) : std::nullopt;
}

LaunchShape launch_shape(const CountedLaunch& launch, const GpuSpec& spec) {
  LaunchShape shape;
  shape.grid = launch.grid;
  shape.block = launch.block;
  shape.dynamic_shared_bytes = launch.dynamic_shared_bytes;
  if (launch.registers_per_thread > 0) {
    shape.resources.registers_per_thread = launch.registers_per_thread;
    shape.resources.static_shared_bytes = launch.static_shared_bytes;
    shape.resources_known = true;
  } else if (const auto resources = table_resources(launch.kernel, spec)) {
    shape.resources = *resources;
    shape.resources_known = true;
  }
  return shape;
}

ModeledTime model_launch(const CountedLaunch& launch, const GpuSpec& spec) {
  ModeledTime m = model_time(launch.counters, launch_shape(launch, spec), spec);
  const double wait_s =
      m.launch_s + static_cast<double>(launch.longest_wait_cycles) / (spec.boost_clock_mhz * 1e6);
  if (wait_s > m.time_s) {
    m.time_s = wait_s;
    m.bound = ModelBound::clock_wait;
  }
  return m;
}

}  // namespace gpulab
