#include "gpulab/kernels/catalog.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace gpulab::kernels {

std::uint64_t OpLevel::dynamic_shared_bytes() const noexcept {
  if (kernels.empty() || kernels.front().dynamic_shared_bytes.empty()) {
    return 0;
  }
  return kernels.front().dynamic_shared_bytes.front();
}

const OpLevel* Op::find_level(int number) const noexcept {
  const auto found = std::find_if(levels.begin(), levels.end(),
                                  [&](const OpLevel& level) { return level.number == number; });
  return found == levels.end() ? nullptr : &*found;
}

std::size_t Op::level_index(int number) const {
  const OpLevel* level = find_level(number);
  if (level == nullptr) {
    std::string known;
    for (const OpLevel& l : levels) {
      known +=
          (known.empty() ? "" : ", ") + std::to_string(l.number) + " (" + std::string(l.name) + ")";
    }
    throw std::invalid_argument(std::string(name) + " has no level " + std::to_string(number) +
                                "; its levels are " + known);
  }
  return static_cast<std::size_t>(level - levels.data());
}

std::unique_ptr<OpProblem> Op::make_problem(std::size_t size) const {
  if (size == 0 || (max_size != 0 && size > max_size)) {
    throw std::invalid_argument(
        std::string(name) + ": the size (" + std::string(size_means) + ") must be " +
        (max_size == 0 ? std::string("at least 1") : "1 to " + std::to_string(max_size)) +
        ", not " + std::to_string(size));
  }
  return new_problem(size);
}

std::span<const Op> catalog() {
  static const std::vector<Op> ops = {vector_add_op(), reduction_op(), reduction_ladder_op(),
                                      histogram_op(),  transpose_op(), gemm_op(),
                                      attention_op()};
  return ops;
}

const Op* find_op(std::string_view name) noexcept {
  for (const Op& op : catalog()) {
    if (op.name == name) {
      return &op;
    }
  }
  return nullptr;
}

std::string op_names() {
  std::string names;
  for (const Op& op : catalog()) {
    names += (names.empty() ? "" : ", ") + std::string(op.name);
  }
  return names;
}

std::vector<KernelRef> catalog_kernels() {
  std::vector<KernelRef> all;
  auto add = [&](const KernelRef& kernel) {
    const bool seen = std::any_of(all.begin(), all.end(),
                                  [&](const KernelRef& k) { return k.name == kernel.name; });
    if (!seen) {
      all.push_back(kernel);
    }
  };
  for (const Op& op : catalog()) {
    for (const OpLevel& level : op.levels) {
      std::for_each(level.kernels.begin(), level.kernels.end(), add);
    }
  }
  std::ranges::for_each(spin_kernels(), add);
  std::ranges::for_each(gemm_tiling_kernels(), add);
  return all;
}

KernelLevel find_kernel_level(std::string_view kernel) noexcept {
  for (const Op& op : catalog()) {
    for (std::size_t i = 0; i < op.levels.size(); ++i) {
      const auto& kernels = op.levels[i].kernels;
      if (std::any_of(kernels.begin(), kernels.end(),
                      [&](const KernelRef& k) { return k.name == kernel; })) {
        return {&op, i};
      }
    }
  }
  return {};
}

std::string describe_level(std::string_view op, int number, std::string_view name,
                           unsigned block_size) {
  std::string text =
      std::string(op) + " level " + std::to_string(number) + " (" + std::string(name) + ")";
  if (block_size != 0) {
    text += ", " + std::to_string(block_size) + " threads per block";
  }
  return text;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<float> out(n);
  for (float& x : out) {
    x = static_cast<float>(static_cast<double>(random()) / 2147483648.0 - 1.0);
  }
  return out;
}

void require_close(const std::string& what, std::span<const float> expected,
                   std::span<const float> got, const Tolerance& tolerance) {
  const CloseResult result = compare_close(expected, got, tolerance);
  if (!result.ok) {
    throw std::runtime_error(what + ": " + result.message);
  }
}

}  // namespace gpulab::kernels
