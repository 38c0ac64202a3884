// `gpulab device`: the CUDA devices of this machine, or why there is none and what runs instead.
#include <iostream>
#include <string>

#include "build_config.hpp"
#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace gpulab::cli {
namespace {

Table device_table(const DeviceInfo& d) {
  Table table({{"property", "", Align::left}, {"value", "", Align::right}});
  const auto mhz = [](int khz) { return format_fixed(khz / 1000.0, 0) + " MHz"; };
  table.add_row({"compute capability", d.compute_capability()});
  table.add_row({"UUID", d.uuid});
  table.add_row({"SMs", std::to_string(d.sm_count)});
  table.add_row({"SM clock (peak)", mhz(d.sm_clock_khz)});
  table.add_row({"memory clock (peak)", mhz(d.memory_clock_khz)});
  table.add_row({"memory bus", std::to_string(d.memory_bus_width_bits) + " bit"});
  table.add_row(
      {"DRAM bandwidth (from clocks)", format_fixed(d.theoretical_bandwidth_gb_s(), 0) + " GB/s"});
  table.add_row({"global memory", format_bytes(static_cast<double>(d.global_memory_bytes))});
  table.add_row({"L2 cache", format_bytes(static_cast<double>(d.l2_bytes))});
  table.add_row({"shared memory per SM", format_bytes_kib(d.shared_memory_per_sm_bytes)});
  table.add_row({"shared memory per block", format_bytes_kib(d.shared_memory_per_block_bytes)});
  table.add_row({"shared memory per block (opt-in)",
                 format_bytes_kib(d.shared_memory_per_block_optin_bytes)});
  table.add_row({"registers per SM", std::to_string(d.registers_per_sm)});
  table.add_row({"max threads per SM", std::to_string(d.max_threads_per_sm)});
  table.add_row({"max threads per block", std::to_string(d.max_threads_per_block)});
  table.add_row({"max blocks per SM", std::to_string(d.max_blocks_per_sm)});
  table.add_row({"warp size", std::to_string(d.warp_size)});
  return table;
}

int run(const std::string& json_path) {
  const DeviceQuery query = query_devices();
#if GPULAB_BACKEND_SIM
  // Built without the cuda backend: there is no real device to ask; the query describes the
  // simulated one.
  std::cout << "no CUDA device: gpulab was built without the cuda backend (" << GPULAB_CUDA_STATUS
            << "); the sim backend will be used\n";
  const bool sim_only = true;
#else
  const bool sim_only = false;
  if (!query.usable()) {
    const DeviceUnavailable& why = *query.unavailable;
    std::cout << "no CUDA device: " << why.error_name << " (" << why.error_code
              << "): " << why.reason << "; the sim backend will be used\n";
    const SimSpecChoice sim = choose_sim_spec(sim_spec_request());
    if (!sim.spec) {
      std::cout << "sim backend unavailable: " << sim.error << "\n";
      return kFailure;
    }
    std::cout << "sim backend: simulates " << sim.spec->name
              << " (choose another with GPULAB_SIM_SPEC=NAME; see `gpulab specs`)\n";
  }
#endif
  if (sim_only && !query.usable()) {
    std::cout << "sim backend unavailable: " << query.unavailable->reason << "\n";
  }
  for (const DeviceInfo& device : query.devices) {
    const GpuSpec spec = spec_for_device(device);
    std::cout << "\n"
              << (sim_only ? "simulated device " : "device ") << device.index << ": " << device.name
              << "\n"
              << device_table(device) << "spec: " << spec.name << " ("
              << (spec.origin == SpecOrigin::datasheet ? "datasheet" : "estimated from properties")
              << "): " << format_fixed(spec.dram_bandwidth_gb_s, 0) << " GB/s DRAM, "
              << format_fixed(spec.fp32_tflop_s, 1) << " TFLOP/s FP32, "
              << format_fixed(spec.fp16_tensor_tflop_s, 1) << " TFLOP/s FP16 tensor (dense)\n";
  }

  if (!json_path.empty()) {
    const std::string device_name = query.usable() ? query.devices.front().name
                                                   : "none: " + query.unavailable->error_name +
                                                         ": " + query.unavailable->reason;
    const SimSpecChoice sim = choose_sim_spec(sim_spec_request());
    const std::string spec_name = query.usable() ? spec_for_device(query.devices.front()).name
                                  : sim.spec     ? sim.spec->name
                                                 : "";
    ResultsFile file{make_context(query.backend, device_name, spec_name), {}};
    for (const DeviceInfo& device : query.devices) {
      file.results.push_back(device_properties_result(device));
    }
    save_results(json_path, file);
    std::cout << "\nwrote " << json_path << "\n";
  }
  return (sim_only && !query.usable()) ? kFailure : kSuccess;
}

}  // namespace

Command add_device_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "device",
      "Show the CUDA devices of this machine, or why there is none (then the sim "
      "backend is used and the device it simulates is shown).");
  auto json_path = std::make_shared<std::string>();
  command->add_option("--json", *json_path, "Also write the device properties as a results file");
  return {command, [json_path] { return run(*json_path); }};
}

}  // namespace gpulab::cli
