#include "attention/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "catalog.hpp"
#include "common.hpp"
#include "gpulab/core/cuda_check.hpp"

namespace gpulab::kernels {

// ------------------------------------------------------------------------------------------------
// Configuration, names and cost
// ------------------------------------------------------------------------------------------------

int AttentionConfig::head_dim() const {
  return heads > 0 ? d_model / heads : 0;
}

void AttentionConfig::validate() const {
  const auto require_positive = [](const char* field, int value) {
    if (value <= 0) {
      throw std::invalid_argument(std::string("AttentionConfig: ") + field +
                                  " must be positive, got " + std::to_string(value));
    }
  };
  require_positive("batch", batch);
  require_positive("seq_len", seq_len);
  require_positive("d_model", d_model);
  require_positive("heads", heads);
  if (d_model % heads != 0) {
    throw std::invalid_argument("AttentionConfig: d_model (" + std::to_string(d_model) +
                                ") must be divisible by heads (" + std::to_string(heads) + ")");
  }
}

namespace {

constexpr std::array<Component, kComponentCount> kComponents{
    Component::qkv_projection, Component::scores, Component::softmax, Component::weighted_sum,
    Component::output_projection};

// The element counts of every tensor, in size_t so that B*H*S*S cannot overflow an int.
struct Shape {
  std::size_t b, s, d, h, dh;
  std::size_t tokens() const { return b * s; }
  std::size_t x() const { return tokens() * d; }
  std::size_t w_qkv() const { return d * 3 * d; }
  std::size_t qkv() const { return tokens() * 3 * d; }
  std::size_t scores() const { return b * h * s * s; }
  std::size_t attn() const { return tokens() * d; }
  std::size_t w_out() const { return d * d; }
};

Shape shape_of(const AttentionConfig& config) {
  config.validate();
  return {std::size_t(config.batch), std::size_t(config.seq_len), std::size_t(config.d_model),
          std::size_t(config.heads), std::size_t(config.head_dim())};
}

}  // namespace

std::string_view component_name(Component component) {
  switch (component) {
    case Component::qkv_projection:
      return "QKV Projection";
    case Component::scores:
      return "Score Computation";
    case Component::softmax:
      return "Softmax";
    case Component::weighted_sum:
      return "Weighted Sum";
    case Component::output_projection:
      return "Output Projection";
  }
  throw std::invalid_argument("component_name: unknown component " +
                              std::to_string(static_cast<int>(component)));
}

std::span<const Component> all_components() {
  return kComponents;
}

gpulab::OpCost component_cost(const AttentionConfig& config, Component component) {
  const Shape s = shape_of(config);
  const double b = double(s.b), seq = double(s.s), d = double(s.d), h = double(s.h),
               dh = double(s.dh);
  constexpr double kBytes = 4.0;  // fp32
  switch (component) {
    case Component::qkv_projection:
      return {2 * b * seq * d * 3 * d, kBytes * (b * seq * d + d * 3 * d + b * seq * 3 * d)};
    case Component::scores:
      return {2 * b * h * seq * seq * dh, kBytes * (2 * b * seq * d + b * h * seq * seq)};
    case Component::softmax:
      return {5 * b * h * seq * seq, kBytes * 2 * b * h * seq * seq};
    case Component::weighted_sum:
      return {2 * b * h * seq * seq * dh, kBytes * (b * h * seq * seq + b * seq * d + b * seq * d)};
    case Component::output_projection:
      return {2 * b * seq * d * d, kBytes * (b * seq * d + d * d + b * seq * d)};
  }
  throw std::invalid_argument("component_cost: unknown component " +
                              std::to_string(static_cast<int>(component)));
}

gpulab::OpCost forward_cost(const AttentionConfig& config) {
  gpulab::OpCost total;
  for (const Component component : all_components()) {
    const gpulab::OpCost cost = component_cost(config, component);
    total.flops += cost.flops;
    total.bytes += cost.bytes;
  }
  return total;
}

// ------------------------------------------------------------------------------------------------
// Buffers and inputs
// ------------------------------------------------------------------------------------------------

AttentionBuffers::AttentionBuffers(const AttentionConfig& config) {
  const Shape s = shape_of(config);
  x = DeviceBuffer<float>(s.x());
  w_qkv = DeviceBuffer<float>(s.w_qkv());
  qkv = DeviceBuffer<float>(s.qkv());
  scores = DeviceBuffer<float>(s.scores());
  probs = DeviceBuffer<float>(s.scores());
  attn = DeviceBuffer<float>(s.attn());
  w_out = DeviceBuffer<float>(s.w_out());
  y = DeviceBuffer<float>(s.x());
}

std::size_t AttentionBuffers::bytes() const {
  return x.bytes() + w_qkv.bytes() + qkv.bytes() + scores.bytes() + probs.bytes() + attn.bytes() +
         w_out.bytes() + y.bytes();
}

AttentionInputs make_attention_inputs(const AttentionConfig& config, unsigned seed) {
  const Shape s = shape_of(config);
  // mt19937's sequence is fixed by the standard (uniform_real_distribution's is not), so the
  // inputs are the same with every standard library.
  std::mt19937 random(seed);
  const auto uniform = [&random](float scale) {
    const double unit = static_cast<double>(random()) / 4294967296.0;  // [0, 1)
    return static_cast<float>(2.0 * unit - 1.0) * scale;
  };
  const float weight_scale = 1.0f / std::sqrt(static_cast<float>(s.d));
  AttentionInputs inputs{std::vector<float>(s.x()), std::vector<float>(s.w_qkv()),
                         std::vector<float>(s.w_out())};
  for (float& value : inputs.x) {
    value = uniform(1.0f);
  }
  for (float& value : inputs.w_qkv) {
    value = uniform(weight_scale);
  }
  for (float& value : inputs.w_out) {
    value = uniform(weight_scale);
  }
  return inputs;
}

void upload(const AttentionInputs& inputs, AttentionBuffers& buffers) {
  buffers.x.copy_from(inputs.x);
  buffers.w_qkv.copy_from(inputs.w_qkv);
  buffers.w_out.copy_from(inputs.w_out);
}

// ------------------------------------------------------------------------------------------------
// CPU references
// ------------------------------------------------------------------------------------------------

namespace {

void require_size(const char* what, std::span<const float> data, std::size_t expected) {
  if (data.size() != expected) {
    throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(expected) +
                                " elements, got " + std::to_string(data.size()));
  }
}

// c[m x n] = a[m x k] * b[k x n], all dense row-major, accumulated in double.
std::vector<float> matmul_reference(std::span<const float> a, std::span<const float> b,
                                    std::size_t m, std::size_t n, std::size_t k) {
  std::vector<float> c(m * n);
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      double sum = 0.0;
      for (std::size_t i = 0; i < k; ++i) {
        sum += double(a[row * k + i]) * double(b[i * n + col]);
      }
      c[row * n + col] = static_cast<float>(sum);
    }
  }
  return c;
}

}  // namespace

