#include "gpulab/kernels/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/catalog.hpp"
#include "gpulab/kernels/common.hpp"
#include "gpulab/kernels/flash.hpp"
#include "gpulab/runtime/cublas_check.hpp"
#include "gpulab/runtime/cuda_check.hpp"

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

AttentionWorkspace attention_workspace(int level) {
  switch (level) {
    case 0:
      return {true, true, false};
    case 1:
    case 2:
      return {true, false, false};
    case 3:
      return {false, false, false};
    case 4:
      return {false, false, true};
    default:
      throw std::invalid_argument("attention_workspace: no level " + std::to_string(level) +
                                  " (levels 0 to 4)");
  }
}

AttentionBuffers::AttentionBuffers(const AttentionConfig& config, AttentionWorkspace workspace) {
  const Shape s = shape_of(config);
  x = DeviceBuffer<float>(s.x());
  w_qkv = DeviceBuffer<float>(s.w_qkv());
  qkv = DeviceBuffer<float>(s.qkv());
  if (workspace.scores) {
    scores = DeviceBuffer<float>(s.scores());
  }
  if (workspace.probs) {
    probs = DeviceBuffer<float>(s.scores());
  }
  if (workspace.qkv_half) {
    qkv_half = DeviceBuffer<__half>(s.qkv());
  }
  attn = DeviceBuffer<float>(s.attn());
  w_out = DeviceBuffer<float>(s.w_out());
  y = DeviceBuffer<float>(s.x());
}

std::size_t AttentionBuffers::bytes() const {
  return x.bytes() + w_qkv.bytes() + qkv.bytes() + scores.bytes() + probs.bytes() +
         qkv_half.bytes() + attn.bytes() + w_out.bytes() + y.bytes();
}

