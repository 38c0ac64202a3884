#include "gpulab/kernels/layer_stack.hpp"

#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "gpulab/kernels/common.hpp"
#include "gpulab/runtime/cuda_check.hpp"

namespace gpulab::kernels {
namespace {

std::atomic<std::uint64_t> g_forwards{0};

constexpr unsigned kBlock = 256;

// A uniform value in [lo, hi] from the generator's raw output (which the standard fixes).
float uniform(std::mt19937& generator, double lo, double hi) {
  const double unit = static_cast<double>(generator()) / 4294967295.0;
  return static_cast<float>(lo + (hi - lo) * unit);
}

void check_layer(const LayerStack& stack, int layer, const void* in, const void* out,
                 const char* what) {
  if (layer < 0 || layer >= stack.layers) {
    throw std::invalid_argument(std::string(what) + ": layer " + std::to_string(layer) +
                                " outside [0, " + std::to_string(stack.layers) + ")");
  }
  if (in == nullptr || out == nullptr) {
    throw std::invalid_argument(std::string(what) + ": null device pointer");
  }
  if (stack.a.size() != static_cast<std::size_t>(stack.layers) ||
      stack.b.size() != stack.a.size()) {
    throw std::invalid_argument(std::string(what) + ": the stack has " +
                                std::to_string(stack.a.size()) + " parameters for " +
                                std::to_string(stack.layers) + " layers");
  }
}

__global__ void layer_forward_kernel(const float* in, float* out, std::size_t n, float a, float b) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = tanhf(a * in[i] + b);
  }
}

__global__ void layer_reverse_kernel(const float* in, float* grad, std::size_t n, float a,
                                     float b) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) {
    const float y = tanhf(a * in[i] + b);
    grad[i] = grad[i] * (a * (1.0F - y * y));
  }
}

}  // namespace

LayerStack layer_stack(int layers, std::size_t width, unsigned seed) {
  if (layers < 1 || width == 0) {
    throw std::invalid_argument("layer_stack: needs at least one layer and one value, got " +
                                std::to_string(layers) + " layers of " + std::to_string(width));
  }
  LayerStack stack{layers, width, {}, {}};
  std::mt19937 generator(seed);
  for (int i = 0; i < layers; ++i) {
    stack.a.push_back(uniform(generator, 0.5, 1.5));
    stack.b.push_back(uniform(generator, -0.5, 0.5));
  }
  return stack;
}

std::vector<float> layer_stack_input(std::size_t width, unsigned seed) {
  std::mt19937 generator(seed);
  std::vector<float> values(width);
  for (float& v : values) {
    v = uniform(generator, -1.0, 1.0);
  }
  return values;
}

void layer_forward(const LayerStack& stack, int layer, const float* in, float* out,
                   cudaStream_t stream) {
  check_layer(stack, layer, in, out, "layer_forward");
  const auto i = static_cast<std::size_t>(layer);
  layer_forward_kernel<<<ceil_div(stack.width, kBlock), kBlock, 0, stream>>>(
      in, out, stack.width, stack.a[i], stack.b[i]);
  GPULAB_CHECK_LAUNCH();
  g_forwards.fetch_add(1, std::memory_order_relaxed);
}

void layer_reverse(const LayerStack& stack, int layer, const float* in, float* grad,
                   cudaStream_t stream) {
  check_layer(stack, layer, in, grad, "layer_reverse");
  const auto i = static_cast<std::size_t>(layer);
  layer_reverse_kernel<<<ceil_div(stack.width, kBlock), kBlock, 0, stream>>>(
      in, grad, stack.width, stack.a[i], stack.b[i]);
  GPULAB_CHECK_LAUNCH();
}

std::uint64_t layer_forward_count() noexcept {
  return g_forwards.load(std::memory_order_relaxed);
}

LayerStackPass layer_stack_reference(const LayerStack& stack, const std::vector<float>& input,
                                     const std::vector<float>& grad_output) {
  if (input.size() != stack.width || grad_output.size() != stack.width) {
    throw std::invalid_argument("layer_stack_reference: input and grad_output must have " +
                                std::to_string(stack.width) + " values, got " +
                                std::to_string(input.size()) + " and " +
                                std::to_string(grad_output.size()));
  }
  LayerStackPass pass{std::vector<float>(stack.width), std::vector<float>(stack.width)};
  std::vector<double> x(static_cast<std::size_t>(stack.layers) + 1);
  for (std::size_t j = 0; j < stack.width; ++j) {
    x[0] = static_cast<double>(input[j]);
    for (std::size_t i = 0; i < stack.a.size(); ++i) {
      x[i + 1] =
          std::tanh(static_cast<double>(stack.a[i]) * x[i] + static_cast<double>(stack.b[i]));
    }
    double g = static_cast<double>(grad_output[j]);
    for (std::size_t i = stack.a.size(); i-- > 0;) {
      g *= static_cast<double>(stack.a[i]) * (1.0 - x[i + 1] * x[i + 1]);
    }
    pass.output[j] = static_cast<float>(x.back());
    pass.grad_input[j] = static_cast<float>(g);
  }
  return pass;
}

}  // namespace gpulab::kernels