std::vector<float> qkv_projection_reference(const AttentionConfig& config, std::span<const float> x,
                                            std::span<const float> w_qkv) {
  const Shape s = shape_of(config);
  require_size("qkv_projection_reference: x", x, s.x());
  require_size("qkv_projection_reference: w_qkv", w_qkv, s.w_qkv());
  return matmul_reference(x, w_qkv, s.tokens(), 3 * s.d, s.d);
}

std::vector<float> scores_reference(const AttentionConfig& config, std::span<const float> qkv) {
  const Shape s = shape_of(config);
  require_size("scores_reference: qkv", qkv, s.qkv());
  const double scale = 1.0 / std::sqrt(double(s.dh));
  const std::size_t row = 3 * s.d;  // floats per token in qkv
  std::vector<float> scores(s.scores());
  for (std::size_t b = 0; b < s.b; ++b) {
    for (std::size_t h = 0; h < s.h; ++h) {
      for (std::size_t i = 0; i < s.s; ++i) {
        const float* q = &qkv[(b * s.s + i) * row + h * s.dh];
        for (std::size_t j = 0; j < s.s; ++j) {
          const float* k = &qkv[(b * s.s + j) * row + s.d + h * s.dh];
          double dot = 0.0;
          for (std::size_t c = 0; c < s.dh; ++c) {
            dot += double(q[c]) * double(k[c]);
          }
          scores[((b * s.h + h) * s.s + i) * s.s + j] = static_cast<float>(dot * scale);
        }
      }
    }
  }
  return scores;
}

