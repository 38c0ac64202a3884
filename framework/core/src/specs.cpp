// GPU spec database (see specs.hpp).
//
// Conventions of the entries below:
// - Every value names its public source. "datasheet" is the product's NVIDIA datasheet,
//   "whitepaper" the architecture whitepaper named in the entry's header comment.
// - Tensor peaks are dense (NVIDIA quotes 2:4 sparse peaks with an asterisk; the dense peak is
//   half of it) with FP32 accumulation.
// - DRAM capacities are binary: HBM stacks and GDDR chips come in power-of-two sizes, so a
//   datasheet "80 GB" is 5 stacks x 16 GiB. The runtime reports a little less (the driver keeps
//   some). L2 sizes are binary too: cudaDevAttrL2CacheSize reads 41943040 (40 MiB) on A100.
// - Bandwidth and FLOP/s are decimal (GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s).
#include "gpulab/core/specs.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpulab {

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// ---------------------------------------------------------------------------------------------
// Per-SM limits by compute capability. Source of every value: CUDA C++ Programming Guide,
// "Compute Capabilities", table "Technical Specifications per Compute Capability" (the same
// values are in NVIDIA's CCCL `cuda::arch_traits`).
// ---------------------------------------------------------------------------------------------
struct SmLimits {
  int threads_per_sm;           // maximum resident threads per SM
  int blocks_per_sm;            // maximum resident blocks per SM
  std::uint64_t smem_per_sm;    // maximum shared memory per SM
  std::uint64_t smem_optin;     // maximum shared memory per block (opt-in)
  std::uint64_t smem_reserved;  // shared memory reserved by CUDA per block
};

// CC 7.0 (Volta): 2048 threads, 32 blocks, 96 KB per SM, 96 KB per block, nothing reserved.
constexpr SmLimits kLimitsCc70{2048, 32, 96 * kKiB, 96 * kKiB, 0};
// CC 7.5 (Turing): 1024 threads, 16 blocks, 64 KB per SM, 64 KB per block, nothing reserved.
constexpr SmLimits kLimitsCc75{1024, 16, 64 * kKiB, 64 * kKiB, 0};
// CC 8.0 (A100): 2048 threads, 32 blocks, 164 KB per SM, 163 KB per block, 1 KB reserved.
constexpr SmLimits kLimitsCc80{2048, 32, 164 * kKiB, 163 * kKiB, 1 * kKiB};
// CC 8.6 (GA10x): 1536 threads, 16 blocks, 100 KB per SM, 99 KB per block, 1 KB reserved.
constexpr SmLimits kLimitsCc86{1536, 16, 100 * kKiB, 99 * kKiB, 1 * kKiB};
// CC 8.9 (Ada): 1536 threads, 24 blocks, 100 KB per SM, 99 KB per block, 1 KB reserved.
constexpr SmLimits kLimitsCc89{1536, 24, 100 * kKiB, 99 * kKiB, 1 * kKiB};
// CC 9.0 (Hopper): 2048 threads, 32 blocks, 228 KB per SM, 227 KB per block, 1 KB reserved.
constexpr SmLimits kLimitsCc90{2048, 32, 228 * kKiB, 227 * kKiB, 1 * kKiB};

constexpr const char* kLimitsSource =
    "per-SM limits: CUDA C++ Programming Guide, Compute Capabilities table";

// ---------------------------------------------------------------------------------------------
// Memory-system figures of the counted-traffic model (traffic_model.hpp), applied with the per-SM
// limits (they need the SM count and clock set first).
// - Shared memory: 32 banks, each 32 bits per clock (CUDA C++ Programming Guide, "Shared Memory"
//   of compute capability 5.x and later): 128 bytes per clock per SM.
// - L2 bandwidth: the A100 whitepaper gives A100's L2 read bandwidth as 5120 bytes/clock, against
//   2048 bytes/clock for V100. NVIDIA publishes no figure for Turing, GA10x, Ada or Hopper: for
//   those the model scales A100's 5120 bytes/clock per 108 SMs by the SM count (an assumption,
//   named as such in memory_model_source).
// - DRAM latency: 600 SM clock cycles, an assumption inside the range of several hundred cycles
//   that microbenchmark studies measure on these GPUs (Jia et al., "Dissecting the NVIDIA Volta
//   GPU Architecture via Microbenchmarking", arXiv:1804.06826; Luo et al., "Benchmarking and
//   Dissecting the Nvidia Hopper GPU Architecture", arXiv:2402.13499).
// - Launch overhead: 3 us, an assumption (launch-to-launch time of an empty kernel is a few
//   microseconds; lab 08 measures it).
// ---------------------------------------------------------------------------------------------
constexpr double kA100L2BytesPerClock = 5120;
constexpr double kV100L2BytesPerClock = 2048;
constexpr int kA100Sms = 108;
constexpr double kDramLatencyCycles = 600;
constexpr double kLaunchOverheadUs = 3;

