// The sim backend's CUDA runtime: the subset of the CUDA runtime API that gpulab uses, executed
// on the CPU. Code built for the sim backend includes <cuda_runtime.h> and gets this file.
//
// Names, signatures, enum values and error codes follow the CUDA runtime (cuda_runtime_api.h,
// driver_types.h of CUDA 13), so the same source compiles against either. The enums have a fixed
// underlying type (int), so any code a program casts in, e.g. an unknown error, is a valid value.
// The functions have C++ linkage, so they can never be mistaken for libcudart's C symbols.
//
// The simulated device is a spec from gpulab's database: H100 SXM unless the program chose another
// (prepare_device) or the environment variable GPULAB_SIM_SPEC names one (see `gpulab specs`; the
// sim reads its environment in one place, src/settings.cpp). Device memory is host memory,
// accounted against the spec's capacity (or GPULAB_SIM_MEMORY_BYTES when set), so out-of-memory
// behaves as on a GPU. Copies check that device pointers lie inside a live allocation.
//
// Stream work (copies, memsets, kernels, event records, cuBLAS calls) is queued and runs on the
// simulator's device thread in order, while the host goes on: code that forgets to synchronize is
// as wrong here as on a GPU. Kernels run on the CPU (gpulab/sim/device.hpp says how); a kernel
// that fails (device assert, __trap, a barrier some threads never reach) leaves a sticky error, as
// on a GPU: every later call returns it until cudaDeviceReset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/counters.hpp"
#include "gpulab/sim/vector_types.hpp"

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

/// A device's UUID (the type of cudaDeviceProp::uuid); the sim's is all zero.
struct cudaUUID_t {
  char bytes[16];
};

/// Device properties (the fields of cudaDeviceProp that gpulab reads, same names and types).
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
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

/// Kernel attributes (the fields of cudaFuncAttributes that gpulab reads, same names and types).
struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;
  std::size_t constSizeBytes;
  std::size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};

/// Settable kernel attributes (the subset gpulab sets).
enum cudaFuncAttribute : int {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;              // NOLINT: the CUDA spelling
typedef CUevent_st* cudaEvent_t;                // NOLINT: the CUDA spelling
typedef void (*cudaHostFn_t)(void* user_data);  // NOLINT: the CUDA spelling

inline constexpr unsigned int cudaStreamDefault = 0x00;
inline constexpr unsigned int cudaStreamNonBlocking = 0x01;
inline constexpr unsigned int cudaEventDefault = 0x00;
inline constexpr unsigned int cudaEventBlockingSync = 0x01;
inline constexpr unsigned int cudaEventDisableTiming = 0x02;

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
/// Waits for the device, then clears a sticky error and releases every allocation, stream and
/// event (as on a GPU, where the context is destroyed).
cudaError_t cudaDeviceReset() noexcept;

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
// __constant__ and __device__ variables are host variables on sim: `symbol` is their address and
// symbol_bytes their size (cuda_runtime.h has the usual overloads taking the variable).
cudaError_t cudaMemcpyToSymbol(void* symbol, std::size_t symbol_bytes, const void* src,
                               std::size_t bytes, std::size_t offset, cudaMemcpyKind kind) noexcept;
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, std::size_t symbol_bytes,
                                 std::size_t bytes, std::size_t offset,
                                 cudaMemcpyKind kind) noexcept;

// Streams.
cudaError_t cudaStreamCreate(cudaStream_t* stream) noexcept;
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) noexcept;
cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept;
cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept;
cudaError_t cudaStreamQuery(cudaStream_t stream) noexcept;
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags = 0) noexcept;
/// Queues fn(user_data) on `stream`: it runs on the device thread once the work queued before it
/// is done, and the work queued after it waits for it to return (it must not call the runtime).
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) noexcept;

// Events.
cudaError_t cudaEventCreate(cudaEvent_t* event) noexcept;
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) noexcept;
cudaError_t cudaEventDestroy(cudaEvent_t event) noexcept;
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr) noexcept;
cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept;
cudaError_t cudaEventQuery(cudaEvent_t event) noexcept;
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) noexcept;

// Kernels (cuda_runtime.h has the overloads taking the kernel function itself).
// Registers, static shared memory and local memory are those recorded with
// gpulab::sim::set_kernel_resources, else ptxas's from the kernel tables, found through the
// function's symbol (docs/sim.md, "Kernel attributes and occupancy"), else 0.
// maxThreadsPerBlock is the largest block whose registers fit; a launch of a larger one fails
// with cudaErrorLaunchOutOfResources.
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* kernel) noexcept;
cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attribute,
                                 int value) noexcept;
