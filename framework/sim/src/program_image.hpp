// What the sim's counting asks the platform's loader about the running program, and nothing else
// does: where the executable's segments are loaded (a kernel's __device__ and __constant__
// variables, the program's constants) and where the calling thread's block of the executable's
// thread_local variables is (on sim, where `__shared__` variables live). One implementation per
// object format: program_image_elf.cpp (Linux with glibc: dl_iterate_phdr and the thread pointer,
// x86-64 and AArch64) and program_image_macho.cpp (macOS: dyld; its parser of load commands is
// portable and tested everywhere, its dyld calls are untested: there is no Mac here).
#pragma once

#include <cstdint>
#include <vector>

namespace gpulab::sim::detail {

struct ImageRange {
  std::uintptr_t begin = 0;
  std::uintptr_t bytes = 0;
  [[nodiscard]] bool contains(std::uintptr_t a) const { return a - begin < bytes; }
};

/// The executable's loaded segments (not its shared libraries').
[[nodiscard]] std::vector<ImageRange> program_segments();

/// The calling thread's block of the executable's thread_local variables, with room to spare
/// around it (a superset is fine: it is told apart from device memory and fiber stacks); empty
/// where the platform's layout is unknown.
[[nodiscard]] ImageRange thread_local_block();

/// The segments of the 64-bit Mach-O image whose header is at `header`, loaded `slide` bytes from
/// the addresses it was linked at, but its __PAGEZERO (no access). Empty when `header` is not a
/// 64-bit Mach-O header of this machine's byte order.
[[nodiscard]] std::vector<ImageRange> macho_segments(const void* header, std::intptr_t slide);

}  // namespace gpulab::sim::detail