void apply_memory_model(GpuSpec& s) {
  const double clock_hz = s.boost_clock_mhz * 1e6;
  std::string l2_source;
  double l2_bytes_per_clock = 0;
  if (s.cc_major == 8 && s.cc_minor == 0) {
    l2_bytes_per_clock = kA100L2BytesPerClock;
    l2_source = "L2 5120 B/clk: A100 whitepaper";
  } else if (s.cc_major == 7 && s.cc_minor == 0) {
    l2_bytes_per_clock = kV100L2BytesPerClock;
    l2_source = "L2 2048 B/clk: A100 whitepaper (V100 comparison)";
  } else {
    l2_bytes_per_clock = kA100L2BytesPerClock / kA100Sms * s.sm_count;
    l2_source =
        "L2 bandwidth: not published by NVIDIA; assumed A100's 5120 B/clk per 108 SMs, scaled by "
        "SM count";
  }
  s.l2_bandwidth_gb_s = l2_bytes_per_clock * clock_hz / 1e9;
  s.shared_memory_bytes_per_clock_per_sm = 32 * 4;
  s.dram_latency_ns = kDramLatencyCycles / clock_hz * 1e9;
  s.launch_overhead_us = kLaunchOverheadUs;
  s.memory_model_source =
      l2_source +
      "; shared memory 32 banks x 4 B per clock: CUDA C++ Programming Guide; DRAM latency 600 "
      "cycles and launch overhead 3 us: model assumptions (several hundred cycles measured by Jia "
      "et al. arXiv:1804.06826 and Luo et al. arXiv:2402.13499); host link: the datasheet's PCIe "
      "bandwidth, one direction";
}

// ---------------------------------------------------------------------------------------------
// The instruction figures of the time model (traffic_model.hpp), the same for every spec but the
// FP32 and FP64 lanes.
// - Issue: 4 warp schedulers per SM, each issuing one instruction per clock for compute
//   capabilities 7.x to 9.0 (CUDA C++ Programming Guide, "Compute Capabilities", sections on
//   Volta, Turing, Ampere and Hopper).
// - Lanes (results per clock per SM): CUDA C++ Programming Guide, "Arithmetic Instructions"
//   throughput table: FP32 from the spec's own peak (SMs x 2 x lanes x clock), FP64 32 (7.0,
//   8.0), 64 (9.0), 2 (7.5, 8.6, 8.9); 32-bit integer add, compare and logic 64; reciprocal,
//   square root, exponential, logarithm, sine, cosine and conversions 16.
// - Latencies (SM clocks): shared-memory load 29 and L2 hit 262 as measured on A100 and H800 by
//   Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture" (arXiv:2402.13499,
//   table IV: 29.0 both; L2 261.5 and 263.0). A shuffle's and a barrier's latency have no
//   published measurement for these GPUs: assumed equal to a shared-memory load's (29) and 20.
// - Dependent issue: a warp's arithmetic instruction waits "typically 4 clock cycles" for the one
//   it depends on, so that 4 warps per scheduler are needed to issue every clock (CUDA C++
//   Programming Guide, "Maximize Utilization", "Multiprocessor Level", compute capability 7.x and
//   later).
// - Block launch: an SM starts a block at most every 158 of its clocks, whatever the block's size.
//   NVIDIA publishes no figure; fitted to one measurement, vector_add on an H200 SXM at 32, 64 and
//   128 threads a block (2^26 floats: 1.2668, 0.6388 and 0.3287 ms for 15888, 7944 and 3972
//   blocks per SM: 79.7, 80.4 and 82.8 ns a block at 1980 MHz; docs/results/
//   h200-sxm-2026-11-30.md). An assumption for every other GPU.
// ---------------------------------------------------------------------------------------------
constexpr int kWarpSchedulersPerSm = 4;
constexpr int kIntegerLanes = 64;
constexpr int kSpecialLanes = 16;
constexpr double kSharedLatencyCycles = 29;
constexpr double kL2LatencyCycles = 262;
constexpr double kCollectiveLatencyCycles = 29;
constexpr double kBarrierLatencyCycles = 20;
constexpr double kDependentIssueCycles = 4;
constexpr double kBlockLaunchCycles = 158;

int fp64_lanes(int major, int minor) {
  if (major == 9 || major == 10) {
    return 64;
  }
  if ((major == 8 && minor == 0) || (major == 7 && minor == 0) || (major == 6 && minor == 0)) {
    return 32;
  }
  return 2;
}

void apply_instruction_model(GpuSpec& s) {
  s.warp_issue_per_clock_per_sm = kWarpSchedulersPerSm;
  const double sm_clocks = s.sm_count * s.boost_clock_mhz * 1e6;
  s.fp32_lanes_per_sm =
      sm_clocks > 0 ? static_cast<int>(std::lround(s.fp32_tflop_s * 1e12 / (2 * sm_clocks))) : 0;
  s.fp64_lanes_per_sm = fp64_lanes(s.cc_major, s.cc_minor);
  s.integer_lanes_per_sm = kIntegerLanes;
  s.special_lanes_per_sm = kSpecialLanes;
  s.shared_latency_cycles = kSharedLatencyCycles;
  s.l2_latency_cycles = kL2LatencyCycles;
  s.collective_latency_cycles = kCollectiveLatencyCycles;
  s.barrier_latency_cycles = kBarrierLatencyCycles;
  s.dependent_issue_cycles = kDependentIssueCycles;
  s.block_launch_cycles = kBlockLaunchCycles;
  s.instruction_model_source =
      "4 schedulers per SM, lanes per clock (FP32 from the peak; FP64, integer 64, special "
      "functions and conversions 16) and 4 clocks between dependent instructions: CUDA C++ "
      "Programming Guide; latencies: shared 29 and L2 262 clocks (Luo et al. arXiv:2402.13499, "
      "A100 and H800); shuffle 29 and barrier 20 clocks: model assumptions; a block started every "
      "158 clocks per SM: fitted to vector_add on an H200 SXM "
      "(docs/results/h200-sxm-2026-11-30.md)";
}