std::vector<float> softmax_reference(const AttentionConfig& config, std::span<const float> scores) {
  const Shape s = shape_of(config);
  require_size("softmax_reference: scores", scores, s.scores());
  std::vector<float> probs(s.scores());
  for (std::size_t row = 0; row < s.b * s.h * s.s; ++row) {
    const std::size_t valid = config.causal ? row % s.s + 1 : s.s;  // columns j <= i
    const float* x = &scores[row * s.s];
    float* p = &probs[row * s.s];
    double max = static_cast<double>(x[0]);
    for (std::size_t j = 1; j < valid; ++j) {
      max = std::max(max, double(x[j]));
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < valid; ++j) {
      sum += std::exp(double(x[j]) - max);
    }
    for (std::size_t j = 0; j < s.s; ++j) {
      p[j] = j < valid ? static_cast<float>(std::exp(double(x[j]) - max) / sum) : 0.0f;
    }
  }
  return probs;
}

std::vector<float> weighted_sum_reference(const AttentionConfig& config,
                                          std::span<const float> probs,
                                          std::span<const float> qkv) {
  const Shape s = shape_of(config);
  require_size("weighted_sum_reference: probs", probs, s.scores());
  require_size("weighted_sum_reference: qkv", qkv, s.qkv());
  const std::size_t row = 3 * s.d;
  std::vector<float> attn(s.attn());
  for (std::size_t b = 0; b < s.b; ++b) {
    for (std::size_t h = 0; h < s.h; ++h) {
      for (std::size_t i = 0; i < s.s; ++i) {
        const float* p = &probs[((b * s.h + h) * s.s + i) * s.s];
        for (std::size_t c = 0; c < s.dh; ++c) {
          double sum = 0.0;
          for (std::size_t j = 0; j < s.s; ++j) {
            sum += double(p[j]) * double(qkv[(b * s.s + j) * row + 2 * s.d + h * s.dh + c]);
          }
          attn[(b * s.s + i) * s.d + h * s.dh + c] = static_cast<float>(sum);
        }
      }
    }
  }
  return attn;
}

std::vector<float> output_projection_reference(const AttentionConfig& config,
                                               std::span<const float> attn,
                                               std::span<const float> w_out) {
  const Shape s = shape_of(config);
  require_size("output_projection_reference: attn", attn, s.attn());
  require_size("output_projection_reference: w_out", w_out, s.w_out());
  return matmul_reference(attn, w_out, s.tokens(), s.d, s.d);
}

AttentionStages attention_reference_stages(const AttentionConfig& config,
                                           const AttentionInputs& inputs) {
  AttentionStages stages;
  stages.qkv = qkv_projection_reference(config, inputs.x, inputs.w_qkv);
  stages.scores = scores_reference(config, stages.qkv);
  stages.probs = softmax_reference(config, stages.scores);
  stages.attn = weighted_sum_reference(config, stages.probs, stages.qkv);
  stages.y = output_projection_reference(config, stages.attn, inputs.w_out);
  return stages;
}

