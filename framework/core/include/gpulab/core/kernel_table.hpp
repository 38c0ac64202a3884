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
/// ptxas does not); compute_occupancy adds the reservation itself. Empty in a program linked
/// without the table (gpulab.kernel_table, which every backend program links:
/// cmake/GpulabBackend.cmake).
[[nodiscard]] std::span<const KernelTableEntry> kernel_table();

/// Empty when the table was generated; otherwise one line saying why it is empty (e.g. "this
/// build found no nvcc: kernel figures unavailable; install the CUDA toolkit").
[[nodiscard]] std::string_view kernel_table_status();

/// Makes `entries` the project's table and `status` its status: the generated table
/// (cmake/GpulabKernelTable.cmake) calls it during static initialization, so the modules that
/// read the table (the sim's modeled clock, occupancy, profiles) link nothing built from kernels/.
/// Not thread-safe; nothing calls it once main has started.
void register_kernel_table(std::span<const KernelTableEntry> entries, std::string_view status);

/// The distinct kernel names in the table, sorted.
[[nodiscard]] std::vector<std::string_view> kernel_names();

/// The entry for `name` on the architecture closest to (not newer than) compute capability
/// major.minor, e.g. sm_86 for 8.9 when the table has 75, 80 and 86; nullopt when the name is
/// unknown or only newer architectures were built.
[[nodiscard]] std::optional<KernelTableEntry> find_kernel(std::string_view name, int cc_major,
                                                          int cc_minor);

/// A source file of a program's own kernels (register_program_kernels) that nvcc could not
/// compile, so none of its kernels has figures; `why` is nvcc's first error line.
struct KernelSourceFailure {
  std::string_view source;
  std::string_view why;
};

/// Adds the kernels of files built into this program alone (a lab's student files:
/// gpulab_add_program_kernel_table in cmake/GpulabKernelTable.cmake) to what find_launched_kernel
/// searches, beside the project's table. Generated code calls it during static initialization; it
/// is not thread-safe, and nothing calls it once main has started.
void register_program_kernels(std::span<const KernelTableEntry> entries,
                              std::span<const KernelSourceFailure> failures);

/// A kernel's qualified name with its template arguments, spelled one way whichever tool printed
/// it: the return type and parameter list dropped, GCC's "{anonymous}" written
/// "(anonymous namespace)" as the demangler writes it, and integer literal suffixes dropped
/// ("void ns::(anonymous namespace)::k<3u>(float*)" and "ns::{anonymous}::k<3>" both give
/// "ns::(anonymous namespace)::k<3>").
[[nodiscard]] std::string canonical_kernel_name(std::string_view name);

/// The figures of a launched kernel for compute capability major.minor, from the project's table
/// and the program's own kernels: on the newest architecture not newer than the device, else
/// (a program's own table has only GPULAB_PROGRAM_KERNEL_TABLE_ARCHITECTURES) the oldest newer
/// one, an estimate. Only kernels
/// compiled from `launch_file` (the launch's source file: a path that is, or ends in "/" and, an
/// entry's source) are candidates, so a student's kernel is never given the figures of a
/// solution's kernel of the same name. Among them, the kernel whose canonical name is `function`'s
/// (the launch's function as the compiler names it, template arguments resolved); else the one
/// kernel whose name without template arguments is `function`'s last component without them (a
/// launch through an expression that names no one function). nullopt when neither finds exactly
/// one kernel.
[[nodiscard]] std::optional<KernelTableEntry> find_launched_kernel(std::string_view function,
                                                                   std::string_view launch_file,
                                                                   int cc_major, int cc_minor);

/// The figures of the kernel a function symbol names (what a CUDA runtime query that gets only
/// a kernel's address can know), for compute capability major.minor, on the architecture
/// find_launched_kernel would take. `symbol` is the demangled symbol; `source_name` the file name,
/// without directories, of the source a file-local symbol was compiled from ("tiles.cu"), or empty
/// for an external symbol (one definition in the program, whichever file). Candidates are the
/// kernels of that canonical name (and, given a source name, of a source of that name): the
/// program's own kernels (register_program_kernels) first, then the project's table; the first
/// that has any answers if they all come from one source file, else nothing. nullopt too when the
/// program's own file of that name is one nvcc could not compile: never another file's figures.
[[nodiscard]] std::optional<KernelTableEntry> find_kernel_symbol(std::string_view symbol,
                                                                 std::string_view source_name,
                                                                 int cc_major, int cc_minor);

/// Why the program's own kernels have no figures for `launch_file` (nvcc failed on it); nullopt
/// when it is not such a file.
[[nodiscard]] std::optional<std::string_view> kernel_source_failure(std::string_view launch_file);

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
/// recorded them (the sim records them from the kernel table: find_launched_kernel);
/// resources_known false when it has none.
[[nodiscard]] LaunchShape launch_shape(const CountedLaunch& launch);

/// The modeled time of a counted launch on `spec`: the time model on its counts and shape, and no
/// less than launch overhead + its longest clock64() wait (bound ModelBound::clock_wait). The one
/// rule for every modeled kernel time: the sim's modeled clock and `gpulab profile` both use it.
/// Throws as model_time() does.
[[nodiscard]] ModeledTime model_launch(const CountedLaunch& launch, const GpuSpec& spec);

}  // namespace gpulab
