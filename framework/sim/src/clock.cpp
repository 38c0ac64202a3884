#include "clock.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "counting.hpp"
#include "gpulab/core/gemm_model.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/traffic_model.hpp"
#include "gpulab/sim/runtime.hpp"
#include "queue.hpp"

namespace gpulab::sim::detail {
namespace {

// Per-stream end times, written by the device thread, and the host's time, written by the host
// threads; both read by either, under the mutex.
struct Timeline {
  std::mutex mutex;
  std::map<cudaStream_t, double> end_s;   // the legacy stream is nullptr
  std::map<cudaStream_t, bool> blocking;  // whether the stream synchronizes with the legacy one
  double legacy_end_s = 0;
  double host_s = 0;
};

Timeline& timeline() {
  static auto* instance = new Timeline();  // never destroyed: the device thread outlives main
  return *instance;
}

// When the stream's queued work so far is done. Under the mutex.
double stream_end(const Timeline& t, cudaStream_t stream, bool blocking) {
  const auto own = t.end_s.find(stream);
  double start = own == t.end_s.end() ? 0.0 : own->second;
  if (stream == nullptr) {
    // The legacy stream waits for every blocking stream, not for one created with
    // cudaStreamNonBlocking: events recorded on stream 0 around work on such a stream do not
    // time that work, on a GPU or here.
    for (const auto& [other, end] : t.end_s) {
      const auto known = t.blocking.find(other);
      if (known == t.blocking.end() || known->second) {
        start = std::max(start, end);
      }
    }
  } else if (blocking) {
    start = std::max(start, t.legacy_end_s);
  }
  return start;
}

double begin(cudaStream_t stream, bool blocking, double issue_s) {
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  t.blocking[stream] = blocking;
  return std::max(stream_end(t, stream, blocking), issue_s);
}

void end(cudaStream_t stream, double end_s) {
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  t.end_s[stream] = std::max(t.end_s[stream], end_s);
  if (stream == nullptr) {
    t.legacy_end_s = std::max(t.legacy_end_s, end_s);
  }
}

}  // namespace

double overhead_s() {
  return device_spec().launch_overhead_us * 1e-6;
}

bool modeled_clock() noexcept {
  return clock_mode() == ClockMode::modeled;
}

cudaError_t enqueue_timed(cudaStream_t stream,
                          std::function<double(double start_s)> work) noexcept {
  const bool blocking = stream_is_blocking(stream);
  const double issue_s = host_now();
  return enqueue(stream, [stream, blocking, issue_s, work = std::move(work)] {
    if (!modeled_clock()) {
      work(0.0);
      return;
    }
    const auto wall_start = std::chrono::steady_clock::now();
    const double start = begin(stream, blocking, issue_s);
    const double duration = work(start);
    end(stream, start + duration);
    // The work is done no sooner than its modeled duration in real time, as on a GPU: code that
    // returns without waiting still finds the stream busy (a 1 ms spin, simulated in less).
    std::this_thread::sleep_until(wall_start + std::chrono::duration<double>(duration));
  });
}

double modeled_now(cudaStream_t stream, bool blocking, double issue_s) {
  return begin(stream, blocking, issue_s);
}

void modeled_wait(cudaStream_t stream, double time_s) {
  end(stream, time_s);
}

double host_now() {
  if (!modeled_clock()) {
    return 0.0;
  }
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  return t.host_s;
}

void host_spend(double seconds) {
  if (!modeled_clock()) {
    return;
  }
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  t.host_s += seconds;
}

void host_waited_for_stream(cudaStream_t stream) {
  if (!modeled_clock()) {
    return;
  }
  const bool blocking = stream_is_blocking(stream);  // before the lock: it takes the state's
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  t.host_s = std::max(t.host_s, stream_end(t, stream, blocking));
}

void host_waited_for_device() {
  if (!modeled_clock()) {
    return;
  }
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  for (const auto& [stream, end] : t.end_s) {
    t.host_s = std::max(t.host_s, end);
  }
}

void host_waited_until(double time_s) {
  if (!modeled_clock()) {
    return;
  }
  Timeline& t = timeline();
  std::scoped_lock lock(t.mutex);
  t.host_s = std::max(t.host_s, time_s);
}

// Host time of the allocation calls. Published measurements ("Memory allocation overhead",
// University of Virginia CUDA support pages,
// https://www.cs.virginia.edu/~mwb7w/cuda_support/memory_management_overhead.html, on one
// machine of about 2009): cudaMalloc "slightly less than 1 microsecond" per call below 256 bytes,
// a rise between 2 KB and 4 KB, "about 50 microseconds up to 512 KB", more above (modeled as 50:
// a lower bound there); cudaMallocHost "approximately 2,300 microseconds per call until around
// 1 MB", 61 ms at 512 MB (modeled linear in between and beyond). The frees are assumed to cost
// what the allocation of the same size costs, after their wait for the device: the source does
// not say. On a GPU, lab 05's report measures a step of six cudaMalloc and cudaFree calls (its
// allocator_step result, which scripts/gpu-check's reports step saves): the figure to check these
// against.
double modeled_malloc_seconds(std::size_t bytes) {
  constexpr std::size_t kSmallBytes = 4096;
  return bytes < kSmallBytes ? 1e-6 : 50e-6;
}

double modeled_malloc_host_seconds(std::size_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  constexpr double kBaseSeconds = 2.3e-3;                                // up to 1 MB
  constexpr double kPerMiBSeconds = (61e-3 - kBaseSeconds) / (512 - 1);  // 1 MB -> 512 MB
  const double mib = static_cast<double>(bytes) / kMiB;
  return kBaseSeconds + std::max(0.0, mib - 1.0) * kPerMiBSeconds;
}

double modeled_kernel_seconds(const CountedLaunch& launch) {
  try {
    return model_launch(launch, device_spec()).time_s;
  } catch (const std::invalid_argument&) {
    // A launch the occupancy calculator cannot place was already refused at the launch.
    return overhead_s();
  }
}

double modeled_copy_seconds(std::size_t bytes, bool device_to_device) {
  const GpuSpec& spec = device_spec();
  const double b = static_cast<double>(bytes);
  return overhead_s() + (device_to_device ? 2 * b / (spec.dram_bandwidth_gb_s * 1e9)
                                          : b / (spec.host_link_gb_s * 1e9));
}

double modeled_memset_seconds(std::size_t bytes) {
  return overhead_s() + static_cast<double>(bytes) / (device_spec().dram_bandwidth_gb_s * 1e9);
}

std::optional<CountedLaunch> modeled_gemm_launch(std::int64_t m, std::int64_t n, std::int64_t k,
                                                 std::int64_t batch, bool reads_c,
                                                 std::uint64_t operand_sectors_in_l2) {
  const GpuSpec& spec = device_spec();
  // cuBLAS's column-major C (m x n) is the row-major C^T (n x m) = op(B)^T op(A)^T.
  const GemmShape shape{.m = n, .n = m, .k = k, .batch = batch, .reads_c = reads_c};
  const auto resources = [&spec](std::string_view kernel) { return table_resources(kernel, spec); };
  std::optional<ModeledGemm> gemm;
  try {
    gemm = model_fastest_gemm(shape, spec, resources, operand_sectors_in_l2);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // no tiling fits the spec: not a spec the sim ships
  }
  CountedLaunch launch;
  launch.kernel = "cublasSgemm as " + std::string(gemm->tiling.kernel);
  launch.where = kCublasWhere;
  launch.spec = spec.key;
  launch.grid = gemm->launch.grid;
  launch.block = gemm->launch.block;
  if (gemm->launch.resources_known) {
    launch.registers_per_thread = gemm->launch.resources.registers_per_thread;
    launch.static_shared_bytes = gemm->launch.resources.static_shared_bytes;
  }
  launch.counters = std::move(gemm->counters);
  return launch;
}

}  // namespace gpulab::sim::detail
