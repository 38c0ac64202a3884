// The sim backend's CUDA runtime and cuBLAS subset: the contracts of the CUDA functions it
// replaces (error codes, last-error state, allocation checks, handles, device description).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/memory_stats.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/sim/runtime.hpp"

namespace {

using gpulab::DeviceBuffer;

TEST(SimRuntime, ErrorNamesAndStringsFollowTheCudaRuntime) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(12345)), "unrecognized error code");
  EXPECT_STREQ(cublasGetStatusName(static_cast<cublasStatus_t>(12345)), "CUBLAS_STATUS_UNKNOWN");
}

TEST(SimRuntime, LastErrorIsSetByFailuresAndClearedByGetLastError) {
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice) << "peek must not clear";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(SimRuntime, DescribesOneDeviceWithAttributesMatchingProperties) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  cudaDeviceProp props{};
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_EQ(sms, props.multiProcessorCount);
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  EXPECT_EQ(static_cast<std::size_t>(optin), props.sharedMemPerBlockOptin);
  EXPECT_EQ(cudaGetDeviceProperties(&props, 1), cudaErrorInvalidDevice);
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(9999), 0),
            cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(SimRuntime, MemGetInfoAccountsForAllocations) {
  std::size_t free_before = 0;
  std::size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  cudaDeviceProp props{};
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  EXPECT_EQ(total, props.totalGlobalMem);
  DeviceBuffer<char> buffer(4096);
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before - free_after, 4096u);
}

TEST(SimRuntime, TypedAllocationOverloadsCompileAndWork) {
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 16 * sizeof(float)), cudaSuccess);
  double* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 4 * sizeof(double)), cudaSuccess);
  pinned[3] = 1.5;
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

TEST(SimRuntime, ZeroByteAllocationsAreNullWithoutError) {
  void* pointer = &pointer;
  EXPECT_EQ(cudaMalloc(&pointer, 0), cudaSuccess);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
}

TEST(SimRuntime, MemsetOutsideAnAllocationIsRejected) {
  DeviceBuffer<char> buffer(64);
  EXPECT_EQ(cudaMemset(buffer.data(), 0, 65), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(buffer.data() + 32, 0, 32), cudaSuccess);
  std::vector<char> host(64);
  EXPECT_EQ(cudaMemset(host.data(), 0, host.size()), cudaErrorInvalidValue) << "host pointer";
  (void)cudaGetLastError();
}

TEST(SimRuntime, EventsMeasureHostTimeBetweenRecords) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cudaEventRecord(stop), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);  // records complete on the device thread
  float ms = 0.0f;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 2000.0f);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
}

TEST(SimRuntime, UnknownCopyDirectionIsRejected) {
  DeviceBuffer<char> buffer(8);
  char host[8] = {};
  EXPECT_EQ(cudaMemcpy(buffer.data(), host, 8, static_cast<cudaMemcpyKind>(7)),
            cudaErrorInvalidMemcpyDirection);
  (void)cudaGetLastError();
}

