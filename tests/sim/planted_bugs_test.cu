// Bugs students make, planted on purpose, and how each is caught: on sim deterministically (two
// thread schedules, guard pages or AddressSanitizer, the launch checks, the memory limit, barrier
// analysis); on cuda the checks a GPU itself makes. Where a GPU's behaviour is undefined (a race,
// a divergent barrier) the cuda build skips and says so: compute-sanitizer is the tool there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#if defined(GPULAB_BACKEND_SIM)
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#endif

#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "schedules.hpp"
#include "test_device.hpp"
#if defined(GPULAB_BACKEND_SIM)
#include "block_sum.hpp"
#endif

namespace {

using gpulab::DeviceBuffer;
#if defined(GPULAB_BACKEND_SIM)
using gpulab::testing::failure_of;
#endif

#if defined(GPULAB_BACKEND_SIM)
constexpr unsigned kBlock = gpulab::testing::kSumBlock;
using gpulab::testing::block_sum;

// Runs the reduction of 4 blocks of ones under `schedule`; returns the block sums.
template <bool barrier_in_loop>
std::vector<float> sums_under(const char* schedule) {
  gpulab::sim::Schedule order;
  std::string error;
  EXPECT_TRUE(gpulab::sim::Schedule::parse(schedule, order, error)) << error;
  const gpulab::sim::ScopedSchedule scope(order);
  DeviceBuffer<float> in(4 * kBlock), out(4);
  in.copy_from(std::vector<float>(4 * kBlock, 1.0f));
  out.fill_bytes(0xff);
  block_sum<barrier_in_loop><<<4, kBlock>>>(in.data(), out.data());
  GPULAB_CHECK_LAUNCH();
  return out.to_vector();
}
#endif  // GPULAB_BACKEND_SIM

TEST(PlantedBugs, AMissingSyncthreadsFailsUnderOneOfTwoSchedules) {
#if defined(GPULAB_BACKEND_SIM)
  const std::vector<float> right(4, static_cast<float>(kBlock));
  EXPECT_EQ(sums_under<true>("forward"), right);
  EXPECT_EQ(sums_under<true>("reverse"), right);
  const bool caught =
      sums_under<false>("forward") != right || sums_under<false>("reverse") != right;
  EXPECT_TRUE(caught) << "the reduction without a barrier gave the right sum under both schedules";
#else
  GTEST_SKIP() << "a race's outcome on a GPU depends on timing; the sim backend's schedules "
                  "make it deterministic";
#endif
}

#if defined(GPULAB_BACKEND_SIM) && defined(__SANITIZE_ADDRESS__)
__global__ void write_one_past_the_end(float* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) {  // the bug: <= instead of <
    data[i] = 1.0f;
  }
}
#endif

TEST(PlantedBugsDeathTest, AnOutOfBoundsWriteIsReportedByAddressSanitizer) {
#if defined(GPULAB_BACKEND_SIM) && defined(__SANITIZE_ADDRESS__)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        DeviceBuffer<float> data(100);
        write_one_past_the_end<<<1, 128>>>(data.data(), 100);
        cudaDeviceSynchronize();
      },
      "heap-buffer-overflow.*write_one_past_the_end.*planted_bugs_test.cu:[0-9]+");
#else
  GTEST_SKIP() << "needs the sim backend built with AddressSanitizer (cmake --preset asan); on a "
                  "GPU use compute-sanitizer";
#endif
}

// Device allocations: cudaMalloc's 256-byte alignment and every requested byte usable, on both
// backends. On sim outside AddressSanitizer builds each allocation is its own mapping with a
// PROT_NONE guard page right after its end rounded up to 256 bytes, so an overrun past that
// faults at once (SIGSEGV, the sim's cudaErrorIllegalAddress) instead of corrupting the heap.
#if defined(__SANITIZE_ADDRESS__)
#define GPULAB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPULAB_TEST_ASAN 1
#endif
#endif
#if defined(GPULAB_BACKEND_SIM) && !defined(GPULAB_TEST_ASAN)
#define GPULAB_TEST_GUARD_PAGES 1
#endif