std::size_t AttentionBuffers::bytes_for(const AttentionConfig& config,
                                        AttentionWorkspace workspace) {
  const Shape s = shape_of(config);
  const std::size_t floats = s.x() + s.w_qkv() + s.qkv() + (workspace.scores ? s.scores() : 0) +
                             (workspace.probs ? s.scores() : 0) + s.attn() + s.w_out() + s.x();
  return floats * sizeof(float) + (workspace.qkv_half ? s.qkv() * sizeof(__half) : 0);
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

gpulab::Tolerance level_tolerance(const AttentionConfig& config, int level, double scale) {
  const gpulab::Tolerance fp32 = forward_tolerance(config, scale);
  (void)attention_workspace(level);  // throws for no such level
  if (level != 4) {
    return fp32;
  }
  // FP16 rounding of Q and K, felt through the head_dim-term scores, and of V and P, felt in the
  // weighted sum o / l: a weighted average of V's rows, so one rounding's relative error, however
  // many keys there are (l sums the same rounded P). These errors are relative to the tensors'
  // typical magnitude, not to each element of y (an element near 0 is a cancellation in the
  // output projection), so the absolute part is the same multiple of the scale.
  const gpulab::Tolerance fp16 =
      tolerance_for(DType::fp16, config.head_dim()) + tolerance_for(DType::fp16);
  return fp32 + gpulab::Tolerance{fp16.rtol, fp16.rtol * scale};
}

void require(bool condition, const std::string& what) {
  if (!condition) {
    throw std::invalid_argument(what);
  }
}

// `what` needs an intermediate the buffers were allocated without.
void require_intermediate(bool present, const char* what, const char* intermediate, int level) {
  require(present, std::string(what) + " needs buffers." + intermediate +
                       ", which these buffers were allocated without: allocate them with "
                       "AttentionBuffers(config, attention_workspace(" +
                       std::to_string(level) + "))");
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

// Row `blockIdx.x` of `cols` scores into probabilities, one block per row. Rows are (b, h, i)
// with i = row % period the query position; with causal, columns j > i are masked: written as
// exactly 0 and never read (so they need not even be finite). `probs` may be `scores` (in place):
// each thread reads its own elements of the row before it writes them.
__device__ void softmax_row(const float* scores, float* probs, int cols, int period, bool causal) {
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

// Level 0: probabilities into their own tensor.
__global__ void softmax_rows_kernel(const float* scores, float* probs, int cols, int period,
                                    bool causal) {
  softmax_row(scores, probs, cols, period, causal);
}

// Level 2: in place, over the scores (one S x S tensor instead of two).
__global__ void softmax_rows_inplace_kernel(float* scores, int cols, int period, bool causal) {
  softmax_row(scores, scores, cols, period, causal);
}

// Level 1: attn[b,h] = softmax(mask(scale * scores[b,h])) * V[b,h] without storing P. Blocks of
// kTile x kTile threads each compute a kTile x kTile tile of attn[b,h] (queries x head columns),
// as batched_gemm_kernel does, in two steps:
//   1. the statistics of the block's kTile rows: the kTile threads of a row (one half-warp) walk
//      it with an online softmax (a running maximum m and sum l of exp(x - m), the sum rescaled by
//      exp(m_old - m_new) whenever the maximum grows), then combine their (m, l) pairs by shuffles;
//   2. the product with V, where each element of a P tile is made from its score as it is loaded:
//      exp(scale * s - m) / l, or 0 where masked.
// Each block reads its rows of scores twice (step 1 and step 2), and the head_dim / kTile blocks
// of the same rows each do (L2 serves the repeats); probabilities are never written, where level 0
// writes them and reads them back.
struct SoftmaxSumArgs {
  const float* scores;  // [B, H, S, S], unscaled
  const float* qkv;     // [B*S, 3D]
  float* attn;          // [B*S, D]
  int seq, heads, d_model, head_dim;
  float scale;
  bool causal;
};

__global__ void softmax_weighted_sum_kernel(SoftmaxSumArgs a) {
  __shared__ float p_tile[kTile][kTile];
  __shared__ float v_tile[kTile][kTile];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::size_t bh = blockIdx.z;
  const std::size_t batch = bh / static_cast<unsigned>(a.heads);
  const std::size_t head = bh % static_cast<unsigned>(a.heads);
  const std::size_t seq = static_cast<std::size_t>(a.seq);
  const std::size_t ld = 3 * static_cast<std::size_t>(a.d_model);
  const float* s = a.scores + bh * seq * seq;
  const float* v = a.qkv + batch * seq * ld + 2 * static_cast<std::size_t>(a.d_model) +
                   head * static_cast<std::size_t>(a.head_dim);
  const int row0 = static_cast<int>(blockIdx.y) * kTile;
  const int row = row0 + ty;
  const int col = static_cast<int>(blockIdx.x) * kTile + tx;
  const int valid = row < a.seq ? (a.causal ? row + 1 : a.seq) : 0;  // keys this row attends to

  // 1. Row statistics.
  float m = -INFINITY;
  float l = 0.0f;
  for (int j = tx; j < valid; j += kTile) {
    const float x = a.scale * s[std::size_t(row) * seq + std::size_t(j)];
    if (x > m) {
      l = l * expf(m - x) + 1.0f;  // the old terms shrink by exp(m - x); the new one is exp(0)
      m = x;
    } else {
      l += expf(x - m);
    }
  }
  for (int offset = kTile / 2; offset > 0; offset /= 2) {  // within the row's half-warp
    const float other_m = __shfl_xor_sync(0xffffffffu, m, offset, kTile);
    const float other_l = __shfl_xor_sync(0xffffffffu, l, offset, kTile);
    const float both = fmaxf(m, other_m);
    l = (m == -INFINITY ? 0.0f : l * expf(m - both)) +
        (other_m == -INFINITY ? 0.0f : other_l * expf(other_m - both));
    m = both;
  }

  // 2. P * V, P made on the fly. With causal, no row of this block attends past row0 + kTile - 1.
  const int keys = a.causal ? min(a.seq, row0 + kTile) : a.seq;
  float sum = 0.0f;
  for (int k0 = 0; k0 < keys; k0 += kTile) {
    const int j = k0 + tx;
    p_tile[ty][tx] =
        j < valid ? expf(a.scale * s[std::size_t(row) * seq + std::size_t(j)] - m) / l : 0.0f;
    const int key = k0 + ty;
    v_tile[ty][tx] = key < a.seq && col < a.head_dim ? v[std::size_t(key) * ld + col] : 0.0f;
    __syncthreads();  // both tiles are complete before any thread reads them
    for (int i = 0; i < kTile; ++i) {
      sum += p_tile[ty][i] * v_tile[i][tx];
    }
    __syncthreads();  // every thread is done with the tiles before the next step overwrites them
  }
  if (row < a.seq && col < a.head_dim) {
    a.attn[(batch * seq + std::size_t(row)) * std::size_t(a.d_model) +
           head * std::size_t(a.head_dim) + std::size_t(col)] = sum;
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

// Softmax of `rows` rows of `cols` scores (in place when probs == scores); causal masks by
// row % period.
void launch_softmax_rows(const float* scores, float* probs, std::size_t rows, int cols, int period,
                         bool causal, cudaStream_t stream) {
  require(rows > 0 && cols > 0 && period > 0, "softmax_rows: sizes must be positive");
  require(scores != nullptr && probs != nullptr, "softmax_rows: null buffer");
  require(rows <= 0x7fffffffu, "softmax_rows: too many rows for grid.x");
  // Enough whole warps to give each thread about one column, at most kMaxSoftmaxThreads; longer
  // rows are covered by the strided loops in the kernel.
  const unsigned threads = std::min<unsigned>(
      kMaxSoftmaxThreads, ceil_div(std::size_t(cols), kWarpSize) * unsigned(kWarpSize));
  if (scores == probs) {
    softmax_rows_inplace_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        probs, cols, period, causal);
  } else {
    softmax_rows_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(scores, probs, cols,
                                                                             period, causal);
  }
  GPULAB_CHECK_LAUNCH();
}

// The buffers were allocated for this config (the optional intermediates empty or of their size).
void require_buffers_fit(const Shape& s, const AttentionBuffers& buffers) {
  const auto absent_or = [](const auto& buffer, std::size_t size) {
    return buffer.empty() || buffer.size() == size;
  };
  const bool fit = buffers.x.size() == s.x() && buffers.w_qkv.size() == s.w_qkv() &&
                   buffers.qkv.size() == s.qkv() && absent_or(buffers.scores, s.scores()) &&
                   absent_or(buffers.probs, s.scores()) && absent_or(buffers.qkv_half, s.qkv()) &&
                   buffers.attn.size() == s.attn() && buffers.w_out.size() == s.w_out() &&
                   buffers.y.size() == s.x();
  require(fit, "attention: the buffers were allocated for a different configuration");
}

// A dense row-major matrix with no batch offsets.
template <class T>
Operand<T> dense(T* data, std::size_t ld) {
  return {data, ld, 0, 0};
}

}  // namespace

void check_buffers(const AttentionConfig& config, const AttentionBuffers& buffers) {
  require_buffers_fit(shape_of(config), buffers);
}

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
  const bool scores = component == Component::scores || component == Component::softmax;
  const bool probs = component == Component::softmax || component == Component::weighted_sum;
  require_intermediate(!scores || !buffers.scores.empty(), "run_component", "scores", 0);
  require_intermediate(!probs || !buffers.probs.empty(), "run_component", "probs", 0);
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
  require_buffers_fit(shape_of(config), buffers);
  require_intermediate(!buffers.scores.empty(), "attention level 0", "scores", 0);
  require_intermediate(!buffers.probs.empty(), "attention level 0", "probs", 0);
  for (const Component component : all_components()) {
    run_component(component, config, buffers, stream);
  }
}

void attention_fused_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                             cudaStream_t stream) {
  const Shape s = shape_of(config);
  require_buffers_fit(s, buffers);
  require_intermediate(!buffers.scores.empty(), "attention level 1", "scores", 1);
  const std::size_t row = 3 * s.d;
  run_component(Component::qkv_projection, config, buffers, stream);
  // Unscaled scores: the scale is applied with the softmax, as a fusing compiler folds the
  // elementwise scale and mask into the reduction that follows them.
  const Operand<const float> q{buffers.qkv.data(), row, s.s * row, s.dh};
  const Operand<const float> k{buffers.qkv.data() + s.d, row, s.s * row, s.dh};
  const Operand<float> out{buffers.scores.data(), s.s, s.h * s.s * s.s, s.s * s.s};
  launch_batched_gemm(
      {q, k, out, config.seq_len, config.seq_len, config.head_dim(), config.heads, 1.0f, true},
      config.batch, stream);
  const SoftmaxSumArgs args{
      buffers.scores.data(), buffers.qkv.data(),
      buffers.attn.data(),   config.seq_len,
      config.heads,          config.d_model,
      config.head_dim(),     static_cast<float>(1.0 / std::sqrt(double(config.head_dim()))),
      config.causal};
  const std::size_t z = s.b * s.h;
  require(z <= 65535, "attention level 1: at most 65535 (batch, head) pairs (grid.z limit)");
  require(ceil_div(s.s, kTile) <= 65535, "attention level 1: seq_len too large for grid.y");
  const dim3 grid(ceil_div(s.dh, kTile), ceil_div(s.s, kTile), static_cast<unsigned>(z));
  softmax_weighted_sum_kernel<<<grid, dim3(kTile, kTile), 0, stream>>>(args);
  GPULAB_CHECK_LAUNCH();
  run_component(Component::output_projection, config, buffers, stream);
}

namespace {

// One cuBLAS handle per host thread (a handle's stream is its state, so two threads must not share
// one), created on first use (creating one costs milliseconds and device memory; handles are meant
// to be reused) and never destroyed: the CUDA context may be gone by the time thread and static
// destructors run. The handle belongs to the device current when it was created: gpulab uses one.
cublasHandle_t cublas_handle() {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    GPULAB_CHECK(cublasCreate(&created));
    return created;
  }();
  return handle;
}

// Row-major C (m x n, ldc) = alpha * A (m x k, lda) * B (k x n, ldb), as cuBLAS's column-major
// C^T = B^T * A^T (a row-major matrix read column-major is its transpose); `transpose_b` takes B
// stored n x k. Batched over `count` matrices `stride_*` elements apart.
struct RowMajorGemm {
  int m, n, k;
  const float* a;
  int lda;
  long long stride_a;
  const float* b;
  int ldb;
  long long stride_b;
  float* c;
  int ldc;
  long long stride_c;
  int count;
  float alpha;
  bool transpose_b;
};

void cublas_row_major(const RowMajorGemm& g) {
  const float beta = 0.0f;
  GPULAB_CHECK(cublasSgemmStridedBatched(cublas_handle(), g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         CUBLAS_OP_N, g.n, g.m, g.k, &g.alpha, g.b, g.ldb,
                                         g.stride_b, g.a, g.lda, g.stride_a, &beta, g.c, g.ldc,
                                         g.stride_c, g.count));
}

}  // namespace

