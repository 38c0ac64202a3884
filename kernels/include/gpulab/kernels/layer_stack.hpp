// A stack of layers whose reverse pass reads every layer's input: the smallest model of training
// memory, for lab 05's activation checkpointing.
//
//   forward   x[i+1] = tanh(a[i] * x[i] + b[i])            (elementwise, `width` values)
//   reverse   g[i]   = g[i+1] * a[i] * (1 - x[i+1]^2)       with x[i+1] recomputed from x[i]
//
// The reverse of layer i needs x[i], its input: a pass that keeps every input holds `layers`
// activations at once; one that keeps every k-th recomputes the others from the nearest kept one.
// Both kernels are deterministic, so recomputed activations are bit-identical to the first ones.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpulab::kernels {

/// The layers' shape and parameters. layer_stack(layers, width, seed) builds one.
struct LayerStack {
  int layers = 0;         ///< N
  std::size_t width = 0;  ///< values per activation
  std::vector<float> a;   ///< a[i] in [0.5, 1.5], per layer
  std::vector<float> b;   ///< b[i] in [-0.5, 0.5], per layer

  /// Bytes of one activation: width floats.
  [[nodiscard]] std::size_t activation_bytes() const { return width * sizeof(float); }
};

/// N layers of `width` values with parameters from `seed` (std::mt19937's raw output: the same on
/// every platform). Throws std::invalid_argument for layers < 1 or width 0.
[[nodiscard]] LayerStack layer_stack(int layers, std::size_t width, unsigned seed);

/// Deterministic input activations (uniform in [-1, 1]) of `width` values.
[[nodiscard]] std::vector<float> layer_stack_input(std::size_t width, unsigned seed);

/// out = layer `layer`(in) on `stream` (device pointers of stack.width floats; `out` may be
/// `in`). Counts one layer_forward_count(). Throws std::invalid_argument for a layer outside
/// [0, N) or a null pointer.
void layer_forward(const LayerStack& stack, int layer, const float* in, float* out,
                   cudaStream_t stream = nullptr);

/// grad = grad * d layer(in) / d in, in place on `stream`: the reverse of layer `layer`, reading
/// its input `in` (it recomputes the layer's output itself, without counting a forward). Throws
/// std::invalid_argument for a layer outside [0, N) or a null pointer.
void layer_reverse(const LayerStack& stack, int layer, const float* in, float* grad,
                   cudaStream_t stream = nullptr);

/// How many layer_forward calls this process has made (all threads): the work of a pass.
[[nodiscard]] std::uint64_t layer_forward_count() noexcept;

/// The CPU reference of a whole pass, in double: the stack's output x[N] and the gradient of
/// sum(grad_output * x[N]) with respect to the input x[0].
struct LayerStackPass {
  std::vector<float> output;
  std::vector<float> grad_input;
};
/// Throws std::invalid_argument when a span's size is not stack.width.
[[nodiscard]] LayerStackPass layer_stack_reference(const LayerStack& stack,
                                                   const std::vector<float>& input,
                                                   const std::vector<float>& grad_output);

}  // namespace gpulab::kernels