// Sets every byte of [data, data + n) to `value`, a grid-stride loop.
__global__ void set_bytes(unsigned char* data, std::size_t n, unsigned char value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    data[i] = value;
  }
}

#if defined(GPULAB_BACKEND_SIM)
// One thread writes the byte at data + offset (the guard-page tests, and the kernel accesses that
// are not to device memory).
__global__ void write_byte_at(unsigned char* data, std::size_t offset) {
  data[offset] = 1;
}
#endif

#if defined(GPULAB_TEST_GUARD_PAGES)
// The permissions column of /proc/self/maps ("rw-p", "---p") for the mapping holding `address`;
// empty when none does.
std::string protection_of(const void* address) {
  const auto wanted = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::uintptr_t start = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::string permissions;
    if (fields >> std::hex >> start >> dash >> end >> permissions && start <= wanted &&
        wanted < end) {
      return permissions;
    }
  }
  return {};
}

std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t lines = 0;
  for (std::string line; std::getline(maps, line);) {
    ++lines;
  }
  return lines;
}

// The bug: `<=` instead of `<`, so thread n writes one element past the end.
__global__ void write_one_past_n(float* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) {
    data[i] = 1.0f;
  }
}

// Reads one element past the end the same way, into an output that is large enough.
__global__ void read_one_past_n(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) {
    out[i] = in[i];
  }
}

// Runs `body` in a death-test child that must die of SIGSEGV (writing no core file).
template <class Body>
void expect_segfault(const char* what, Body body) {
  SCOPED_TRACE(what);
  EXPECT_EXIT(
      {
        rlimit no_core{};
        setrlimit(RLIMIT_CORE, &no_core);
        body();
        std::exit(0);  // not reached when the guard page caught the access
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}
#endif  // GPULAB_TEST_GUARD_PAGES

TEST(DeviceAllocations, AreAlignedAndUsableToTheLastRequestedByte) {
  GPULAB_REQUIRE_DEVICE();
  (void)cudaGetLastError();  // an earlier test's leftover error must not fail a launch check
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{255}, std::size_t{256},
                                  std::size_t{4095}, std::size_t{4096}, std::size_t{1} << 20}) {
    SCOPED_TRACE("bytes " + std::to_string(bytes));
    unsigned char* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(device) % 256, 0u);

    std::vector<unsigned char> pattern(bytes);
    for (std::size_t i = 0; i < bytes; ++i) {
      pattern[i] = static_cast<unsigned char>(i * 7 + bytes);
    }
    std::vector<unsigned char> back(bytes);
    ASSERT_EQ(cudaMemcpy(device, pattern.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, pattern);

    ASSERT_EQ(cudaMemset(device, 0xab, bytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, std::vector<unsigned char>(bytes, 0xab));

    set_bytes<<<4, 256>>>(device, bytes, 0x5c);
    GPULAB_CHECK_LAUNCH();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, std::vector<unsigned char>(bytes, 0x5c));

#if defined(GPULAB_TEST_GUARD_PAGES)
    // The last requested byte was written above (by the kernel: host code may not touch device
    // memory); the guard page starts where the end, rounded up to 256 bytes, is.
    const std::size_t rounded = (bytes + 255) / 256 * 256;
    EXPECT_EQ(protection_of(device + rounded - 1), "rw-p");
    EXPECT_EQ(protection_of(device + rounded), "---p");
#endif
    EXPECT_EQ(cudaFree(device), cudaSuccess);
  }
}