void attention_cublas_forward(const AttentionConfig& config, AttentionBuffers& buffers,
                              cudaStream_t stream) {
  const Shape s = shape_of(config);
  require_buffers_fit(s, buffers);
  require_intermediate(!buffers.scores.empty(), "attention level 2", "scores", 2);
  GPULAB_CHECK(cublasSetStream(cublas_handle(), stream));
  const int tokens = static_cast<int>(s.tokens());
  const int seq = config.seq_len;
  const int d = config.d_model;
  const int dh = config.head_dim();
  const int row = 3 * d;  // floats per token in qkv
  const long long ss = static_cast<long long>(s.s * s.s);
  cublas_row_major({tokens, 3 * d, d, buffers.x.data(), d, 0, buffers.w_qkv.data(), row, 0,
                    buffers.qkv.data(), row, 0, 1, 1.0f, false});
  const auto scale = static_cast<float>(1.0 / std::sqrt(double(dh)));
  for (std::size_t b = 0; b < s.b; ++b) {  // the heads of one sequence are evenly strided
    const float* q = buffers.qkv.data() + b * s.s * std::size_t(row);
    cublas_row_major({seq, seq, dh, q, row, dh, q + d, row, dh,
                      buffers.scores.data() + b * s.h * s.s * s.s, seq, ss, config.heads, scale,
                      true});
  }
  launch_softmax_rows(buffers.scores.data(), buffers.scores.data(), s.b * s.h * s.s, seq, seq,
                      config.causal, stream);
  for (std::size_t b = 0; b < s.b; ++b) {
    const float* v = buffers.qkv.data() + b * s.s * std::size_t(row) + 2 * d;
    cublas_row_major({seq, dh, seq, buffers.scores.data() + b * s.h * s.s * s.s, seq, ss, v, row,
                      dh, buffers.attn.data() + b * s.s * s.d, d, dh, config.heads, 1.0f, false});
  }
  cublas_row_major({tokens, d, d, buffers.attn.data(), d, 0, buffers.w_out.data(), d, 0,
                    buffers.y.data(), d, 0, 1, 1.0f, false});
}

