// The sim's settings: every GPULAB_SIM_* environment variable and the CUDA runtime's
// CUDA_LAUNCH_BLOCKING, read in this one place, once, the first time a setting is asked for
// (docs/sim.md lists them). A program chooses its device's spec
// and clock through the runtime's functions (prepare_device, set_clock_mode), never by setting
// these variables in its own process; a child process gets them in its environment.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gpulab/sim/runtime.hpp"

namespace gpulab::sim::detail {

struct Settings {
  std::string spec;                         // GPULAB_SIM_SPEC: a key or name of `gpulab specs`
  std::optional<std::size_t> memory_bytes;  // GPULAB_SIM_MEMORY_BYTES: the device's capacity
  std::string counters_file;                // GPULAB_SIM_COUNTERS: every launch counted, appended
  bool by_line = false;                     // GPULAB_SIM_COUNTERS_BY_LINE=1: and per source line
  std::optional<ClockMode> clock;           // GPULAB_SIM_CLOCK: what events read
  bool cold_l2 = false;                     // GPULAB_SIM_CACHE_CONTROL=all: L2 emptied per launch
  Schedule schedule;                        // GPULAB_SIM_SCHEDULE
  unsigned workers = 1;                     // GPULAB_SIM_WORKERS, else the hardware threads
  std::size_t stack_bytes = 0;              // GPULAB_SIM_STACK_BYTES: each CUDA thread's stack
  bool launch_blocking = false;  // CUDA_LAUNCH_BLOCKING=1: each launch waits for its kernel
  bool sanitize = false;         // GPULAB_SIM_SANITIZE=1: every launch checked (races.hpp)
  // The first of the variables above that is set to something it cannot be: the device is then
  // unusable, and every CUDA call says so (cudaErrorInitializationError). The two tuning knobs,
  // workers and stack bytes, and CUDA_LAUNCH_BLOCKING are instead ignored with a line on stderr.
  std::string error;
};

/// The settings of this process (read from the environment the first time).
[[nodiscard]] const Settings& settings();

/// Reads the settings from `get` (a getenv), for settings() and its tests.
[[nodiscard]] Settings read_settings(const char* (*get)(const char*));

}  // namespace gpulab::sim::detail
