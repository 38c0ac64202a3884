// The layer stack (kernels/checkpoint/): lab 05's model of a training pass. Its forward and
// reverse kernels against the CPU reference, the forward count a checkpointing scheme is judged
// by, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpulab/kernels/layer_stack.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "numeric_check.hpp"
#include "test_device.hpp"

namespace gpulab::kernels {
namespace {

TEST(LayerStack, ParametersAreDeterministicAndInRange) {
  const LayerStack stack = layer_stack(5, 10, 3);
  EXPECT_EQ(stack.layers, 5);
  EXPECT_EQ(stack.activation_bytes(), 40U);
  ASSERT_EQ(stack.a.size(), 5U);
  ASSERT_EQ(stack.b.size(), 5U);
  for (int i = 0; i < 5; ++i) {
    EXPECT_GE(stack.a[i], 0.5F);
    EXPECT_LE(stack.a[i], 1.5F);
    EXPECT_GE(stack.b[i], -0.5F);
    EXPECT_LE(stack.b[i], 0.5F);
  }
  EXPECT_EQ(layer_stack(5, 10, 3).a, stack.a);
  EXPECT_NE(layer_stack(5, 10, 4).a, stack.a);
  EXPECT_EQ(layer_stack_input(7, 1), layer_stack_input(7, 1));
  EXPECT_THROW((void)layer_stack(0, 10, 1), std::invalid_argument);
  EXPECT_THROW((void)layer_stack(3, 0, 1), std::invalid_argument);
}

TEST(LayerStack, AForwardAndReversePassMatchTheCpuReferenceAndCountTheForwards) {
  GPULAB_REQUIRE_DEVICE();
  const LayerStack stack = layer_stack(6, 1000, 5);
  const std::vector<float> input = layer_stack_input(stack.width, 6);
  const std::vector<float> grad_output = layer_stack_input(stack.width, 7);
  std::vector<DeviceBuffer<float>> x;
  x.emplace_back(stack.width);
  x[0].copy_from(input);
  const std::uint64_t before = layer_forward_count();
  for (int i = 0; i < stack.layers; ++i) {
    x.emplace_back(stack.width);
    layer_forward(stack, i, x[i].data(), x[i + 1].data());
  }
  EXPECT_EQ(layer_forward_count() - before, 6U);
  DeviceBuffer<float> grad(stack.width);
  grad.copy_from(grad_output);
  for (int i = stack.layers - 1; i >= 0; --i) {
    layer_reverse(stack, i, x[i].data(), grad.data());
  }
  EXPECT_EQ(layer_forward_count() - before, 6U) << "the reverse is not a forward";
  const LayerStackPass expected = layer_stack_reference(stack, input, grad_output);
  EXPECT_TRUE(gpulab::testing::all_close(expected.output, x.back().to_vector(), {1e-5, 1e-6}));
  EXPECT_TRUE(gpulab::testing::all_close(expected.grad_input, grad.to_vector(), {1e-4, 1e-6}));
}

TEST(LayerStack, ALayerOutsideTheStackOrANullPointerIsRefused) {
  const LayerStack stack = layer_stack(2, 4, 1);
  float dummy = 0;
  EXPECT_THROW(layer_forward(stack, 2, &dummy, &dummy), std::invalid_argument);
  EXPECT_THROW(layer_forward(stack, -1, &dummy, &dummy), std::invalid_argument);
  EXPECT_THROW(layer_forward(stack, 0, nullptr, &dummy), std::invalid_argument);
  EXPECT_THROW(layer_reverse(stack, 0, &dummy, nullptr), std::invalid_argument);
  LayerStack broken = stack;
  broken.a.pop_back();
  EXPECT_THROW(layer_forward(broken, 0, &dummy, &dummy), std::invalid_argument);
  EXPECT_THROW((void)layer_stack_reference(stack, {1, 2}, {1, 2, 3, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace gpulab::kernels