std::span<const Level<AttentionLaunch>> attention_levels() {
  // Levels 3 and 4 project with the tiled GEMM around their own kernels.
  const auto with_projections = [](std::vector<KernelRef> kernels) {
    kernels.push_back(GPULAB_KERNEL_REF(batched_gemm_kernel, kNoDynamicShared));
    return kernels;
  };
  static const Level<AttentionLaunch> levels[] = {
      {0,
       "unfused",
       "five kernels; scores and probabilities go through DRAM (two B*H*S^2 tensors)",
       &attention_forward,
       {GPULAB_KERNEL_REF(batched_gemm_kernel, kNoDynamicShared),
        GPULAB_KERNEL_REF(softmax_rows_kernel, kNoDynamicShared)}},
      {1,
       "fused softmax",
       "the scale, mask and softmax fused into the weighted sum: P is never stored (one S^2 "
       "tensor, one DRAM round trip fewer)",
       &attention_fused_forward,
       {GPULAB_KERNEL_REF(softmax_weighted_sum_kernel, kNoDynamicShared),
        GPULAB_KERNEL_REF(batched_gemm_kernel, kNoDynamicShared)}},
      {2,
       "cuBLAS",
       "the matrix products from a vendor library (cuBLAS SGEMM) around an in-place softmax",
       &attention_cublas_forward,
       {GPULAB_KERNEL_REF(softmax_rows_inplace_kernel, kNoDynamicShared)}},
      {3, "flash", "one kernel: K/V tiles through shared memory, an online softmax, no S^2 tensor",
       &flash_attention_forward, with_projections(flash_attention_kernels())},
      {4, "flash, tensor cores",
       "flash attention with FP16 Q, K, V on tensor cores (WMMA), FP32 accumulation",
       &flash_attention_wmma_forward, with_projections(flash_attention_wmma_kernels())},
  };
  return levels;
}

