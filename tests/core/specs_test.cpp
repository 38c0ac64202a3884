// Unit tests of the GPU spec database (specs.hpp) and the backend-neutral DeviceInfo members
// (device.hpp).
#include "gpulab/core/specs.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "gpulab/core/device_info.hpp"

namespace gpulab {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// Relative comparison for computed peaks: the arithmetic is exact up to rounding.
void expect_close(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * 1e-12 + 1e-12) << what;
}

// FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, "Arithmetic
// Instructions" throughput table), written out here independently of specs.cpp.
int fp32_lanes(int major, int minor) {
  if (major == 7 || (major == 8 && minor == 0)) {
    return 64;
  }
  return 128;
}

const std::vector<std::string> kRequiredKeys = {
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "a100-pcie-80gb",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "l4",
    "t4",
    "rtx-4090",
    "rtx-3090",
    "v100-sxm2-32gb",
};

// A device the database does not know: compute capability 9.0, made-up size and clocks.
DeviceInfo made_up_hopper_class_device() {
  DeviceInfo d;
  d.name = "Imaginary Accelerator X1";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 100;
  d.sm_clock_khz = 1500000;      // 1500 MHz
  d.memory_clock_khz = 2000000;  // 2000 MHz
  d.memory_bus_width_bits = 4096;
  d.global_memory_bytes = 64 * kGiB;
  d.l2_bytes = 40 * kMiB;
  d.shared_memory_per_sm_bytes = 200 * kKiB;
  d.shared_memory_per_block_bytes = 48 * kKiB;
  d.shared_memory_per_block_optin_bytes = 199 * kKiB;
  d.reserved_shared_memory_per_block_bytes = 1 * kKiB;
  d.registers_per_sm = 65536;
  d.registers_per_block = 65536;
  d.max_threads_per_sm = 1536;
  d.max_threads_per_block = 1024;
  d.max_blocks_per_sm = 24;
  d.warp_size = 32;
  return d;
}

// A device with the properties of a database GPU but a name the database does not know.
DeviceInfo unlisted_device_like(const GpuSpec& spec) {
  DeviceInfo d;
  const bool geforce = spec.key.rfind("rtx-", 0) == 0;
  d.name = geforce ? "NVIDIA GeForce Unlisted" : "NVIDIA Unlisted";
  d.cc_major = spec.cc_major;
  d.cc_minor = spec.cc_minor;
  d.sm_count = spec.sm_count;
  d.sm_clock_khz = static_cast<int>(spec.boost_clock_mhz * 1000);
  d.memory_clock_khz = 1000000;
  d.memory_bus_width_bits = spec.memory_bus_width_bits;
  d.max_threads_per_sm = spec.max_threads_per_sm;
  d.warp_size = 32;
  return d;
}

// ---------------------------------------------------------------------------------------------
// The database's contents.
// ---------------------------------------------------------------------------------------------

TEST(SpecDatabase, ContainsEveryRequiredGpu) {
  std::set<std::string> keys;
  for (const GpuSpec& s : all_specs()) {
    keys.insert(s.key);
  }
  for (const std::string& key : kRequiredKeys) {
    EXPECT_TRUE(keys.count(key) == 1) << key << " is missing";
  }
  EXPECT_GE(all_specs().size(), kRequiredKeys.size());
}

TEST(SpecDatabase, KeysAndNamesAreUnique) {
  std::set<std::string> keys;
  std::set<std::string> names;
  for (const GpuSpec& s : all_specs()) {
    EXPECT_TRUE(keys.insert(s.key).second) << "duplicate key " << s.key;
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate name " << s.name;
  }
}

