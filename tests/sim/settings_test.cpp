// The sim's settings read from its environment in one place (framework/sim/src/settings.hpp),
// through a stand-in getenv.
#include "settings.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>

namespace {

using gpulab::sim::ClockMode;
using gpulab::sim::Schedule;
using gpulab::sim::detail::read_settings;
using gpulab::sim::detail::Settings;

std::map<std::string, std::string>& environment() {
  static std::map<std::string, std::string> variables;
  return variables;
}

const char* fake_getenv(const char* name) {
  const auto found = environment().find(name);
  return found == environment().end() ? nullptr : found->second.c_str();
}

Settings read(std::map<std::string, std::string> variables) {
  environment() = std::move(variables);
  return read_settings(fake_getenv);
}

TEST(SimSettings, NothingSetGivesTheDefaults) {
  const Settings s = read({});
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.spec, "");
  EXPECT_FALSE(s.memory_bytes.has_value());
  EXPECT_EQ(s.counters_file, "");
  EXPECT_FALSE(s.clock.has_value());
  EXPECT_FALSE(s.cold_l2);
  EXPECT_EQ(s.schedule, Schedule{});
  EXPECT_GE(s.workers, 1u);
  EXPECT_GE(s.stack_bytes, 256u * 1024);
  EXPECT_FALSE(s.launch_blocking);
  EXPECT_FALSE(s.sanitize);
  EXPECT_FALSE(s.by_line);
}

TEST(SimSettings, EachVariableIsRead) {
  const Settings s = read({{"GPULAB_SIM_SPEC", "l4"},
                           {"GPULAB_SIM_MEMORY_BYTES", "1048576"},
                           {"GPULAB_SIM_CLOCK", "host"},
                           {"GPULAB_SIM_CACHE_CONTROL", "all"},
                           {"GPULAB_SIM_SCHEDULE", "shuffle:7"},
                           {"GPULAB_SIM_WORKERS", "3"},
                           {"GPULAB_SIM_STACK_BYTES", "65536"},
                           {"CUDA_LAUNCH_BLOCKING", "1"}});
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.spec, "l4");
  EXPECT_EQ(s.memory_bytes.value_or(0), 1048576u);
  EXPECT_TRUE(s.clock == ClockMode::host);
  EXPECT_TRUE(s.cold_l2);
  EXPECT_EQ(s.schedule.order, Schedule::Order::shuffle);
  EXPECT_EQ(s.schedule.seed, 7u);
  EXPECT_EQ(s.workers, 3u);
  EXPECT_EQ(s.stack_bytes, 65536u);
  EXPECT_TRUE(s.launch_blocking);
  EXPECT_FALSE(read({{"GPULAB_SIM_CACHE_CONTROL", "none"}}).cold_l2);
  EXPECT_FALSE(read({{"CUDA_LAUNCH_BLOCKING", "0"}}).launch_blocking);
}

TEST(SimSettings, TheModeledClockTheCountersFileAndTheSanitizerNeedCounting) {
  const std::string file = testing::TempDir() + "gpulab-settings-counters.jsonl";
  const Settings s = read({{"GPULAB_SIM_CLOCK", "modeled"},
                           {"GPULAB_SIM_COUNTERS", file},
                           {"GPULAB_SIM_SANITIZE", "1"},
                           {"GPULAB_SIM_COUNTERS_BY_LINE", "1"}});
  if (gpulab::sim::counting_available()) {
    EXPECT_EQ(s.error, "");
    EXPECT_TRUE(s.clock == ClockMode::modeled);
    EXPECT_EQ(s.counters_file, file);
    EXPECT_TRUE(s.sanitize);
    EXPECT_TRUE(s.by_line);
    EXPECT_FALSE(read({{"GPULAB_SIM_SANITIZE", "0"}}).sanitize);
    EXPECT_FALSE(read({{"GPULAB_SIM_COUNTERS_BY_LINE", "0"}}).by_line);
  } else {
    EXPECT_NE(s.error.find("GPULAB_SIM_COUNTERS is set, but"), std::string::npos) << s.error;
    EXPECT_EQ(s.counters_file, "");
  }
  std::remove(file.c_str());
}

// A wrong value makes the device unusable, with the first wrong variable's reason.
TEST(SimSettings, AWrongValueIsTheDevicesError) {
  const std::map<std::string, std::string> wrong[] = {
      {{"GPULAB_SIM_MEMORY_BYTES", "0"}},      {{"GPULAB_SIM_MEMORY_BYTES", ""}},
      {{"GPULAB_SIM_CLOCK", "fast"}},          {{"GPULAB_SIM_CACHE_CONTROL", "some"}},
      {{"GPULAB_SIM_SCHEDULE", "sideways"}},   {{"GPULAB_SIM_SANITIZE", "yes"}},
      {{"GPULAB_SIM_COUNTERS_BY_LINE", "on"}},
  };
  for (const auto& variables : wrong) {
    const std::string name = variables.begin()->first;
    const Settings s = read(variables);
    EXPECT_EQ(s.error.rfind(name, 0), 0u) << name << ": " << s.error;
  }
  const Settings two = read({{"GPULAB_SIM_MEMORY_BYTES", "x"}, {"GPULAB_SIM_CLOCK", "fast"}});
  EXPECT_EQ(two.error.rfind("GPULAB_SIM_MEMORY_BYTES", 0), 0u) << two.error;
  if (gpulab::sim::counting_available()) {
    const Settings unwritable = read({{"GPULAB_SIM_COUNTERS", "/nonexistent-gpulab/c.jsonl"}});
    EXPECT_EQ(unwritable.error, "GPULAB_SIM_COUNTERS: cannot write '/nonexistent-gpulab/c.jsonl'");
  }
}

// The tuning knobs and CUDA_LAUNCH_BLOCKING are ignored when wrong (their defaults kept, a line on
// stderr), never an error.
TEST(SimSettings, AWrongTuningKnobKeepsItsDefault) {
  const Settings defaults = read({});
  const Settings s = read({{"GPULAB_SIM_WORKERS", "0"},
                           {"GPULAB_SIM_STACK_BYTES", "1024"},
                           {"CUDA_LAUNCH_BLOCKING", "yes"}});
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.workers, defaults.workers);
  EXPECT_EQ(s.stack_bytes, defaults.stack_bytes);
  EXPECT_FALSE(s.launch_blocking);
}

}  // namespace
