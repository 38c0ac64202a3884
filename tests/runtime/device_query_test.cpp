// query_devices(): the real devices on the cuda backend (or the CUDA error that explains why there
// are none), the simulated device on the sim backend. It never throws.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "test_device.hpp"

#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif

namespace {

TEST(DeviceQuery, ReportsItsBackend) {
  const gpulab::DeviceQuery query = gpulab::query_devices();
#if GPULAB_BACKEND_CUDA
  EXPECT_EQ(query.backend, "cuda");
  EXPECT_STREQ(gpulab::backend_name(), "cuda");
  EXPECT_EQ(gpulab::event_clock(), gpulab::TimingClock::gpu);
#else
  EXPECT_EQ(query.backend, "sim");
  EXPECT_STREQ(gpulab::backend_name(), "sim");
#endif
}

TEST(DeviceQuery, EitherDevicesOrAnExplainedCudaError) {
  const gpulab::DeviceQuery query = gpulab::query_devices();
  if (query.usable()) {
    EXPECT_FALSE(query.unavailable.has_value());
  } else {
    ASSERT_TRUE(query.unavailable.has_value());
    EXPECT_TRUE(query.devices.empty());
    EXPECT_NE(query.unavailable->error_code, 0);
    EXPECT_EQ(query.unavailable->error_name.rfind("cudaError", 0), 0u)
        << query.unavailable->error_name;
    EXPECT_FALSE(query.unavailable->reason.empty());
    EXPECT_EQ(query.unavailable->reason.find('\n'), std::string::npos);
  }
}

#if GPULAB_BACKEND_CUDA
TEST(DeviceQuery, WithoutADriverTheErrorIs35AndSaysSo) {
  const gpulab::DeviceQuery query = gpulab::query_devices();
  if (query.usable() || query.unavailable->error_code != 35) {
    GTEST_SKIP() << "this machine's CUDA driver state is not 'no driver / old driver'";
  }
  EXPECT_EQ(query.unavailable->error_name, "cudaErrorInsufficientDriver");
  EXPECT_NE(query.unavailable->reason.find("driver"), std::string::npos);
}
#endif

TEST(DeviceQuery, DevicePropertiesAreConsistent) {
  GPULAB_REQUIRE_DEVICE();
  const gpulab::DeviceQuery query = gpulab::query_devices();
  for (const gpulab::DeviceInfo& d : query.devices) {
    SCOPED_TRACE(d.name);
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.cc_major, 7);
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.sm_clock_khz, 100'000);
    EXPECT_GT(d.memory_clock_khz, 100'000);
    EXPECT_GE(d.memory_bus_width_bits, 64);
    EXPECT_GT(d.global_memory_bytes, 1ull << 30);
    EXPECT_GT(d.l2_bytes, 1ull << 20);
    EXPECT_EQ(d.shared_memory_per_block_bytes, 48u * 1024);
    EXPECT_GE(d.shared_memory_per_block_optin_bytes, d.shared_memory_per_block_bytes);
    EXPECT_LE(d.shared_memory_per_block_optin_bytes, d.shared_memory_per_sm_bytes);
    EXPECT_EQ(d.registers_per_sm, 65536);
    EXPECT_EQ(d.max_threads_per_block, 1024);
    EXPECT_GE(d.max_threads_per_sm, 1024);
    EXPECT_GE(d.max_blocks_per_sm, 16);
    EXPECT_EQ(d.warp_size, 32);
    EXPECT_GT(d.theoretical_bandwidth_gb_s(), 100.0);
    // nvidia-smi's form: GPU-8-4-4-4-12 lowercase hex digits.
    EXPECT_TRUE(std::regex_match(
        d.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
        << d.uuid;
  }
}

TEST(DeviceQuery, EveryDeviceHasItsOwnUuid) {
  GPULAB_REQUIRE_DEVICE();
  std::set<std::string> uuids;
  for (const gpulab::DeviceInfo& d : gpulab::query_devices().devices) {
    EXPECT_TRUE(uuids.insert(d.uuid).second) << d.uuid;
  }
}

TEST(ChildVisibleDevices, IsThisProcesssEntryOrElseTheOrdinal) {
  using gpulab::child_visible_devices;
  EXPECT_EQ(child_visible_devices(0, nullptr), "0");
  EXPECT_EQ(child_visible_devices(3, nullptr), "3");
  // A child reads CUDA_VISIBLE_DEVICES against the whole machine: ordinal 1 of "2,5" is GPU 5.
  EXPECT_EQ(child_visible_devices(0, "2,5"), "2");
  EXPECT_EQ(child_visible_devices(1, "2,5"), "5");
  EXPECT_EQ(child_visible_devices(1, "GPU-0a1b, MIG-7c8d ,3"), "MIG-7c8d");
  EXPECT_EQ(child_visible_devices(2, "GPU-0a1b, MIG-7c8d ,3"), "3");
  EXPECT_THROW((void)child_visible_devices(2, "2,5"), std::out_of_range);
  EXPECT_THROW((void)child_visible_devices(0, ""), std::out_of_range);
  EXPECT_THROW((void)child_visible_devices(1, "2,,5"), std::out_of_range);
  EXPECT_THROW((void)child_visible_devices(-1, nullptr), std::out_of_range);
}

TEST(DeviceContext, AnUnknownSpecIsAUsageErrorBeforeAnyCudaCall) {
  try {
    (void)gpulab::resolve_device_context("no-such-gpu");
    FAIL() << "no GPU has that name";
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "no GPU named \"no-such-gpu\" (see `gpulab specs`)");
  }
}

TEST(DeviceContext, WithoutANameIsTheDeviceItsOwnSpecAndItsClock) {
  const gpulab::DeviceQuery query = gpulab::query_devices();
  if (!query.usable()) {
    EXPECT_THROW((void)gpulab::resolve_device_context(""), std::runtime_error);
    return;
  }
  const gpulab::DeviceContext context = gpulab::resolve_device_context("");
  EXPECT_EQ(context.backend, gpulab::backend_name());
  EXPECT_EQ(context.device.name, query.devices.front().name);
  EXPECT_EQ(context.spec.key, gpulab::spec_for_device(query.devices.front()).key);
  EXPECT_EQ(context.clock, gpulab::event_clock());
}

TEST(DeviceQuery, KnownDevicesMatchTheirDatasheetSpec) {
  GPULAB_REQUIRE_DEVICE();
  for (const gpulab::DeviceInfo& d : gpulab::query_devices().devices) {
    const gpulab::GpuSpec spec = gpulab::spec_for_device(d);
    if (spec.origin != gpulab::SpecOrigin::datasheet) {
      continue;
    }
    SCOPED_TRACE(d.name + " as " + spec.name);
    EXPECT_EQ(d.cc_major, spec.cc_major);
    EXPECT_EQ(d.cc_minor, spec.cc_minor);
    EXPECT_EQ(d.sm_count, spec.sm_count);
    EXPECT_EQ(d.max_threads_per_sm, spec.max_threads_per_sm);
    EXPECT_EQ(d.max_blocks_per_sm, spec.max_blocks_per_sm);
    EXPECT_EQ(d.shared_memory_per_sm_bytes, spec.shared_memory_per_sm_bytes);
    EXPECT_EQ(d.shared_memory_per_block_optin_bytes, spec.shared_memory_per_block_optin_bytes);
    EXPECT_EQ(d.reserved_shared_memory_per_block_bytes,
              spec.reserved_shared_memory_per_block_bytes);
    EXPECT_EQ(d.l2_bytes, spec.l2_bytes);
    // The clock-derived bandwidth is within 10% of the datasheet's.
    EXPECT_NEAR(d.theoretical_bandwidth_gb_s(), spec.dram_bandwidth_gb_s,
                0.1 * spec.dram_bandwidth_gb_s);
  }
}

#if GPULAB_BACKEND_SIM
TEST(SimDevice, DefaultsToH100Sxm) {
  if (std::getenv("GPULAB_SIM_SPEC") != nullptr) {
    GTEST_SKIP() << "GPULAB_SIM_SPEC is set in this environment";
  }
  const gpulab::DeviceQuery query = gpulab::query_devices();
  ASSERT_EQ(query.devices.size(), 1u);
  const gpulab::DeviceInfo& d = query.devices.front();
  EXPECT_EQ(d.name, "gpulab sim (H100 SXM)");
  EXPECT_EQ(d.compute_capability(), "9.0");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_NEAR(d.theoretical_bandwidth_gb_s(), 3350.0, 1.0);
  EXPECT_EQ(gpulab::spec_for_device(d).name, "H100 SXM");
}

// Death-test style "threadsafe" re-executes the test binary, so the child reads the environment
// afresh (the simulated device is chosen once per process).
TEST(SimDeviceDeathTest, SpecComesFromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_SPEC", "l4", 1);
        const gpulab::DeviceQuery query = gpulab::query_devices();
        const bool ok = query.usable() && query.devices[0].name == "gpulab sim (L4)" &&
                        query.devices[0].sm_count == 58;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

// A child again: prepare_sim_device chooses the spec before the first CUDA call of its process,
// without writing the environment (a child process of its own would inherit it), and refuses to
// change it afterwards.
TEST(SimDeviceDeathTest, PrepareSetsTheSpecAndTheModeledClockOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("GPULAB_SIM_CLOCK");
        unsetenv("GPULAB_SIM_SPEC");
        const auto refused = [](const std::string& key, const std::string& reason) {
          try {
            gpulab::prepare_sim_device(key);
          } catch (const std::runtime_error& e) {
            return std::string(e.what()).find(reason) != std::string::npos;
          }
          return false;
        };
        bool ok = refused("no-such-gpu", "no GPU named 'no-such-gpu'");
        gpulab::prepare_sim_device("l4");
        const gpulab::DeviceQuery query = gpulab::query_devices();
        const gpulab::TimingClock expected = gpulab::sim::counting_available()
                                                 ? gpulab::TimingClock::modeled
                                                 : gpulab::TimingClock::host;
        ok = ok && query.usable() && query.devices[0].name == "gpulab sim (L4)" &&
             gpulab::event_clock() == expected && std::getenv("GPULAB_SIM_SPEC") == nullptr &&
             std::getenv("GPULAB_SIM_CLOCK") == nullptr;
        // The device is in use: its spec stays, another is refused, the same one or an empty key
        // changes nothing.
        ok = ok && refused("h100-sxm", "in use already as L4");
        gpulab::prepare_sim_device("l4");
        gpulab::prepare_sim_device("");
        ok = ok && gpulab::query_devices().devices[0].name == "gpulab sim (L4)";
        // The clock events read follows the sim's setting.
        gpulab::sim::set_clock_mode(gpulab::sim::ClockMode::host);
        ok = ok && gpulab::event_clock() == gpulab::TimingClock::host;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

// A clock GPULAB_SIM_CLOCK chose stays.
TEST(SimDeviceDeathTest, PrepareKeepsTheClockTheEnvironmentChose) {
  if (!gpulab::sim::counting_available()) {
    GTEST_SKIP() << "this build has only the host clock: "
                 << gpulab::sim::counting_unavailable_reason();
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_CLOCK", "host", 1);
        gpulab::prepare_sim_device("");
        std::exit(gpulab::event_clock() == gpulab::TimingClock::host ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

// A named spec becomes the simulated device, whatever GPULAB_SIM_SPEC said.
TEST(SimDeviceDeathTest, ANamedSpecIsTheSimulatedDevice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_SPEC", "h100-sxm", 1);
        const gpulab::DeviceContext context = gpulab::resolve_device_context("l4");
        const bool ok = context.backend == "sim" && context.spec.key == "l4" &&
                        context.device.name == "gpulab sim (L4)" &&
                        context.clock == gpulab::event_clock();
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(SimDeviceDeathTest, UnknownSpecMakesTheDeviceUnavailableWithTheReason) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_SPEC", "no-such-gpu", 1);
        const gpulab::DeviceQuery query = gpulab::query_devices();
        const bool ok = !query.usable() && query.unavailable->error_code == 3 &&
                        query.unavailable->reason.find("no-such-gpu") != std::string::npos;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}
#endif

}  // namespace
