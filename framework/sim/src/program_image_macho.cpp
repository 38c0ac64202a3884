// program_image.hpp on macOS. The executable is dyld's image 0; its LC_SEGMENT_64 load commands
// are its segments (macho_segments, portable: built and tested on every platform). Its
// thread_local variables are not at a fixed place from a thread pointer as on ELF: dyld allocates,
// per thread and image, one block holding every variable of the image's __thread_data and
// __thread_bss sections, and each variable's descriptor in __thread_vars (a thunk, a key, the
// variable's offset in the block) gives its address in the calling thread's block. So the block
// starts at what the first descriptor's thunk returns minus that descriptor's offset, and its size
// is the two sections'. UNTESTED: there is no Mac here (README, platforms).
#include <cstring>

#include "program_image.hpp"

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>
#endif

namespace gpulab::sim::detail {

namespace {

// The fields read, at their offsets in <mach-o/loader.h>'s structs (mach_header_64,
// load_command, segment_command_64), read with memcpy so that the parser builds without that
// header.
constexpr std::uint32_t kMachHeader64Magic = 0xfeedfacf;  // MH_MAGIC_64, this machine's order
constexpr std::uint32_t kSegment64 = 0x19;                // LC_SEGMENT_64
constexpr std::size_t kHeaderBytes = 32;                  // sizeof(mach_header_64)
constexpr std::size_t kNcmdsAt = 16;                      // mach_header_64::ncmds
constexpr std::size_t kSegnameAt = 8;                     // segment_command_64::segname[16]
constexpr std::size_t kVmaddrAt = 24;                     // segment_command_64::vmaddr
constexpr std::size_t kVmsizeAt = 32;                     // segment_command_64::vmsize
constexpr std::size_t kSegmentBytes = 72;                 // sizeof(segment_command_64)

template <typename T>
T read_at(const unsigned char* bytes, std::size_t at) {
  T value;
  std::memcpy(&value, bytes + at, sizeof value);
  return value;
}

}  // namespace

std::vector<ImageRange> macho_segments(const void* header, std::intptr_t slide) {
  std::vector<ImageRange> found;
  const auto* bytes = static_cast<const unsigned char*>(header);
  if (bytes == nullptr || read_at<std::uint32_t>(bytes, 0) != kMachHeader64Magic) {
    return found;
  }
  const auto commands = read_at<std::uint32_t>(bytes, kNcmdsAt);
  std::size_t at = kHeaderBytes;
  for (std::uint32_t i = 0; i < commands; ++i) {
    const auto command = read_at<std::uint32_t>(bytes, at);
    const auto command_bytes = read_at<std::uint32_t>(bytes, at + 4);
    if (command_bytes < 8) {
      break;  // malformed: a load command is at least its own two fields
    }
    if (command == kSegment64 && command_bytes >= kSegmentBytes) {
      char name[17] = {};
      std::memcpy(name, bytes + at + kSegnameAt, 16);
      const auto address = read_at<std::uint64_t>(bytes, at + kVmaddrAt);
      const auto size = read_at<std::uint64_t>(bytes, at + kVmsizeAt);
      if (std::strcmp(name, "__PAGEZERO") != 0 && size > 0) {
        found.push_back(ImageRange{static_cast<std::uintptr_t>(address + slide),
                                   static_cast<std::uintptr_t>(size)});
      }
    }
    at += command_bytes;
  }
  return found;
}

#if defined(__APPLE__)

std::vector<ImageRange> program_segments() {
  return macho_segments(_dyld_get_image_header(0), _dyld_get_image_vmaddr_slide(0));
}

ImageRange thread_local_block() {
  struct Descriptor {  // dyld's TLVDescriptor
    void* (*thunk)(Descriptor*);
    unsigned long key;
    unsigned long offset;
  };
  const auto* header = reinterpret_cast<const mach_header_64*>(_dyld_get_image_header(0));
  unsigned long vars_bytes = 0;
  unsigned long data_bytes = 0;
  unsigned long bss_bytes = 0;
  auto* vars =
      reinterpret_cast<Descriptor*>(getsectiondata(header, "__DATA", "__thread_vars", &vars_bytes));
  getsectiondata(header, "__DATA", "__thread_data", &data_bytes);
  getsectiondata(header, "__DATA", "__thread_bss", &bss_bytes);
  if (vars == nullptr || vars_bytes < sizeof(Descriptor)) {
    return ImageRange{};
  }
  const auto first = reinterpret_cast<std::uintptr_t>(vars->thunk(vars));
  return ImageRange{first - vars->offset, data_bytes + bss_bytes};
}

#endif

}  // namespace gpulab::sim::detail
