// Memory counting on sim (framework/sim/src/counting.cpp): hand-worked cases, each with its
// arithmetic, for global sectors, shared-memory wavefronts and bank conflicts, atomics, divergence
// and the L2 model; and the counts' independence of the thread schedule and the worker count.
// Sim only: the cuda backend's figures come from Nsight Compute.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "run_command.hpp"
#include "schedules.hpp"
#include "temp_dir.hpp"
#include "test_device.hpp"

namespace {

using gpulab::CountedLaunch;
using gpulab::DeviceBuffer;
using gpulab::MemoryCounters;

constexpr unsigned kWarp = 32;

template <class Launch>
MemoryCounters count_one(Launch launch) {
  const std::vector<CountedLaunch> launches = gpulab::sim::count_launches(launch);
  EXPECT_EQ(launches.size(), 1u);
  return launches.empty() ? MemoryCounters{} : launches.front().counters;
}

// ---------------------------------------------------------------------------------------------
// Global loads and stores
// ---------------------------------------------------------------------------------------------

__global__ void load_strided(const float* in, float* out, int stride) {
  out[threadIdx.x] = in[threadIdx.x * stride];
}

__global__ void store_strided(float* out, int stride) {
  out[threadIdx.x * stride] = 1.0f;
}

TEST(CountingGlobal, FloatLoadsAtStride1To32) {
  GPULAB_REQUIRE_COUNTING();
  // Lane i reads bytes [4*s*i, 4*s*i + 4): sector floor(s*i/8). Over i = 0..31 that is
  // s=1: sectors 0..3 (4); s=2: 0..7 (8); s=4: 0..15 (16); s=8: a sector per lane (32);
  // s=32: a sector per lane, 128 bytes apart (32).
  DeviceBuffer<float> in(32 * kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  for (const auto& [stride, sectors] :
       std::vector<std::pair<int, std::uint64_t>>{{1, 4}, {2, 8}, {4, 16}, {8, 32}, {32, 32}}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const MemoryCounters c = count_one([&] {
      load_strided<<<1, kWarp>>>(in.data(), out.data(), stride);
      GPULAB_CHECK_LAUNCH();
    });
    EXPECT_EQ(c.global_load.requests, 1u);
    EXPECT_EQ(c.global_load.sectors, sectors);
    EXPECT_EQ(c.global_load.bytes_requested, 4u * kWarp);
    EXPECT_EQ(c.global_load.lanes, kWarp);
    // The store of out[threadIdx.x]: 128 contiguous bytes, 4 sectors.
    EXPECT_EQ(c.global_store.requests, 1u);
    EXPECT_EQ(c.global_store.sectors, 4u);
    EXPECT_EQ(c.local_accesses + c.other_accesses, 0u);
  }
}

TEST(CountingGlobal, FloatStoresAtStride1To32) {
  GPULAB_REQUIRE_COUNTING();
  // As the loads: 4, 8, 16, 32, 32 sectors. Written in part: none at stride 1 (each sector gets
  // 8 floats); at stride 2 each of the 8 sectors gets 4 floats of its 8, at 4 two, at 8 and 32
  // one: every sector.
  DeviceBuffer<float> out(32 * kWarp);
  for (const auto& [stride, sectors, partial] :
       std::vector<std::tuple<int, std::uint64_t, std::uint64_t>>{
           {1, 4, 0}, {2, 8, 8}, {4, 16, 16}, {8, 32, 32}, {32, 32, 32}}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const MemoryCounters c = count_one([&] {
      store_strided<<<1, kWarp>>>(out.data(), stride);
      GPULAB_CHECK_LAUNCH();
    });
    EXPECT_EQ(c.global_store.requests, 1u);
    EXPECT_EQ(c.global_store.sectors, sectors);
    EXPECT_EQ(c.global_store.partial_sectors, partial);
    EXPECT_EQ(c.global_load.requests, 0u);
  }
}

TEST(CountingGlobal, AMisalignedStoreWritesTheEndSectorsInPart) {
  GPULAB_REQUIRE_COUNTING();
  // out + 1: bytes [4, 132): sector 0 gets bytes 4..31, sectors 1..3 all 32, sector 4 bytes 0..3.
  DeviceBuffer<float> out(2 * kWarp);
  const MemoryCounters c = count_one([&] {
    store_strided<<<1, kWarp>>>(out.data() + 1, 1);
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_store.sectors, 5u);
  EXPECT_EQ(c.global_store.partial_sectors, 2u);
}

TEST(CountingGlobal, MisalignedWarpTouchesFiveSectors) {
  GPULAB_REQUIRE_COUNTING();
  // in + 1: the warp reads bytes [4, 132) of a 256-byte-aligned allocation: sectors 0..4.
  DeviceBuffer<float> in(2 * kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    load_strided<<<1, kWarp>>>(in.data() + 1, out.data(), 1);
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.sectors, 5u);
  EXPECT_DOUBLE_EQ(c.sectors_per_load_request(), 5.0);
}

__global__ void copy_float4(const float4* in, float4* out) {
  out[threadIdx.x] = in[threadIdx.x];
}

TEST(CountingGlobal, Float4ContiguousIsSixteenSectors) {
  GPULAB_REQUIRE_COUNTING();
  // 32 lanes x 16 bytes = 512 contiguous bytes = 16 sectors, in one request each way.
  DeviceBuffer<float4> in(kWarp);
  DeviceBuffer<float4> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    copy_float4<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 1u);
  EXPECT_EQ(c.global_load.sectors, 16u);
  EXPECT_EQ(c.global_store.requests, 1u);
  EXPECT_EQ(c.global_store.sectors, 16u);
}

// A float4 taken apart into its members after one load, and one built member by member and
// stored where a condition holds: nvcc keeps each a 16-byte access, and so does the sim (its
// kernels are built without GCC's scalar replacement of aggregates, cmake/GpulabBackend.cmake).
__global__ void float4_members(const float4* in, float4* out, float* sums) {
  const float4 v = in[threadIdx.x];
  sums[threadIdx.x] = v.x + v.y + v.z + v.w;
  float4 w;
  w.x = v.w;
  w.y = v.z;
  w.z = v.y;
  w.w = v.x;
  if (threadIdx.x % 2 == 0) {
    out[threadIdx.x] = w;
  }
}

TEST(CountingGlobal, AFloat4UsedMemberByMemberIsStillOneSixteenByteAccess) {
  GPULAB_REQUIRE_COUNTING();
  DeviceBuffer<float4> in(kWarp);
  DeviceBuffer<float4> out(kWarp);
  DeviceBuffer<float> sums(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    float4_members<<<1, kWarp>>>(in.data(), out.data(), sums.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 1u);
  EXPECT_EQ(c.global_load.sectors, 16u);
  EXPECT_EQ(c.global_load.bytes_requested, 16u * kWarp);
  EXPECT_EQ(c.global_store.requests, 2u);      // the float4s (16 lanes) and the sums
  EXPECT_EQ(c.global_store.sectors, 16u + 4);  // every other 16 bytes of 512, and 128 bytes
  EXPECT_EQ(c.global_store.bytes_requested, 16u * kWarp / 2 + 4 * kWarp);
}

// Four neighbouring floats read one by one: four 4-byte loads on a GPU (nvcc does not merge them),
// and on sim (its kernels are built without GCC's vectorizer, which could).
__global__ void four_scalars(const float* in, float* out) {
  const float* p = in + 4 * threadIdx.x;
  out[threadIdx.x] = p[0] * p[1] + p[2] * p[3];
}

TEST(CountingGlobal, NeighbouringScalarLoadsStayScalar) {
  GPULAB_REQUIRE_COUNTING();
  DeviceBuffer<float> in(4 * kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    four_scalars<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 4u);
  EXPECT_EQ(c.global_load.bytes_requested, 4u * 4 * kWarp);
  EXPECT_EQ(c.global_load.sectors, 4u * 16);  // each request: 32 lanes 16 bytes apart
}

__global__ void load_one_word(const float* in, float* out) {
  out[threadIdx.x] = in[0];
}

TEST(CountingGlobal, AllLanesReadingOneWordIsOneSector) {
  GPULAB_REQUIRE_COUNTING();
  // 128 bytes requested, one sector moved: 400% efficiency.
  DeviceBuffer<float> in(1);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    load_one_word<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.sectors, 1u);
  EXPECT_DOUBLE_EQ(c.global_load_efficiency_pct(), 400.0);
}

__global__ void load_half_warp(const float* in, float* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = in[threadIdx.x];
  }
}

TEST(CountingGlobal, DivergenceShowsAsFewerActiveLanes) {
  GPULAB_REQUIRE_COUNTING();
  // Lanes 0..15 load 64 bytes (2 sectors) and store 64 bytes: 2 requests of 16 lanes.
  DeviceBuffer<float> in(kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    load_half_warp<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 1u);
  EXPECT_EQ(c.global_load.sectors, 2u);
  EXPECT_EQ(c.global_load.lanes, 16u);
  EXPECT_DOUBLE_EQ(c.lanes_per_request(), 16.0);
}

// Not inlined (GCC's attribute: this test is sim only), so both call sites share its load.
__device__ __attribute__((noinline)) float load_at(const float* p, unsigned i) {
  return p[i];
}

__global__ void divergent_paths_one_instruction(const float* a, const float* b, float* out) {
  const unsigned lane = threadIdx.x;
  out[lane] = lane < 16 ? load_at(a, lane) : load_at(b, lane);
}

TEST(CountingGlobal, DivergentPathsThroughOneInstructionAreOneRequestOnSim) {
  GPULAB_REQUIRE_COUNTING();
  // docs/sim.md's example of the approximation: a GPU issues the two sides one after the other
  // (2 requests of 16 lanes); on sim every lane reaches the one load inside load_at for the first
  // time, so it is 1 request of 32 lanes. The sectors are the same: 2 in a, 2 in b.
  DeviceBuffer<float> a(kWarp);
  DeviceBuffer<float> b(kWarp);
  DeviceBuffer<float> out(kWarp);
  a.fill_bytes(0);
  b.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    divergent_paths_one_instruction<<<1, kWarp>>>(a.data(), b.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 1u);
  EXPECT_EQ(c.global_load.lanes, kWarp);
  EXPECT_EQ(c.global_load.sectors, 4u);
}

__global__ void loop_loads(const float* in, float* out, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    sum += in[i * kWarp + threadIdx.x];
  }
  out[threadIdx.x] = sum;
}