TEST(SpecDatabase, H100SxmHasTheDatasheetValues) {
  const std::optional<GpuSpec> h100 = find_spec("h100-sxm");
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->name, "H100 SXM");
  EXPECT_EQ(h100->architecture, "Hopper");
  EXPECT_EQ(h100->compute_capability(), "9.0");
  EXPECT_EQ(h100->sm_count, 132);
  EXPECT_EQ(h100->boost_clock_mhz, 1980.0);
  EXPECT_EQ(h100->memory_bytes, 80 * kGiB);
  EXPECT_EQ(h100->memory_bus_width_bits, 5120);
  EXPECT_EQ(std::lround(h100->dram_bandwidth_gb_s), 3350);
  EXPECT_EQ(std::lround(h100->fp16_tensor_tflop_s), 989);
  EXPECT_EQ(std::lround(h100->bf16_tensor_tflop_s), 989);
  EXPECT_NEAR(h100->tf32_tensor_tflop_s, 494.7, 0.05);
  EXPECT_NEAR(h100->fp32_tflop_s, 66.9, 0.05);
  EXPECT_EQ(h100->l2_bytes, 50 * kMiB);
  EXPECT_EQ(h100->max_threads_per_sm, 2048);
  EXPECT_EQ(h100->max_warps_per_sm, 64);
  EXPECT_EQ(h100->max_blocks_per_sm, 32);
  EXPECT_EQ(h100->registers_per_sm, 65536);
  EXPECT_EQ(h100->max_registers_per_thread, 255);
  EXPECT_EQ(h100->shared_memory_per_sm_bytes, 228 * kKiB);
  EXPECT_EQ(h100->shared_memory_per_block_optin_bytes, 227 * kKiB);
  EXPECT_EQ(h100->reserved_shared_memory_per_block_bytes, 1 * kKiB);
  EXPECT_EQ(h100->origin, SpecOrigin::datasheet);
  EXPECT_NE(h100->source.find("H100"), std::string::npos) << h100->source;
}

TEST(SpecDatabase, DefaultSpecIsH100Sxm) {
  EXPECT_EQ(default_spec().key, "h100-sxm");
  EXPECT_EQ(&default_spec(), &default_spec());
}

TEST(SpecDatabase, VoltaAndTuringHaveNoTf32OrBf16) {
  for (const char* key : {"t4", "v100-sxm2-32gb"}) {
    const std::optional<GpuSpec> s = find_spec(key);
    ASSERT_TRUE(s.has_value()) << key;
    EXPECT_EQ(s->tf32_tensor_tflop_s, 0) << key;
    EXPECT_EQ(s->bf16_tensor_tflop_s, 0) << key;
    EXPECT_GT(s->fp16_tensor_tflop_s, 0) << key;
  }
}

// ---------------------------------------------------------------------------------------------
// Internal consistency over the whole database.
// ---------------------------------------------------------------------------------------------

TEST(SpecDatabaseConsistency, WarpsPerSmAreThreadsPerSmOverWarpSize) {
  for (const GpuSpec& s : all_specs()) {
    EXPECT_EQ(s.warp_size, 32) << s.name;
    EXPECT_EQ(s.max_warps_per_sm, s.max_threads_per_sm / 32) << s.name;
    EXPECT_EQ(s.max_threads_per_sm % 32, 0) << s.name;
  }
}

TEST(SpecDatabaseConsistency, EveryCountSizeAndPeakIsPositive) {
  for (const GpuSpec& s : all_specs()) {
    EXPECT_GT(s.sm_count, 0) << s.name;
    EXPECT_GT(s.boost_clock_mhz, 0) << s.name;
    EXPECT_GT(s.memory_bytes, 0U) << s.name;
    EXPECT_GT(s.memory_bus_width_bits, 0) << s.name;
    EXPECT_GT(s.dram_bandwidth_gb_s, 0) << s.name;
    EXPECT_GT(s.fp32_tflop_s, 0) << s.name;
    EXPECT_GT(s.fp16_tensor_tflop_s, 0) << s.name;
    EXPECT_GT(s.l2_bytes, 0U) << s.name;
    EXPECT_GT(s.max_blocks_per_sm, 0) << s.name;
    EXPECT_EQ(s.registers_per_sm, 65536) << s.name;
    EXPECT_EQ(s.max_registers_per_thread, 255) << s.name;
    EXPECT_EQ(s.max_threads_per_block, 1024) << s.name;
    EXPECT_LE(s.max_threads_per_block, s.max_threads_per_sm) << s.name;
  }
}

