// Device query: what the CUDA runtime reports about every device of this process's backend.
//
// On the cuda backend this is the real hardware; on the sim backend it is the simulated device
// (a spec from the database, H100 SXM unless GPULAB_SIM_SPEC names another). With no usable
// device the query returns no devices and the CUDA error that explains why; it never throws.
#pragma once

#include <string>

#include "gpulab/core/device_info.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab {

/// Queries every device of this backend. Never throws; a failing CUDA call becomes `unavailable`.
[[nodiscard]] DeviceQuery query_devices() noexcept;

/// The backend this code was built for: "cuda" or "sim".
[[nodiscard]] const char* backend_name() noexcept;

/// Sets up the sim's device before this process's first CUDA call, which reads it: the simulated
/// GPU becomes the spec `sim_spec_key` unless it is empty (then GPULAB_SIM_SPEC's, else H100 SXM),
/// and CUDA events read the modeled clock unless GPULAB_SIM_CLOCK already chose a clock or the
/// build cannot count (gpulab::sim::prepare_device; docs/sim.md). Throws std::runtime_error for
/// an unknown spec, or for another spec than the device's after the first CUDA call. Nothing on
/// the cuda backend.
void prepare_sim_device(const std::string& sim_spec_key);

/// What CUDA events read in this process: the GPU's clock (cuda), or the sim's modeled or host
/// clock.
[[nodiscard]] TimingClock event_clock() noexcept;

/// What a program runs on and reports against, resolved once (resolve_device_context).
struct DeviceContext {
  std::string backend;  ///< "cuda" or "sim"
  DeviceInfo device;    ///< the first device of this backend
  GpuSpec spec;         ///< the spec asked for, else the device's (spec_for_device)
  TimingClock clock = TimingClock::host;  ///< what CUDA events read (event_clock)
};

/// The one rule for a program's device and spec, before its first CUDA call: `spec_key` (a name
/// find_spec knows, or empty) becomes the sim's device (prepare_sim_device), the device is
/// queried, and the spec is `spec_key`'s, else the device's (on sim: GPULAB_SIM_SPEC's, else H100
/// SXM). Throws UsageError for a name the spec database does not know ("no GPU named ..."), and
/// std::runtime_error when no device is usable (saying why) or the sim's device is in use already
/// as another spec.
[[nodiscard]] DeviceContext resolve_device_context(const std::string& spec_key);

}  // namespace gpulab
