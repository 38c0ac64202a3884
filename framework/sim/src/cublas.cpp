#include <cublas_v2.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <vector>

#include "clock.hpp"
#include "counting.hpp"
#include "device_state.hpp"
#include "gpulab/sim/runtime.hpp"
#include "queue.hpp"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;  // stored only: the sim always computes in FP32
};

namespace {

struct StatusText {
  cublasStatus_t status;
  const char* name;
  const char* description;
};

// Names and descriptions as cuBLAS prints them.
constexpr StatusText kStatuses[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an invalid numeric value was used as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "an absent device architectural feature is required"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
     "the functionality requested requires some license"},
};

const StatusText* find_status(cublasStatus_t status) {
  const auto* it = std::find_if(std::begin(kStatuses), std::end(kStatuses),
                                [status](const StatusText& s) { return s.status == status; });
  return it == std::end(kStatuses) ? nullptr : it;
}

struct Handles {
  std::mutex mutex;
  std::set<cublasHandle_t> live;
};

Handles& handles() {
  static Handles instance;
  return instance;
}

bool live(cublasHandle_t handle) {
  std::scoped_lock lock(handles().mutex);
  return handles().live.contains(handle);
}

// ------------------------------------------------------------------------------------------------
// SGEMM on the CPU: C = alpha * op(A) * op(B) + beta * C, column-major.
//
// The blocked scheme of CPU BLAS libraries (GotoBLAS, BLIS), in plain C++:
//
// - C is cut into tiles of kTileM x kTileN. One tile of one batch entry is one task for
//   parallel_for, so no two tasks write the same element of C.
// - A task walks the depth k in blocks of kBlockK. For each block it copies ("packs") its rows of
//   op(A) and its columns of op(B) into small buffers laid out in exactly the order the
//   micro-kernel reads them: every load in the inner loop is then contiguous, whatever the
//   transposes and leading dimensions, and the buffers stay in the L1/L2 caches.
// - The micro-kernel keeps a kMr x kNr block of sums in a local array (registers) while it walks
//   the block's depth: per step it loads kMr values of op(A) and kNr of op(B) and does kMr * kNr
//   multiply-adds. Its innermost loop runs over kMr contiguous floats, which the compiler turns
//   into SIMD instructions.
//
// The sums live in a per-task buffer across depth blocks, so each element of C is the float dot
// product summed in the fixed order p = 0, 1, ..., k-1, then alpha * sum + beta * C. The result
// does not depend on the tile sizes, the number of worker threads or the order tasks run in.
// ------------------------------------------------------------------------------------------------
namespace gemm {

using Index = std::int64_t;  // element offsets: lda * k can exceed int

// Micro-tile: 8 rows (two 4-wide SSE vectors, one 8-wide AVX vector) by 6 columns keeps the 48
// sums plus the loaded values within the 16 vector registers of x86-64.
constexpr Index kMr = 8;
constexpr Index kNr = 6;
// Depth block: a packed sliver of op(A) (kMr x kBlockK) plus one of op(B) fit in a 32 KB L1.
constexpr Index kBlockK = 256;
// Tile of C per task (multiples of kMr and kNr): the packed block of op(A), 128 KB, stays in L2.
constexpr Index kTileM = 128;
constexpr Index kTileN = 96;

Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

/// A column-major matrix X read as op(X): element (i, j) of op(X) is data[i + j * ld], or
/// data[j + i * ld] when transposed.
struct Operand {
  const float* data = nullptr;
  Index ld = 0;
  bool transposed = false;
};

/// Everything a queued GEMM needs, by value (the caller's arguments may be gone when it runs).
struct Problem {
  Operand a;
  Operand b;
  float* c = nullptr;
  Index ldc = 0;
  Index m = 0;
  Index n = 0;
  Index k = 0;
  Index stride_a = 0;
  Index stride_b = 0;
  Index stride_c = 0;
  Index batch_count = 1;
};

// The device memory of `count` column-major matrices of rows x cols (leading dimension ld),
// `stride` floats apart: one run per column, or one per matrix when its columns are contiguous.
void add_runs(std::vector<gpulab::sim::detail::MemoryRun>& runs, const float* data, Index rows,
              Index cols, Index ld, Index stride, Index count) {
  for (Index b = 0; b < count; ++b) {
    const float* matrix = data + b * stride;
    if (ld == rows) {
      runs.push_back({matrix, static_cast<std::size_t>(rows * cols) * sizeof(float)});
      continue;
    }
    for (Index j = 0; j < cols; ++j) {
      runs.push_back({matrix + j * ld, static_cast<std::size_t>(rows) * sizeof(float)});
    }
  }
}

/// What the GEMM reads (A and B as stored, and C when `reads_c`: beta != 0) and writes (C).
std::vector<gpulab::sim::detail::MemoryRun> reads_of(const Problem& p, bool reads_c) {
  std::vector<gpulab::sim::detail::MemoryRun> runs;
  add_runs(runs, p.a.data, p.a.transposed ? p.k : p.m, p.a.transposed ? p.m : p.k, p.a.ld,
           p.stride_a, p.batch_count);
  add_runs(runs, p.b.data, p.b.transposed ? p.n : p.k, p.b.transposed ? p.k : p.n, p.b.ld,
           p.stride_b, p.batch_count);
  if (reads_c) {
    add_runs(runs, p.c, p.m, p.n, p.ldc, p.stride_c, p.batch_count);
  }
  return runs;
}

std::vector<gpulab::sim::detail::MemoryRun> writes_of(const Problem& p) {
  std::vector<gpulab::sim::detail::MemoryRun> runs;
  add_runs(runs, p.c, p.m, p.n, p.ldc, p.stride_c, p.batch_count);
  return runs;
}

/// Copies op(A)(i0 .. i0+rows-1, p0 .. p0+depth-1) into slivers of kMr rows: sliver s holds
/// element (i0 + s*kMr + r, p0 + p) at out[(s*depth + p)*kMr + r]. Rows past `rows` are zero.
void pack_a(const Operand& a, Index i0, Index rows, Index p0, Index depth, float* out) {
  for (Index s = 0; s * kMr < rows; ++s) {
    float* sliver = out + s * depth * kMr;
    const Index row = i0 + s * kMr;
    const Index live = std::min(kMr, rows - s * kMr);
    if (!a.transposed) {
      // Column p of A holds the sliver's rows contiguously.
      for (Index p = 0; p < depth; ++p) {
        const float* src = a.data + row + (p0 + p) * a.ld;
        float* dst = sliver + p * kMr;
        std::copy(src, src + live, dst);
        std::fill(dst + live, dst + kMr, 0.0f);
      }
    } else {
      // Row i of op(A) is column i of A: contiguous along the depth.
      for (Index r = 0; r < live; ++r) {
        const float* src = a.data + p0 + (row + r) * a.ld;
        for (Index p = 0; p < depth; ++p) {
          sliver[p * kMr + r] = src[p];
        }
      }
      for (Index r = live; r < kMr; ++r) {
        for (Index p = 0; p < depth; ++p) {
          sliver[p * kMr + r] = 0.0f;
        }
      }
    }
  }
}

/// Copies op(B)(p0 .. p0+depth-1, j0 .. j0+cols-1) into slivers of kNr columns: sliver s holds
/// element (p0 + p, j0 + s*kNr + c) at out[(s*depth + p)*kNr + c]. Columns past `cols` are zero.
void pack_b(const Operand& b, Index p0, Index depth, Index j0, Index cols, float* out) {
  for (Index s = 0; s * kNr < cols; ++s) {
    float* sliver = out + s * depth * kNr;
    const Index col = j0 + s * kNr;
    const Index live = std::min(kNr, cols - s * kNr);
    if (!b.transposed) {
      // Column j of B is column j of op(B): contiguous along the depth.
      for (Index c = 0; c < live; ++c) {
        const float* src = b.data + p0 + (col + c) * b.ld;
        for (Index p = 0; p < depth; ++p) {
          sliver[p * kNr + c] = src[p];
        }
      }
      for (Index c = live; c < kNr; ++c) {
        for (Index p = 0; p < depth; ++p) {
          sliver[p * kNr + c] = 0.0f;
        }
      }
    } else {
      // Row p of op(B) is column p of B: the sliver's columns are contiguous.
      for (Index p = 0; p < depth; ++p) {
        const float* src = b.data + col + (p0 + p) * b.ld;
        float* dst = sliver + p * kNr;
        std::copy(src, src + live, dst);
        std::fill(dst + live, dst + kNr, 0.0f);
      }
    }
  }
}

/// sums (kMr x kNr, column-major with leading dimension ld) += a_sliver * b_sliver over `depth`.
void micro_kernel(Index depth, const float* a_sliver, const float* b_sliver, float* sums,
                  Index ld) {
  float acc[kNr][kMr];  // kept in vector registers: 12 SSE (or 6 AVX) registers
  for (Index c = 0; c < kNr; ++c) {
    for (Index r = 0; r < kMr; ++r) {
      acc[c][r] = sums[c * ld + r];
    }
  }
  for (Index p = 0; p < depth; ++p) {
    const float* a = a_sliver + p * kMr;
    const float* b = b_sliver + p * kNr;
    // Unrolling the column loop turns every acc[c][r] into a fixed register, and the loop over
    // r into two 4-wide SIMD multiply-adds per column. GCC does not unroll it by itself at -O2
    // (the RelWithDebInfo level) and then keeps acc in memory: 2.5x slower. Clang reads the
    // pragma too.
#pragma GCC unroll 8
    for (Index c = 0; c < kNr; ++c) {
      for (Index r = 0; r < kMr; ++r) {
        acc[c][r] += a[r] * b[c];
      }
    }
  }
  for (Index c = 0; c < kNr; ++c) {
    for (Index r = 0; r < kMr; ++r) {
      sums[c * ld + r] = acc[c][r];
    }
  }
}

/// C = beta * C over a rows x cols block; beta == 0 writes zeros without reading C.
void scale(float* c, Index ldc, Index rows, Index cols, float beta) {
  for (Index j = 0; j < cols; ++j) {
    float* column = c + j * ldc;
    for (Index i = 0; i < rows; ++i) {
      column[i] = beta == 0.0f ? 0.0f : beta * column[i];
    }
  }
}

/// One task: the tile of C at rows i0.., columns j0.. of batch entry `batch`.
void tile(const Problem& problem, Index batch, Index i0, Index j0, float alpha, float beta) {
  const Index rows = std::min(kTileM, problem.m - i0);
  const Index cols = std::min(kTileN, problem.n - j0);
  float* c = problem.c + batch * problem.stride_c + i0 + j0 * problem.ldc;
  if (alpha == 0.0f || problem.k == 0) {
    scale(c, problem.ldc, rows, cols, beta);  // A and B are not read
    return;
  }
  Operand a = problem.a;
  a.data += batch * problem.stride_a;
  Operand b = problem.b;
  b.data += batch * problem.stride_b;

  // Packing pads the tile to whole micro-tiles with zeros; the padding is computed and dropped.
  const Index rows_padded = ceil_div(rows, kMr) * kMr;
  const Index cols_padded = ceil_div(cols, kNr) * kNr;
  const Index max_depth = std::min(kBlockK, problem.k);
  std::vector<float> sums(static_cast<std::size_t>(rows_padded * cols_padded), 0.0f);
  const auto a_packed =
      std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(rows_padded * max_depth));
  const auto b_packed =
      std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(max_depth * cols_padded));

  for (Index p0 = 0; p0 < problem.k; p0 += kBlockK) {
    const Index depth = std::min(kBlockK, problem.k - p0);
    pack_a(a, i0, rows, p0, depth, a_packed.get());
    pack_b(b, p0, depth, j0, cols, b_packed.get());
    // One sliver of op(B) stays in L1 while the slivers of op(A) stream past it from L2.
    for (Index sb = 0; sb * kNr < cols_padded; ++sb) {
      for (Index sa = 0; sa * kMr < rows_padded; ++sa) {
        micro_kernel(depth, a_packed.get() + sa * depth * kMr, b_packed.get() + sb * depth * kNr,
                     sums.data() + sa * kMr + sb * kNr * rows_padded, rows_padded);
      }
    }
  }

  for (Index j = 0; j < cols; ++j) {
    float* column = c + j * problem.ldc;
    const float* sum = sums.data() + j * rows_padded;
    if (beta == 0.0f) {
      for (Index i = 0; i < rows; ++i) {
        column[i] = alpha * sum[i];  // C is not read: NaN or Inf in it must not propagate
      }
    } else {
      for (Index i = 0; i < rows; ++i) {
        column[i] = alpha * sum[i] + beta * column[i];
      }
    }
  }
}

