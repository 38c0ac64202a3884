// Shared by the reference kernels: grid arithmetic and the level table entry.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpulab::kernels {

/// Blocks needed to cover `n` items with `per_block` items per block.
constexpr unsigned ceil_div(std::size_t n, std::size_t per_block) noexcept {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

/// One rung of an op's optimization ladder: tests, the CLI and the viewer list these instead of
/// switching on level numbers.
template <class Launch>
struct Level {
  int number;
  std::string_view name;
  std::string_view teaches;  // what this level adds over the previous one
  Launch launch;
};

}  // namespace gpulab::kernels
