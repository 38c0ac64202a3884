// What the program's debug information says about an address of this process (libdw, from the
// executable and the shared libraries it loaded): the source line of an instruction, and which
// static __shared__ variable (a thread_local of the executable on sim) holds a byte. For the
// sim's reports of what went wrong, not for anything on a hot path: the first call reads the
// program's debug information (a mutex guards it).
#pragma once

#include <cstdint>
#include <string>

namespace gpulab::sim::detail {

/// "file.cu:42" (the file's name without its folders) of the instruction before `pc`, a return
/// address in this process's code; empty where the program has no line information for it (built
/// without -g). Code of the sim's own headers inlined into a kernel (__ldg, say) is named by the
/// line that called it: "k.cu:42 (in device.hpp:262)".
[[nodiscard]] std::string source_line(std::uint64_t pc);

/// A source line: the file's path as the debug information names it, and the line (1-based).
struct SourcePlace {
  std::string file;
  unsigned line = 0;  // 0: unknown
};

/// Where the instruction before `pc` was written, as source_line() names it (the kernel's line for
/// code of the sim's own headers), with the file's whole path; {} where no line information is.
/// Each address is looked up once per process (the per-line counts of a lab's many launches).
[[nodiscard]] SourcePlace source_place(std::uint64_t pc);

/// "name, byte N of its M (static __shared__ of FUNCTION)" for a byte of a static __shared__
/// variable of the executable, given the byte's address in the running thread's thread_local
/// block; "name, byte N of its M" for one at namespace scope; empty where no symbol holds it.
[[nodiscard]] std::string shared_variable_at(std::uintptr_t address);

}  // namespace gpulab::sim::detail