TEST(CountingGlobal, EachVisitOfALoadIsItsOwnRequest) {
  GPULAB_REQUIRE_COUNTING();
  // The loop's load runs n = 5 times per lane: the k-th visits of the 32 lanes form request k.
  DeviceBuffer<float> in(5 * kWarp);
  DeviceBuffer<float> out(2 * kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    loop_loads<<<2, kWarp>>>(in.data(), out.data(), 5);
    GPULAB_CHECK_LAUNCH();
  });
  // Two blocks (one warp each), 5 loads of 4 sectors and 1 store of 4 sectors per warp.
  EXPECT_EQ(c.global_load.requests, 10u);
  EXPECT_EQ(c.global_load.sectors, 40u);
  EXPECT_EQ(c.global_store.requests, 2u);
  // No store or atomic between the five loads: one run of loads per warp.
  EXPECT_EQ(c.global_load_runs, 2u);
}

// Each key read is followed by an atomic on shared memory that needs it.
__global__ void load_then_atomic(const unsigned* keys, unsigned* counts, int n) {
  __shared__ unsigned bins[kWarp];
  bins[threadIdx.x] = 0;
  __syncthreads();
  for (int i = 0; i < n; ++i) {
    atomicAdd(&bins[keys[i * kWarp + threadIdx.x] % kWarp], 1u);
  }
  __syncthreads();
  counts[threadIdx.x] = bins[threadIdx.x];
}

// Two loads, a store of their sum, a third load, and its store.
__global__ void loads_between_stores(const float* a, const float* b, float* out) {
  out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
  out[kWarp + threadIdx.x] = a[kWarp + threadIdx.x];
}