/// True when no two batch entries write the same element of C, so they may run concurrently.
bool outputs_disjoint(const Problem& problem) {
  if (problem.batch_count <= 1) {
    return true;
  }
  const Index span = (problem.n - 1) * problem.ldc + problem.m;  // elements one C reaches
  return problem.stride_c >= span || problem.stride_c <= -span;
}

/// Runs the whole (batched) GEMM; called from queued work. m, n and batch_count are positive.
/// Throws std::bad_alloc when a task could not get its buffers (the device thread turns that into
/// a sticky error; parallel_for's worker threads must not throw).
void run(const Problem& problem, float alpha, float beta) {
  if ((alpha == 0.0f || problem.k == 0) && beta == 1.0f) {
    return;  // C is unchanged (the reference BLAS returns here too)
  }
  const Index tiles_m = ceil_div(problem.m, kTileM);
  const Index tiles = tiles_m * ceil_div(problem.n, kTileN);
  std::atomic<bool> out_of_memory{false};
  const auto run_tile = [&](Index batch, Index t) {
    try {
      tile(problem, batch, (t % tiles_m) * kTileM, (t / tiles_m) * kTileN, alpha, beta);
    } catch (const std::bad_alloc&) {
      out_of_memory.store(true);
    }
  };
  if (outputs_disjoint(problem)) {
    gpulab::sim::detail::parallel_for(
        static_cast<std::size_t>(problem.batch_count * tiles), [&](std::size_t i) {
          run_tile(static_cast<Index>(i) / tiles, static_cast<Index>(i) % tiles);
        });
  } else {
    // Overlapping outputs (undefined in cuBLAS): entries run one after another, in order, so the
    // result is at least deterministic and free of data races.
    for (Index batch = 0; batch < problem.batch_count; ++batch) {
      gpulab::sim::detail::parallel_for(static_cast<std::size_t>(tiles), [&](std::size_t t) {
        run_tile(batch, static_cast<Index>(t));
      });
    }
  }
  if (out_of_memory.load()) {
    throw std::bad_alloc();
  }
}

}  // namespace gemm