TEST(SpecDatabaseConsistency, TensorPeaksAreAtLeastFp32WhereSupported) {
  for (const GpuSpec& s : all_specs()) {
    for (const double tensor :
         {s.tf32_tensor_tflop_s, s.fp16_tensor_tflop_s, s.bf16_tensor_tflop_s}) {
      if (tensor != 0) {
        EXPECT_GE(tensor, s.fp32_tflop_s) << s.name;
      }
    }
    // Each precision halves the operand width: TF32 is never faster than FP16.
    EXPECT_LE(s.tf32_tensor_tflop_s, s.fp16_tensor_tflop_s) << s.name;
  }
}

TEST(SpecDatabaseConsistency, Tf32AndBf16ExistExactlyFromComputeCapability80) {
  for (const GpuSpec& s : all_specs()) {
    const bool ampere_or_newer = s.cc_major >= 8;
    EXPECT_EQ(s.bf16_tensor_tflop_s != 0, ampere_or_newer) << s.name;
    EXPECT_EQ(s.tf32_tensor_tflop_s != 0, ampere_or_newer) << s.name;
    if (ampere_or_newer) {
      EXPECT_EQ(s.bf16_tensor_tflop_s, s.fp16_tensor_tflop_s) << s.name;
    }
  }
}

TEST(SpecDatabaseConsistency, ReservedSharedMemoryFollowsComputeCapability) {
  for (const GpuSpec& s : all_specs()) {
    const std::uint64_t expected = s.cc_major >= 8 ? 1 * kKiB : 0;
    EXPECT_EQ(s.reserved_shared_memory_per_block_bytes, expected) << s.name;
  }
}

TEST(SpecDatabaseConsistency, OptInSharedMemoryFitsInTheSm) {
  for (const GpuSpec& s : all_specs()) {
    EXPECT_GT(s.shared_memory_per_block_optin_bytes, 48 * kKiB - 1) << s.name;
    EXPECT_LE(s.shared_memory_per_block_optin_bytes, s.shared_memory_per_sm_bytes) << s.name;
    // A block with the most opt-in shared memory plus the reserved part must fit one SM.
    EXPECT_LE(s.shared_memory_per_block_optin_bytes + s.reserved_shared_memory_per_block_bytes,
              s.shared_memory_per_sm_bytes)
        << s.name;
  }
}

TEST(SpecDatabaseConsistency, Fp32PeakIsSmsTimesLanesTimesTwoTimesClock) {
  for (const GpuSpec& s : all_specs()) {
    const double computed =
        s.sm_count * fp32_lanes(s.cc_major, s.cc_minor) * 2.0 * s.boost_clock_mhz / 1e6;
    EXPECT_NEAR(s.fp32_tflop_s, computed, computed * 0.01) << s.name;
  }
}

TEST(SpecDatabaseConsistency, BandwidthNeedsAPlausiblePerPinRate) {
  for (const GpuSpec& s : all_specs()) {
    // GB/s over bytes per transfer = giga-transfers per second per pin: HBM2 ~1.8, GDDR6X 21.
    const double gbit_per_pin = s.dram_bandwidth_gb_s / (s.memory_bus_width_bits / 8.0);
    EXPECT_GT(gbit_per_pin, 1.5) << s.name;
    EXPECT_LT(gbit_per_pin, 24.0) << s.name;
  }
}

TEST(SpecDatabaseConsistency, EveryEntryNamesItsSourceAndOrigin) {
  for (const GpuSpec& s : all_specs()) {
    EXPECT_EQ(s.origin, SpecOrigin::datasheet) << s.name;
    EXPECT_NE(s.source.find("NVIDIA"), std::string::npos) << s.name << ": " << s.source;
    EXPECT_NE(s.source.find("CUDA C++ Programming Guide"), std::string::npos) << s.name;
    EXPECT_FALSE(s.architecture.empty()) << s.name;
  }
}

// ---------------------------------------------------------------------------------------------
// find_spec.
// ---------------------------------------------------------------------------------------------