TEST(CountingGlobal, AStoreOrAnAtomicEndsARunOfLoads) {
  GPULAB_REQUIRE_COUNTING();
  DeviceBuffer<unsigned> keys(5 * kWarp);
  DeviceBuffer<unsigned> counts(kWarp);
  keys.fill_bytes(0);
  const MemoryCounters atomics = count_one([&] {
    load_then_atomic<<<1, kWarp>>>(keys.data(), counts.data(), 5);
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(atomics.global_load.requests, 5u);
  EXPECT_EQ(atomics.global_load_runs, 5u);  // each load, then the atomic that needs it
  DeviceBuffer<float> a(2 * kWarp);
  DeviceBuffer<float> b(kWarp);
  DeviceBuffer<float> out(2 * kWarp);
  a.fill_bytes(0);
  b.fill_bytes(0);
  const MemoryCounters stores = count_one([&] {
    loads_between_stores<<<2, kWarp>>>(a.data(), b.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(stores.global_load.requests, 2u * 3);
  EXPECT_EQ(stores.global_load_runs, 2u * 2);  // {a, b} and {a}, in each of two warps
}

__global__ void add_in_place(float* out, const float* in, float* reloaded, float* other) {
  out[threadIdx.x] += in[threadIdx.x];  // a read-modify-write: a load and a store of out
  const float first = reloaded[threadIdx.x];
  other[threadIdx.x] = 0.0f;  // may be reloaded's memory: reloaded is read again
  out[threadIdx.x] = first + reloaded[threadIdx.x];
}

TEST(CountingGlobal, AReadModifyWriteStoresAndAnAddressReadTwiceIsReadTwice) {
  GPULAB_REQUIRE_COUNTING();
  // One warp. out[i] += in[i]: a load of in, a load of out, a store of out (3 requests). Then
  // reloaded[i] twice (other may alias it, so both loads execute), other[i] and out[i] once:
  // loads of in, out, reloaded, reloaded; stores of out, other, out. 4 sectors each.
  DeviceBuffer<float> out(kWarp);
  DeviceBuffer<float> in(kWarp);
  DeviceBuffer<float> reloaded(kWarp);
  DeviceBuffer<float> other(kWarp);
  for (DeviceBuffer<float>* b : {&out, &in, &reloaded, &other}) {
    b->fill_bytes(0);
  }
  const MemoryCounters c = count_one([&] {
    add_in_place<<<1, kWarp>>>(out.data(), in.data(), reloaded.data(), other.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 4u);
  EXPECT_EQ(c.global_load.sectors, 16u);
  EXPECT_EQ(c.global_store.requests, 3u);
  EXPECT_EQ(c.global_store.sectors, 12u);
}

__global__ void odd_lanes_load_between(const float* in, const float* extra, float* out) {
  float sum = 0.0f;
  for (int i = 0; i < 2; ++i) {
    sum += load_at(in, i * kWarp + threadIdx.x);  // every lane, twice, one instruction
    if (i == 0 && threadIdx.x % 2 == 1) {
      sum += extra[threadIdx.x];  // odd lanes, between the two
    }
  }
  out[threadIdx.x] = sum;
}

TEST(CountingGlobal, ALaneThatLeavesTheOthersPathStillJoinsItsOwnVisit) {
  GPULAB_REQUIRE_COUNTING();
  // The loop's load: 2 requests of 32 lanes (each lane's second visit joins the second request,
  // whatever it did between); the odd lanes' load: 1 request of 16 lanes. 4 sectors each.
  DeviceBuffer<float> in(2 * kWarp);
  DeviceBuffer<float> extra(kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  extra.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    odd_lanes_load_between<<<1, kWarp>>>(in.data(), extra.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_load.requests, 3u);
  EXPECT_EQ(c.global_load.lanes, 2 * kWarp + kWarp / 2);
  EXPECT_EQ(c.global_load.sectors, 12u);
}

// ---------------------------------------------------------------------------------------------
// Shared memory
// ---------------------------------------------------------------------------------------------

template <int Columns>
__global__ void read_tile_column(float* out) {
  __shared__ float tile[kWarp][Columns];
  for (unsigned r = 0; r < kWarp; ++r) {
    tile[r][threadIdx.x] = static_cast<float>(r);
  }
  __syncthreads();  // every row written before any column is read
  out[threadIdx.x] = tile[threadIdx.x][0];
}

TEST(CountingShared, ColumnOfA32By32TileIs32Wavefronts) {
  GPULAB_REQUIRE_COUNTING();
  // Lane i reads tile[i][0]: word 32*i, bank (32*i) % 32 = 0 for every lane: 32 distinct words in
  // one bank, 32 wavefronts, 31 of them conflicts. The 32 row writes tile[r][lane] hit 32
  // distinct banks: 32 requests, 32 wavefronts, no conflicts.
  DeviceBuffer<float> out(kWarp);
  const MemoryCounters c = count_one([&] {
    read_tile_column<32><<<1, kWarp>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.shared_load.requests, 1u);
  EXPECT_EQ(c.shared_load.wavefronts, 32u);
  EXPECT_EQ(c.shared_load.bank_conflicts, 31u);
  EXPECT_EQ(c.shared_store.requests, 32u);
  EXPECT_EQ(c.shared_store.wavefronts, 32u);
  EXPECT_EQ(c.shared_store.bank_conflicts, 0u);
}

__global__ void tree_sum(float* out) {
  __shared__ float partial[64];
  partial[threadIdx.x] = 1.0f;
  __syncthreads();
  for (unsigned s = 32; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] += partial[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *out = partial[0];
  }
}

TEST(CountingShared, EachStepOfASharedMemoryTreeLoadsTwiceAndStoresOnce) {
  GPULAB_REQUIRE_COUNTING();
  // 64 threads, two warps. The first store: a request per warp (2). Steps s = 32, 16, 8, 4, 2, 1:
  // only warp 0 has a lane below s, and it issues partial[t] + partial[t + s] (two loads) and the
  // store of partial[t]: 6 steps x (2 loads, 1 store). Then thread 0 loads partial[0]: 13 loads,
  // 8 stores in all, as a GPU executes them.
  DeviceBuffer<float> out(1);
  const MemoryCounters c = count_one([&] {
    tree_sum<<<1, 2 * kWarp>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.shared_load.requests, 13u);
  EXPECT_EQ(c.shared_store.requests, 8u);
  EXPECT_FLOAT_EQ(out.to_vector().front(), 64.0f);
}

TEST(CountingShared, PaddingTo33ColumnsRemovesTheConflicts) {
  GPULAB_REQUIRE_COUNTING();
  // Lane i reads word 33*i: bank (33*i) % 32 = i, a bank per lane: 1 wavefront. The row writes
  // tile[r][lane] (word 33*r + lane) stay conflict-free.
  DeviceBuffer<float> out(kWarp);
  const MemoryCounters c = count_one([&] {
    read_tile_column<33><<<1, kWarp>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.shared_load.requests, 1u);
  EXPECT_EQ(c.shared_load.wavefronts, 1u);
  EXPECT_EQ(c.shared_load.bank_conflicts, 0u);
  EXPECT_EQ(c.shared_store.bank_conflicts, 0u);
}

__global__ void broadcast_and_column_dynamic(float* out) {
  extern __shared__ float dynamic_tile[];  // 32 x 32 floats
  for (unsigned r = 0; r < kWarp; ++r) {
    dynamic_tile[r * kWarp + threadIdx.x] = static_cast<float>(r);
  }
  __syncthreads();
  const float one = dynamic_tile[5];            // every lane, one word
  dynamic_tile[threadIdx.x * kWarp + 1] = one;  // a column: 32 wavefronts
  out[threadIdx.x] = one;
}

TEST(CountingShared, BroadcastIsOneWavefrontAndDynamicSharedCounts) {
  GPULAB_REQUIRE_COUNTING();
  // The read of dynamic_tile[5] by all lanes is a broadcast: 1 wavefront. The column store
  // (word 32*i + 1, bank 1 for all lanes) takes 32. The 32 row stores take one each.
  DeviceBuffer<float> out(kWarp);
  const MemoryCounters c = count_one([&] {
    broadcast_and_column_dynamic<<<1, kWarp, kWarp * kWarp * sizeof(float)>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.shared_load.requests, 1u);
  EXPECT_EQ(c.shared_load.wavefronts, 1u);
  EXPECT_EQ(c.shared_store.requests, 33u);
  EXPECT_EQ(c.shared_store.wavefronts, 32u + 32u);
  EXPECT_EQ(c.shared_store.bank_conflicts, 31u);
}

__global__ void shared_doubles(double* out) {
  __shared__ double values[kWarp];
  values[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = values[threadIdx.x];
}

TEST(CountingShared, EightByteAccessesTakeTwoPhases) {
  GPULAB_REQUIRE_COUNTING();
  // 32 lanes x 8 bytes: two half-warp phases of 128 bytes each, one wavefront per phase and no
  // conflicts (the minimum for 8-byte accesses is 2).
  DeviceBuffer<double> out(kWarp);
  const MemoryCounters c = count_one([&] {
    shared_doubles<<<1, kWarp>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.shared_load.wavefronts, 2u);
  EXPECT_EQ(c.shared_load.bank_conflicts, 0u);
  EXPECT_EQ(c.shared_store.wavefronts, 2u);
}

// ---------------------------------------------------------------------------------------------
// Atomics
// ---------------------------------------------------------------------------------------------

__global__ void atomics_on_one_word(unsigned* global_counter, unsigned* out) {
  __shared__ unsigned shared_counter;
  if (threadIdx.x == 0) {
    shared_counter = 0;
  }
  __syncthreads();
  atomicAdd(&shared_counter, 1u);
  atomicAdd(global_counter, 1u);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = shared_counter;
  }
}

TEST(CountingAtomics, OneWordFromEveryLane) {
  GPULAB_REQUIRE_COUNTING();
  // The global atomic: 1 request, 1 sector, 32 lanes. The shared one: 32 lanes on one bank
  // serialize, 32 wavefronts. Both still compute the right sums.
  DeviceBuffer<unsigned> counter(1);
  DeviceBuffer<unsigned> out(1);
  counter.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    atomics_on_one_word<<<1, kWarp>>>(counter.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.global_atomic.requests, 1u);
  EXPECT_EQ(c.global_atomic.sectors, 1u);
  EXPECT_EQ(c.global_atomic.lanes, kWarp);
  EXPECT_EQ(c.shared_atomic.requests, 1u);
  EXPECT_EQ(c.shared_atomic.wavefronts, kWarp);
  EXPECT_EQ(counter.to_vector().front(), kWarp);
  EXPECT_EQ(out.to_vector().front(), kWarp);
}

// Thread i adds 1 to counters[(i * stride) % n]: stride 0 puts every atomic on one word.
__global__ void atomics_strided(unsigned* counters, unsigned n, unsigned stride) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&counters[(i * stride) % n], 1u);
}

TEST(CountingAtomics, TheBusiestSectorCountsItsRequests) {
  GPULAB_REQUIRE_COUNTING();
  constexpr unsigned kBlocks = 8;
  constexpr unsigned kThreads = 128;  // 4 warps a block: 32 requests in all
  constexpr unsigned kWords = kBlocks * kThreads;
  DeviceBuffer<unsigned> counters(kWords);
  const auto run = [&](unsigned stride) {
    counters.fill_bytes(0);
    return count_one([&] {
      atomics_strided<<<kBlocks, kThreads>>>(counters.data(), kWords, stride);
      GPULAB_CHECK_LAUNCH();
    });
  };
  // Every lane on one word: each warp's request takes the one sector.
  const MemoryCounters one = run(0);
  EXPECT_EQ(one.global_atomic.requests, 32u);
  EXPECT_EQ(one.l2_atomic_busiest_sector, 32u);
  EXPECT_EQ(counters.to_vector().front(), kWords);
  // Consecutive words: each sector is the request of one warp.
  EXPECT_EQ(run(1).l2_atomic_busiest_sector, 1u);
  // A stride of 8 words (one sector): 128 distinct words, so each sector is hit by lanes
  // i, i + 128, ...: 8 threads, of 8 different warps.
  EXPECT_EQ(run(8).l2_atomic_busiest_sector, 8u);
}

// ---------------------------------------------------------------------------------------------
// Barriers and warp collectives
// ---------------------------------------------------------------------------------------------

__global__ void barriers_and_collectives(unsigned* out) {
  __syncthreads();
  unsigned value = threadIdx.x;
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const unsigned votes = __ballot_sync(0xffffffffu, value % 2 == 0);
  __syncwarp();
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    out[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = value + votes;
  }
}

TEST(CountingInstructions, EachWarpsBarriersAndCollectivesCountOnce) {
  GPULAB_REQUIRE_COUNTING();
  constexpr unsigned kBlocks = 2;
  constexpr unsigned kThreads = 64;  // 2 warps a block: 4 warps in all
  DeviceBuffer<unsigned> out(kBlocks * kThreads / kWarp);
  const MemoryCounters c = count_one([&] {
    barriers_and_collectives<<<kBlocks, kThreads>>>(out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.barrier_instructions, 2u * 4);    // two __syncthreads, each warp
  EXPECT_EQ(c.shuffle_instructions, 5u * 4);    // five shuffle steps, each warp
  EXPECT_EQ(c.vote_instructions, 1u * 4);       // one ballot, each warp
  EXPECT_EQ(c.warp_sync_instructions, 1u * 4);  // one __syncwarp, each warp
}

// ---------------------------------------------------------------------------------------------
// Arithmetic (the gpulab_count_ops plugin: framework/sim/plugin/count_ops.cpp)
// ---------------------------------------------------------------------------------------------

// A recurrence of `n` steps (n at run time, so the host compiler cannot fold it): one contracted
// multiply-add each.
__global__ void multiply_add_chain(const float* in, float* out, int n) {
  const float a = in[threadIdx.x];
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    sum = sum * a + 1.0f;
  }
  out[threadIdx.x] = sum;
}

TEST(CountingArithmetic, EachMultiplyAddOfEachWarpCountsOnce) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  constexpr unsigned kThreads = 128;  // 4 warps
  DeviceBuffer<float> in(kThreads);
  DeviceBuffer<float> out(kThreads);
  in.fill_bytes(0);
  for (const int n : {1, 10, 100}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const MemoryCounters c = count_one([&] {
      multiply_add_chain<<<1, kThreads>>>(in.data(), out.data(), n);
      GPULAB_CHECK_LAUNCH();
    });
    EXPECT_EQ(c.fp32_fma_instructions, 4u * n);
    EXPECT_EQ(c.fp32_instructions, 0u);
    EXPECT_EQ(c.fp32_flop, 2u * kThreads * n);
    // The loop's counter, its increment and its exit test are loop control, not counted; its
    // branch is, once an iteration (and the entry test once).
    EXPECT_GE(c.branch_instructions, 4u * n);
    EXPECT_LE(c.branch_instructions, 4u * (n + 2));
    EXPECT_LE(c.integer_instructions, 4u * 2);
    // The counter's increment and exit test count apart, as addresses and loop control.
    EXPECT_GE(c.address_instructions, 4u * n);
    EXPECT_LE(c.address_instructions, 4u * (3 * n + 4));
    EXPECT_EQ(c.special_instructions + c.conversion_instructions + c.fp64_instructions, 0u);
    // One phase, one global load of the path's.
    EXPECT_EQ(c.path_phases, 1u);
    EXPECT_EQ(c.path_global_phases, 1u);
    EXPECT_GE(c.path_arithmetic, static_cast<std::uint64_t>(2 * n));  // the multiply-adds, branches
  }
}

// The same recurrence over a constant 16 steps, unrolled completely (nvcc does so under
// `#pragma unroll`; the sim's translator makes it GCC's `#pragma GCC unroll`) and kept a loop.
__global__ void unrolled_chain(const float* in, float* out) {
  const float a = in[threadIdx.x];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    sum = sum * a + 1.0f;
  }
  out[threadIdx.x] = sum;
}

__global__ void rolled_chain(const float* in, float* out) {
  const float a = in[threadIdx.x];
  float sum = 0.0f;
#pragma unroll 1
  for (int i = 0; i < 16; ++i) {
    sum = sum * a + 1.0f;
  }
  out[threadIdx.x] = sum;
}

TEST(CountingArithmetic, PragmaUnrollLeavesNoLoopBranchesAsOnAGpu) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  DeviceBuffer<float> in(kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  const MemoryCounters unrolled = count_one([&] {
    unrolled_chain<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  const MemoryCounters rolled = count_one([&] {
    rolled_chain<<<1, kWarp>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(unrolled.fp32_fma_instructions, 16u);
  EXPECT_EQ(rolled.fp32_fma_instructions, 16u);
  EXPECT_EQ(unrolled.branch_instructions, 0u);
  EXPECT_GE(rolled.branch_instructions, 16u);
}

// A remainder by a value known at run time only, and by a constant.
__global__ void remainders(const unsigned* in, unsigned* out, unsigned divisor) {
  out[threadIdx.x] = in[threadIdx.x] % divisor;
  out[kWarp + threadIdx.x] = in[threadIdx.x] % 7u;
}

TEST(CountingArithmetic, AnIntegerDivisionByAVariableIsTheGpusSequence) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  DeviceBuffer<unsigned> in(kWarp);
  DeviceBuffer<unsigned> out(2 * kWarp);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    remainders<<<1, kWarp>>>(in.data(), out.data(), 5u);
    GPULAB_CHECK_LAUNCH();
  });
  // % divisor: a conversion to float, a reciprocal, a conversion back and 12 integer
  // instructions; % 7: one integer instruction (nvcc multiplies by a constant's inverse).
  EXPECT_EQ(c.special_instructions, 1u);
  EXPECT_EQ(c.conversion_instructions, 2u);
  EXPECT_GE(c.integer_instructions, 12u + 1);
  EXPECT_LE(c.integer_instructions, 12u + 4);
}

// A quarter of each warp takes an exponential, the rest a multiply-add; then every lane converts
// twice and adds.
__global__ void divergent_arithmetic(const float* in, float* out) {
  const float x = in[threadIdx.x];
  const float y = threadIdx.x % 32 < 8 ? expf(x) : x * 3.0f + 2.0f;
  out[threadIdx.x] = y + static_cast<float>(static_cast<int>(x * 2.0f));
}

TEST(CountingArithmetic, AWarpIssuesWhatAnyOfItsLanesExecutes) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  constexpr unsigned kThreads = 64;  // 2 warps
  DeviceBuffer<float> in(kThreads);
  DeviceBuffer<float> out(kThreads);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    divergent_arithmetic<<<1, kThreads>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  // Both sides of the branch, once per warp: a GPU runs them one after the other.
  EXPECT_EQ(c.special_instructions, 2u);
  EXPECT_EQ(c.fp32_fma_instructions, 2u);
  EXPECT_EQ(c.conversion_instructions, 2u * 2);  // float -> int -> float
  EXPECT_EQ(c.fp32_instructions, 2u * 2);        // x * 2 and the add
  // FLOPs are the lanes': 24 multiply-adds (2 each) and 64 x (multiply + add).
  EXPECT_EQ(c.fp32_flop, 2u * 2 * 24 + 2u * kThreads);
  // The lane test (threadIdx.x % 32 < 8: a mask and a compare) decides a branch: counted.
  EXPECT_GE(c.integer_instructions, 2u * 2);
  EXPECT_GE(c.branch_instructions, 2u);
}

// Two barriers: three phases. Phase 0 loads from global memory and stores to shared memory, phase
// 1 reads two neighbours and adds them, phase 2 shuffles five times (warp 0 only) and writes.
__global__ void three_phases(const float* in, float* out) {
  __shared__ float tile[64];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float v = tile[threadIdx.x] + tile[(threadIdx.x + 1) % 64];
  __syncthreads();
  if (threadIdx.x < 32) {
    for (int offset = 16; offset > 0; offset /= 2) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  out[threadIdx.x] = v;
}

TEST(CountingArithmetic, TheCriticalPathSumsEachPhasesSlowestWarp) {
  GPULAB_REQUIRE_COUNTED_ARITHMETIC();
  constexpr unsigned kBlocks = 3;
  DeviceBuffer<float> in(64);
  DeviceBuffer<float> out(64);
  in.fill_bytes(0);
  const MemoryCounters c = count_one([&] {
    three_phases<<<kBlocks, 64>>>(in.data(), out.data());
    GPULAB_CHECK_LAUNCH();
  });
  EXPECT_EQ(c.path_phases, 3u * kBlocks);
  EXPECT_EQ(c.path_global_phases, 1u * kBlocks);           // the load in phase 0
  EXPECT_EQ(c.path_shared_phases, 2u * kBlocks);           // phases 0 and 1
  EXPECT_EQ(c.path_shared_requests, (1u + 2u) * kBlocks);  // a store; two loads
  EXPECT_EQ(c.path_collectives, 5u * kBlocks);             // warp 0's shuffles
  EXPECT_EQ(c.shuffle_instructions, 5u * kBlocks);
  EXPECT_GE(c.path_arithmetic, (1u + 5u) * kBlocks);    // at least the adds
  EXPECT_EQ(c.fp32_instructions, (2u + 5u) * kBlocks);  // per warp: 1 + 1, then 5
}

// ---------------------------------------------------------------------------------------------
// L2 and DRAM
// ---------------------------------------------------------------------------------------------

constexpr unsigned kStreamThreads = 256;

// Each thread reads float4s a grid-stride apart and writes one float: coalesced, 16 sectors per
// request; the small output is written, never read.
__global__ void sum_float4s(const float4* in, std::size_t count, float* out) {
  const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (std::size_t i = first; i < count; i += stride) {
    const float4 v = in[i];
    sum += v.x + v.y + v.z + v.w;
  }
  out[first] = sum;
}

std::uint64_t l2_bytes() {
  int bytes = 0;
  GPULAB_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, 0));
  return static_cast<std::uint64_t>(bytes);
}

// DRAM bytes read by two passes of sum_float4s over `bytes`, after emptying L2.
std::vector<CountedLaunch> read_twice(std::uint64_t bytes) {
  const std::size_t count = bytes / sizeof(float4);
  DeviceBuffer<float4> in(count);
  const unsigned blocks = 64;
  DeviceBuffer<float> out(std::size_t{blocks} * kStreamThreads);
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
  return gpulab::sim::count_launches([&] {
    for (int pass = 0; pass < 2; ++pass) {
      sum_float4s<<<blocks, kStreamThreads>>>(in.data(), count, out.data());
      GPULAB_CHECK_LAUNCH();
    }
  });
}

TEST(CountingL2, HalfTheL2ReadTwiceComesFromDramOnce) {
  GPULAB_REQUIRE_COUNTING();
  // Half the L2, contiguous: each set receives half its ways, nothing is evicted. The first pass
  // misses every sector (bytes / 32 sectors from DRAM), the second hits every one.
  const std::uint64_t bytes = l2_bytes() / 2;
  const std::vector<CountedLaunch> passes = read_twice(bytes);
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0].counters.dram_bytes_read, bytes);
  EXPECT_EQ(passes[1].counters.dram_bytes_read, 0u);
  // The output lines the first pass wrote are still there: the second pass's stores hit too.
  EXPECT_DOUBLE_EQ(passes[1].counters.l2_hit_rate_pct(), 100.0);
  // The output (64 x 256 floats = 64 KiB) is written back once per pass.
  EXPECT_EQ(passes[0].counters.dram_bytes_written, 64u * kStreamThreads * sizeof(float));
}

TEST(CountingL2, FourTimesTheL2ReadTwiceComesFromDramTwice) {
  GPULAB_REQUIRE_COUNTING();
  // Four times the L2 read in order with LRU replacement: every line is evicted before it is
  // read again, so both passes read all of it from DRAM.
  const std::uint64_t bytes = 4 * l2_bytes();
  const std::vector<CountedLaunch> passes = read_twice(bytes);
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0].counters.dram_bytes_read, bytes);
  EXPECT_EQ(passes[1].counters.dram_bytes_read, bytes);
}

TEST(CountingL2, ACublasProductLeavesItsOutputInL2) {
  GPULAB_REQUIRE_COUNTING();
  // C = A B, 64 x 64 (16 KiB each), then a kernel reads C: from L2, as after a kernel that wrote
  // it. Without the product, the same read comes from DRAM.
  constexpr int kN = 64;
  DeviceBuffer<float> a(kN * kN);
  DeviceBuffer<float> b(kN * kN);
  DeviceBuffer<float> c(kN * kN);
  DeviceBuffer<float> out(std::size_t{4} * kStreamThreads);
  a.fill_bytes(0);
  b.fill_bytes(0);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // The kernel's counts (the last launch: the product, when there is one, is a counted launch
  // too, "cublasSgemm as ..." with its closed-form counts).
  const auto read_c_after = [&](bool product) {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
    const float one = 1.0f;
    const float zero = 0.0f;
    const std::vector<CountedLaunch> launches = gpulab::sim::count_launches([&] {
      if (product) {
        EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a.data(), kN,
                              b.data(), kN, &zero, c.data(), kN),
                  CUBLAS_STATUS_SUCCESS);
      }
      sum_float4s<<<4, kStreamThreads>>>(reinterpret_cast<const float4*>(c.data()), kN * kN / 4,
                                         out.data());
      GPULAB_CHECK_LAUNCH();
    });
    EXPECT_EQ(launches.size(), product ? 2u : 1u);
    if (product && launches.size() == 2) {
      EXPECT_EQ(launches.front().kernel.rfind("cublasSgemm as ", 0), 0u) << launches.front().kernel;
      EXPECT_EQ(launches.front().counters.dram_bytes_read, 2u * kN * kN * sizeof(float));
    }
    return launches.empty() ? MemoryCounters{} : launches.back().counters;
  };
  EXPECT_EQ(read_c_after(true).dram_bytes_read, 0u);
  EXPECT_EQ(read_c_after(false).dram_bytes_read, std::uint64_t{kN} * kN * sizeof(float));
  ASSERT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

TEST(CountingL2, TheModelSeesAllocationsWhereTheyAreGivenNotWhereTheHostPutThem) {
  GPULAB_REQUIRE_COUNTING();
  // The L2 model addresses an allocation by its place in a first-fit allocator (allocation order),
  // not by its host address. A buffer freed and allocated again at the same size takes the same
  // modeled place, as cudaMalloc usually gives the same address back, so the lines the first one
  // left in L2 hit, however the host memory moved in between (here host allocations that take
  // the freed mapping's place and more).
  const std::size_t count = 16 * 1024;  // 256 KiB of float4s
  DeviceBuffer<float> out(std::size_t{64} * kStreamThreads);
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
  const std::vector<CountedLaunch> passes = gpulab::sim::count_launches([&] {
    {
      DeviceBuffer<float4> first(count);
      sum_float4s<<<64, kStreamThreads>>>(first.data(), count, out.data());
      GPULAB_CHECK_LAUNCH();
      GPULAB_CHECK(cudaDeviceSynchronize());
    }
    std::vector<char> host(count * sizeof(float4), 1);  // takes the freed mapping's place
    std::vector<char> more(64u << 20, 1);
    DeviceBuffer<float4> second(count);
    sum_float4s<<<64, kStreamThreads>>>(second.data(), count, out.data());
    GPULAB_CHECK_LAUNCH();
    GPULAB_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(host[12345] + more[12345], 2);
  });
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0].counters.dram_bytes_read, count * sizeof(float4));
  EXPECT_EQ(passes[1].counters.dram_bytes_read, 0u);
  EXPECT_EQ(passes[1].counters.l2_sector_hits,
            passes[1].counters.l2_sector_reads + passes[1].counters.l2_sector_writes);
}

TEST(CountingL2, AMemsetLargerThanTheL2FlushesIt) {
  GPULAB_REQUIRE_COUNTING();
  // The harness's cold-L2 flush: a memset over twice the L2 between two passes evicts the data.
  const std::uint64_t bytes = l2_bytes() / 4;
  const std::size_t count = bytes / sizeof(float4);
  DeviceBuffer<float4> in(count);
  DeviceBuffer<unsigned char> flush(2 * l2_bytes());
  DeviceBuffer<float> out(std::size_t{64} * kStreamThreads);
  const std::vector<CountedLaunch> passes = gpulab::sim::count_launches([&] {
    sum_float4s<<<64, kStreamThreads>>>(in.data(), count, out.data());
    GPULAB_CHECK_LAUNCH();
    GPULAB_CHECK(cudaMemsetAsync(flush.data(), 0, flush.bytes()));
    sum_float4s<<<64, kStreamThreads>>>(in.data(), count, out.data());
    GPULAB_CHECK_LAUNCH();
  });
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[1].counters.dram_bytes_read, bytes);
}

// ---------------------------------------------------------------------------------------------
// Lab 02's components: counted DRAM bytes against the bytes they declare
// ---------------------------------------------------------------------------------------------

TEST(CountingAttention, LabTwoComponentsMoveExactlyTheDramBytesTheyDeclare) {
  GPULAB_REQUIRE_COUNTING();
  // Lab 02's layer on sim (batch 1, seq_len 128, d_model 128, 4 heads), each component counted
  // from a cold L2 as Nsight Compute measures. component_cost declares each tensor read or
  // written once; the 16 x 16 tiled GEMMs read their inputs many times, but the re-reads hit in
  // L2 (the whole layer is 1.2 MB), and every row starts on a sector (128 floats), so DRAM sees
  // each tensor exactly once: counted = declared, byte for byte.
  namespace k = gpulab::kernels;
  const k::AttentionConfig config{1, 128, 128, 4, false};
  k::AttentionBuffers buffers(config);
  k::upload(k::make_attention_inputs(config, 7), buffers);
  for (const k::Component component : k::all_components()) {
    GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
    const std::vector<CountedLaunch> launches =
        gpulab::sim::count_launches([&] { k::run_component(component, config, buffers); });
    ASSERT_EQ(launches.size(), 1u);
    const MemoryCounters& c = launches.front().counters;
    const double counted = static_cast<double>(c.dram_bytes_read + c.dram_bytes_written);
    const double declared = k::component_cost(config, component).bytes;
    std::printf("%-18s counted %9.0f B  declared %9.0f B  ratio %.2f\n",
                std::string(k::component_name(component)).c_str(), counted, declared,
                counted / declared);
    EXPECT_EQ(counted, declared) << k::component_name(component);
  }
}

// ---------------------------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------------------------

constexpr int kTile = 16;

// A transpose through a shared tile without padding (bank conflicts on the column reads) and a
// histogram with shared and global atomics: enough of everything to compare.
__global__ void transpose_and_histogram(const float* in, float* out, unsigned* bins, int n) {
  __shared__ float tile[kTile][kTile];
  __shared__ unsigned local_bins[8];
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  const unsigned linear = threadIdx.y * kTile + threadIdx.x;
  if (linear < 8) {
    local_bins[linear] = 0;
  }
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  const int tx = blockIdx.y * kTile + threadIdx.x;
  const int ty = blockIdx.x * kTile + threadIdx.y;
  const float v = tile[threadIdx.x][threadIdx.y];
  out[ty * n + tx] = v;
  atomicAdd(&local_bins[static_cast<unsigned>(v) % 8], 1u);
  __syncthreads();
  if (linear < 8) {
    atomicAdd(&bins[linear], local_bins[linear]);
  }
}

std::vector<CountedLaunch> run_transpose_histogram() {
  const int n = 64;
  std::vector<float> host(n * n);
  for (int i = 0; i < n * n; ++i) {
    host[static_cast<std::size_t>(i)] = static_cast<float>((i * 7) % 23);
  }
  DeviceBuffer<float> in(host.size());
  DeviceBuffer<float> out(host.size());
  DeviceBuffer<unsigned> bins(8);
  in.copy_from(host);
  bins.fill_bytes(0);
  GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
  return gpulab::sim::count_launches([&] {
    transpose_and_histogram<<<dim3(n / kTile, n / kTile), dim3(kTile, kTile)>>>(
        in.data(), out.data(), bins.data(), n);
    GPULAB_CHECK_LAUNCH();
  });
}

TEST(CountingDeterminism, SameCountsUnderEverySchedule) {
  GPULAB_REQUIRE_COUNTING();
  std::vector<MemoryCounters> seen;
  gpulab::testing::for_each_schedule([&] {
    const std::vector<CountedLaunch> launches = run_transpose_histogram();
    ASSERT_EQ(launches.size(), 1u);
    seen.push_back(launches.front().counters);
  });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
  // The unpadded column reads conflict; each of the 16 blocks makes one global atomic request
  // (lanes 0..7 of its first warp).
  EXPECT_GT(seen[0].shared_load.bank_conflicts, 0u);
  EXPECT_EQ(seen[0].global_atomic.requests, 16u);
}

// The same launch in a child process of this test with one worker, and with four: the counts
// (written by GPULAB_SIM_COUNTERS) must be equal.
// (Disabled: it runs only as that child, with --gtest_also_run_disabled_tests.)
TEST(CountingDeterminism, DISABLED_ChildRun) {
  GPULAB_REQUIRE_COUNTING();
  const std::vector<CountedLaunch> launches = run_transpose_histogram();
  ASSERT_EQ(launches.size(), 1u);
}

TEST(CountingDeterminism, SameCountsWithOneOrManyWorkers) {
  GPULAB_REQUIRE_COUNTING();
  const gpulab::testing::TempDir dir("counting");
  const std::filesystem::path self = gpulab::testing::self_program();
  std::vector<std::vector<CountedLaunch>> runs;
  for (const char* workers : {"1", "4"}) {
    const std::filesystem::path file = dir.path() / (std::string("workers") + workers + ".jsonl");
    const std::string command =
        std::string("GPULAB_SIM_WORKERS=") + workers + " GPULAB_SIM_COUNTERS='" + file.string() +
        "' '" + self.string() +
        "' --gtest_also_run_disabled_tests --gtest_filter=CountingDeterminism.DISABLED_ChildRun "
        ">/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    runs.push_back(gpulab::read_counted_launches(file));
  }
  ASSERT_EQ(runs[0].size(), 1u);
  ASSERT_EQ(runs[1].size(), 1u);
  EXPECT_EQ(runs[0][0].counters, runs[1][0].counters);
  EXPECT_GT(runs[0][0].counters.global_load.requests, 0u);
}

// ---------------------------------------------------------------------------------------------
// Builds that cannot count say so
// ---------------------------------------------------------------------------------------------

TEST(CountingLaunches, CountsOnlyTheGivenWorkInOrderAndKeepsNothing) {
  GPULAB_REQUIRE_COUNTING();
  DeviceBuffer<float> in(kWarp);
  DeviceBuffer<float> out(kWarp);
  in.fill_bytes(0);
  load_strided<<<1, kWarp>>>(in.data(), out.data(), 1);  // counting off: not counted
  GPULAB_CHECK_LAUNCH();
  const std::vector<CountedLaunch> launches = gpulab::sim::count_launches([&] {
    load_strided<<<1, kWarp>>>(in.data(), out.data(), 1);
    store_strided<<<2, kWarp>>>(out.data(), 0);
  });
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_NE(launches[0].kernel.find("load_strided"), std::string::npos) << launches[0].kernel;
  EXPECT_EQ(launches[0].counters.global_load.requests, 1u);
  EXPECT_NE(launches[1].kernel.find("store_strided"), std::string::npos) << launches[1].kernel;
  EXPECT_EQ(launches[1].grid[0], 2u);
  EXPECT_EQ(launches[1].counters.global_load.requests, 0u);
  EXPECT_EQ(launches[1].counters.global_store.requests, 2u);  // one per block
  EXPECT_FALSE(gpulab::sim::counting());                      // the previous setting is back
  EXPECT_TRUE(gpulab::sim::counted_launches().empty());
}

TEST(CountingAvailability, ABuildThatCannotCountRefusesWithTheReason) {
  if (gpulab::sim::counting_available()) {
    EXPECT_TRUE(gpulab::sim::counting_unavailable_reason().empty());
    EXPECT_TRUE(gpulab::sim::set_counting(true));
    EXPECT_TRUE(gpulab::sim::counting());
    EXPECT_TRUE(gpulab::sim::set_counting(false));
    return;
  }
  // The asan preset: one sentence naming the build, no silent zeros.
  EXPECT_NE(gpulab::sim::counting_unavailable_reason().find("AddressSanitizer"), std::string::npos)
      << gpulab::sim::counting_unavailable_reason();
  EXPECT_FALSE(gpulab::sim::set_counting(true));
  EXPECT_FALSE(gpulab::sim::counting());
  EXPECT_THROW(gpulab::sim::ScopedCounting(), std::runtime_error);
  EXPECT_THROW((void)gpulab::sim::count_launches([] {}), std::runtime_error);
}

}  // namespace
