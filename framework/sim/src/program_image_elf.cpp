// program_image.hpp on Linux with glibc: the executable is the first module dl_iterate_phdr
// reports; its PT_LOAD headers are its segments, its PT_TLS header the size of its static TLS
// block, which sits at a fixed place from the thread pointer (the ELF TLS ABI's variant II on
// x86-64, variant I on AArch64).
#include <link.h>

#include <algorithm>

#include "program_image.hpp"

namespace gpulab::sim::detail {

std::vector<ImageRange> program_segments() {
  std::vector<ImageRange> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            static_cast<std::vector<ImageRange>*>(data)->push_back(ImageRange{
                info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, info->dlpi_phdr[i].p_memsz});
          }
        }
        return 1;  // the first module is the executable
      },
      &found);
  return found;
}

ImageRange thread_local_block() {
  struct Segment {
    std::uintptr_t memsz = 0;
    std::uintptr_t align = 1;
  } segment;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_TLS) {
            auto* out = static_cast<Segment*>(data);
            out->memsz = info->dlpi_phdr[i].p_memsz;
            out->align = std::max<std::uintptr_t>(1, info->dlpi_phdr[i].p_align);
          }
        }
        return 1;  // the first module is the executable
      },
      &segment);
  const auto tp = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  const std::uintptr_t span = (segment.memsz + segment.align - 1) / segment.align * segment.align;
#if defined(__x86_64__)
  // Variant II: the executable's block ends at the thread pointer (one extra alignment unit covers
  // the offset of the segment's first byte).
  return ImageRange{tp - span - segment.align, span + segment.align};
#elif defined(__aarch64__)
  // Variant I: it starts two words (the TCB) after the thread pointer, aligned.
  return ImageRange{tp, span + 2 * sizeof(void*) + segment.align};
#else
  return ImageRange{};
#endif
}

}  // namespace gpulab::sim::detail
