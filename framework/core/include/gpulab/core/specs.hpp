// GPU spec database: datasheet peaks and per-SM limits of the GPUs gpulab models.
//
// Every value in specs.cpp carries its public source (NVIDIA whitepaper or datasheet) in a
// comment. Tensor throughputs are dense (not 2:4 sparse) with FP32 accumulation. Units are in the
// names; GB, GB/s and TFLOP/s are decimal (1e9, 1e12), memory sizes are bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpulab/core/device_info.hpp"

namespace gpulab {

/// Where the numbers of a spec come from.
enum class SpecOrigin {
  datasheet,  ///< the database entry, from NVIDIA's published documents
  estimated,  ///< computed from a detected device's properties (GPU not in the database)
};

/// Datasheet peaks and per-SM limits of one GPU.
struct GpuSpec {
  std::string key;                 ///< short lookup key, e.g. "h100-sxm"
  std::string name;                ///< display name, e.g. "H100 SXM"
  std::string architecture;        ///< e.g. "Hopper"
  int cc_major = 0;                ///< compute capability, major
  int cc_minor = 0;                ///< compute capability, minor
  int sm_count = 0;                ///< streaming multiprocessors
  double boost_clock_mhz = 0;      ///< boost clock the peaks assume
  std::uint64_t memory_bytes = 0;  ///< DRAM capacity
  int memory_bus_width_bits = 0;   ///< DRAM interface width
  double dram_bandwidth_gb_s = 0;  ///< peak DRAM bandwidth
  double fp32_tflop_s = 0;         ///< peak FP32 (non-tensor)
  double tf32_tensor_tflop_s = 0;  ///< dense TF32 tensor; 0 where unsupported
  double fp16_tensor_tflop_s = 0;  ///< dense FP16 tensor, FP32 accumulate
  double bf16_tensor_tflop_s = 0;  ///< dense BF16 tensor, FP32 accumulate; 0 where unsupported
  std::uint64_t l2_bytes = 0;      ///< L2 cache
  // Per-SM limits (CUDA C++ Programming Guide, "Compute Capabilities" table).
  int max_threads_per_sm = 0;                                ///< resident threads per SM
  int max_warps_per_sm = 0;                                  ///< resident warps per SM
  int max_blocks_per_sm = 0;                                 ///< resident blocks per SM
  int max_threads_per_block = 1024;                          ///< threads per block
  int registers_per_sm = 0;                                  ///< 32-bit registers per SM
  int max_registers_per_thread = 255;                        ///< registers per thread
  std::uint64_t shared_memory_per_sm_bytes = 0;              ///< shared memory per SM
  std::uint64_t shared_memory_per_block_optin_bytes = 0;     ///< per block with opt-in
  std::uint64_t reserved_shared_memory_per_block_bytes = 0;  ///< reserved per block by CUDA
  int warp_size = 32;                                        ///< threads per warp
  // Memory-system figures of the counted-traffic model (traffic_model.hpp); where each comes from
  // is in memory_model_source.
  double l2_bandwidth_gb_s = 0;                  ///< L2 bandwidth at the boost clock
  int shared_memory_bytes_per_clock_per_sm = 0;  ///< shared memory: 32 banks x 4 bytes per clock
  double dram_latency_ns = 0;                    ///< latency of a load served by DRAM
  double launch_overhead_us = 0;                 ///< launch-to-launch time of an empty kernel
  double host_link_gb_s = 0;                     ///< host <-> device (PCIe), one direction
  std::string memory_model_source;               ///< sources of the five figures above
  // Instruction figures of the time model (traffic_model.hpp); where each comes from is in
  // instruction_model_source.
  int warp_issue_per_clock_per_sm = 0;   ///< warp instructions issued per clock (schedulers)
  int fp32_lanes_per_sm = 0;             ///< FP32 add, multiply, FMA results per clock
  int fp64_lanes_per_sm = 0;             ///< FP64 add, multiply, FMA results per clock
  int integer_lanes_per_sm = 0;          ///< 32-bit integer add, compare, logic results per clock
  int special_lanes_per_sm = 0;          ///< special functions and conversions per clock
  double shared_latency_cycles = 0;      ///< a shared-memory load
  double l2_latency_cycles = 0;          ///< a global load served by L2
  double collective_latency_cycles = 0;  ///< a warp shuffle or vote
  double barrier_latency_cycles = 0;     ///< __syncthreads, from the last warp's arrival
  double dependent_issue_cycles = 0;     ///< clocks between a warp's dependent arithmetic
  double block_launch_cycles = 0;        ///< clocks between two blocks an SM starts
  std::string instruction_model_source;  ///< sources of the eleven figures above
  SpecOrigin origin = SpecOrigin::datasheet;  ///< datasheet or estimated
  std::string source;                         ///< where the numbers come from

  /// Compute capability as "9.0".
  [[nodiscard]] std::string compute_capability() const;
};

/// Every GPU in the database, in a stable order (newest architecture first).
[[nodiscard]] std::span<const GpuSpec> all_specs();

/// Looks a spec up by key or name, ignoring case, spaces, '-' and '_' ("H100 SXM", "h100-sxm",
/// "h100sxm"). Also accepts the name the CUDA driver reports ("NVIDIA H100 80GB HBM3") and short
/// names, which pick the SXM board and for A100 the 80GB part ("h100", "a100"; "a100-40gb",
/// "a100-pcie" for the others). nullopt when nothing matches.
[[nodiscard]] std::optional<GpuSpec> find_spec(std::string_view name);

/// The spec of a detected device: the database entry whose name the device's name matches
/// (e.g. "NVIDIA H100 80GB HBM3" is H100 SXM), otherwise an estimate computed from the device's
/// properties (clocks, SMs, bus width, compute capability), marked SpecOrigin::estimated.
[[nodiscard]] GpuSpec spec_for_device(const DeviceInfo& device);

/// The spec used when none is chosen: H100 SXM.
[[nodiscard]] const GpuSpec& default_spec();

/// The GPU the sim backend simulates for a value of GPULAB_SIM_SPEC: default_spec() when
/// `requested` is empty, the named spec when it exists, otherwise no spec and the reason.
struct SimSpecChoice {
  std::optional<GpuSpec> spec;  ///< empty when `requested` names no known GPU
  std::string error;            ///< why there is no spec; empty when there is one
};
[[nodiscard]] SimSpecChoice choose_sim_spec(std::string_view requested);

/// The value of the environment variable GPULAB_SIM_SPEC ("" when unset).
[[nodiscard]] std::string sim_spec_request();

}  // namespace gpulab