TEST(FindSpec, IgnoresCaseSpacesDashesAndUnderscores) {
  for (const char* spelling :
       {"H100 SXM", "h100-sxm", "h100sxm", "H100_SXM", "  h100 - sxm ", "H100-SXM"}) {
    const std::optional<GpuSpec> s = find_spec(spelling);
    ASSERT_TRUE(s.has_value()) << spelling;
    EXPECT_EQ(s->key, "h100-sxm") << spelling;
  }
}

TEST(FindSpec, FindsEveryEntryByKeyAndByName) {
  for (const GpuSpec& s : all_specs()) {
    const std::optional<GpuSpec> by_key = find_spec(s.key);
    ASSERT_TRUE(by_key.has_value()) << s.key;
    EXPECT_EQ(by_key->key, s.key);
    const std::optional<GpuSpec> by_name = find_spec(s.name);
    ASSERT_TRUE(by_name.has_value()) << s.name;
    EXPECT_EQ(by_name->key, s.key);
  }
}

TEST(FindSpec, ShortNamesPickTheDocumentedVariant) {
  const std::vector<std::pair<std::string, std::string>> aliases = {
      {"h100", "h100-sxm"},
      {"H200", "h200-sxm"},
      {"a100", "a100-sxm-80gb"},
      {"A100 40GB", "a100-sxm-40gb"},
      {"a100-pcie", "a100-pcie-80gb"},
      {"v100", "v100-sxm2-32gb"},
      {"4090", "rtx-4090"},
      {"RTX3090", "rtx-3090"},
      {"t4", "t4"},
      {"L4", "l4"},
  };
  for (const auto& [alias, key] : aliases) {
    const std::optional<GpuSpec> s = find_spec(alias);
    ASSERT_TRUE(s.has_value()) << alias;
    EXPECT_EQ(s->key, key) << alias;
  }
}

TEST(FindSpec, AcceptsDriverReportedNames) {
  const std::optional<GpuSpec> s = find_spec("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->key, "h100-sxm");
}

TEST(FindSpec, UnknownNamesGiveNullopt) {
  for (const char* name : {"", "   ", "-_-", "h100x", "b200", "L40S", "rtx 4080", "nvidia",
                           "H100 NVL", "a100 pcie 40gb", "not a gpu"}) {
    EXPECT_FALSE(find_spec(name).has_value()) << "'" << name << "'";
  }
}

// ---------------------------------------------------------------------------------------------
// spec_for_device.
// ---------------------------------------------------------------------------------------------

TEST(SpecForDevice, MatchesEveryDriverReportedName) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H200", "h200-sxm"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"NVIDIA L4", "l4"},
      {"Tesla T4", "t4"},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"NVIDIA GeForce RTX 3090", "rtx-3090"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
  };
  for (const auto& [driver_name, key] : names) {
    DeviceInfo device;
    device.name = driver_name;
    const GpuSpec s = spec_for_device(device);
    EXPECT_EQ(s.key, key) << driver_name;
    EXPECT_EQ(s.origin, SpecOrigin::datasheet) << driver_name;
  }
}

TEST(SpecForDevice, LookAlikeProductsAreEstimatedNotMatched) {
  for (const char* driver_name :
       {"NVIDIA H100 NVL", "NVIDIA GH200 480GB", "NVIDIA H200 NVL", "NVIDIA L40S", "NVIDIA L40",
        "NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 3090 Ti", "NVIDIA A100-PCIE-40GB",
        "Tesla V100-SXM2-16GB", "NVIDIA H100"}) {
    DeviceInfo device = made_up_hopper_class_device();
    device.name = driver_name;
    EXPECT_EQ(spec_for_device(device).origin, SpecOrigin::estimated) << driver_name;
  }
}

