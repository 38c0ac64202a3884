// `gpulab occupancy --spec NAME (--kernel NAME | --regs N --smem BYTES) [--block N]
// [--dynamic-smem BYTES]`: how many blocks of a kernel one SM of a GPU holds, which resource stops
// it from holding more, and how that changes with the block size. docs/occupancy.md reads the
// output line by line.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::cli {
namespace {

struct Options {
  std::string spec;
  std::string kernel;
  int registers = 0;
  std::uint64_t static_shared_bytes = 0;
  int block_size = 0;
  std::uint64_t dynamic_shared_bytes = 0;
  // Set when the option was given (CLI11 owns them; they live as long as the app).
  CLI::Option* kernel_option = nullptr;
  CLI::Option* regs_option = nullptr;
  CLI::Option* smem_option = nullptr;
  CLI::Option* block_option = nullptr;
};

// What is being analysed and where its figures come from.
struct KernelChoice {
  KernelResources resources;
  std::string description;  // lines printed under "Kernel:"
};

GpuSpec spec_named(const std::string& name) {
  if (const auto spec = find_spec(name)) {
    return *spec;
  }
  std::string known;
  for (const GpuSpec& s : all_specs()) {
    known += (known.empty() ? "" : ", ") + s.key;
  }
  throw UsageError("unknown GPU '" + name + "'; known: " + known);
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string text;
  for (const std::string_view name : names) {
    text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

KernelChoice kernel_from_table(const std::string& name, const GpuSpec& spec) {
  if (kernel_table().empty()) {
    const std::string_view status = kernel_table_status();
    // Not a usage error: the build has no table; --regs/--smem still work.
    throw std::runtime_error(
        "this build has no kernel table (" +
        (status.empty() ? std::string("the table is empty") : std::string(status)) +
        "); give --regs N --smem BYTES instead");
  }
  const std::vector<std::string_view> names = kernel_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw UsageError("unknown kernel '" + name + "'; known: " + joined(names));
  }
  const std::optional<KernelTableEntry> entry = find_kernel(name, spec.cc_major, spec.cc_minor);
  if (!entry) {
    std::string built;
    for (const KernelTableEntry& e : kernel_table()) {
      if (e.name == name) {
        built += (built.empty() ? "sm_" : ", sm_") + std::to_string(e.sm);
      }
    }
    throw UsageError("kernel '" + name + "' was built only for " + built +
                     ", all newer than compute capability " + spec.compute_capability() + " of " +
                     spec.name);
  }
  KernelChoice choice;
  choice.resources = resources_of(*entry);
  const int wanted_sm = spec.cc_major * 10 + spec.cc_minor;
  choice.description =
      "  " + std::string(entry->name) + ", sm_" + std::to_string(entry->sm) + " build" +
      (entry->sm == wanted_sm ? std::string()
                              : " (the closest not newer than " + spec.compute_capability() + ")") +
      ", from the build's ptxas report\n";
  if (!entry->signature.empty()) {
    choice.description += "  " + std::string(entry->signature) + "\n";
  }
  if (!entry->source.empty()) {
    choice.description += "  source: " + std::string(entry->source) + "\n";
  }
  if (entry->local_bytes > 0) {
    // Spills do not change occupancy, but each one is a trip through L1/L2: worth knowing.
    choice.description += "  " + std::to_string(entry->local_bytes) +
                          " B of local memory per thread (register spills or stack arrays)\n";
  }
  return choice;
}

KernelChoice kernel_from_options(const Options& options, const GpuSpec& spec) {
  const bool typed = *options.regs_option || *options.smem_option;
  if (*options.kernel_option) {
    return kernel_from_table(options.kernel, spec);
  }
  if (!typed) {
    throw UsageError("say which kernel: --kernel NAME, or --regs N and --smem BYTES");
  }
  if (!*options.regs_option || !*options.smem_option) {
    throw UsageError("--regs and --smem go together: give both (or --kernel NAME)");
  }
  KernelChoice choice;
  choice.resources.registers_per_thread = options.registers;
  choice.resources.static_shared_bytes = options.static_shared_bytes;
  choice.description = "  typed in (--regs, --smem)\n";
  return choice;
}

// A block limit for the table: "unlimited" when the kernel uses none of the resource.
std::string blocks_text(int blocks) {
  return blocks == kUnlimitedBlocks ? "unlimited" : std::to_string(blocks);
}

// "0 B", "100 B", "1024 B (1 KiB)": small counts without the KiB.
std::string bytes_text(std::uint64_t bytes) {
  return bytes < 1024 ? std::to_string(bytes) + " B" : format_bytes_kib(bytes);
}

// "1 warp", "8 warps".
std::string count_of(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string percent(double fraction) {
  return format_fixed(fraction * 100.0, 1);
}

void print_spec(const GpuSpec& spec) {
  std::cout << "GPU: " << spec.name << " (" << spec.key << "), compute capability "
            << spec.compute_capability() << "\n"
            << "  per SM:    " << spec.max_threads_per_sm << " threads ("
            << spec.max_threads_per_sm / spec.warp_size << " warps), " << spec.max_blocks_per_sm
            << " blocks, " << spec.registers_per_sm << " registers, "
            << format_bytes_kib(spec.shared_memory_per_sm_bytes) << " shared memory\n"
            << "  per block: " << spec.max_threads_per_block << " threads, "
            << format_bytes_kib(spec.shared_memory_per_block_optin_bytes)
            << " shared memory (opt-in), "
            << bytes_text(spec.reserved_shared_memory_per_block_bytes) << " reserved by CUDA\n";
}

void print_kernel(const KernelChoice& kernel) {
  const KernelResources& k = kernel.resources;
  std::cout << "Kernel:\n"
            << kernel.description << "  " << k.registers_per_thread << " registers per thread, "
            << bytes_text(k.static_shared_bytes) << " static shared memory"
            << (k.max_threads_per_block > 0
                    ? ", __launch_bounds__(" + std::to_string(k.max_threads_per_block) + ")"
                    : std::string())
            << "\n";
}

void print_result(const GpuSpec& spec, const Occupancy& o, bool chosen_by_user) {
  std::cout << "Launch: " << o.block_size << " threads ("
            << count_of(o.warps_per_block, "warp", "warps") << ") per block, "
            << bytes_text(o.dynamic_shared_bytes) << " dynamic shared memory"
            << (chosen_by_user ? " (--block)"
                               : " (highest occupancy, largest on ties; --block N to choose)")
            << "\n\n";

  const int registers_per_warp =
      o.warps_per_block > 0 ? o.allocated_registers_per_block / o.warps_per_block : 0;
  Table limits({{"limit", "", Align::left},
                {"blocks/SM", "", Align::right},
                {"a block takes", "", Align::left},
                {"an SM has", "", Align::left}});
  limits.add_row({"warps", blocks_text(o.blocks_limit_warps),
                  count_of(o.warps_per_block, "warp", "warps"),
                  std::to_string(o.max_warps_per_sm) + " warps"});
  limits.add_row({"registers", blocks_text(o.blocks_limit_registers),
                  std::to_string(o.allocated_registers_per_block) + " registers (" +
                      std::to_string(registers_per_warp) + " per warp)",
                  std::to_string(spec.registers_per_sm) + " registers (4 x " +
                      std::to_string(spec.registers_per_sm / 4) + ")"});
  limits.add_row({"shared memory", blocks_text(o.blocks_limit_shared),
                  bytes_text(o.allocated_shared_bytes_per_block),
                  format_bytes_kib(o.shared_memory_per_sm_bytes) + " carveout"});
  limits.add_row({"blocks per SM", blocks_text(o.blocks_limit_blocks), "1 block",
                  count_of(o.blocks_limit_blocks, "block", "blocks")});
  std::cout << limits << "\nResult: " << o.active_blocks_per_sm << " blocks/SM x "
            << count_of(o.warps_per_block, "warp", "warps") << " = " << o.active_warps_per_sm
            << " of " << o.max_warps_per_sm << " warps per SM = " << percent(o.occupancy_fraction)
            << "% occupancy, limited by " << to_string(o.limiter) << "\n"
            << "A warp's registers: 32 x registers per thread, rounded up to 256, from one of "
               "the SM's\n4 quarters of 16384. A block's shared memory: static + dynamic + the "
               "reservation, rounded\nup to the allocation granularity. See docs/occupancy.md.\n";
}

void print_block_table(const std::vector<OccupancyPoint>& points, const KernelResources& k,
                       const Occupancy& chosen) {
  const int chosen_block = chosen.block_size;
  Table table({{"block", "threads", Align::right},
               {"blocks/SM", "", Align::right},
               {"warps/SM", "", Align::right},
               {"occupancy", "%", Align::right},
               {"limiter", "", Align::left},
               {"", "", Align::left}});
  std::string first_error;
  for (const OccupancyPoint& point : points) {
    const std::string mark = point.x == chosen_block ? "<- shown above" : "";
    if (!point.occupancy) {
      if (first_error.empty()) {
        first_error = "block " + std::to_string(point.x) + ": " + point.error;
      }
      table.add_row({std::to_string(point.x), "-", "-", "-", "cannot launch", mark});
      continue;
    }
    const Occupancy& o = *point.occupancy;
    table.add_row({std::to_string(point.x), std::to_string(o.active_blocks_per_sm),
                   std::to_string(o.active_warps_per_sm), percent(o.occupancy_fraction),
                   std::string(to_string(o.limiter)), mark});
  }
  std::cout << "\nOccupancy by block size (" << k.registers_per_thread << " registers, "
            << bytes_text(k.static_shared_bytes) << " static + "
            << bytes_text(chosen.dynamic_shared_bytes) << " dynamic shared memory):\n"
            << table;
  if (!first_error.empty()) {
    std::cout << "cannot launch: " << first_error << "\n";
  }
}

int run(const Options& options) {
  const GpuSpec spec = spec_named(options.spec);
  const KernelChoice kernel = kernel_from_options(options, spec);

  const std::vector<OccupancyPoint> points =
      sweep_block_size(spec, kernel.resources, options.dynamic_shared_bytes);
  int block_size = options.block_size;
  const bool chosen_by_user = static_cast<bool>(*options.block_option);
  if (!chosen_by_user) {
    // The highest occupancy; on ties the largest block, as the runtime's
    // cudaOccupancyMaxPotentialBlockSize picks it.
    double best = -1;
    for (const OccupancyPoint& point : points) {
      if (point.occupancy && point.occupancy->occupancy_fraction >= best) {
        best = point.occupancy->occupancy_fraction;
        block_size = point.x;
      }
    }
  }

  Occupancy result;
  try {
    if (!chosen_by_user && block_size == 0) {
      // No block size launches: let the smallest one say why (e.g. shared memory above the limit).
      block_size = points.empty() ? spec.warp_size : points.front().x;
    }
    result = compute_occupancy(spec, kernel.resources, block_size, options.dynamic_shared_bytes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  print_spec(spec);
  print_kernel(kernel);
  print_result(spec, result, chosen_by_user);
  print_block_table(points, kernel.resources, result);
  return kSuccess;
}

// Rejects "-5" for a byte count, which CLI11 would otherwise wrap around to 2^64 - 5.
CLI::Validator non_negative() {
  return CLI::Validator(
      [](const std::string& text) {
        return text.find('-') == std::string::npos ? std::string() : "a byte count, not " + text;
      },
      "BYTES");
}

}  // namespace

Command add_occupancy_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "occupancy",
      "Occupancy of a kernel on a GPU of the spec database: active blocks and warps per SM, the "
      "limiting resource (warps, registers, shared memory, blocks) and a block-size table; no "
      "GPU needed.");
  auto options = std::make_shared<Options>();
  command->add_option("--spec", options->spec, "A GPU key or name, e.g. h100-sxm (gpulab specs)")
      ->required();
  options->kernel_option = command->add_option(
      "--kernel", options->kernel,
      "A kernel of this build (its registers and static shared memory from ptxas)");
  options->regs_option =
      command->add_option("--regs", options->registers, "Registers per thread (0..255)");
  options->smem_option = command
                             ->add_option("--smem", options->static_shared_bytes,
                                          "Static shared memory per block, bytes")
                             ->check(non_negative());
  options->kernel_option->excludes(options->regs_option)->excludes(options->smem_option);
  options->block_option = command->add_option(
      "--block", options->block_size,
      "Threads per block (default: the block size with the highest occupancy, largest on ties)");
  command
      ->add_option("--dynamic-smem", options->dynamic_shared_bytes,
                   "Dynamic shared memory per block, bytes (the launch's third argument)")
      ->check(non_negative());
  command->footer(
      "Example: gpulab occupancy --spec h100-sxm --regs 64 --smem 0 --block 256\n"
      "docs/occupancy.md explains the four limits and reads this output.");
  return {command, [options] { return run(*options); }};
}

}  // namespace gpulab::cli