/// gpulab::compute_occupancy (the CUDA toolkit's cuda_occupancy.h, when it was found at configure
/// time) on the simulated spec and the kernel's attributes; 0 blocks for dynamic shared memory
/// above the kernel's maxDynamicSharedSizeBytes. cudaErrorInvalidValue for a configuration that
/// cannot launch, cudaErrorNotSupported without cuda_occupancy.h.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int* blocks, const void* kernel, int block_size, std::size_t dynamic_shared_bytes) noexcept;

namespace gpulab::sim {

/// The order in which the threads of a block run between barriers (and blocks are taken by the
/// workers). Running a kernel under two orders turns a missing __syncthreads into a mismatch.
struct Schedule {
  enum class Order { forward, reverse, shuffle };
  Order order = Order::forward;
  std::uint64_t seed = 0;  // shuffle only

  /// Reads "forward", "reverse" or "shuffle:<seed>"; false (with the reason in error) otherwise.
  static bool parse(std::string_view text, Schedule& out, std::string& error);
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Schedule&, const Schedule&) = default;
};

/// The schedule of later launches. Starts as GPULAB_SIM_SCHEDULE (default forward).
[[nodiscard]] Schedule schedule() noexcept;
/// Sets the schedule of later launches (a launch keeps the one it was queued with).
void set_schedule(const Schedule& schedule) noexcept;

/// Sets a schedule for the current scope.
class ScopedSchedule {
 public:
  explicit ScopedSchedule(const Schedule& schedule) noexcept : previous_(gpulab::sim::schedule()) {
    set_schedule(schedule);
  }
  ~ScopedSchedule() { set_schedule(previous_); }
  ScopedSchedule(const ScopedSchedule&) = delete;
  ScopedSchedule& operator=(const ScopedSchedule&) = delete;

 private:
  Schedule previous_;
};

/// Why the last kernel failed (which kernel, block and threads, and what went wrong) while the
/// device holds the sticky error it left; empty otherwise.
[[nodiscard]] std::string kernel_failure();

/// Worker threads that run blocks (set_worker_count's, else GPULAB_SIM_WORKERS, default: the CPU's
/// hardware threads).
[[nodiscard]] unsigned worker_count() noexcept;
/// Sets how many worker threads run blocks, before the first launch starts them: false (nothing
/// changes) after it, or for 0 or more than 1024.
bool set_worker_count(unsigned count) noexcept;

/// Records a kernel's registers per thread and static shared memory (as ptxas reports them), for
/// cudaFuncGetAttributes, occupancy, the launch check and the modeled clock, in place of the
/// kernel tables' figures.
void set_kernel_resources(const void* kernel, int registers, std::size_t static_shared_bytes);

/// Why the simulated device cannot be used (e.g. GPULAB_SIM_SPEC names an unknown GPU); empty
/// when it can. Read once, at the first runtime call.
[[nodiscard]] const std::string& configuration_error();

/// Sets up the simulated device for a program that reports GPU times, before its first CUDA call:
/// the GPU `spec` (a key or name of `gpulab specs`; empty: GPULAB_SIM_SPEC's, else H100 SXM), and
/// events on the modeled clock unless GPULAB_SIM_CLOCK chose a clock or the build cannot count.
/// False, changing nothing, with the reason in `why`, for an unknown spec or another spec than the
/// one of a device already in use (the spec is chosen once). Call it before anything else of the
/// sim: it sets the clock events read.
bool prepare_device(std::string_view spec, std::string* why = nullptr);

/// Bytes of simulated device memory currently allocated (what the capacity is checked against).
/// Every cudaMalloc and cudaFree is also reported to the memory accounting
/// (gpulab/core/memory_stats.hpp: current, peak, where each allocation was made).
[[nodiscard]] std::size_t allocated_bytes() noexcept;

/// Warp-level tensor-core operations (WMMA mma_sync, one per warp and call) the sim's kernels have
/// completed since the program started: how a test sees that a kernel computes on tensor cores.
[[nodiscard]] std::uint64_t tensor_core_operations() noexcept;

// ------------------------------------------------------------------------------------------------
// Memory counting (docs/sim.md, "Counting memory traffic"): with counting on, every kernel launch
// records what its threads did to memory (gpulab/core/counters.hpp): requests, sectors,
// wavefronts, bank conflicts, and L2 and DRAM traffic from a model of the spec's L2, which
// persists across launches and sees copies and memsets too. The environment variable
// GPULAB_SIM_COUNTERS=FILE turns counting on for every launch of a program and appends each
// counted launch to FILE as one JSON line (`gpulab profile` reads it). GPULAB_SIM_CACHE_CONTROL=all
// empties the modeled L2 before each counted launch, as Nsight Compute does by default; "none"
// (the default here) keeps what earlier work left in it.
// ------------------------------------------------------------------------------------------------

