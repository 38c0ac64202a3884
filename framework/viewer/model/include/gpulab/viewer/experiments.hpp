// The live runs the viewer offers, as plans for the LiveRunner: each step runs project kernels
// on this process's backend through the framework's harness (verified against the CPU reference
// first, then timed) and returns results in the same shape the labs write (views.hpp), with
// modeled GPU numbers for the spec beside the measured ones.
//
//   bandwidth    vector_add across sizes: samples, statistics and bandwidth per size
//   components   the five attention components of one shape, measured and modeled
//   sweep        one kernel (vector_add, or a histogram with global or shared-memory atomics)
//                across block sizes: time, and occupancy on the spec
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/viewer/live.hpp"

namespace gpulab::viewer {

/// The runs the viewer offers.
enum class Experiment { bandwidth, components, sweep };

/// "bandwidth", "components", "sweep".
[[nodiscard]] std::string_view to_string(Experiment experiment) noexcept;

/// Kernels the block-size sweep can run: the levels of the kernel catalog's ops that take a block
/// size (gpulab/kernels/catalog.hpp), e.g. "vector_add_kernel",
/// "histogram_global_kernel", "histogram_shared_kernel".
[[nodiscard]] std::span<const std::string_view> sweep_kernels();

/// How big the runs are.
struct ExperimentOptions {
  bool quick = false;  ///< smaller sizes and fewer samples (tests, screenshots)
  std::string sweep_kernel = "vector_add_kernel";  ///< one of sweep_kernels()
  kernels::AttentionConfig attention{};            ///< the shape the components run profiles
};

/// The plan of `experiment` on this process's backend, with modeled numbers for `spec`. Sizes
/// are smaller on sim (the CPU simulation takes tens of nanoseconds per element). Throws
/// std::invalid_argument for an unknown sweep kernel or an invalid attention shape.
[[nodiscard]] RunPlan make_plan(Experiment experiment, const ExperimentOptions& options,
                                const GpuSpec& spec);

}  // namespace gpulab::viewer