/// alpha and beta as the queued work gets them: values read at call time (host pointer mode) or
/// device pointers read when the work runs (device pointer mode).
struct Scalars {
  bool on_device = false;
  const float* alpha_device = nullptr;
  const float* beta_device = nullptr;
  float alpha = 0.0f;
  float beta = 0.0f;
};

bool valid_operation(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

// The checks and the queueing shared by cublasSgemm and cublasSgemmStridedBatched.
cublasStatus_t sgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                     int m, int n, int k, const float* alpha, const float* a, int lda,
                     long long stride_a, const float* b, int ldb, long long stride_b,
                     const float* beta, float* c, int ldc, long long stride_c,
                     int batch_count) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (!valid_operation(transa) || !valid_operation(transb) || m < 0 || n < 0 || k < 0 ||
      batch_count < 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const bool a_transposed = transa != CUBLAS_OP_N;  // CUBLAS_OP_C on real data is CUBLAS_OP_T
  const bool b_transposed = transb != CUBLAS_OP_N;
  if (lda < std::max(1, a_transposed ? k : m) || ldb < std::max(1, b_transposed ? n : k) ||
      ldc < std::max(1, m)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (alpha == nullptr || beta == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0 || batch_count == 0) {
    return CUBLAS_STATUS_SUCCESS;  // nothing to compute, nothing queued
  }

  gemm::Problem problem;
  problem.a = {a, lda, a_transposed};
  problem.b = {b, ldb, b_transposed};
  problem.c = c;
  problem.ldc = ldc;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.stride_a = stride_a;
  problem.stride_b = stride_b;
  problem.stride_c = stride_c;
  problem.batch_count = batch_count;

  Scalars scalars;
  if (handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
    scalars.on_device = true;
    scalars.alpha_device = alpha;
    scalars.beta_device = beta;
  } else {
    scalars.alpha = *alpha;
    scalars.beta = *beta;
  }

  try {
    // As a kernel launch: its id and whether it is counted are decided where it is queued.
    const std::uint64_t id = gpulab::sim::detail::next_launch_id();
    const bool counted = gpulab::sim::counting();
    std::function<double(double)> work = [problem, scalars, id, counted](double) {
      namespace detail = gpulab::sim::detail;
      const float alpha_value = scalars.on_device ? *scalars.alpha_device : scalars.alpha;
      const float beta_value = scalars.on_device ? *scalars.beta_device : scalars.beta;
      // Modeled before the products change C: what the L2 model holds of the operands now (an
      // earlier kernel's output, say) is read from L2, not DRAM. C is read when beta is not 0.
      const bool reads_c = beta_value != 0.0f;
      const std::uint64_t held =
          detail::count_library_call(gemm::reads_of(problem, reads_c), gemm::writes_of(problem));
      std::optional<gpulab::CountedLaunch> launch = detail::modeled_gemm_launch(
          problem.m, problem.n, problem.k, problem.batch_count, reads_c, held);
      gemm::run(problem, alpha_value, beta_value);
      if (!launch) {
        return detail::overhead_s();
      }
      launch->launch_id = id;
      if (counted) {
        detail::record_library_launch(*launch);
      }
      return detail::modeled_kernel_seconds(*launch);
    };
    if (gpulab::sim::detail::enqueue_timed(handle->stream, std::move(work)) != cudaSuccess) {
      return CUBLAS_STATUS_EXECUTION_FAILED;  // invalid stream, or the device has a sticky error
    }
  } catch (const std::bad_alloc&) {
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

bool valid_math_mode(cublasMath_t mode) {
  switch (static_cast<int>(mode) &
          ~static_cast<int>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) {
    case CUBLAS_DEFAULT_MATH:
    case CUBLAS_TENSOR_OP_MATH:
    case CUBLAS_PEDANTIC_MATH:
    case CUBLAS_TF32_TENSOR_OP_MATH:
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* cublasGetStatusName(cublasStatus_t status) noexcept {
  const auto* text = find_status(status);
  return text != nullptr ? text->name : "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) noexcept {
  const auto* text = find_status(status);
  return text != nullptr ? text->description : "unknown error";
}

cublasStatus_t cublasCreate(cublasHandle_t* handle) noexcept {
  if (handle == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  auto* created = new (std::nothrow) cublasContext{};
  if (created == nullptr) {
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  std::scoped_lock lock(handles().mutex);
  handles().live.insert(created);
  *handle = created;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) noexcept {
  std::scoped_lock lock(handles().mutex);
  if (handles().live.erase(handle) == 0) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (stream == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (mode == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

// The mode is stored and reported back; the sim computes single-precision routines in FP32
// whatever it says (no TF32 or BF16x9 rounding of the inputs).
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (!valid_math_mode(mode)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) noexcept {
  if (!live(handle)) {
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (mode == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) noexcept {
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) noexcept {
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
               ldc, strideC, batchCount);
}