std::vector<float> attention_reference(const AttentionConfig& config,
                                       const AttentionInputs& inputs) {
  return attention_reference_stages(config, inputs).y;
}

gpulab::Tolerance forward_tolerance(const AttentionConfig& config, double scale) {
  config.validate();
  const auto fp32 = [](std::int64_t k) { return tolerance_for(DType::fp32, k); };
  return scaled(fp32(config.d_model) + fp32(config.head_dim()) + fp32(config.seq_len) +
                    fp32(config.seq_len) + fp32(config.d_model),
                scale);
}

// ------------------------------------------------------------------------------------------------
// Kernels
// ------------------------------------------------------------------------------------------------

namespace {

constexpr int kTile = 16;  // GEMM tiles are kTile x kTile; blocks are kTile x kTile threads

// One operand of a batched GEMM: element (r, c) of batch (b, h) is at
//   data + b * stride_b + h * stride_h + r * ld + c.
// Strides in elements. With them one kernel reads a head's slice of qkv in place (Q of head h is
// the dh columns at h*dh of a token row, ld = 3D) instead of copying heads out first.
template <class T>
struct Operand {
  T* data;
  std::size_t ld;
  std::size_t stride_b;
  std::size_t stride_h;
};

// C[b,h] = alpha * A[b,h] * op(B[b,h]), with A M x K, op(B) K x N, C M x N; op(B) = B, or B^T
// when transpose_b (then B is stored N x K). The grid's z index is b * heads + h.
struct GemmArgs {
  Operand<const float> a;
  Operand<const float> b;
  Operand<float> c;
  int m, n, k;
  int heads;
  float alpha;
  bool transpose_b;
};

__global__ void batched_gemm_kernel(GemmArgs args) {
  // Static shared memory: the tile size is a compile-time constant here (gemm.cu's level 2 sizes
  // its tiles at launch time instead, with extern __shared__).
  __shared__ float a_tile[kTile][kTile];
  // One float of padding per row: the transposed store below writes a column of b_tile, and with
  // rows of 16 floats the 16 threads of a half-warp would hit only 2 of the 32 banks (8-way
  // conflicts); with rows of 17 each lands in a different bank.
  __shared__ float b_tile[kTile][kTile + 1];

  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::size_t batch = blockIdx.z / static_cast<unsigned>(args.heads);
  const std::size_t head = blockIdx.z % static_cast<unsigned>(args.heads);
  const float* a = args.a.data + batch * args.a.stride_b + head * args.a.stride_h;
  const float* b = args.b.data + batch * args.b.stride_b + head * args.b.stride_h;
  float* c = args.c.data + batch * args.c.stride_b + head * args.c.stride_h;

  const int row0 = static_cast<int>(blockIdx.y) * kTile;
  const int col0 = static_cast<int>(blockIdx.x) * kTile;
  const int row = row0 + ty;
  const int col = col0 + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < args.k; k0 += kTile) {
    // Every thread loads one element of each tile, zero outside the matrices, so the partial
    // tiles at the right and bottom edges (sizes not multiples of 16) add nothing.
    a_tile[ty][tx] =
        row < args.m && k0 + tx < args.k ? a[std::size_t(row) * args.a.ld + k0 + tx] : 0.0f;
    if (args.transpose_b) {
      // op(B)[kk][col] = B[col][kk]: let consecutive threads (tx) walk along a row of B, which is
      // contiguous (coalesced loads), and store the element transposed into b_tile[kk][col].
      const int b_row = col0 + ty;
      b_tile[tx][ty] =
          b_row < args.n && k0 + tx < args.k ? b[std::size_t(b_row) * args.b.ld + k0 + tx] : 0.0f;
    } else {
      b_tile[ty][tx] =
          k0 + ty < args.k && col < args.n ? b[std::size_t(k0 + ty) * args.b.ld + col] : 0.0f;
    }
    __syncthreads();  // both tiles are complete before any thread reads another thread's element
    for (int i = 0; i < kTile; ++i) {
      sum += a_tile[ty][i] * b_tile[i][tx];
    }
    __syncthreads();  // every thread is done reading the tiles before the next step overwrites them
  }
  if (row < args.m && col < args.n) {
    c[std::size_t(row) * args.c.ld + col] = args.alpha * sum;
  }
}