TEST(SimRuntime, InvalidFlagsAreRejected) {
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, 0x80), cudaErrorInvalidValue);
  cudaEvent_t event = nullptr;
  EXPECT_EQ(cudaEventCreateWithFlags(&event, 0x80), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(SimCublas, HandlesCarryTheirStreamAndAreDestroyedOnce) {
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  EXPECT_EQ(cublasGetStream(handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(SimCublas, StatusNamesFollowCublas) {
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_EXECUTION_FAILED),
               "CUBLAS_STATUS_EXECUTION_FAILED");
  EXPECT_STREQ(cublasGetStatusString(CUBLAS_STATUS_ALLOC_FAILED), "the resource allocation failed");
}

// "threadsafe" death tests re-execute the binary, so the child reads the environment afresh.
TEST(SimRuntimeDeathTest, MemoryLimitFromTheEnvironmentCausesOutOfMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_MEMORY_BYTES", "1000000", 1);
        void* a = nullptr;
        void* b = nullptr;
        const bool ok = cudaMalloc(&a, 600'000) == cudaSuccess &&
                        cudaMalloc(&b, 600'000) == cudaErrorMemoryAllocation &&
                        cudaFree(a) == cudaSuccess && cudaMalloc(&b, 600'000) == cudaSuccess;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(SimRuntimeDeathTest, MalformedMemoryLimitMakesTheDeviceUnavailable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* limit : {"lots", "-5", " 1000", "0"}) {
    SCOPED_TRACE(limit);
    EXPECT_EXIT(
        {
          setenv("GPULAB_SIM_MEMORY_BYTES", limit, 1);
          int count = -1;
          const bool ok = cudaGetDeviceCount(&count) == cudaErrorInitializationError &&
                          count == 0 &&
                          gpulab::sim::configuration_error().find(std::string("'") + limit + "'") !=
                              std::string::npos;
          std::exit(ok ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
  }
}

TEST(SimRuntime, CopiesOutsideAnAllocationAreRejected) {
  DeviceBuffer<float> buffer(8);
  std::vector<float> host(16);
  EXPECT_EQ(cudaMemcpy(buffer.data(), host.data(), 16 * sizeof(float), cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host.data(), buffer.data() + 4, 4 * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
}

TEST(SimRuntime, AllocationsAreAccountedAndFreed) {
  const std::size_t before = gpulab::sim::allocated_bytes();
  {
    DeviceBuffer<char> a(1000);
    EXPECT_EQ(gpulab::sim::allocated_bytes(), before + 1000);
  }
  EXPECT_EQ(gpulab::sim::allocated_bytes(), before);
  int not_allocated = 0;
  EXPECT_EQ(cudaFree(&not_allocated), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST(SimRuntime, EveryCudaMallocIsInTheMemoryAccountingWithTheSiteOfADeviceBuffer) {
  gpulab::reset_peak_memory_stats();
  const gpulab::MemoryStats before = gpulab::memory_stats();
  void* bare = nullptr;
  ASSERT_EQ(cudaMalloc(&bare, 3000), cudaSuccess);
  {
    DeviceBuffer<char> a(1000);
    const unsigned line = __LINE__ - 1;
    const gpulab::MemoryStats s = gpulab::memory_stats();
    EXPECT_EQ(s.allocated_bytes, before.allocated_bytes + 4000);
    EXPECT_EQ(s.allocations, 2U);
    bool found_bare = false;
    bool found_buffer = false;
    for (const gpulab::LiveAllocation& l : gpulab::live_allocations()) {
      if (l.address == reinterpret_cast<std::uintptr_t>(bare)) {
        found_bare = true;
        EXPECT_TRUE(l.file.empty()) << "a bare cudaMalloc has no site: " << l.file;
      } else if (l.address == reinterpret_cast<std::uintptr_t>(a.data())) {
        found_buffer = true;
        EXPECT_NE(l.file.find("runtime_test.cpp"), std::string::npos) << l.file;
        EXPECT_EQ(l.line, line);
      }
    }
    EXPECT_TRUE(found_bare && found_buffer);
  }
  ASSERT_EQ(cudaFree(bare), cudaSuccess);
  const gpulab::MemoryStats after = gpulab::memory_stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.peak_allocated_bytes, before.allocated_bytes + 4000);
  EXPECT_EQ(after.frees, 2U);
}

TEST(SimRuntime, DestroyedHandlesAreInvalid) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}
TEST(SimSchedule, ParsesPrintsAndRejects) {
  gpulab::sim::Schedule schedule;
  std::string error;
  for (const char* text : {"forward", "reverse", "shuffle:0", "shuffle:18446744073709551615"}) {
    ASSERT_TRUE(gpulab::sim::Schedule::parse(text, schedule, error)) << text << ": " << error;
    EXPECT_EQ(schedule.to_string(), text);
  }
  EXPECT_EQ(schedule.order, gpulab::sim::Schedule::Order::shuffle);
  EXPECT_EQ(schedule.seed, 18446744073709551615ull);
  for (const char* text : {"", "sideways", "shuffle", "shuffle:", "shuffle:-1", "shuffle:1x",
                           "shuffle:18446744073709551616", "Forward"}) {
    error.clear();
    EXPECT_FALSE(gpulab::sim::Schedule::parse(text, schedule, error)) << text;
    EXPECT_NE(error.find("forward, reverse or shuffle:<seed>"), std::string::npos) << error;
  }
}

TEST(SimSchedule, ScopedScheduleRestoresThePreviousOne) {
  const gpulab::sim::Schedule before = gpulab::sim::schedule();
  {
    const gpulab::sim::ScopedSchedule scope({gpulab::sim::Schedule::Order::shuffle, 3});
    EXPECT_EQ(gpulab::sim::schedule().to_string(), "shuffle:3");
    gpulab::sim::set_schedule({gpulab::sim::Schedule::Order::reverse, 0});
    EXPECT_EQ(gpulab::sim::schedule().to_string(), "reverse");
  }
  EXPECT_EQ(gpulab::sim::schedule(), before);
}

TEST(SimScheduleDeathTest, TheEnvironmentChoosesTheScheduleOrExplainsWhyNot) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_SCHEDULE", "shuffle:42", 1);
        std::exit(gpulab::sim::schedule().to_string() == "shuffle:42" ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("GPULAB_SIM_SCHEDULE", "backwards", 1);
        int count = -1;
        const bool ok =
            cudaGetDeviceCount(&count) == cudaErrorInitializationError &&
            gpulab::sim::configuration_error().find("GPULAB_SIM_SCHEDULE") != std::string::npos;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

// A child: the pool of workers starts with the first work that runs blocks (here a cuBLAS call),
// and set_worker_count works only before that.
TEST(SimRuntimeDeathTest, TheWorkerCountIsChosenBeforeThePoolStarts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        bool ok = gpulab::sim::set_worker_count(3) && gpulab::sim::worker_count() == 3 &&
                  !gpulab::sim::set_worker_count(0) && !gpulab::sim::set_worker_count(1025) &&
                  gpulab::sim::worker_count() == 3;
        float* m = nullptr;
        ok = ok && cudaMalloc(&m, 3 * 4 * sizeof(float)) == cudaSuccess;
        cublasHandle_t handle = nullptr;
        ok = ok && cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS;
        const float one = 1.0f;
        ok = ok &&
             cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, m, 2, m + 4, 2, &one,
                         m + 8, 2) == CUBLAS_STATUS_SUCCESS &&
             cudaDeviceSynchronize() == cudaSuccess;
        ok = ok && !gpulab::sim::set_worker_count(2) && gpulab::sim::worker_count() == 3;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(SimRuntime, WorkersAndKernelResources) {
  EXPECT_GE(gpulab::sim::worker_count(), 1u);
  static const int kernel_stand_in = 0;  // any address identifies a kernel
  gpulab::sim::set_kernel_resources(&kernel_stand_in, 40, 4096);
  cudaFuncAttributes attributes{};
  ASSERT_EQ(cudaFuncGetAttributes(&attributes, &kernel_stand_in), cudaSuccess);
  EXPECT_EQ(attributes.numRegs, 40);
  EXPECT_EQ(attributes.sharedSizeBytes, 4096u);
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 48 * 1024);
  EXPECT_EQ(cudaFuncGetAttributes(&attributes, static_cast<const void*>(nullptr)),
            cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

}  // namespace
