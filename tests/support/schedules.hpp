// Shared by backend tests: run a check under several thread schedules on sim, and read why a
// launch failed there.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace gpulab::testing {

/// Runs `body` under the forward, reverse and a shuffled schedule on sim (a missing barrier
/// cannot pass by luck); once on cuda, where the hardware schedules.
template <class Body>
void for_each_schedule(Body body) {
#if defined(GPULAB_BACKEND_SIM)
  for (const char* name : {"forward", "reverse", "shuffle:7"}) {
    SCOPED_TRACE(std::string("schedule ") + name);
    sim::Schedule schedule;
    std::string error;
    ASSERT_TRUE(sim::Schedule::parse(name, schedule, error)) << error;
    const sim::ScopedSchedule scope(schedule);
    body();
  }
#else
  body();
#endif
}

#if defined(GPULAB_BACKEND_SIM)
/// Launches, expects the launch to fail with cudaErrorLaunchFailure, resets the device and
/// returns the simulator's explanation.
template <class Launch>
std::string failure_of(Launch launch) {
  launch();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  std::string why = sim::kernel_failure();
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  return why;
}
#endif

}  // namespace gpulab::testing