constexpr int kMaxSoftmaxThreads = 256;  // a multiple of the warp size
constexpr int kWarpSize = 32;

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Combines `value` over the whole block; every thread gets the result. blockDim.x must be a
// multiple of 32 (full warps), `partials` a shared array of one float per warp that no other
// reduction of this block uses: the kernel below gives each of its two reductions its own array,
// so a fast warp that starts the second reduction cannot overwrite partials that a slow warp is
// still reading in the first (sharing one array would need a second __syncthreads at the end).
template <class Op>
__device__ float block_reduce(float value, Op op, float* partials) {
  // Within a warp: butterfly exchange through registers, no shared memory and no barrier; after
  // the xor steps every lane holds the warp's result.
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  if (lane == 0) {
    partials[warp] = value;
  }
  __syncthreads();  // every warp's result is in shared memory before any thread reads them all
  const unsigned warps = blockDim.x / kWarpSize;
  value = partials[0];
  for (unsigned w = 1; w < warps; ++w) {
    value = op(value, partials[w]);
  }
  return value;
}

// One block per row of `cols` scores. Rows are (b, h, i) with i = row % period the query
// position; with causal, columns j > i are masked: written as exactly 0 and never read (so they
// need not even be finite).
__global__ void softmax_rows_kernel(const float* __restrict__ scores, float* __restrict__ probs,
                                    int cols, int period, bool causal) {
  // One array per reduction (see block_reduce).
  __shared__ float max_partials[kMaxSoftmaxThreads / kWarpSize];
  __shared__ float sum_partials[kMaxSoftmaxThreads / kWarpSize];
  const std::size_t row = blockIdx.x;
  const float* x = scores + row * std::size_t(cols);
  float* p = probs + row * std::size_t(cols);
  const int valid = causal ? static_cast<int>(row % unsigned(period)) + 1 : cols;
  const int step = static_cast<int>(blockDim.x);
  const int first = static_cast<int>(threadIdx.x);

  // Subtracting the row maximum first keeps every exp() argument <= 0: exp cannot overflow and
  // the largest term is exactly 1, so the sum is at least 1. Mathematically the result is the
  // same, since exp(x - m) / sum exp(x - m) = exp(x) / sum exp(x).
  float max = -INFINITY;
  for (int j = first; j < valid; j += step) {
    max = fmaxf(max, x[j]);
  }
  max = block_reduce(max, MaxOp{}, max_partials);

  float sum = 0.0f;
  for (int j = first; j < valid; j += step) {
    sum += expf(x[j] - max);
  }
  sum = block_reduce(sum, SumOp{}, sum_partials);

  for (int j = first; j < cols; j += step) {
    p[j] = j < valid ? expf(x[j] - max) / sum : 0.0f;  // masked: an explicit 0, not exp(-inf)
  }
}

void require(bool condition, const std::string& what) {
  if (!condition) {
    throw std::invalid_argument(what);
  }
}

