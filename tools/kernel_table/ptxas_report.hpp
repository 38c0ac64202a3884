// Reading ptxas's resource report, the lines `nvcc -Xptxas -v` prints for every kernel it
// compiles, into one record per kernel and architecture; and writing the kernel table's C++
// source from those records. The build tool gpulab-kernel-table-gen uses it
// (kernel_table_gen.cpp); it is a library so the parser can be tested on canned text.
//
// What ptxas prints for one kernel on one architecture (CUDA 12 and 13):
//
//   ptxas info    : Compiling entry function '_ZN6gpulab...vector_add_kernelEPKfS3_Pfm' for 'sm_80'
//   ptxas info    : Function properties for _ZN6gpulab...vector_add_kernelEPKfS3_Pfm
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 12 registers, used 0 barriers, 384 bytes cmem[0]
//
// The "Used" line lists only what the kernel has: "N bytes smem" appears with static shared
// memory, "N bytes cumulative stack size" when it calls non-inlined functions, and "cmem[0]" (the
// kernel parameters) is not printed at all for sm_90 and newer. Other lines ("N bytes gmem",
// "Compile time = ...", properties of non-inlined device functions, warnings) carry nothing
// per kernel and are skipped; any other "ptxas info" line is an error, so a format change in a
// future toolkit stops the build instead of producing a wrong or empty table.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::ptxas {

/// ptxas's figures for one kernel compiled for one architecture.
struct KernelReport {
  std::string mangled;                  ///< the kernel's mangled name, as ptxas prints it
  std::string signature;                ///< demangled, e.g. "gpulab::kernels::...(float*)"
  std::string name;                     ///< unqualified, without parameters, e.g. "gemm_kernel"
  int sm = 0;                           ///< architecture, e.g. 80 for sm_80
  int registers = 0;                    ///< registers per thread
  int barriers = 0;                     ///< named barriers used (__syncthreads uses barrier 0)
  std::uint64_t shared_bytes = 0;       ///< static shared memory per block ("smem")
  std::uint64_t stack_frame_bytes = 0;  ///< the kernel's own local memory per thread
  std::uint64_t cumulative_stack_bytes = 0;  ///< with the functions it calls; 0 when not printed
  std::uint64_t spill_store_bytes = 0;       ///< bytes per thread stored to local memory by spills
  std::uint64_t spill_load_bytes = 0;        ///< bytes per thread loaded back from spills
  std::uint64_t constant_bytes = 0;          ///< constant bank 0 (parameters); 0 when not printed

  /// Local memory per thread: the cumulative stack size when printed, else the stack frame.
  [[nodiscard]] std::uint64_t local_bytes() const noexcept {
    return cumulative_stack_bytes > stack_frame_bytes ? cumulative_stack_bytes : stack_frame_bytes;
  }
};

/// A report that does not have the expected shape; what() names the line and what was expected.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every kernel of one nvcc run's output (stdout and stderr together), in report order. Lines
/// that are not ptxas's are skipped (host compiler warnings). Throws ParseError, naming the line
/// number, for an unexpected ptxas line, a kernel without its "Used" line, or a number that does
/// not parse.
[[nodiscard]] std::vector<KernelReport> parse_report(std::string_view text);

/// True when `text` holds at least one "ptxas info" line: nvcc ran ptxas with -v.
[[nodiscard]] bool has_ptxas_output(std::string_view text);

/// The demangled form of an Itanium-ABI name (abi::__cxa_demangle); the name itself when it does
/// not demangle (an extern "C" kernel).
[[nodiscard]] std::string demangle(const std::string& mangled);

/// The unqualified function name of a demangled signature, without return type and parameters,
/// keeping template arguments: "void ns::(anonymous namespace)::tile_kernel<16, float>(float*)"
/// gives "tile_kernel<16, float>".
[[nodiscard]] std::string short_name(std::string_view signature);

/// One table row: a kernel of one source file on one architecture.
struct TableRow {
  KernelReport kernel;  ///< ptxas's figures
  std::string source;   ///< the .cu file, relative to the project root
};

/// Sorts rows by name then sm and checks the table is usable: a name maps to one source and one
/// kernel (two kernels of the same name, e.g. in two files' anonymous namespaces, would make
/// find_kernel ambiguous), each (name, sm) appears once, and every file's kernels are in the
/// table for every architecture in `sms`. Throws ParseError saying which rule a row breaks.
void check_and_sort(std::vector<TableRow>& rows, const std::vector<int>& sms);

/// The C++ source of the project's table: `rows` and `status` (empty when the table was
/// generated), registered during static initialization (gpulab::register_kernel_table).
[[nodiscard]] std::string table_source(const std::vector<TableRow>& rows, std::string_view status);

/// The first line of a report file that holds why nvcc failed instead of ptxas's output
/// (kernel_table_ptxas.cmake writes it for a program's own files, whose failure must not fail
/// the build); the reason follows on the same line.
inline constexpr std::string_view kFailedMarker = "gpulab-kernel-table: nvcc failed: ";

/// A program's own source that nvcc could not compile.
struct SourceFailure {
  std::string source;  ///< the .cu file, relative to the project root or absolute
  std::string why;     ///< nvcc's first error line
};

/// Why nvcc failed, from a report that starts with kFailedMarker; empty for any other report.
[[nodiscard]] std::string failure_in(std::string_view report);

/// The C++ source that registers `rows` and `failures` as a program's own kernels
/// (gpulab::register_program_kernels) during static initialization; a program links it beside
/// the project's table.
[[nodiscard]] std::string program_table_source(const std::vector<TableRow>& rows,
                                               const std::vector<SourceFailure>& failures);

}  // namespace gpulab::ptxas
