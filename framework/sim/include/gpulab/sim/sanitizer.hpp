// The sim's sanitizer (docs/sim.md, "6.4 The sanitizer"): with it on, every kernel launch is
// checked for races on shared memory: two threads of a block touching the same bytes between two
// barriers, at least one writing, with no __syncwarp() of both between them where they are lanes
// of one warp. The first race a block makes fails its launch (cudaErrorLaunchFailure), and
// gpulab::sim::kernel_failure() says where: the kernel, the block, both threads, the shared
// variable and byte, and the source line of each access. GPULAB_SIM_SANITIZE=1 turns it on for a
// whole program. It needs a build that can count (a checked launch is counted).
#pragma once

namespace gpulab::sim {

/// Turns the sanitizer on or off for later launches (a launch keeps the setting it was queued
/// with). Returns false, changing nothing, when `on` is asked of a build that cannot count.
bool set_sanitizing(bool on) noexcept;
/// Whether later launches are checked (starts as GPULAB_SIM_SANITIZE).
[[nodiscard]] bool sanitizing() noexcept;

/// The sanitizer on for the current scope (restores the previous setting). Throws
/// std::runtime_error with counting_unavailable_reason() in a build that cannot count.
class ScopedSanitizing {
 public:
  ScopedSanitizing();
  ~ScopedSanitizing() { set_sanitizing(previous_); }
  ScopedSanitizing(const ScopedSanitizing&) = delete;
  ScopedSanitizing& operator=(const ScopedSanitizing&) = delete;

 private:
  bool previous_;
};

}  // namespace gpulab::sim
