// The catalog of kernels: every op of kernels/ with its ladder of levels and its problem (inputs,
// CPU reference, verification, cost). The kernel tests, the kernel table check, `gpulab bench`,
// the viewer's block-size sweep and gpulab-sim-bench walk it instead of lists of their own.
//
// An op file keeps a typed level table (Level<Launch> in common.hpp: number, name, what the level
// teaches, its launcher and the __global__ functions it launches) and one OpProblem class that
// launches any row of that table; `<op>_op()` puts both in the catalog. Adding a level is one
// launcher function and one row of its op's table: everything here picks it up.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/numeric.hpp"
#include "gpulab/core/roofline.hpp"
#include "gpulab/kernels/common.hpp"

namespace gpulab::kernels {

/// One level of an op, without its launcher's type.
struct OpLevel {
  int number = 0;
  std::string_view name;
  std::string_view teaches;
  std::vector<KernelRef> kernels;  ///< the __global__ functions the level launches

  /// Dynamic shared memory a block of the level's first kernel takes as the level launches it,
  /// in bytes (the first of its sizes; for occupancy).
  [[nodiscard]] std::uint64_t dynamic_shared_bytes() const noexcept;
};

/// One op's inputs and output on the device at one size (allocated and uploaded on construction),
/// ready to run any level of the op. // move-only
class OpProblem {
 public:
  OpProblem() = default;
  OpProblem(const OpProblem&) = delete;
  OpProblem& operator=(const OpProblem&) = delete;
  virtual ~OpProblem() = default;

  /// Enqueues level `index` (0-based, in Op::levels) on `stream` and nothing else, so it can be
  /// timed. `block_size` is the threads per block of ops whose levels take one (Op::default_block
  /// is not 0); the others fix their block shape and ignore it. Throws std::invalid_argument for
  /// an index past the levels or a block size the level refuses.
  virtual void launch(std::size_t index, cudaStream_t stream, unsigned block_size) = 0;
  /// Poisons the output (NaN for floats, 0xff bytes), launches level `index`, waits for `stream`
  /// and compares the output with the CPU reference under the op's tolerance. Throws
  /// std::runtime_error naming the op, the level, the block size and the first wrong element.
  virtual void verify(std::size_t index, cudaStream_t stream, unsigned block_size) = 0;
  /// The op's own work at this size, the same for every level: the FLOPs, and the DRAM bytes of
  /// reading each input and writing each output once (what a perfect kernel moves).
  [[nodiscard]] virtual OpCost cost() const = 0;
  /// The problem in words, e.g. "2048 x 2048 floats".
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// One op of the catalog.
struct Op {
  std::string_view name;                ///< e.g. "transpose"; what `gpulab bench` takes
  std::string_view summary;             ///< one line: what the op computes
  std::string_view size_means;          ///< what the size is, e.g. "floats per vector"
  std::size_t default_size = 0;         ///< `gpulab bench`'s size on a GPU
  std::size_t sim_size = 0;             ///< its size on sim, where a launch takes CPU time
  std::vector<std::size_t> test_sizes;  ///< edge cases every level is verified at by the tests
  unsigned default_block = 0;           ///< threads per block; 0: the levels fix their shape
  std::vector<OpLevel> levels;          ///< the ladder, in order
  std::size_t max_size = 0;             ///< the largest size the op takes; 0: no bound
  /// Constructs the problem at a size make_problem has checked.
  std::unique_ptr<OpProblem> (*new_problem)(std::size_t size) = nullptr;

  /// The problem at `size`; std::invalid_argument naming the op, what a size means and the sizes
  /// it takes, for a size of 0 or above max_size.
  [[nodiscard]] std::unique_ptr<OpProblem> make_problem(std::size_t size) const;

  /// The level whose number is `number`, or nullptr.
  [[nodiscard]] const OpLevel* find_level(int number) const noexcept;
  /// Its index in `levels`; throws std::invalid_argument naming the op's levels when there is none.
  [[nodiscard]] std::size_t level_index(int number) const;
};

/// Every op of kernels/, in a fixed order: vector_add, reduction, reduction_ladder, histogram,
/// transpose, gemm, attention.
[[nodiscard]] std::span<const Op> catalog();
/// The op named `name`, or nullptr.
[[nodiscard]] const Op* find_op(std::string_view name) noexcept;
/// The catalog's op names, comma-separated (for messages).
[[nodiscard]] std::string op_names();

/// Every __global__ function of kernels/, each once, as the kernel table names them: the kernels
/// of every level of every op, then those outside the ladders (spin_kernel's).
[[nodiscard]] std::vector<KernelRef> catalog_kernels();

/// The op and level whose level launches the kernel named `kernel`: the first such level.
struct KernelLevel {
  const Op* op = nullptr;
  std::size_t index = 0;  ///< in op->levels
};
[[nodiscard]] KernelLevel find_kernel_level(std::string_view kernel) noexcept;

// ------------------------------------------------------------------------------------------------
// For the op files
// ------------------------------------------------------------------------------------------------

/// A typed level table as OpLevels.
template <class Launch>
std::vector<OpLevel> erase_levels(std::span<const Level<Launch>> levels) {
  std::vector<OpLevel> out;
  out.reserve(levels.size());
  for (const Level<Launch>& level : levels) {
    out.push_back({level.number, level.name, level.teaches, level.kernels});
  }
  return out;
}

/// levels[index], or std::invalid_argument naming the op and how many levels it has.
template <class Launch>
const Level<Launch>& level_at(std::span<const Level<Launch>> levels, std::size_t index,
                              std::string_view op) {
  if (index >= levels.size()) {
    throw std::invalid_argument(std::string(op) + " has " + std::to_string(levels.size()) +
                                " levels; there is no level index " + std::to_string(index));
  }
  return levels[index];
}

/// "transpose level 2 (coalesced)" and, for ops that take one, ", 256 threads per block".
[[nodiscard]] std::string describe_level(std::string_view op, int number, std::string_view name,
                                         unsigned block_size);

/// n floats uniform in [-1, 1) from std::mt19937(seed)'s raw output (fixed by the standard, so
/// the same on every platform).
[[nodiscard]] std::vector<float> random_floats(std::size_t n, unsigned seed);

/// Throws std::runtime_error "<what>: <compare_close's message>" when got is not close to expected.
void require_close(const std::string& what, std::span<const float> expected,
                   std::span<const float> got, const Tolerance& tolerance);

// Each op file's entry (defined there).
[[nodiscard]] Op vector_add_op();
[[nodiscard]] Op reduction_op();
[[nodiscard]] Op reduction_ladder_op();
[[nodiscard]] Op histogram_op();
[[nodiscard]] Op transpose_op();
[[nodiscard]] Op gemm_op();
[[nodiscard]] Op attention_op();
/// The kernels of kernels/ that belong to no op's ladder (spin_kernel's).
[[nodiscard]] std::span<const KernelRef> spin_kernels();
/// Every tiling's gemm_register_blocked kernel (level 3 launches the first; the sim's cuBLAS model
/// chooses among all of them).
[[nodiscard]] std::span<const KernelRef> gemm_tiling_kernels();

}  // namespace gpulab::kernels