// Launches batched_gemm_kernel for `batches` sequences of `args.heads` heads each.
void launch_batched_gemm(const GemmArgs& args, int batches, cudaStream_t stream) {
  require(args.m > 0 && args.n > 0 && args.k > 0, "batched_gemm: m, n and k must be positive");
  require(batches > 0 && args.heads > 0, "batched_gemm: batches and heads must be positive");
  require(args.a.data != nullptr && args.b.data != nullptr && args.c.data != nullptr,
          "batched_gemm: null operand");
  require(args.a.ld >= std::size_t(args.k), "batched_gemm: lda must be at least k");
  require(args.b.ld >= std::size_t(args.transpose_b ? args.k : args.n),
          "batched_gemm: ldb must be at least the width of B as stored");
  require(args.c.ld >= std::size_t(args.n), "batched_gemm: ldc must be at least n");
  const std::size_t z = std::size_t(batches) * std::size_t(args.heads);
  require(z <= 65535, "batched_gemm: at most 65535 (batch, head) pairs (grid.z limit)");
  const unsigned rows = ceil_div(std::size_t(args.m), kTile);
  require(rows <= 65535, "batched_gemm: m too large for grid.y");
  const dim3 block(kTile, kTile);
  const dim3 grid(ceil_div(std::size_t(args.n), kTile), rows, static_cast<unsigned>(z));
  batched_gemm_kernel<<<grid, block, 0, stream>>>(args);
  GPULAB_CHECK_LAUNCH();
}

// Softmax of `rows` rows of `cols` scores; causal masks by row % period.
void launch_softmax_rows(const float* scores, float* probs, std::size_t rows, int cols, int period,
                         bool causal, cudaStream_t stream) {
  require(rows > 0 && cols > 0 && period > 0, "softmax_rows: sizes must be positive");
  require(scores != nullptr && probs != nullptr, "softmax_rows: null buffer");
  require(rows <= 0x7fffffffu, "softmax_rows: too many rows for grid.x");
  // Enough whole warps to give each thread about one column, at most kMaxSoftmaxThreads; longer
  // rows are covered by the strided loops in the kernel.
  const unsigned threads = std::min<unsigned>(
      kMaxSoftmaxThreads, ceil_div(std::size_t(cols), kWarpSize) * unsigned(kWarpSize));
  softmax_rows_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(scores, probs, cols,
                                                                           period, causal);
  GPULAB_CHECK_LAUNCH();
}

void require_buffers_fit(const Shape& s, const AttentionBuffers& buffers) {
  const bool fit = buffers.x.size() == s.x() && buffers.w_qkv.size() == s.w_qkv() &&
                   buffers.qkv.size() == s.qkv() && buffers.scores.size() == s.scores() &&
                   buffers.probs.size() == s.scores() && buffers.attn.size() == s.attn() &&
                   buffers.w_out.size() == s.w_out() && buffers.y.size() == s.x();
  require(fit, "run_component: the buffers were allocated for a different configuration");
}

// A dense row-major matrix with no batch offsets.
template <class T>
Operand<T> dense(T* data, std::size_t ld) {
  return {data, ld, 0, 0};
}

}  // namespace

void run_component(Component component, const AttentionConfig& config, AttentionBuffers& buffers,
                   cudaStream_t stream) {
  const Shape s = shape_of(config);
  require_buffers_fit(s, buffers);
  const int batches = config.batch;
  const int tokens = static_cast<int>(s.tokens());
  const int seq = config.seq_len;
  const int d = config.d_model;
  const int dh = config.head_dim();
  const std::size_t row = 3 * s.d;  // floats per token in qkv
  switch (component) {
    case Component::qkv_projection:
      launch_batched_gemm(
          {dense<const float>(buffers.x.data(), s.d), dense<const float>(buffers.w_qkv.data(), row),
           dense(buffers.qkv.data(), row), tokens, 3 * d, d, 1, 1.0f, false},
          1, stream);
      return;
    case Component::scores: {
      // Q[b,h] and K[b,h] are S x dh slices of qkv: sequence b starts S rows down, head h dh
      // columns across; K is read row by row as the columns of K^T.
      const Operand<const float> q{buffers.qkv.data(), row, s.s * row, s.dh};
      const Operand<const float> k{buffers.qkv.data() + s.d, row, s.s * row, s.dh};
      const Operand<float> out{buffers.scores.data(), s.s, s.h * s.s * s.s, s.s * s.s};
      const auto scale = static_cast<float>(1.0 / std::sqrt(double(dh)));
      launch_batched_gemm({q, k, out, seq, seq, dh, config.heads, scale, true}, batches, stream);
      return;
    }
    case Component::softmax:
      launch_softmax_rows(buffers.scores.data(), buffers.probs.data(), s.b * s.h * s.s, seq, seq,
                          config.causal, stream);
      return;
    case Component::weighted_sum: {
      const Operand<const float> p{buffers.probs.data(), s.s, s.h * s.s * s.s, s.s * s.s};
      const Operand<const float> v{buffers.qkv.data() + 2 * s.d, row, s.s * row, s.dh};
      const Operand<float> out{buffers.attn.data(), s.d, s.s * s.d, s.dh};
      launch_batched_gemm({p, v, out, seq, dh, seq, config.heads, 1.0f, false}, batches, stream);
      return;
    }
    case Component::output_projection:
      launch_batched_gemm({dense<const float>(buffers.attn.data(), s.d),
                           dense<const float>(buffers.w_out.data(), s.d),
                           dense(buffers.y.data(), s.d), tokens, d, d, 1, 1.0f, false},
                          1, stream);
      return;
  }
  throw std::invalid_argument("run_component: unknown component " +
                              std::to_string(static_cast<int>(component)));
}