/// Whether this build can count (not in AddressSanitizer builds: the asan preset).
[[nodiscard]] bool counting_available() noexcept;
/// Why it cannot, in one sentence; empty when it can.
[[nodiscard]] std::string counting_unavailable_reason();
/// Turns counting of later launches on or off (a launch keeps the setting it was queued with).
/// Returns false, changing nothing, when `on` is asked of a build that cannot count.
bool set_counting(bool on) noexcept;
/// Whether later launches are counted.
[[nodiscard]] bool counting() noexcept;
/// Turns counting by source line on or off for counted launches that start after the call: each
/// then also carries its figures per line of the kernel's code (CountedLaunch::lines; `gpulab
/// profile --source`). GPULAB_SIM_COUNTERS_BY_LINE=1 starts with it on. It costs a table lookup
/// per warp-level request, and one lookup of the program's debug information per instruction (a
/// program built without -g gets one line 0 of file ""). Returns false, changing nothing, when
/// `on` is asked of a build that cannot count.
bool set_counting_by_line(bool on) noexcept;
/// Whether counted launches are also counted by line.
[[nodiscard]] bool counting_by_line() noexcept;
/// The `where` of a counted cuBLAS call: the sim models each SGEMM as a kernel launch, named
/// "cublasSgemm as KERNEL" (docs/sim.md, "cuBLAS"), which counts as a launch of the work.
inline constexpr std::string_view kCublasWhere = "cuBLAS";
/// The counted launches that have finished, oldest first (synchronize before reading).
[[nodiscard]] std::vector<CountedLaunch> counted_launches();
/// Forgets the counted launches kept so far.
void clear_counted_launches();
/// Queues, on `stream`, the emptying of the modeled L2 (dirty sectors are written back first).
cudaError_t reset_modeled_l2(cudaStream_t stream = nullptr) noexcept;
/// Runs `work` with counting on, waits for the device, and returns the launches it counted,
/// oldest first (launches kept before are forgotten). Throws std::runtime_error where the build
/// cannot count or the work failed on the device.
[[nodiscard]] std::vector<CountedLaunch> count_launches(const std::function<void()>& work);

// ------------------------------------------------------------------------------------------------
// The modeled clock (docs/sim.md, "The modeled clock"): with GPULAB_SIM_CLOCK=modeled, CUDA events
// read a device clock that advances by the modeled duration of every operation on their stream
// (kernels from their counted traffic, copies from the spec's bandwidths), so cudaEventElapsedTime
// gives modeled, deterministic milliseconds; clock64() counts modeled cycles. The default, "host",
// gives CPU time of the simulation.
// ------------------------------------------------------------------------------------------------

enum class ClockMode { host, modeled };
/// The clock events read now (starts as GPULAB_SIM_CLOCK).
[[nodiscard]] ClockMode clock_mode() noexcept;
/// Sets it for later work; false (nothing changes) for the modeled clock in a build that cannot
/// count. Events recorded under different clocks cannot be compared (cudaEventElapsedTime fails).
bool set_clock_mode(ClockMode mode) noexcept;
/// What event times are, for a report: "CPU time of the simulation" or "modeled (H100 SXM) from
/// counted memory traffic and instructions".
[[nodiscard]] std::string clock_description();

// ------------------------------------------------------------------------------------------------
// What each stream was given (docs/sim.md, "Streams"): while recording is on, every operation
// enqueued on a stream is noted there, in order, so a test can check what a GPU's timeline would
// show: which stream the events were recorded on, what ran between them, and where the host
// waited for it (host_wait: a cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize
// or synchronous copy returned after the stream's last operation ran, or a cudaStreamQuery or
// cudaEventQuery found it done).
// ------------------------------------------------------------------------------------------------

enum class StreamOp {
  kernel,
  event_record,
  event_wait,
  memcpy,
  memset,
  l2_reset,
  host_function,
  host_wait
};
/// One operation on a stream; `kernel` is the launched kernel's name (empty for other ops).
struct StreamEntry {
  StreamOp op = StreamOp::kernel;
  std::string kernel;
  bool operator==(const StreamEntry&) const = default;
};
/// Starts (true, forgetting what was noted before) or stops noting what is enqueued on streams.
void set_stream_recording(bool on);
/// What was enqueued on `stream` (nullptr: the legacy default stream) while recording was on,
/// oldest first; only operations the runtime accepted.
[[nodiscard]] std::vector<StreamEntry> stream_entries(cudaStream_t stream);
/// "kernel vector_add_kernel", "event record", "event wait", "memcpy", "memset", "L2 reset",
/// "host function", "host wait".
[[nodiscard]] std::string describe(const StreamEntry& entry);

/// Counting on for the current scope (restores the previous setting). Throws std::runtime_error
/// with counting_unavailable_reason() in a build that cannot count.
class ScopedCounting {
 public:
  ScopedCounting();
  ~ScopedCounting() { set_counting(previous_); }
  ScopedCounting(const ScopedCounting&) = delete;
  ScopedCounting& operator=(const ScopedCounting&) = delete;

 private:
  bool previous_;
};

}  // namespace gpulab::sim
