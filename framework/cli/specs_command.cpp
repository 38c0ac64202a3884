// `gpulab specs [NAME]`: the GPU spec database.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::cli {
namespace {

std::string tflops(double value) {
  return value > 0 ? format_fixed(value, 1) : "-";
}

void print_all() {
  Table table({{"key", "", Align::left},
               {"GPU", "", Align::left},
               {"CC", "", Align::right},
               {"SMs", "", Align::right},
               {"memory", "GB", Align::right},
               {"DRAM", "GB/s", Align::right},
               {"FP32", "TFLOP/s", Align::right},
               {"TF32", "TFLOP/s", Align::right},
               {"FP16", "TFLOP/s", Align::right},
               {"BF16", "TFLOP/s", Align::right},
               {"L2", "MB", Align::right}});
  for (const GpuSpec& spec : all_specs()) {
    table.add_row({spec.key, spec.name, spec.compute_capability(), std::to_string(spec.sm_count),
                   format_fixed(static_cast<double>(spec.memory_bytes) / 1e9, 0),
                   format_fixed(spec.dram_bandwidth_gb_s, 0), tflops(spec.fp32_tflop_s),
                   tflops(spec.tf32_tensor_tflop_s), tflops(spec.fp16_tensor_tflop_s),
                   tflops(spec.bf16_tensor_tflop_s),
                   format_fixed(static_cast<double>(spec.l2_bytes) / 1e6, 0)});
  }
  std::cout << table
            << "Tensor throughputs are dense (not 2:4 sparse), FP32 accumulate; '-' = not "
               "supported.\nMemory and L2 are physical sizes in decimal units (an \"80GB\" H100 "
               "holds 80 GiB = 85.9 GB).\n`gpulab specs NAME` shows one GPU with its sources.\n";
}

void print_one(const GpuSpec& spec) {
  Table table({{"property", "", Align::left}, {"value", "", Align::right}});
  const auto bytes = [](std::uint64_t b) { return format_bytes(static_cast<double>(b)); };
  table.add_row({"architecture", spec.architecture});
  table.add_row({"compute capability", spec.compute_capability()});
  table.add_row({"SMs", std::to_string(spec.sm_count)});
  table.add_row({"boost clock", format_fixed(spec.boost_clock_mhz, 0) + " MHz"});
  table.add_row({"memory", bytes(spec.memory_bytes)});
  table.add_row({"memory bus", std::to_string(spec.memory_bus_width_bits) + " bit"});
  table.add_row({"DRAM bandwidth", format_fixed(spec.dram_bandwidth_gb_s, 0) + " GB/s"});
  table.add_row({"FP32", tflops(spec.fp32_tflop_s) + " TFLOP/s"});
  table.add_row({"TF32 tensor (dense)", tflops(spec.tf32_tensor_tflop_s) + " TFLOP/s"});
  table.add_row({"FP16 tensor (dense)", tflops(spec.fp16_tensor_tflop_s) + " TFLOP/s"});
  table.add_row({"BF16 tensor (dense)", tflops(spec.bf16_tensor_tflop_s) + " TFLOP/s"});
  table.add_row({"L2 cache", bytes(spec.l2_bytes)});
  table.add_row({"max threads per SM", std::to_string(spec.max_threads_per_sm)});
  table.add_row({"max warps per SM", std::to_string(spec.max_warps_per_sm)});
  table.add_row({"max blocks per SM", std::to_string(spec.max_blocks_per_sm)});
  table.add_row({"registers per SM", std::to_string(spec.registers_per_sm)});
  table.add_row({"shared memory per SM", format_bytes_kib(spec.shared_memory_per_sm_bytes)});
  table.add_row({"shared memory per block (opt-in)",
                 format_bytes_kib(spec.shared_memory_per_block_optin_bytes)});
  table.add_row({"reserved shared memory per block",
                 format_bytes_kib(spec.reserved_shared_memory_per_block_bytes)});
  // Ridge point: the arithmetic intensity where the roofline turns from memory- to compute-bound.
  table.add_row(
      {"FP32 ridge point",
       format_fixed(spec.fp32_tflop_s * 1e3 / spec.dram_bandwidth_gb_s, 1) + " FLOP/byte"});
  std::cout << spec.name << " (" << spec.key << ")\n" << table << "source: " << spec.source << "\n";
}

int run(const std::string& name) {
  if (name.empty()) {
    print_all();
    return kSuccess;
  }
  const auto spec = find_spec(name);
  if (!spec) {
    std::string known;
    for (const GpuSpec& s : all_specs()) {
      known += (known.empty() ? "" : ", ") + s.key;
    }
    throw UsageError("unknown GPU '" + name + "'; known: " + known);
  }
  print_one(*spec);
  return kSuccess;
}

}  // namespace

Command add_specs_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "specs", "List the GPU spec database (datasheet peaks and per-SM limits), or show one GPU.");
  auto name = std::make_shared<std::string>();
  command->add_option("NAME", *name, "A GPU key or name, e.g. h100-sxm or \"A100 80GB SXM\"");
  return {command, [name] { return run(*name); }};
}

}  // namespace gpulab::cli