void attention_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                       cudaStream_t stream) {
  for (const Component component : all_components()) {
    run_component(component, config, buffers, stream);
  }
}

std::span<const Level<AttentionLaunch>> attention_levels() {
  static const Level<AttentionLaunch> levels[] = {
      {0,
       "unfused",
       "five kernels; scores and probabilities go through DRAM (two B*H*S^2 tensors)",
       &attention_forward,
       {GPULAB_KERNEL_REF(batched_gemm_kernel, kNoDynamicShared),
        GPULAB_KERNEL_REF(softmax_rows_kernel, kNoDynamicShared)}},
  };
  return levels;
}

namespace {

// One layer of `seq_len` tokens: batch 1, d_model 64, 4 heads, not causal; inputs from seed 2.
class AttentionProblem final : public OpProblem {
 public:
  explicit AttentionProblem(const AttentionConfig& config)
      : config_(config), inputs_(make_attention_inputs(config, 2)), buffers_(config) {
    upload(inputs_, buffers_);
    expected_ = attention_reference(config_, inputs_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    level_at(attention_levels(), index, "attention").launch(config_, buffers_, stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(attention_levels(), index, "attention");
    for (DeviceBuffer<float>* out :
         {&buffers_.qkv, &buffers_.scores, &buffers_.probs, &buffers_.attn, &buffers_.y}) {
      out->fill_bytes_async(0xff, stream);
    }
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    require_close(describe_level("attention", level.number, level.name, 0), expected_,
                  buffers_.y.to_vector(), forward_tolerance(config_, rms(expected_)));
  }
  [[nodiscard]] OpCost cost() const override { return forward_cost(config_); }
  [[nodiscard]] std::string describe() const override {
    return "batch " + std::to_string(config_.batch) + ", " + std::to_string(config_.seq_len) +
           " tokens, d_model " + std::to_string(config_.d_model) + ", " +
           std::to_string(config_.heads) + " heads";
  }

 private:
  AttentionConfig config_;
  AttentionInputs inputs_;
  AttentionBuffers buffers_;
  std::vector<float> expected_;
};

}  // namespace

Op attention_op() {
  return {
      .name = "attention",
      .summary = "one attention layer's forward pass: batch 1, d_model 64, 4 heads",
      .size_means = "tokens per sequence",
      .default_size = 2048,
      .sim_size = 128,
      .test_sizes = {1, 17, 64},
      .default_block = 0,
      .levels = erase_levels(attention_levels()),
      .max_size = 65536,
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<AttentionProblem>(
            AttentionConfig{1, static_cast<int>(n), 64, 4, false});
      },
  };
}

}  // namespace gpulab::kernels