void apply_limits(GpuSpec& s, const SmLimits& limits) {
  s.max_threads_per_sm = limits.threads_per_sm;
  // Same table: the rows below hold for every compute capability in the database.
  s.warp_size = 32;
  s.max_warps_per_sm = limits.threads_per_sm / s.warp_size;
  s.max_blocks_per_sm = limits.blocks_per_sm;
  s.max_threads_per_block = 1024;
  s.registers_per_sm = 64 * 1024;  // 32-bit registers
  s.max_registers_per_thread = 255;
  s.shared_memory_per_sm_bytes = limits.smem_per_sm;
  s.shared_memory_per_block_optin_bytes = limits.smem_optin;
  s.reserved_shared_memory_per_block_bytes = limits.smem_reserved;
  apply_memory_model(s);
  apply_instruction_model(s);
}

// ---------------------------------------------------------------------------------------------
// Hopper. Sources: "NVIDIA H100 Tensor Core GPU Architecture" whitepaper (H100 SXM5/PCIe table),
// "NVIDIA H100 Tensor Core GPU" datasheet, "NVIDIA H200 Tensor Core GPU" datasheet.
// ---------------------------------------------------------------------------------------------
GpuSpec h100_sxm() {
  GpuSpec s;
  s.key = "h100-sxm";
  s.name = "H100 SXM";
  s.architecture = "Hopper";
  s.cc_major = 9;  // CUDA GPUs compute capability list (developer.nvidia.com/cuda-gpus): 9.0
  s.cc_minor = 0;
  s.sm_count = 132;  // whitepaper: H100 SXM5 has 132 SMs
  // Clock of the whitepaper's FP32 peak: 66.9 TFLOPS = 132 SMs x 128 lanes x 2 x 1980 MHz. The
  // whitepaper's tensor peaks correspond to 1830 MHz (989.4 = 132 x 4096 FLOP/clk x 1830 MHz).
  s.boost_clock_mhz = 1980;
  s.memory_bytes = 80 * kGiB;      // datasheet: 80 GB HBM3
  s.memory_bus_width_bits = 5120;  // whitepaper: 5120-bit HBM3 (5 stacks)
  s.dram_bandwidth_gb_s = 3350;    // datasheet: 3.35 TB/s
  s.fp32_tflop_s = 66.9;           // whitepaper: 66.9 (datasheet rounds to 67)
  s.tf32_tensor_tflop_s = 494.7;   // whitepaper: 494.7 dense (989.4 sparse)
  s.fp16_tensor_tflop_s = 989.4;   // whitepaper: FP16, FP32 accumulate, 989.4 dense
  s.bf16_tensor_tflop_s = 989.4;   // whitepaper: BF16, FP32 accumulate, 989.4 dense
  s.l2_bytes = 50 * kMiB;          // whitepaper: 50 MB L2
  s.host_link_gb_s = 64;           // datasheet: PCIe Gen5 128 GB/s (both directions)
  apply_limits(s, kLimitsCc90);
  s.source =
      "NVIDIA H100 Tensor Core GPU datasheet (memory, bandwidth); NVIDIA H100 Tensor Core GPU "
      "Architecture whitepaper (SMs, FP32, dense tensor peaks, L2); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec h100_pcie() {
  GpuSpec s;
  s.key = "h100-pcie";
  s.name = "H100 PCIe";
  s.architecture = "Hopper";
  s.cc_major = 9;  // CUDA GPUs compute capability list: 9.0
  s.cc_minor = 0;
  s.sm_count = 114;  // whitepaper: H100 PCIe has 114 SMs
  // Clock of the datasheet FP32 peak: 51.2 TFLOPS = 114 SMs x 128 lanes x 2 x 1755 MHz.
  s.boost_clock_mhz = 1755;
  s.memory_bytes = 80 * kGiB;      // datasheet: 80 GB HBM2e
  s.memory_bus_width_bits = 5120;  // whitepaper: 5120-bit HBM2e
  s.dram_bandwidth_gb_s = 2000;    // datasheet: 2 TB/s
  s.fp32_tflop_s = 51.2;           // datasheet: 51 TFLOPS (114 x 128 x 2 x 1755 MHz)
  s.tf32_tensor_tflop_s = 378;     // datasheet: 756 with sparsity, 378 dense
  s.fp16_tensor_tflop_s = 756;     // datasheet: 1,513 with sparsity, 756 dense
  s.bf16_tensor_tflop_s = 756;     // datasheet: 1,513 with sparsity, 756 dense
  s.l2_bytes = 50 * kMiB;          // whitepaper: 50 MB L2
  s.host_link_gb_s = 64;           // datasheet: PCIe Gen5 128 GB/s (both directions)
  apply_limits(s, kLimitsCc90);
  s.source =
      "NVIDIA H100 Tensor Core GPU datasheet (memory, bandwidth, FP32, tensor peaks halved from "
      "sparse); NVIDIA H100 Tensor Core GPU Architecture whitepaper (SMs, bus, L2); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec h200_sxm() {
  // H200 is the GH100 of H100 SXM with HBM3e: the H200 datasheet's compute peaks equal H100
  // SXM's (FP32 67, FP16 1,979 with sparsity), so SMs, clock and peaks are H100 SXM's. The
  // datasheet gives neither L2 nor the memory bus: both as an H200 reported them
  // (cudaDeviceProp, driver 580.159.04; docs/results/h200-sxm-2026-11-26.md).
  GpuSpec s = h100_sxm();
  s.key = "h200-sxm";
  s.name = "H200 SXM";
  s.memory_bytes = 141 * kGiB;     // H200 datasheet: 141 GB HBM3e
  s.memory_bus_width_bits = 6016;  // measured: memoryBusWidth 6016
  s.dram_bandwidth_gb_s = 4800;    // H200 datasheet: 4.8 TB/s
  s.l2_bytes = 60 * kMiB;          // measured: l2CacheSize 62914560
  s.source =
      "NVIDIA H200 Tensor Core GPU datasheet (memory, bandwidth; compute peaks equal H100 "
      "SXM's); NVIDIA H100 Tensor Core GPU Architecture whitepaper (SMs, dense tensor peaks); "
      "an H200's cudaDeviceProp (L2, memory bus; gpulab docs/results/h200-sxm-2026-11-26.md); " +
      std::string(kLimitsSource);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Ada Lovelace. Sources: "NVIDIA Ada GPU Architecture" whitepaper, Appendix A (GeForce RTX 4090
// table), "NVIDIA L4 Tensor Core GPU" datasheet.
// ---------------------------------------------------------------------------------------------
GpuSpec l4() {
  GpuSpec s;
  s.key = "l4";
  s.name = "L4";
  s.architecture = "Ada Lovelace";
  s.cc_major = 8;  // CUDA GPUs compute capability list: 8.9
  s.cc_minor = 9;
  // The L4 datasheet gives no SM count or clock; 58 SMs at 2040 MHz reproduce its peaks exactly:
  // FP32 30.3 = 58 x 128 lanes x 2 x 2040 MHz, FP16 121 = 58 x 1024 FLOP/clk x 2040 MHz.
  s.sm_count = 58;
  s.boost_clock_mhz = 2040;
  s.memory_bytes = 24 * kGiB;  // datasheet: 24 GB GDDR6
  // Not in the datasheet: AD104's 192-bit GDDR6 interface (300 GB/s / 24 B = 12.5 Gb/s per pin).
  s.memory_bus_width_bits = 192;
  s.dram_bandwidth_gb_s = 300;  // datasheet: 300 GB/s
  s.fp32_tflop_s = 30.3;        // datasheet: 30.3 TFLOPS
  s.tf32_tensor_tflop_s = 60;   // datasheet: 120 with sparsity, 60 dense
  s.fp16_tensor_tflop_s = 121;  // datasheet: 242 with sparsity, 121 dense
  s.bf16_tensor_tflop_s = 121;  // datasheet: 242 with sparsity, 121 dense
  // Not in the datasheet: AD104's 48 MB L2 (the Ada whitepaper describes the AD10x L2).
  s.l2_bytes = 48 * kMiB;
  s.host_link_gb_s = 32;  // datasheet: PCIe Gen4 x16 64 GB/s (both directions)
  apply_limits(s, kLimitsCc89);
  s.source =
      "NVIDIA L4 Tensor Core GPU datasheet (memory, bandwidth, FP32, tensor peaks halved from "
      "sparse); SMs and clock derived from those peaks; bus width and L2 from the AD104 "
      "configuration; " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec rtx_4090() {
  GpuSpec s;
  s.key = "rtx-4090";
  s.name = "RTX 4090";
  s.architecture = "Ada Lovelace";
  s.cc_major = 8;  // CUDA GPUs compute capability list: 8.9
  s.cc_minor = 9;
  s.sm_count = 128;               // Ada whitepaper, Appendix A: 128 SMs
  s.boost_clock_mhz = 2520;       // Ada whitepaper, Appendix A: 2520 MHz boost
  s.memory_bytes = 24 * kGiB;     // Ada whitepaper, Appendix A: 24 GB GDDR6X
  s.memory_bus_width_bits = 384;  // Ada whitepaper, Appendix A: 384-bit
  s.dram_bandwidth_gb_s = 1008;   // Ada whitepaper, Appendix A: 1008 GB/s (21 Gb/s)
  s.fp32_tflop_s = 82.6;          // Ada whitepaper, Appendix A: 82.6 TFLOPS
  s.tf32_tensor_tflop_s = 82.6;   // Ada whitepaper, Appendix A: TF32 82.6 dense
  // GeForce parts run FP16/BF16 with FP32 accumulate at half the FP16-accumulate rate.
  s.fp16_tensor_tflop_s = 165.2;  // Ada whitepaper, Appendix A: FP16, FP32 acc, 165.2
  s.bf16_tensor_tflop_s = 165.2;  // Ada whitepaper, Appendix A: BF16, FP32 acc, 165.2
  s.l2_bytes = 72 * kMiB;         // Ada whitepaper, Appendix A: 73728 KB L2
  s.host_link_gb_s = 32;          // PCIe Gen4 x16 (NVIDIA product page): 32 GB/s per direction
  apply_limits(s, kLimitsCc89);
  s.source =
      "NVIDIA Ada Lovelace GPU Architecture whitepaper, Appendix A table (GeForce RTX 4090); " +
      std::string(kLimitsSource);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Ampere. Sources: "NVIDIA A100 Tensor Core GPU Architecture" whitepaper (Table 1 and the
// A100 SXM4 40GB specification table), "NVIDIA A100 Tensor Core GPU" datasheet (40GB and 80GB
// SXM and PCIe), "NVIDIA Ampere GA102 GPU Architecture" whitepaper (GeForce RTX 3090 table).
// ---------------------------------------------------------------------------------------------
GpuSpec a100_sxm_40gb() {
  GpuSpec s;
  s.key = "a100-sxm-40gb";
  s.name = "A100 40GB SXM";
  s.architecture = "Ampere";
  s.cc_major = 8;  // CUDA GPUs compute capability list: 8.0
  s.cc_minor = 0;
  s.sm_count = 108;                // A100 whitepaper: 108 SMs
  s.boost_clock_mhz = 1410;        // A100 whitepaper: 1410 MHz boost
  s.memory_bytes = 40 * kGiB;      // A100 whitepaper: 40 GB HBM2
  s.memory_bus_width_bits = 5120;  // A100 whitepaper: 5120-bit HBM2
  s.dram_bandwidth_gb_s = 1555;    // A100 whitepaper and datasheet: 1555 GB/s
  s.fp32_tflop_s = 19.5;           // A100 whitepaper Table 1: 19.5 TFLOPS
  s.tf32_tensor_tflop_s = 156;     // A100 whitepaper Table 1: TF32 156 dense (312 sparse)
  s.fp16_tensor_tflop_s = 312;     // A100 whitepaper Table 1: FP16 312 dense
  s.bf16_tensor_tflop_s = 312;     // A100 whitepaper Table 1: BF16 312 dense
  s.l2_bytes = 40 * kMiB;          // A100 whitepaper: 40960 KB L2
  s.host_link_gb_s = 32;           // datasheet: PCIe Gen4 64 GB/s (both directions)
  apply_limits(s, kLimitsCc80);
  s.source =
      "NVIDIA A100 Tensor Core GPU Architecture whitepaper, Table 1 and A100 specification "
      "table; NVIDIA A100 Tensor Core GPU datasheet (40GB SXM); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec a100_sxm_80gb() {
  // Same GPU as the 40GB part with HBM2e: the A100 datasheet lists identical compute peaks.
  GpuSpec s = a100_sxm_40gb();
  s.key = "a100-sxm-80gb";
  s.name = "A100 80GB SXM";
  s.memory_bytes = 80 * kGiB;    // A100 datasheet: 80 GB HBM2e
  s.dram_bandwidth_gb_s = 2039;  // A100 datasheet: A100 80GB SXM 2,039 GB/s
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM: memory, bandwidth, peaks); NVIDIA A100 "
      "Tensor Core GPU Architecture whitepaper, Table 1 (SMs, clock, bus, L2); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec a100_pcie_80gb() {
  // The A100 datasheet lists the same compute peaks for the PCIe and SXM boards.
  GpuSpec s = a100_sxm_40gb();
  s.key = "a100-pcie-80gb";
  s.name = "A100 80GB PCIe";
  s.memory_bytes = 80 * kGiB;    // A100 datasheet: 80 GB HBM2e
  s.dram_bandwidth_gb_s = 1935;  // A100 datasheet: A100 80GB PCIe 1,935 GB/s
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe: memory, bandwidth, peaks); NVIDIA A100 "
      "Tensor Core GPU Architecture whitepaper, Table 1 (SMs, clock, bus, L2); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec rtx_3090() {
  GpuSpec s;
  s.key = "rtx-3090";
  s.name = "RTX 3090";
  s.architecture = "Ampere";
  s.cc_major = 8;  // CUDA GPUs compute capability list: 8.6
  s.cc_minor = 6;
  s.sm_count = 82;                // GA102 whitepaper: 82 SMs
  s.boost_clock_mhz = 1695;       // GA102 whitepaper: 1695 MHz boost
  s.memory_bytes = 24 * kGiB;     // GA102 whitepaper: 24 GB GDDR6X
  s.memory_bus_width_bits = 384;  // GA102 whitepaper: 384-bit
  s.dram_bandwidth_gb_s = 936;    // GA102 whitepaper: 936 GB/s (19.5 Gb/s)
  s.fp32_tflop_s = 35.6;          // GA102 whitepaper: 35.6 TFLOPS
  s.tf32_tensor_tflop_s = 35.6;   // GA102 whitepaper: TF32 35.6 dense
  // GeForce parts run FP16/BF16 with FP32 accumulate at half the FP16-accumulate rate.
  s.fp16_tensor_tflop_s = 71;  // GA102 whitepaper: FP16, FP32 accumulate, 71 dense
  s.bf16_tensor_tflop_s = 71;  // GA102 whitepaper: BF16, FP32 accumulate, 71 dense
  s.l2_bytes = 6 * kMiB;       // GA102 whitepaper: 6144 KB L2
  s.host_link_gb_s = 32;       // PCIe Gen4 x16 (NVIDIA product page): 32 GB/s per direction
  apply_limits(s, kLimitsCc86);
  s.source = "NVIDIA Ampere GA102 GPU Architecture whitepaper (GeForce RTX 3090 table); " +
             std::string(kLimitsSource);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Turing and Volta. Sources: "NVIDIA T4 Tensor Core GPU" datasheet, "NVIDIA Turing GPU
// Architecture" whitepaper, "NVIDIA Tesla V100 GPU Architecture" whitepaper (Table 1),
// "NVIDIA Tesla V100 GPU Accelerator" datasheet.
// ---------------------------------------------------------------------------------------------
GpuSpec t4() {
  GpuSpec s;
  s.key = "t4";
  s.name = "T4";
  s.architecture = "Turing";
  s.cc_major = 7;  // CUDA GPUs compute capability list: 7.5
  s.cc_minor = 5;
  s.sm_count = 40;                // Turing whitepaper: Tesla T4 has 40 SMs (2560 cores)
  s.boost_clock_mhz = 1590;       // Turing whitepaper: 1590 MHz boost
  s.memory_bytes = 16 * kGiB;     // datasheet: 16 GB GDDR6
  s.memory_bus_width_bits = 256;  // Turing whitepaper: 256-bit GDDR6
  s.dram_bandwidth_gb_s = 320;    // datasheet: 320+ GB/s
  s.fp32_tflop_s = 8.1;           // datasheet: single precision 8.1 TFLOPS
  s.tf32_tensor_tflop_s = 0;      // Turing tensor cores have no TF32
  s.fp16_tensor_tflop_s = 65;     // datasheet: mixed precision (FP16/FP32) 65 TFLOPS
  s.bf16_tensor_tflop_s = 0;      // Turing tensor cores have no BF16
  s.l2_bytes = 4 * kMiB;          // Turing whitepaper: TU104 4096 KB L2
  s.host_link_gb_s = 16;          // datasheet: PCIe Gen3 x16 32 GB/s (both directions)
  apply_limits(s, kLimitsCc75);
  s.source =
      "NVIDIA T4 Tensor Core GPU datasheet (memory, bandwidth, FP32, FP16 tensor); NVIDIA Turing "
      "GPU Architecture whitepaper (SMs, clock, bus, L2); " +
      std::string(kLimitsSource);
  return s;
}

GpuSpec v100_sxm2_32gb() {
  GpuSpec s;
  s.key = "v100-sxm2-32gb";
  s.name = "V100 SXM2 32GB";
  s.architecture = "Volta";
  s.cc_major = 7;  // CUDA GPUs compute capability list: 7.0
  s.cc_minor = 0;
  s.sm_count = 80;                 // V100 whitepaper Table 1: 80 SMs
  s.boost_clock_mhz = 1530;        // V100 datasheet peaks: 15.7 = 80 x 64 x 2 x 1530 MHz
  s.memory_bytes = 32 * kGiB;      // V100 datasheet: 32 GB HBM2
  s.memory_bus_width_bits = 4096;  // V100 whitepaper Table 1: 4096-bit HBM2
  s.dram_bandwidth_gb_s = 900;     // V100 datasheet: 900 GB/s
  s.fp32_tflop_s = 15.7;           // V100 datasheet (SXM2): 15.7 TFLOPS
  s.tf32_tensor_tflop_s = 0;       // Volta tensor cores have no TF32
  s.fp16_tensor_tflop_s = 125;     // V100 datasheet (SXM2): tensor 125 TFLOPS
  s.bf16_tensor_tflop_s = 0;       // Volta tensor cores have no BF16
  s.l2_bytes = 6 * kMiB;           // V100 whitepaper Table 1: 6144 KB L2
  s.host_link_gb_s = 16;           // datasheet: PCIe Gen3 32 GB/s (both directions)
  apply_limits(s, kLimitsCc70);
  s.source =
      "NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2 32GB: memory, bandwidth, peaks); "
      "NVIDIA Tesla V100 GPU Architecture whitepaper, Table 1 (SMs, bus, L2); " +
      std::string(kLimitsSource);
  return s;
}

const std::vector<GpuSpec>& database() {
  // Newest architecture first; within one architecture, data center parts before GeForce.
  static const std::vector<GpuSpec> specs = {
      h200_sxm(),      h100_sxm(),       h100_pcie(), l4(), rtx_4090(),       a100_sxm_80gb(),
      a100_sxm_40gb(), a100_pcie_80gb(), rtx_3090(),  t4(), v100_sxm2_32gb(),
  };
  return specs;
}

// ---------------------------------------------------------------------------------------------
// Name matching.
// ---------------------------------------------------------------------------------------------

// Lower case without spaces, '-' and '_', and without the vendor words the driver puts in front
// of product names ("NVIDIA", "Tesla", "GeForce"): "NVIDIA GeForce RTX 4090" -> "rtx4090".
std::string normalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) != 0 || c == '-' || c == '_') {
      continue;
    }
    out.push_back(static_cast<char>(std::tolower(u)));
  }
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const std::string_view prefix : {"nvidia", "tesla", "geforce"}) {
      if (out.size() > prefix.size() && std::string_view(out).substr(0, prefix.size()) == prefix) {
        out.erase(0, prefix.size());
        stripped = true;
      }
    }
  }
  return out;
}

