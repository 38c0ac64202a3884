// The project's kernels and what each one uses per thread and per block, on each architecture it
// is built for: read at build time from ptxas's resource report (`nvcc -Xptxas -v`) into a
// generated table, so occupancy is computed from real figures on the sim backend too.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/core/traffic_model.hpp"

namespace gpulab {

/// One kernel compiled for one architecture.
struct KernelTableEntry {
  std::string_view name;       ///< short name, e.g. "vector_add_kernel"
  std::string_view signature;  ///< demangled, e.g. "gpulab::kernels::(anonymous namespace)::..."
  std::string_view source;     ///< source file, relative to the project, e.g. "kernels/vector/..."
  int sm = 0;                  ///< architecture, e.g. 80 for sm_80
  int registers = 0;           ///< registers per thread
  std::uint64_t static_shared_bytes = 0;  ///< static shared memory per block
  std::uint64_t local_bytes = 0;          ///< local memory per thread (spills, stack arrays)
  std::uint64_t constant_bytes = 0;       ///< constant bank 0 (parameters); 0 on sm_90+, where
                                          ///< ptxas does not report it
  std::uint64_t spill_store_bytes = 0;    ///< per thread, registers spilled to local memory
  std::uint64_t spill_load_bytes = 0;     ///< per thread, spilled values loaded back
};

/// Every kernel x architecture the build measured, sorted by name then sm. The architectures are
/// GPULAB_KERNEL_TABLE_ARCHITECTURES (default 75;80;86;89;90), independent of the cuda backend's.
/// static_shared_bytes is the kernel's own, as ptxas reports it: without the 1 KiB per block that
/// CUDA reserves on CC 8.0 and newer (which the sm_90 cubin's .nv.shared section counts in and
/// ptxas does not); compute_occupancy adds the reservation itself.
[[nodiscard]] std::span<const KernelTableEntry> kernel_table();

/// Empty when the table was generated; otherwise one line saying why it is empty (e.g. "this
/// build found no nvcc: kernel figures unavailable; install the CUDA toolkit").
[[nodiscard]] std::string_view kernel_table_status();

/// The distinct kernel names in the table, sorted.
[[nodiscard]] std::vector<std::string_view> kernel_names();

/// The entry for `name` on the architecture closest to (not newer than) compute capability
/// major.minor, e.g. sm_86 for 8.9 when the table has 75, 80 and 86; nullopt when the name is
/// unknown or only newer architectures were built.
[[nodiscard]] std::optional<KernelTableEntry> find_kernel(std::string_view name, int cc_major,
                                                          int cc_minor);

/// The entry's figures as occupancy input.
[[nodiscard]] KernelResources resources_of(const KernelTableEntry& entry);

/// The table's name for a kernel as a launch names it: namespaces, template arguments, argument
/// list and return type dropped ("gpulab::kernels::gemm_tiled_kernel<16>", or as Nsight Compute
/// writes it, "void gpulab::kernels::gemm_tiled_kernel<16>(const float *, int)" ->
/// "gemm_tiled_kernel"; "(anonymous namespace)::k(args)" -> "k").
[[nodiscard]] std::string kernel_short_name(std::string_view launch_name);

/// The registers and static shared memory of the kernel a launch names, from this build's table
/// for the spec's compute capability; nullopt for a kernel not in it (a student's).
[[nodiscard]] std::optional<KernelResources> table_resources(std::string_view launch_name,
                                                             const GpuSpec& spec);

/// A counted launch's configuration for the time model, with its kernel's resources as the launch
/// recorded them, else from the table for the spec (resources_known false when neither has them).
[[nodiscard]] LaunchShape launch_shape(const CountedLaunch& launch, const GpuSpec& spec);

/// The modeled time of a counted launch on `spec`: the time model on its counts and shape, and no
/// less than launch overhead + its longest clock64() wait (bound ModelBound::clock_wait). The one
/// rule for every modeled kernel time: the sim's modeled clock and `gpulab profile` both use it.
/// Throws as model_time() does.
[[nodiscard]] ModeledTime model_launch(const CountedLaunch& launch, const GpuSpec& spec);

}  // namespace gpulab