TEST(DeviceAllocations, FreeingGivesBackEveryMapping) {
#if defined(GPULAB_TEST_GUARD_PAGES)
  (void)cudaGetLastError();  // an earlier test's leftover error must not fail a launch check
  // Warm up: the device thread, the workers and their fiber stacks exist before counting.
  {
    DeviceBuffer<unsigned char> warm(1);
    set_bytes<<<1, 32>>>(warm.data(), 1, 0);
    GPULAB_CHECK_LAUNCH();
    GPULAB_CHECK(cudaDeviceSynchronize());
  }
  const std::size_t accounted = gpulab::sim::allocated_bytes();
  const std::size_t before = mapping_count();
  const std::size_t sizes[] = {1, 255, 256, 4095, 4096, 65536, (std::size_t{1} << 20) + 3};
  for (int round = 0; round < 3000; ++round) {
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(cudaMalloc(&a, sizes[round % 7]), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b, sizes[(round + 3) % 7]), cudaSuccess);
    ASSERT_EQ(cudaFree(round % 2 == 0 ? a : b), cudaSuccess);
    ASSERT_EQ(cudaFree(round % 2 == 0 ? b : a), cudaSuccess);
  }
  std::vector<void*> live(200);
  for (std::size_t i = 0; i < live.size(); ++i) {
    ASSERT_EQ(cudaMalloc(&live[i], sizes[i % 7]), cudaSuccess);
  }
  EXPECT_GE(mapping_count(), before + live.size()) << "one mapping per live allocation";
  for (void* pointer : live) {
    ASSERT_EQ(cudaFree(pointer), cudaSuccess);
  }
  EXPECT_LE(mapping_count(), before + 2) << "cudaFree left mappings behind";
  EXPECT_EQ(gpulab::sim::allocated_bytes(), accounted);
#elif defined(GPULAB_BACKEND_SIM)
  GTEST_SKIP() << "under AddressSanitizer device memory comes from ASan's allocator, which keeps "
                  "its own mappings; LeakSanitizer checks for leaks there";
#else
  GTEST_SKIP() << "checks the sim allocator's mappings; on a GPU device memory is not mapped "
                  "into the process this way";
#endif
}

