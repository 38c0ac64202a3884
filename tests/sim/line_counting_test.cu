// Counting by source line on sim (gpulab::sim::set_counting_by_line, GPULAB_SIM_COUNTERS_BY_LINE):
// each line of a kernel carries the requests, sectors, wavefronts, bank conflicts and L2 figures
// of its own accesses, the lines add up to the launch's figures, and code of the sim's headers
// inlined into a kernel counts on the kernel's line that called it. Sim only: on a GPU, Nsight
// Compute's Source page is the tool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"

namespace {

using gpulab::CountedLaunch;
using gpulab::DeviceBuffer;
using gpulab::MemoryCounters;
using gpulab::SourceLineCounters;

constexpr unsigned kWarp = 32;
constexpr unsigned kWarps = 4;

// The kernel's lines are found by the marker comment at their end, so that editing this file
// above them moves nothing the test asserts.
unsigned line_of(const std::string& marker) {
  std::ifstream in(__FILE__);
  std::string text;
  for (unsigned number = 1; std::getline(in, text); ++number) {
    if (text.find("// " + marker) != std::string::npos &&
        text.find("line_of") == std::string::npos) {
      return number;
    }
  }
  ADD_FAILURE() << "no line of " << __FILE__ << " is marked " << marker;
  return 0;
}

// One warp per 32 threads: a load 32 floats apart per lane (32 sectors per request), a coalesced
// store (4), a column of a 32 x 32 tile written (32 lanes on one bank: 31 conflicts) and a row
// read back (one wavefront), and a load through __ldg (the sim's device.hpp, inlined).
__global__ void four_patterns(const float* in, float* out) {
  __shared__ float tile[kWarp][kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const float strided = in[i * kWarp];        // strided load
  tile[lane][threadIdx.x / kWarp] = strided;  // column store
  __syncthreads();
  const float row = tile[threadIdx.x / kWarp][lane];  // row load
  out[i] = row + __ldg(&in[i]);                       // coalesced store
}

std::vector<CountedLaunch> count_patterns(bool by_line) {
  DeviceBuffer<float> in(kWarps * kWarp * kWarp), out(kWarps * kWarp);
  in.copy_from(std::vector<float>(kWarps * kWarp * kWarp, 1.0f));
  EXPECT_TRUE(gpulab::sim::set_counting_by_line(by_line));
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
  std::vector<CountedLaunch> launches = gpulab::sim::count_launches([&] {
    four_patterns<<<1, kWarps * kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  gpulab::sim::set_counting_by_line(false);
  return launches;
}

const SourceLineCounters* find_line(const CountedLaunch& launch, unsigned line) {
  const auto it = std::find_if(launch.lines.begin(), launch.lines.end(), [&](const auto& l) {
    return l.line == line && l.file.ends_with("line_counting_test.cu");
  });
  return it == launch.lines.end() ? nullptr : &*it;
}

#define REQUIRE_COUNTING()                                            \
  if (!gpulab::sim::counting_available()) {                           \
    GTEST_SKIP() << "counting by line needs a build that can count: " \
                 << gpulab::sim::counting_unavailable_reason();       \
  }

TEST(LineCounting, EachLineCarriesItsOwnAccesses) {
  REQUIRE_COUNTING();
  const std::vector<CountedLaunch> launches = count_patterns(true);
  ASSERT_EQ(launches.size(), 1u);
  const CountedLaunch& launch = launches.front();

  const SourceLineCounters* strided = find_line(launch, line_of("strided load"));
  ASSERT_NE(strided, nullptr);
  EXPECT_EQ(strided->counters.global_load.requests, kWarps);
  EXPECT_EQ(strided->counters.global_load.sectors, kWarps * kWarp);
  EXPECT_EQ(gpulab::excess_sectors(strided->counters), kWarps * (kWarp - 4));
  EXPECT_EQ(strided->counters.l2_sector_reads, kWarps * kWarp);
  EXPECT_EQ(strided->counters.l2_sector_hits, 0u);  // the L2 was emptied: every sector missed
  EXPECT_EQ(strided->counters.dram_bytes_read, kWarps * kWarp * 32);

  const SourceLineCounters* column = find_line(launch, line_of("column store"));
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->counters.shared_store.requests, kWarps);
  EXPECT_EQ(column->counters.shared_store.wavefronts, kWarps * kWarp);
  EXPECT_EQ(column->counters.shared_store.bank_conflicts, kWarps * (kWarp - 1));

  const SourceLineCounters* row = find_line(launch, line_of("row load"));
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->counters.shared_load.requests, kWarps);
  EXPECT_EQ(row->counters.shared_load.wavefronts, kWarps);
  EXPECT_EQ(row->counters.shared_load.bank_conflicts, 0u);

  // The last line stores coalesced and loads through __ldg: both its own, not device.hpp's.
  const SourceLineCounters* last = find_line(launch, line_of("coalesced store"));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->counters.global_store.requests, kWarps);
  EXPECT_EQ(last->counters.global_store.sectors, kWarps * 4);
  EXPECT_EQ(last->counters.global_load.requests, kWarps);
  EXPECT_EQ(last->counters.global_load.sectors, kWarps * 4);
  EXPECT_EQ(gpulab::excess_sectors(last->counters), 0u);
  for (const SourceLineCounters& l : launch.lines) {
    EXPECT_EQ(l.file.find("/gpulab/sim/"), std::string::npos) << l.file << ":" << l.line;
  }
}

TEST(LineCounting, TheLinesAddUpToTheLaunch) {
  REQUIRE_COUNTING();
  const std::vector<CountedLaunch> launches = count_patterns(true);
  ASSERT_EQ(launches.size(), 1u);
  MemoryCounters sum;
  for (const SourceLineCounters& l : launches.front().lines) {
    sum += l.counters;
  }
  const MemoryCounters& total = launches.front().counters;
  EXPECT_EQ(sum.global_load, total.global_load);
  EXPECT_EQ(sum.global_store, total.global_store);
  EXPECT_EQ(sum.shared_load, total.shared_load);
  EXPECT_EQ(sum.shared_store, total.shared_store);
  EXPECT_EQ(sum.l2_sector_reads, total.l2_sector_reads);
  EXPECT_EQ(sum.l2_sector_writes, total.l2_sector_writes);
  EXPECT_EQ(sum.l2_sector_hits, total.l2_sector_hits);
  EXPECT_EQ(sum.dram_bytes_read, total.dram_bytes_read);
  // Counting by line changes no figure of the launch.
  const std::vector<CountedLaunch> plain = count_patterns(false);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_TRUE(plain.front().lines.empty());
  EXPECT_EQ(plain.front().counters, total);
}

}  // namespace
