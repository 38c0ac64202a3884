// The sim backend's CUDA runtime: the subset of the CUDA runtime API that gpulab uses, executed
// on the CPU. Code built for the sim backend includes <cuda_runtime.h> and gets this file.
//
// Names, signatures, enum values and error codes follow the CUDA runtime (cuda_runtime_api.h,
// driver_types.h of CUDA 13), so the same source compiles against either. The enums have a fixed
// underlying type (int), so any code a program casts in, e.g. an unknown error, is a valid value.
// The functions have C++ linkage, so they can never be mistaken for libcudart's C symbols.
//
// The simulated device is a spec from gpulab's database: H100 SXM unless the environment variable
// GPULAB_SIM_SPEC names another (see `gpulab specs`). Device memory is host memory, accounted
// against the spec's capacity (or GPULAB_SIM_MEMORY_BYTES when set), so out-of-memory behaves as
// on a GPU. Copies check that device pointers lie inside a live allocation.
//
// Streams and events are ordered; in this version stream work runs when it is enqueued.
#pragma once

#include <cstddef>
#include <string>

// ------------------------------------------------------------------------------------------------
// Types
// ------------------------------------------------------------------------------------------------

/// CUDA runtime error codes (values as in driver_types.h).
enum cudaError : int {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorStubLibrary = 34,
  cudaErrorInsufficientDriver = 35,
  cudaErrorCallRequiresNewerDriver = 36,
  cudaErrorDevicesUnavailable = 46,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidKernelImage = 200,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorInvalidPc = 718,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorSystemDriverMismatch = 803,
  cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;  // NOLINT: the CUDA spelling

/// Copy directions.
enum cudaMemcpyKind : int {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

/// Device attributes (values as in driver_types.h; the subset gpulab queries).
enum cudaDeviceAttr : int {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
};

/// Device properties (the fields of cudaDeviceProp that gpulab reads, same names and types).
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  std::size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  std::size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  std::size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  std::size_t reservedSharedMemPerBlock;
};

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;  // NOLINT: the CUDA spelling
typedef CUevent_st* cudaEvent_t;    // NOLINT: the CUDA spelling

inline constexpr unsigned int cudaStreamDefault = 0x00;
inline constexpr unsigned int cudaStreamNonBlocking = 0x01;
inline constexpr unsigned int cudaEventDefault = 0x00;
inline constexpr unsigned int cudaEventBlockingSync = 0x01;
inline constexpr unsigned int cudaEventDisableTiming = 0x02;

/// Grid and block dimensions.
struct dim3 {
  unsigned int x = 1;
  unsigned int y = 1;
  unsigned int z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) noexcept
      : x(vx), y(vy), z(vz) {}
};

// ------------------------------------------------------------------------------------------------
// Functions (same contracts as the CUDA runtime's)
// ------------------------------------------------------------------------------------------------

// Errors. Every failing call also sets the calling thread's last error.
const char* cudaGetErrorName(cudaError_t error) noexcept;
const char* cudaGetErrorString(cudaError_t error) noexcept;
cudaError_t cudaGetLastError() noexcept;
cudaError_t cudaPeekAtLastError() noexcept;

// Versions: the sim reports the CUDA version whose API it follows, for driver and runtime.
cudaError_t cudaDriverGetVersion(int* version) noexcept;
cudaError_t cudaRuntimeGetVersion(int* version) noexcept;

// Devices: one simulated device, ordinal 0.
cudaError_t cudaGetDeviceCount(int* count) noexcept;
cudaError_t cudaGetDevice(int* device) noexcept;
cudaError_t cudaSetDevice(int device) noexcept;
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* props, int device) noexcept;
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) noexcept;
cudaError_t cudaDeviceSynchronize() noexcept;

// Memory.
cudaError_t cudaMalloc(void** pointer, std::size_t bytes) noexcept;
cudaError_t cudaFree(void* pointer) noexcept;
cudaError_t cudaMallocHost(void** pointer, std::size_t bytes) noexcept;
cudaError_t cudaFreeHost(void* pointer) noexcept;
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) noexcept;
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) noexcept;
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr) noexcept;
cudaError_t cudaMemset(void* pointer, int value, std::size_t bytes) noexcept;
cudaError_t cudaMemsetAsync(void* pointer, int value, std::size_t bytes,
                            cudaStream_t stream = nullptr) noexcept;

// Streams.
cudaError_t cudaStreamCreate(cudaStream_t* stream) noexcept;
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) noexcept;
cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept;
cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept;
cudaError_t cudaStreamQuery(cudaStream_t stream) noexcept;

// Events.
cudaError_t cudaEventCreate(cudaEvent_t* event) noexcept;
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept;
cudaError_t cudaEventDestroy(cudaEvent_t event) noexcept;
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr) noexcept;
cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept;
cudaError_t cudaEventQuery(cudaEvent_t event) noexcept;
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) noexcept;

namespace gpulab::sim {

/// Why the simulated device cannot be used (e.g. GPULAB_SIM_SPEC names an unknown GPU); empty
/// when it can. Read once, at the first runtime call.
[[nodiscard]] const std::string& configuration_error();

/// Bytes of simulated device memory currently allocated.
[[nodiscard]] std::size_t allocated_bytes() noexcept;

}  // namespace gpulab::sim