TEST(DeviceAllocationsDeathTest, AnOverrunPastTheRoundedEndFaultsAtOnce) {
#if defined(GPULAB_TEST_GUARD_PAGES)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 1024 floats (4096 bytes, a multiple of 256): element n is the first byte of the guard page.
  expect_segfault("kernel writes element n of 1024 floats", [] {
    DeviceBuffer<float> data(1024);
    write_one_past_n<<<5, 256>>>(data.data(), 1024);
    cudaDeviceSynchronize();
  });
  expect_segfault("kernel reads element n of 1024 floats", [] {
    DeviceBuffer<float> in(1024);
    DeviceBuffer<float> out(1025);
    read_one_past_n<<<5, 256>>>(in.data(), out.data(), 1024);
    cudaDeviceSynchronize();
  });
  // 256 floats (1024 bytes): element n plus 256 bytes.
  expect_segfault("kernel writes 256 bytes past element n of 256 floats", [] {
    DeviceBuffer<float> data(256);
    write_byte_at<<<1, 1>>>(reinterpret_cast<unsigned char*>(data.data()), 256 * 4 + 256);
    cudaDeviceSynchronize();
  });
  // An odd size (1001 bytes), 1 KiB past the end.
  expect_segfault("kernel writes 1 KiB past 1001 bytes", [] {
    DeviceBuffer<unsigned char> data(1001);
    write_byte_at<<<1, 1>>>(data.data(), 1001 + 1024);
    cudaDeviceSynchronize();
  });
  // Not caught: a write inside the rounding slack (1001 bytes round up to 1024).
  EXPECT_EXIT(
      {
        DeviceBuffer<unsigned char> data(1001);
        write_byte_at<<<1, 1>>>(data.data(), 1023);
        std::exit(cudaDeviceSynchronize() == cudaSuccess ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  // Host code that runs past the end of device memory faults the same way.
  expect_segfault("host writes element n of 1024 floats", [] {
    DeviceBuffer<float> data(1024);
    volatile float* pointer = data.data();
    pointer[1024] = 1.0f;
  });
#elif defined(GPULAB_BACKEND_SIM)
  GTEST_SKIP() << "under AddressSanitizer device memory has no guard pages: ASan reports the "
                  "overrun instead (PlantedBugsDeathTest.AnOutOfBoundsWriteIsReportedByAddress"
                  "Sanitizer)";
#else
  GTEST_SKIP() << "on a GPU an out-of-bounds access is cudaErrorIllegalAddress or silent; use "
                  "compute-sanitizer";
#endif
}

#if defined(GPULAB_BACKEND_SIM)
extern "C" void* gpulab_sim_checked_memcpy(void* destination, const void* source,
                                           std::size_t bytes);
#endif

TEST(HostCodeDeathTest, ReachingDeviceMemoryEndsTheProgramSayingWhere) {
#if defined(GPULAB_BACKEND_SIM)
  if (!gpulab::sim::counting_available()) {
    GTEST_SKIP() << "host accesses are seen through the counting callbacks: "
                 << gpulab::sim::counting_unavailable_reason();
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // As on a GPU, where it faults: a read, a write, and the C library's memcpy (a lab's sim
  // library calls the checked one).
  EXPECT_DEATH(
      {
        DeviceBuffer<float> data(64);
        volatile float* pointer = data.data();
        (void)pointer[3];
      },
      "gpulab sim: host code read 4 byte\\(s\\) at 0x[0-9a-f]+, inside device memory \\(the "
      "cudaMalloc allocation of 256 bytes at 0x[0-9a-f]+\\), at instruction 0x[0-9a-f]+ .*: on a "
      "GPU host code cannot reach device memory");
  EXPECT_DEATH(
      {
        DeviceBuffer<double> data(8);
        volatile double* pointer = data.data();
        pointer[7] = 1.0;
      },
      "host code wrote 8 byte\\(s\\) .*the cudaMalloc allocation of 64 bytes");
  EXPECT_DEATH(
      {
        DeviceBuffer<float> data(64);
        float copy[4] = {};
        gpulab_sim_checked_memcpy(copy, data.data() + 60, sizeof copy);
      },
      "host code read 16 byte\\(s\\)");
  // Kernels, the CUDA API, pinned memory and host memory around device memory are fine.
  DeviceBuffer<unsigned char> device(1001);
  set_bytes<<<4, 256>>>(device.data(), 1001, 0x5c);
  GPULAB_CHECK_LAUNCH();
  std::vector<unsigned char> back(1001);
  GPULAB_CHECK(cudaMemcpy(back.data(), device.data(), back.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, std::vector<unsigned char>(1001, 0x5c));
  unsigned char* pinned = nullptr;
  GPULAB_CHECK(cudaMallocHost(&pinned, 16));
  pinned[15] = 7;
  EXPECT_EQ(pinned[15], 7);
  GPULAB_CHECK(cudaFreeHost(pinned));
  std::vector<float> host(1 << 16, 1.0f);
  float sum = 0;
  for (const float x : host) {
    sum += x;
  }
  EXPECT_EQ(sum, 65536.0f);
#else
  GTEST_SKIP() << "on a GPU, host code that dereferences device memory faults by itself";
#endif
}

TEST(KernelAccesses, HostMemoryIsAnIllegalAddressDeviceAndPinnedMemoryAreNot) {
#if defined(GPULAB_BACKEND_SIM)
  if (!gpulab::sim::counting_available()) {
    GTEST_SKIP() << "a kernel's accesses are seen through the counting callbacks: "
                 << gpulab::sim::counting_unavailable_reason();
  }
  (void)cudaGetLastError();
  const gpulab::sim::ScopedCounting counting;
  // A std::vector's data (the host heap) used as a kernel's scratch: a GPU cannot reach it.
  std::vector<unsigned char> host(64);
  write_byte_at<<<1, 1>>>(host.data(), 3);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the launch itself is fine";
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  const std::string failure = gpulab::sim::kernel_failure();
  EXPECT_NE(failure.find("wrote 1 byte(s) of host memory at"), std::string::npos) << failure;
  EXPECT_EQ(host[3], 0) << "the write never happened";
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // the error is sticky, as on a GPU
  // Device and pinned memory are reachable.
  DeviceBuffer<unsigned char> device(64);
  write_byte_at<<<1, 1>>>(device.data(), 3);
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned char* pinned = nullptr;
  GPULAB_CHECK(cudaMallocHost(&pinned, 64));
  write_byte_at<<<1, 1>>>(pinned, 3);
  GPULAB_CHECK_LAUNCH();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(pinned[3], 1);
  GPULAB_CHECK(cudaFreeHost(pinned));
#else
  GTEST_SKIP() << "on a GPU the launch fails by itself (cudaErrorIllegalAddress)";
#endif
}

// Copies float4s from `in + offset` floats: at an offset that is not a multiple of 4 floats each
// load is 4, 8 or 12 bytes past a multiple of 16, which faults on a GPU.
[[maybe_unused]] constexpr int kFloat4LoadLine = __LINE__ + 3;  // named by the sim's report
__global__ void copy_float4s(const float* in, float4* out, int offset) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = reinterpret_cast<const float4*>(in + offset)[i];
}

#if defined(GPULAB_BACKEND_SIM)
// The same through __ldg: on sim a function of the sim's headers, inlined; the report names the
// line that called it.
constexpr int kLdgLoadLine = __LINE__ + 3;
__global__ void copy_float4s_ldg(const float* in, float4* out, int offset) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __ldg(reinterpret_cast<const float4*>(in + offset) + i);
}
#endif

// A struct of two floats, copied as a whole: it needs the 4-byte alignment of its members only.
struct FloatPair {
  float a;
  float b;
};
__global__ void copy_pairs(const FloatPair* in, FloatPair* out) {
  out[threadIdx.x] = in[threadIdx.x];
}

// Launches `kernel` (copy_float4s or its __ldg twin) at 1 float past a 16-byte boundary: the
// launch's error.
cudaError_t copy_float4s_misaligned(void (*kernel)(const float*, float4*, int) = copy_float4s) {
  float* in = nullptr;
  float4* out = nullptr;
  EXPECT_EQ(cudaMalloc(&in, (4 * 64 + 4) * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&out, 64 * sizeof(float4)), cudaSuccess);
  kernel<<<1, 64>>>(in, out, 1);
  // The error is sticky: a launch that already ran (counted launches may) reports it too.
  return cudaDeviceSynchronize();  // (the cudaDeviceReset after it frees both)
}

TEST(KernelAccesses, AnAccessNotAlignedAsItsTypeNeedsIsAMisalignedAddress) {
  GPULAB_REQUIRE_DEVICE();
  (void)cudaGetLastError();
  {
    DeviceBuffer<float> in(4 * 64 + 4);
    in.fill_bytes(0);
    DeviceBuffer<float4> out(64);
    copy_float4s<<<1, 64>>>(in.data(), out.data(), 4);
    GPULAB_CHECK_LAUNCH();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    DeviceBuffer<FloatPair> pairs(32);
    copy_pairs<<<1, 32>>>(reinterpret_cast<const FloatPair*>(in.data() + 1), pairs.data());
    GPULAB_CHECK_LAUNCH();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a pair of floats at 4 bytes past 8";
  }
#if defined(GPULAB_BACKEND_SIM)
  // Counted or not (the graded tests count every launch), with the line of the access.
  for (const bool counted : {false, true}) {
    SCOPED_TRACE(counted ? "counted" : "not counted");
    if (counted && !gpulab::sim::counting_available()) {
      continue;  // a build that cannot count (the asan preset)
    }
    std::optional<gpulab::sim::ScopedCounting> counting;
    if (counted) {
      counting.emplace();
    }
    EXPECT_EQ(copy_float4s_misaligned(), cudaErrorMisalignedAddress);
    const std::string failure = gpulab::sim::kernel_failure();
    for (const std::string& part : {std::string("failed in block (0,0,0)"),
                                    std::string("misaligned address: read 16 bytes at "),
                                    ", at planted_bugs_test.cu:" + std::to_string(kFloat4LoadLine) +
                                        ", which is 4 bytes past a multiple of 16: "}) {
      EXPECT_NE(failure.find(part), std::string::npos)
          << "missing: " << part << "\nin: " << failure;
    }
    EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // the error is sticky, as on a GPU
  }
  EXPECT_EQ(copy_float4s_misaligned(copy_float4s_ldg), cudaErrorMisalignedAddress);
  const std::string failure = gpulab::sim::kernel_failure();
  const std::string line =
      ", at planted_bugs_test.cu:" + std::to_string(kLdgLoadLine) + " (in device.hpp:";
  EXPECT_NE(failure.find(line), std::string::npos) << "missing: " << line << "\nin: " << failure;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
#else
  EXPECT_EQ(copy_float4s_misaligned(), cudaErrorMisalignedAddress);
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
#endif
}

TEST(DeviceAllocationsDeathTest, ResetUnmapsEveryAllocation) {
#if defined(GPULAB_TEST_GUARD_PAGES)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        void* warm = nullptr;
        bool ok = cudaMalloc(&warm, 1) == cudaSuccess && cudaFree(warm) == cudaSuccess;
        const std::size_t before = mapping_count();
        std::vector<void*> live(100);
        for (void*& pointer : live) {
          ok = ok && cudaMalloc(&pointer, 5000) == cudaSuccess;
        }
        ok = ok && mapping_count() >= before + live.size();
        ok = ok && cudaDeviceReset() == cudaSuccess && mapping_count() <= before + 2 &&
             gpulab::sim::allocated_bytes() == 0;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
#else
  GTEST_SKIP() << "checks the sim allocator's guard-page mappings (sim builds without "
                  "AddressSanitizer)";
#endif
}

__global__ void noop() {}

TEST(PlantedBugs, ABlockOf2048ThreadsFailsTheLaunch) {
  GPULAB_REQUIRE_DEVICE();
  noop<<<1, 2048>>>();
  EXPECT_EQ(cudaGetLastError(), gpulab::testing::kImpossibleLaunchError);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // a launch error is not sticky
}

TEST(PlantedBugs, AnAllocationLargerThanTheDeviceIsOutOfMemory) {
  GPULAB_REQUIRE_DEVICE();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPULAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, total_bytes + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMalloc(&memory, 1024), cudaSuccess);  // not sticky: the device is fine
  EXPECT_EQ(cudaFree(memory), cudaSuccess);
}

#if defined(GPULAB_BACKEND_SIM)
// The early-exit bug: threads past n return, the others wait at a barrier they never reach.
__global__ void early_exit_then_barrier(float* data, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= n) {
    return;
  }
  data[i] *= 2.0f;
  __syncthreads();
  data[i] += 1.0f;
}

// Two halves of a block wait at two different barriers.
__global__ void barriers_in_branches(float* data) {
  if (threadIdx.x < 32) {
    data[threadIdx.x] = 1.0f;
    __syncthreads();
  } else {
    data[threadIdx.x] = 2.0f;
    __syncthreads();
  }
}

// Warp 0 waits in a shuffle for lanes that wait at __syncthreads.
__global__ void shuffle_across_a_barrier(float* data) {
  float value = data[threadIdx.x];
  if (threadIdx.x % 32 < 16) {
    value = __shfl_down_sync(0xffffffffu, value, 1);
  } else {
    __syncthreads();
  }
  data[threadIdx.x] = value;
}

#endif

TEST(PlantedBugs, ADivergentBarrierIsAnErrorNotAHang) {
#if defined(GPULAB_BACKEND_SIM)
  DeviceBuffer<float> data(64);
  float* pointer = data.data();
  const std::string exited = failure_of([&] { early_exit_then_barrier<<<1, 64>>>(pointer, 40); });
  EXPECT_NE(exited.find("divergent __syncthreads"), std::string::npos) << exited;
  EXPECT_NE(exited.find("threads 0-39 wait at __syncthreads (planted_bugs_test.cu:"),
            std::string::npos)
      << exited;
  EXPECT_NE(exited.find("threads 40-63 have exited"), std::string::npos) << exited;

  DeviceBuffer<float> more(64);
  pointer = more.data();
  const std::string branches = failure_of([&] { barriers_in_branches<<<1, 64>>>(pointer); });
  EXPECT_NE(branches.find("wait at different barriers"), std::string::npos) << branches;

  DeviceBuffer<float> last(64);
  pointer = last.data();
  const std::string deadlock = failure_of([&] { shuffle_across_a_barrier<<<1, 64>>>(pointer); });
  EXPECT_NE(deadlock.find("deadlock"), std::string::npos) << deadlock;
  EXPECT_NE(deadlock.find("wait in __shfl_down_sync with mask 0xffffffff"), std::string::npos)
      << deadlock;
#else
  GTEST_SKIP() << "a divergent barrier is undefined behaviour on a GPU (it may hang or appear to "
                  "work); the sim backend reports it";
#endif
}

}  // namespace