TEST(SpecForDevice, UnknownDeviceGetsAnExactlyComputedEstimate) {
  const DeviceInfo device = made_up_hopper_class_device();
  const GpuSpec s = spec_for_device(device);

  EXPECT_EQ(s.origin, SpecOrigin::estimated);
  EXPECT_EQ(s.name, "Imaginary Accelerator X1");
  EXPECT_EQ(s.architecture, "Hopper");
  EXPECT_EQ(s.compute_capability(), "9.0");
  EXPECT_EQ(s.sm_count, 100);
  expect_close(s.boost_clock_mhz, 1500, "clock");
  // 2 x 2000 MHz x 4096 bits / 8 = 2048 GB/s.
  expect_close(s.dram_bandwidth_gb_s, 2048, "bandwidth");
  // 100 SMs x 128 lanes x 2 FLOP x 1.5 GHz = 38.4 TFLOP/s.
  expect_close(s.fp32_tflop_s, 38.4, "fp32");
  // Hopper dense tensor FLOP/clock/SM: TF32 2048, FP16 and BF16 4096.
  expect_close(s.tf32_tensor_tflop_s, 100 * 2048 * 1.5e9 / 1e12, "tf32");
  expect_close(s.fp16_tensor_tflop_s, 100 * 4096 * 1.5e9 / 1e12, "fp16");
  expect_close(s.bf16_tensor_tflop_s, 100 * 4096 * 1.5e9 / 1e12, "bf16");
  EXPECT_NE(s.source.find("estimated"), std::string::npos) << s.source;
}

TEST(SpecForDevice, EstimateTakesMemoryAndPerSmLimitsFromTheDevice) {
  const DeviceInfo device = made_up_hopper_class_device();
  const GpuSpec s = spec_for_device(device);
  EXPECT_EQ(s.memory_bytes, 64 * kGiB);
  EXPECT_EQ(s.memory_bus_width_bits, 4096);
  EXPECT_EQ(s.l2_bytes, 40 * kMiB);
  EXPECT_EQ(s.max_threads_per_sm, 1536);
  EXPECT_EQ(s.max_warps_per_sm, 48);
  EXPECT_EQ(s.max_blocks_per_sm, 24);
  EXPECT_EQ(s.max_threads_per_block, 1024);
  EXPECT_EQ(s.registers_per_sm, 65536);
  EXPECT_EQ(s.shared_memory_per_sm_bytes, 200 * kKiB);
  EXPECT_EQ(s.shared_memory_per_block_optin_bytes, 199 * kKiB);
  EXPECT_EQ(s.reserved_shared_memory_per_block_bytes, 1 * kKiB);
  EXPECT_EQ(s.warp_size, 32);
}

TEST(SpecForDevice, GeForceEstimateHalvesTheFp32AccumulateTensorRate) {
  DeviceInfo device = made_up_hopper_class_device();
  device.cc_major = 8;
  device.cc_minor = 9;
  device.sm_count = 76;
  device.sm_clock_khz = 2505000;
  device.name = "NVIDIA GeForce Imaginary 9999";
  const GpuSpec geforce = spec_for_device(device);
  // Ada: 128 FP32 lanes; GeForce tensor rates TF32 256, FP16/BF16 (FP32 acc) 512 FLOP/clk/SM.
  expect_close(geforce.fp32_tflop_s, 76 * 128 * 2 * 2.505e9 / 1e12, "fp32");
  expect_close(geforce.tf32_tensor_tflop_s, 76 * 256 * 2.505e9 / 1e12, "tf32");
  expect_close(geforce.fp16_tensor_tflop_s, 76 * 512 * 2.505e9 / 1e12, "fp16");
  expect_close(geforce.bf16_tensor_tflop_s, 76 * 512 * 2.505e9 / 1e12, "bf16");

  device.name = "NVIDIA Imaginary Pro 9999";
  const GpuSpec pro = spec_for_device(device);
  expect_close(pro.fp16_tensor_tflop_s, 2 * geforce.fp16_tensor_tflop_s, "pro fp16");
  expect_close(pro.tf32_tensor_tflop_s, 2 * geforce.tf32_tensor_tflop_s, "pro tf32");
}

