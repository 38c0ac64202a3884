// What the platform's loader tells the sim's counting (framework/sim/src/program_image.hpp): the
// executable's segments and the calling thread's block of its thread_local variables, on this
// machine; and the macOS parser of load commands on a Mach-O header built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "program_image.hpp"

namespace {

using gpulab::sim::detail::ImageRange;

bool contains(const ImageRange& r, const void* p) {
  return r.contains(reinterpret_cast<std::uintptr_t>(p));
}

bool any_contains(const std::vector<ImageRange>& ranges, const void* p) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const ImageRange& r) { return contains(r, p); });
}

const int kConstant = 42;
int g_variable = 7;
thread_local int t_variable = 3;
thread_local char t_array[4096];

TEST(ProgramImage, TheExecutablesSegmentsHoldItsCodeAndStaticData) {
  const std::vector<ImageRange> segments = gpulab::sim::detail::program_segments();
  ASSERT_FALSE(segments.empty());
  EXPECT_TRUE(any_contains(segments, reinterpret_cast<const void*>(&any_contains)));
  EXPECT_TRUE(any_contains(segments, &kConstant));
  EXPECT_TRUE(any_contains(segments, &g_variable));
  int on_the_stack = 0;
  EXPECT_FALSE(any_contains(segments, &on_the_stack));
  const std::vector<int> on_the_heap(1024);
  EXPECT_FALSE(any_contains(segments, on_the_heap.data()));
}

TEST(ProgramImage, TheThreadLocalBlockHoldsEachThreadsOwnVariables) {
  const auto check = [] {
    const ImageRange block = gpulab::sim::detail::thread_local_block();
    EXPECT_TRUE(contains(block, &t_variable));
    EXPECT_TRUE(contains(block, &t_array[0]));
    EXPECT_TRUE(contains(block, &t_array[sizeof t_array - 1]));
    EXPECT_FALSE(contains(block, &g_variable));
    return block.begin;
  };
  const std::uintptr_t main_block = check();
  std::uintptr_t other_block = main_block;
  std::thread([&] { other_block = check(); }).join();
  EXPECT_NE(other_block, main_block) << "each thread has its own block";
}

// A 64-bit Mach-O header with the load commands given, laid out as <mach-o/loader.h> says.
class MachO {
 public:
  MachO() : bytes_(32, 0) { put<std::uint32_t>(0, 0xfeedfacf); }

  void segment(const char* name, std::uint64_t address, std::uint64_t size) {
    const std::size_t at = begin_command(0x19, 72);
    std::memcpy(&bytes_[at + 8], name, std::strlen(name));
    put<std::uint64_t>(at + 24, address);
    put<std::uint64_t>(at + 32, size);
  }
  void other_command(std::uint32_t command, std::uint32_t bytes) { begin_command(command, bytes); }

  [[nodiscard]] const void* data() const { return bytes_.data(); }
  std::vector<unsigned char>& bytes() { return bytes_; }

 private:
  std::size_t begin_command(std::uint32_t command, std::uint32_t size) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size, 0);
    put<std::uint32_t>(at, command);
    put<std::uint32_t>(at + 4, size);
    put<std::uint32_t>(16, get<std::uint32_t>(16) + 1);  // ncmds
    return at;
  }
  template <typename T>
  void put(std::size_t at, T value) {
    std::memcpy(&bytes_[at], &value, sizeof value);
  }
  template <typename T>
  T get(std::size_t at) const {
    T value;
    std::memcpy(&value, &bytes_[at], sizeof value);
    return value;
  }
  std::vector<unsigned char> bytes_;
};

TEST(MachoSegments, ListsEverySegmentButPageZeroAtItsSlidAddress) {
  MachO image;
  image.segment("__PAGEZERO", 0, 0x100000000);
  image.segment("__TEXT", 0x100000000, 0x4000);
  image.other_command(0x2, 24);  // LC_SYMTAB
  image.segment("__DATA", 0x100004000, 0x8000);
  image.segment("__LINKEDIT", 0x10000c000, 0x1000);
  const std::vector<ImageRange> found = gpulab::sim::detail::macho_segments(image.data(), 0x2000);
  ASSERT_EQ(found.size(), 3U);
  EXPECT_EQ(found[0].begin, 0x100002000U);
  EXPECT_EQ(found[0].bytes, 0x4000U);
  EXPECT_EQ(found[1].begin, 0x100006000U);
  EXPECT_EQ(found[1].bytes, 0x8000U);
  EXPECT_EQ(found[2].begin, 0x10000e000U);
}

TEST(MachoSegments, IsEmptyForAnotherFormatAndStopsAtAMalformedCommand) {
  const unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  EXPECT_TRUE(gpulab::sim::detail::macho_segments(elf, 0).empty());
  EXPECT_TRUE(gpulab::sim::detail::macho_segments(nullptr, 0).empty());

  MachO image;
  image.segment("__TEXT", 0x1000, 0x1000);
  image.other_command(0x2, 24);
  image.segment("__DATA", 0x2000, 0x1000);
  std::memset(&image.bytes()[32 + 72 + 4], 0, 4);  // the second command's size: 0
  const std::vector<ImageRange> found = gpulab::sim::detail::macho_segments(image.data(), 0);
  ASSERT_EQ(found.size(), 1U) << "the segment before the malformed command";
  EXPECT_EQ(found[0].begin, 0x1000U);
}

}  // namespace