namespace {

// One layer of `seq_len` tokens: batch 1, d_model 256, 4 heads (head_dim 64, as in most
// transformers), not causal; inputs from seed 2.
class AttentionProblem final : public OpProblem {
 public:
  explicit AttentionProblem(const AttentionConfig& config)
      : config_(config), inputs_(make_attention_inputs(config, 2)) {
    expected_ = attention_reference(config_, inputs_);
  }
  void launch(std::size_t index, cudaStream_t stream, unsigned /*block_size*/) override {
    const auto& level = level_at(attention_levels(), index, "attention");
    level.launch(config_, buffers_for(level.number), stream);
  }
  void verify(std::size_t index, cudaStream_t stream, unsigned block_size) override {
    const auto& level = level_at(attention_levels(), index, "attention");
    AttentionBuffers& buffers = buffers_for(level.number);
    for (DeviceBuffer<float>* out :
         {&buffers.qkv, &buffers.scores, &buffers.probs, &buffers.attn, &buffers.y}) {
      out->fill_bytes_async(0xff, stream);
    }
    buffers.qkv_half.fill_bytes_async(0xff, stream);
    launch(index, stream, block_size);
    GPULAB_CHECK(cudaStreamSynchronize(stream));
    require_close(describe_level("attention", level.number, level.name, 0), expected_,
                  buffers.y.to_vector(), level_tolerance(config_, level.number, rms(expected_)));
  }
  [[nodiscard]] OpCost cost() const override { return forward_cost(config_); }
  [[nodiscard]] std::string describe() const override {
    return "batch " + std::to_string(config_.batch) + ", " + std::to_string(config_.seq_len) +
           " tokens, d_model " + std::to_string(config_.d_model) + ", " +
           std::to_string(config_.heads) + " heads";
  }

 private:
  // Each level's own buffers, allocated (and the inputs uploaded) when it first runs: a level holds
  // only its intermediates, so the flash levels run at sizes whose S x S tensors would not fit.
  AttentionBuffers& buffers_for(int level) {
    auto [at, inserted] = buffers_.try_emplace(level, config_, attention_workspace(level));
    if (inserted) {
      upload(inputs_, at->second);
    }
    return at->second;
  }

  AttentionConfig config_;
  AttentionInputs inputs_;
  std::map<int, AttentionBuffers> buffers_;
  std::vector<float> expected_;
};

}  // namespace

Op attention_op() {
  return {
      .name = "attention",
      .summary = "one attention layer's forward pass: batch 1, d_model 256, 4 heads (head_dim 64)",
      .size_means = "tokens per sequence",
      .default_size = 2048,
      .sim_size = 128,
      .test_sizes = {1, 17, 64},
      .default_block = 0,
      .levels = erase_levels(attention_levels()),
      .max_size = 65536,
      .new_problem = [](std::size_t n) -> std::unique_ptr<OpProblem> {
        return std::make_unique<AttentionProblem>(
            AttentionConfig{1, static_cast<int>(n), 256, 4, false});
      },
  };
}

}  // namespace gpulab::kernels