TEST(SpecForDevice, PreVoltaEstimateHasNoTensorPeaks) {
  DeviceInfo device = made_up_hopper_class_device();
  device.cc_major = 6;
  device.cc_minor = 1;
  const GpuSpec s = spec_for_device(device);
  EXPECT_EQ(s.architecture, "Pascal");
  expect_close(s.fp32_tflop_s, 100 * 128 * 2 * 1.5e9 / 1e12, "fp32");
  EXPECT_EQ(s.tf32_tensor_tflop_s, 0);
  EXPECT_EQ(s.fp16_tensor_tflop_s, 0);
  EXPECT_EQ(s.bf16_tensor_tflop_s, 0);
}

TEST(SpecForDevice, EstimateOfAnUnlistedTwinBracketsTheDatasheet) {
  // The estimator's per-SM rates must reproduce the database: FP32 within 1 %, tensor peaks
  // from the datasheet value up to 10 % above it (Hopper's datasheet tensor peaks assume a
  // lower clock than the FP32 peak, so an estimate at the boost clock is about 8 % higher).
  for (const GpuSpec& listed : all_specs()) {
    const GpuSpec estimated = spec_for_device(unlisted_device_like(listed));
    ASSERT_EQ(estimated.origin, SpecOrigin::estimated) << listed.name;
    EXPECT_NEAR(estimated.fp32_tflop_s, listed.fp32_tflop_s, listed.fp32_tflop_s * 0.01)
        << listed.name;
    const std::vector<std::pair<double, double>> tensor = {
        {estimated.tf32_tensor_tflop_s, listed.tf32_tensor_tflop_s},
        {estimated.fp16_tensor_tflop_s, listed.fp16_tensor_tflop_s},
        {estimated.bf16_tensor_tflop_s, listed.bf16_tensor_tflop_s},
    };
    for (const auto& [computed, datasheet] : tensor) {
      EXPECT_GE(computed, datasheet * 0.99) << listed.name;
      EXPECT_LE(computed, datasheet * 1.10) << listed.name;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// DeviceInfo and explain_device_error.
// ---------------------------------------------------------------------------------------------

TEST(DeviceInfo, ComputeCapabilityIsMajorDotMinor) {
  DeviceInfo d;
  d.cc_major = 9;
  d.cc_minor = 0;
  EXPECT_EQ(d.compute_capability(), "9.0");
  d.cc_major = 12;
  d.cc_minor = 1;
  EXPECT_EQ(d.compute_capability(), "12.1");
}

TEST(DeviceInfo, TheoreticalBandwidthIsDoubleDataRateTimesBusBytes) {
  DeviceInfo a100;
  a100.memory_clock_khz = 1215000;  // what an A100 40GB reports
  a100.memory_bus_width_bits = 5120;
  // 2 x 1215 MHz x 640 bytes = 1555.2 GB/s, the A100 40GB datasheet bandwidth.
  EXPECT_NEAR(a100.theoretical_bandwidth_gb_s(), 1555.2, 1e-9);

  DeviceInfo h100;
  h100.memory_clock_khz = 2619000;  // what an H100 SXM reports
  h100.memory_bus_width_bits = 5120;
  EXPECT_EQ(std::lround(h100.theoretical_bandwidth_gb_s()), 3352);
}

TEST(DeviceInfo, TheoreticalBandwidthIsZeroWhenUnknown) {
  EXPECT_EQ(DeviceInfo{}.theoretical_bandwidth_gb_s(), 0.0);
}

TEST(ExplainDeviceError, DriverAndNoDeviceHaveTheDocumentedText) {
  EXPECT_EQ(explain_device_error(35),
            "no NVIDIA driver is loaded, or the driver is older than the CUDA runtime gpulab was "
            "built with");
  EXPECT_EQ(explain_device_error(100), "the NVIDIA driver found no CUDA-capable device");
}

TEST(ExplainDeviceError, KnownCodesSayWhatHappened) {
  EXPECT_NE(explain_device_error(34).find("stub"), std::string::npos);
  EXPECT_NE(explain_device_error(46).find("exclusive-process"), std::string::npos);
  EXPECT_NE(explain_device_error(46).find("busy"), std::string::npos);
  EXPECT_NE(explain_device_error(3).find("initialized"), std::string::npos);
  EXPECT_NE(explain_device_error(803).find("versions"), std::string::npos);
  EXPECT_NE(explain_device_error(804).find("compatibility"), std::string::npos);
  EXPECT_NE(explain_device_error(999).find("unknown"), std::string::npos);
}

TEST(ExplainDeviceError, EveryExplanationIsOneLine) {
  for (const int code : {0, 2, 3, 34, 35, 46, 100, 101, 802, 803, 804, 999, 12345}) {
    const std::string text = explain_device_error(code);
    EXPECT_FALSE(text.empty()) << code;
    EXPECT_EQ(text.find('\n'), std::string::npos) << code;
  }
}

TEST(ExplainDeviceError, UnknownCodeNamesTheNumber) {
  EXPECT_EQ(explain_device_error(12345), "CUDA error 12345");
  EXPECT_EQ(explain_device_error(-1), "CUDA error -1");
}

}  // namespace
}  // namespace gpulab

namespace {

TEST(SpecForDevice, SimDeviceMapsToTheSpecItSimulates) {
  gpulab::DeviceInfo device;
  device.name = "gpulab sim (L4)";
  const gpulab::GpuSpec spec = gpulab::spec_for_device(device);
  EXPECT_EQ(spec.key, "l4");
  EXPECT_EQ(spec.origin, gpulab::SpecOrigin::datasheet);
}

}  // namespace

namespace {

TEST(DeviceInfo, PropertiesResultIsAValidResultsEntry) {
  gpulab::DeviceInfo device;
  device.index = 1;
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.sm_count = 132;
  device.sm_clock_khz = 1'980'000;
  device.memory_clock_khz = 2'619'000;
  device.memory_bus_width_bits = 5120;
  device.global_memory_bytes = 85'000'000'000;
  device.registers_per_sm = 65536;
  const gpulab::Result result = gpulab::device_properties_result(device);
  EXPECT_EQ(result.name, "device");
  EXPECT_EQ(result.params.at("index"), "1");
  EXPECT_EQ(result.params.at("compute_capability"), "9.0");
  // Every metric passes the results validation (units in names, finite, measured) and survives
  // a JSON round trip.
  const gpulab::ResultsFile file{gpulab::make_context("cuda", device.name, "H100 SXM"), {result}};
  const gpulab::ResultsFile back = gpulab::results_from_json(gpulab::to_json(file), "device");
  ASSERT_EQ(back.results.size(), 1u);
  EXPECT_EQ(back.results[0], result);
  bool found_bus = false;
  for (const gpulab::Metric& metric : result.metrics) {
    EXPECT_EQ(metric.provenance, gpulab::Provenance::measured) << metric.name;
    if (metric.name == "memory_bus_width_bits") {
      found_bus = true;
      EXPECT_EQ(metric.value, 5120.0);
    }
  }
  EXPECT_TRUE(found_bus);
}

}  // namespace

namespace {

TEST(SimSpecChoice, EmptyRequestIsTheDefaultSpec) {
  const gpulab::SimSpecChoice choice = gpulab::choose_sim_spec("");
  ASSERT_TRUE(choice.spec.has_value());
  EXPECT_EQ(choice.spec->key, gpulab::default_spec().key);
  EXPECT_TRUE(choice.error.empty());
}

TEST(SimSpecChoice, NamedSpecIsLookedUpLikeFindSpec) {
  const gpulab::SimSpecChoice choice = gpulab::choose_sim_spec("A100 40GB SXM");
  ASSERT_TRUE(choice.spec.has_value());
  EXPECT_EQ(choice.spec->key, "a100-sxm-40gb");
}

TEST(SimSpecChoice, UnknownNameGivesNoSpecAndTheReason) {
  const gpulab::SimSpecChoice choice = gpulab::choose_sim_spec("no-such-gpu");
  EXPECT_FALSE(choice.spec.has_value());
  EXPECT_EQ(choice.error,
            "GPULAB_SIM_SPEC names an unknown GPU 'no-such-gpu' (see `gpulab specs`)");
}

}  // namespace