struct Spelling {
  std::string_view text;  // matched after normalize()
  std::string_view key;   // database key it names
};

// Names the CUDA driver reports (cudaDeviceProp::name) for the GPUs in the database. Matching is
// exact after normalize(), so look-alike products stay unmatched and get an estimate instead:
// "NVIDIA H100 NVL", "NVIDIA GH200 480GB", "NVIDIA L40S", "NVIDIA GeForce RTX 4090 D",
// "NVIDIA A100-PCIE-40GB", "Tesla V100-SXM2-16GB". Some entries equal a key or display name
// after normalize() already; they are listed so that this table names every reported name.
constexpr std::array kDriverNames = {
    Spelling{"NVIDIA H200", "h200-sxm"},
    Spelling{"NVIDIA H100 80GB HBM3", "h100-sxm"},
    Spelling{"NVIDIA H100 PCIe", "h100-pcie"},
    Spelling{"NVIDIA L4", "l4"},
    Spelling{"NVIDIA GeForce RTX 4090", "rtx-4090"},
    Spelling{"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
    Spelling{"NVIDIA A100-SXM4-40GB", "a100-sxm-40gb"},
    Spelling{"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
    Spelling{"NVIDIA GeForce RTX 3090", "rtx-3090"},
    Spelling{"Tesla T4", "t4"},
    Spelling{"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
};

// Short names people type (find_spec only; a device is matched by its full driver name). An
// unqualified name means the variant gpulab models by default: the SXM board, and for A100 the
// 80GB part, which replaced the 40GB one.
constexpr std::array kAliases = {
    Spelling{"h200", "h200-sxm"},
    Spelling{"h100", "h100-sxm"},
    Spelling{"h100 sxm5", "h100-sxm"},
    Spelling{"4090", "rtx-4090"},
    Spelling{"a100", "a100-sxm-80gb"},
    Spelling{"a100 sxm", "a100-sxm-80gb"},
    Spelling{"a100 80gb", "a100-sxm-80gb"},
    Spelling{"a100 sxm4", "a100-sxm-80gb"},
    Spelling{"a100 40gb", "a100-sxm-40gb"},
    Spelling{"a100 pcie", "a100-pcie-80gb"},
    Spelling{"3090", "rtx-3090"},
    Spelling{"v100", "v100-sxm2-32gb"},
    Spelling{"v100 sxm2", "v100-sxm2-32gb"},
    Spelling{"v100 32gb", "v100-sxm2-32gb"},
};

const GpuSpec* by_key(std::string_view key) {
  for (const GpuSpec& s : database()) {
    if (s.key == key) {
      return &s;
    }
  }
  return nullptr;
}

// The entry whose key, display name or driver name (and, with aliases, a short name) equals
// `name` after normalize(); nullptr when none does.
const GpuSpec* match(std::string_view name, bool with_aliases) {
  const std::string wanted = normalize(name);
  if (wanted.empty()) {
    return nullptr;
  }
  for (const GpuSpec& s : database()) {
    if (normalize(s.key) == wanted || normalize(s.name) == wanted) {
      return &s;
    }
  }
  for (const Spelling& d : kDriverNames) {
    if (normalize(d.text) == wanted) {
      return by_key(d.key);
    }
  }
  if (with_aliases) {
    for (const Spelling& a : kAliases) {
      if (normalize(a.text) == wanted) {
        return by_key(a.key);
      }
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Estimate for a GPU that is not in the database.
// ---------------------------------------------------------------------------------------------

// Per-SM throughput of one compute capability.
struct PerSmRates {
  const char* architecture;
  int fp32_lanes;          // FP32 FMA results per clock per SM
  int tf32_flop_per_clk;   // dense TF32 tensor FLOP per clock per SM
  int fp16_flop_per_clk;   // dense FP16 tensor FLOP (FP32 accumulate) per clock per SM
  int bf16_flop_per_clk;   // dense BF16 tensor FLOP (FP32 accumulate) per clock per SM
  bool geforce_half_rate;  // GeForce boards of this CC halve TF32 and FP32-accumulate rates
  bool assumed;            // CC beyond the table: rates of the newest known architecture
};

// FP32 lanes: CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table (32-bit
// floating-point add, multiply, multiply-add). Tensor FLOP/clock/SM: dense datasheet peaks of
// the database GPUs divided by SMs x boost clock, e.g. V100 125 TFLOPS / (80 x 1530 MHz) = 1024,
// A100 312 / (108 x 1410 MHz) = 2048, H100 989.4 / (132 x 1830 MHz) = 4096, L4 121 / (58 x
// 2040 MHz) = 1024, RTX 4090 165.2 / (128 x 2520 MHz) = 512 (GeForce half rate).
PerSmRates rates_for(int major, int minor) {
  if (major >= 13) {
    return {"unknown", 128, 2048, 4096, 4096, false, true};
  }
  if (major == 12) {  // consumer Blackwell: Ada-class tensor rates assumed
    return {"Blackwell", 128, 512, 1024, 1024, true, true};
  }
  if (major >= 10) {  // data center Blackwell: at least Hopper's rates assumed
    return {"Blackwell", 128, 2048, 4096, 4096, false, true};
  }
  if (major == 9) {
    return {"Hopper", 128, 2048, 4096, 4096, false, false};
  }
  if (major == 8 && minor == 0) {
    return {"Ampere", 64, 1024, 2048, 2048, false, false};
  }
  if (major == 8 && minor == 9) {
    return {"Ada Lovelace", 128, 512, 1024, 1024, true, false};
  }
  if (major == 8) {
    return {"Ampere", 128, 512, 1024, 1024, true, false};
  }
  if (major == 7 && minor >= 5) {
    return {"Turing", 64, 0, 1024, 0, true, false};
  }
  if (major == 7) {
    return {"Volta", 64, 0, 1024, 0, false, false};
  }
  if (major == 6) {
    return {"Pascal", minor == 0 ? 64 : 128, 0, 0, 0, false, false};
  }
  if (major == 5) {
    return {"Maxwell", 128, 0, 0, 0, false, false};
  }
  return {"unknown", 128, 0, 0, 0, false, true};
}

bool is_geforce(std::string_view name) {
  std::string lower;
  for (const char c : name) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return lower.find("geforce") != std::string::npos;
}

std::string format_number(double value) {
  std::string text = std::to_string(value);  // fixed, 6 decimals
  while (!text.empty() && text.back() == '0') {
    text.pop_back();
  }
  if (!text.empty() && text.back() == '.') {
    text.pop_back();
  }
  return text;
}

GpuSpec estimate(const DeviceInfo& device) {
  PerSmRates rates = rates_for(device.cc_major, device.cc_minor);
  const bool geforce = rates.geforce_half_rate && is_geforce(device.name);
  if (geforce) {
    rates.tf32_flop_per_clk /= 2;
    rates.fp16_flop_per_clk /= 2;
    rates.bf16_flop_per_clk /= 2;
  }

  GpuSpec s;
  s.key = "estimated";
  s.name =
      device.name.empty() ? "unknown GPU (CC " + device.compute_capability() + ")" : device.name;
  s.architecture = rates.architecture;
  s.cc_major = device.cc_major;
  s.cc_minor = device.cc_minor;
  s.sm_count = device.sm_count;
  s.boost_clock_mhz = device.sm_clock_khz / 1000.0;
  s.memory_bytes = device.global_memory_bytes;
  s.memory_bus_width_bits = device.memory_bus_width_bits;
  s.dram_bandwidth_gb_s = device.theoretical_bandwidth_gb_s();

  // Peak = SMs x (FLOP per clock per SM) x clock. An FMA is 2 FLOP.
  const double sm_tera_clocks = device.sm_count * s.boost_clock_mhz * 1e6 / 1e12;
  s.fp32_tflop_s = sm_tera_clocks * rates.fp32_lanes * 2;
  s.tf32_tensor_tflop_s = sm_tera_clocks * rates.tf32_flop_per_clk;
  s.fp16_tensor_tflop_s = sm_tera_clocks * rates.fp16_flop_per_clk;
  s.bf16_tensor_tflop_s = sm_tera_clocks * rates.bf16_flop_per_clk;
  s.l2_bytes = device.l2_bytes;

  s.warp_size = device.warp_size > 0 ? device.warp_size : 32;
  s.max_threads_per_sm = device.max_threads_per_sm;
  s.max_warps_per_sm = device.max_threads_per_sm / s.warp_size;
  s.max_blocks_per_sm = device.max_blocks_per_sm;
  s.max_threads_per_block = device.max_threads_per_block;
  s.registers_per_sm = device.registers_per_sm;
  s.shared_memory_per_sm_bytes = device.shared_memory_per_sm_bytes;
  s.shared_memory_per_block_optin_bytes = device.shared_memory_per_block_optin_bytes;
  s.reserved_shared_memory_per_block_bytes = device.reserved_shared_memory_per_block_bytes;
  s.origin = SpecOrigin::estimated;
  apply_memory_model(s);
  apply_instruction_model(s);

  const std::string clock = format_number(s.boost_clock_mhz) + " MHz";
  s.source =
      "estimated from the device's properties (not in gpulab's spec database): DRAM "
      "bandwidth = 2 x memory clock x bus width; FP32 = " +
      std::to_string(device.sm_count) + " SMs x " + std::to_string(rates.fp32_lanes) +
      " lanes x 2 x " + clock + "; dense tensor peaks = SMs x FLOP/clock/SM of CC " +
      device.compute_capability() + " (TF32 " + std::to_string(rates.tf32_flop_per_clk) +
      ", FP16 " + std::to_string(rates.fp16_flop_per_clk) + ", BF16 " +
      std::to_string(rates.bf16_flop_per_clk) + ") x " + clock;
  if (geforce) {
    s.source += ", halved for GeForce (FP32 accumulate)";
  }
  if (rates.assumed) {
    s.source += "; CC not in gpulab's rate table, rates assumed from the nearest architecture";
  }
  s.source += "; upper bounds: sustained clocks under load are often lower";
  return s;
}

}  // namespace

std::string GpuSpec::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::span<const GpuSpec> all_specs() {
  return database();
}

std::optional<GpuSpec> find_spec(std::string_view name) {
  if (const GpuSpec* s = match(name, /*with_aliases=*/true)) {
    return *s;
  }
  return std::nullopt;
}

GpuSpec spec_for_device(const DeviceInfo& device) {
  if (const GpuSpec* s = match(device.name, /*with_aliases=*/false)) {
    return *s;
  }
  // The sim backend names its device after the spec it simulates: "gpulab sim (H100 SXM)".
  constexpr std::string_view kSimPrefix = "gpulab sim (";
  const std::string_view name = device.name;
  if (name.starts_with(kSimPrefix) && name.ends_with(')')) {
    const std::string_view simulated =
        name.substr(kSimPrefix.size(), name.size() - kSimPrefix.size() - 1);
    if (const GpuSpec* s = match(simulated, /*with_aliases=*/false)) {
      return *s;
    }
  }
  return estimate(device);
}

const GpuSpec& default_spec() {
  static const GpuSpec& spec = []() -> const GpuSpec& {
    const GpuSpec* h100 = by_key("h100-sxm");
    return h100 != nullptr ? *h100 : database().front();
  }();
  return spec;
}

SimSpecChoice choose_sim_spec(std::string_view requested) {
  if (requested.empty()) {
    return {default_spec(), ""};
  }
  if (auto spec = find_spec(requested)) {
    return {std::move(spec), ""};
  }
  return {std::nullopt, "GPULAB_SIM_SPEC names an unknown GPU '" + std::string(requested) +
                            "' (see `gpulab specs`)"};
}

std::string sim_spec_request() {
  const char* value = std::getenv("GPULAB_SIM_SPEC");
  return value != nullptr ? value : "";
}

}  // namespace gpulab
