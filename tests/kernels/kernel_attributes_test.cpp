// The kernel table against the CUDA runtime: for every kernel of the catalog
// (gpulab/kernels/catalog.hpp), cudaFuncGetAttributes must report the registers,
// static shared memory and local memory that ptxas reported into the table for the architecture of
// the cubin the runtime loaded, and cudaOccupancyMaxActiveBlocksPerMultiprocessor must agree with
// gpulab::compute_occupancy on that kernel's table figures at every block size 32..1024 (step 32)
// and every dynamic shared memory size its launchers use. On a GPU that checks ptxas's figures
// against the cubin the runtime loaded; on the sim, whose runtime knows a kernel by its address
// alone and finds its figures through its symbol, that it finds every catalog kernel's. Skips
// with the reason when no device is usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/device_query.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {

// How gtest prints a parameter: the kernel's name.
void PrintTo(const KernelRef& kernel, std::ostream* out) {
  *out << kernel.name;
}

namespace {

// The table's entry for `name` compiled for exactly `sm`; nullptr when the table lacks it.
const KernelTableEntry* table_entry(std::string_view name, int sm) {
  for (const KernelTableEntry& entry : kernel_table()) {
    if (entry.name == name && entry.sm == sm) {
      return &entry;
    }
  }
  return nullptr;
}

// The spec of this device with its per-SM limits as the runtime reports them, so a difference
// below is the occupancy calculation's and not the spec database's.
GpuSpec device_spec(const DeviceInfo& device) {
  GpuSpec spec = spec_for_device(device);
  spec.cc_major = device.cc_major;
  spec.cc_minor = device.cc_minor;
  spec.sm_count = device.sm_count;
  spec.max_threads_per_sm = device.max_threads_per_sm;
  spec.max_warps_per_sm = device.max_threads_per_sm / device.warp_size;
  spec.max_blocks_per_sm = device.max_blocks_per_sm;
  spec.max_threads_per_block = device.max_threads_per_block;
  spec.registers_per_sm = device.registers_per_sm;
  spec.shared_memory_per_sm_bytes = device.shared_memory_per_sm_bytes;
  spec.shared_memory_per_block_optin_bytes = device.shared_memory_per_block_optin_bytes;
  spec.reserved_shared_memory_per_block_bytes = device.reserved_shared_memory_per_block_bytes;
  spec.warp_size = device.warp_size;
  return spec;
}

class KernelAttributes : public ::testing::TestWithParam<KernelRef> {
 protected:
  void SetUp() override {
    GPULAB_REQUIRE_DEVICE();
    if (kernel_table().empty()) {
      GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
    }
    GPULAB_CHECK(cudaFuncGetAttributes(&attributes_, GetParam().function));
    // binaryVersion is the architecture of the cubin the runtime loaded (e.g. 80 on an 8.9 GPU
    // when the cuda backend was built for 80 and 90): the table's entry for that one is what the
    // GPU runs.
    entry_ = table_entry(GetParam().name, attributes_.binaryVersion);
    if (entry_ == nullptr) {
      GTEST_SKIP() << "the runtime loaded " << GetParam().name << " for sm_"
                   << attributes_.binaryVersion
                   << ", which the kernel table does not have (add it to "
                      "GPULAB_KERNEL_TABLE_ARCHITECTURES; a PTX JIT build has no ptxas figures)";
    }
  }

  cudaFuncAttributes attributes_{};
  const KernelTableEntry* entry_ = nullptr;
};

TEST_P(KernelAttributes, MatchTheTable) {
  EXPECT_EQ(attributes_.numRegs, entry_->registers) << "registers per thread";
  EXPECT_EQ(attributes_.sharedSizeBytes, entry_->static_shared_bytes)
      << "static shared memory (the table holds the kernel's own bytes, without the 1 KiB per "
         "block CUDA reserves; a difference of exactly 1024 would mean the runtime counts it in)";
  EXPECT_EQ(attributes_.localSizeBytes, entry_->local_bytes) << "local memory per thread";
}

TEST_P(KernelAttributes, OccupancyMatchesTheRuntime) {
  if (!occupancy_available()) {
    GTEST_SKIP() << "this build has no cuda_occupancy.h: compute_occupancy is unavailable";
  }
  const DeviceQuery query = query_devices();
  ASSERT_TRUE(query.usable());
  int current = 0;
  GPULAB_CHECK(cudaGetDevice(&current));
  const auto device = std::find_if(query.devices.begin(), query.devices.end(),
                                   [&](const DeviceInfo& d) { return d.index == current; });
  ASSERT_NE(device, query.devices.end());
  const GpuSpec spec = device_spec(*device);
  const KernelResources resources = resources_of(*entry_);
  for (const std::uint64_t dynamic_bytes : GetParam().dynamic_shared_bytes) {
    for (int block = 32; block <= 1024; block += 32) {
      if (block > attributes_.maxThreadsPerBlock) {
        continue;  // the kernel cannot be launched this wide (its registers); nothing to compare
      }
      SCOPED_TRACE("block size " + std::to_string(block) + ", dynamic shared memory " +
                   std::to_string(dynamic_bytes) + " B");
      int runtime_blocks = 0;
      GPULAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &runtime_blocks, GetParam().function, block, static_cast<std::size_t>(dynamic_bytes)));
      const Occupancy computed = compute_occupancy(spec, resources, block, dynamic_bytes);
      EXPECT_EQ(computed.active_blocks_per_sm, runtime_blocks)
          << "limited by " << to_string(computed.limiter);
    }
  }
}

std::string kernel_name(const ::testing::TestParamInfo<KernelRef>& info) {
  return std::string(info.param.name);
}

INSTANTIATE_TEST_SUITE_P(Catalog, KernelAttributes, ::testing::ValuesIn(catalog_kernels()),
                         kernel_name);

}  // namespace
}  // namespace gpulab::kernels
