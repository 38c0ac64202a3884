// The occupancy explorer's state: a kernel (from the build's kernel table, or figures typed in),
// a block size, registers per thread and dynamic shared memory, and what they give on the
// selected spec: the occupancy at that point and the three sweeps (block size, registers, shared
// memory) the panel charts. Recomputed when an input changes, never per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/occupancy.hpp"
#include "gpulab/core/specs.hpp"

namespace gpulab::viewer {

class OccupancyExplorer {
 public:
  /// Starts with typed-in figures (32 registers, no shared memory, 256 threads) on `spec`.
  explicit OccupancyExplorer(const GpuSpec& spec);

  /// Switches spec: keeps the inputs, clamps them to the new spec's limits, re-reads the selected
  /// kernel's figures for the new compute capability.
  void set_spec(const GpuSpec& spec);
  /// The spec in use.
  [[nodiscard]] const GpuSpec& spec() const { return spec_; }

  /// Kernel names of the build's kernel table (kernel_names()); empty when it has none.
  [[nodiscard]] const std::vector<std::string>& kernels() const { return kernels_; }
  /// Why kernels() is empty (kernel_table_status()); empty when it is not.
  [[nodiscard]] const std::string& kernel_table_note() const { return table_note_; }
  /// Index in kernels() of the selected kernel; empty when the figures are typed in.
  [[nodiscard]] std::optional<std::size_t> selected_kernel() const { return selected_; }
  /// Selects kernels()[index] and loads its registers and static shared memory for the spec's
  /// compute capability; false (and no change) when the index is out of range or the table has
  /// no entry for the spec's architecture (then note() says so).
  bool select_kernel(std::size_t index);
  /// Back to typed-in figures (keeps the current numbers).
  void select_custom();
  /// Where the figures come from: "ptxas, sm_90 (kernels/vector/vector_add.cu)" or "typed in".
  [[nodiscard]] const std::string& figures_origin() const { return origin_; }

  /// Inputs. Setters clamp to the valid range (block size 1..the limit, registers 1..255, shared
  /// memory 0..max_dynamic_shared_bytes()); setting registers selects typed-in figures.
  void set_block_size(int threads);
  void set_registers(int registers_per_thread);
  void set_dynamic_shared_bytes(std::uint64_t bytes);
  [[nodiscard]] int block_size() const { return block_size_; }
  [[nodiscard]] int registers() const { return resources_.registers_per_thread; }
  [[nodiscard]] std::uint64_t static_shared_bytes() const { return resources_.static_shared_bytes; }
  [[nodiscard]] std::uint64_t dynamic_shared_bytes() const { return dynamic_shared_; }
  /// Largest block size for the spec and kernel.
  [[nodiscard]] int max_block_size() const;
  /// Opt-in shared memory per block minus the kernel's static shared memory.
  [[nodiscard]] std::uint64_t max_dynamic_shared_bytes() const;

  /// Occupancy at the current inputs; empty when it cannot be computed (error() says why).
  [[nodiscard]] const std::optional<Occupancy>& result() const { return result_; }
  /// One line when result() is empty; else empty.
  [[nodiscard]] const std::string& error() const { return error_; }
  /// A note for the user (e.g. "no sm_75 figures for vector_add_kernel"); empty when none.
  [[nodiscard]] const std::string& note() const { return note_; }

  /// Occupancy against block size (32..max step 32) at the current registers and shared memory.
  [[nodiscard]] const std::vector<OccupancyPoint>& by_block_size() const { return by_block_; }
  /// Occupancy against registers per thread (1..255) at the current block size and shared memory.
  [[nodiscard]] const std::vector<OccupancyPoint>& by_registers() const { return by_registers_; }
  /// Occupancy against dynamic shared memory (1 KiB steps) at the current block size and registers.
  [[nodiscard]] const std::vector<OccupancyPoint>& by_shared_memory() const { return by_shared_; }

 private:
  void recompute();

  GpuSpec spec_;
  std::vector<std::string> kernels_;
  std::string table_note_;
  std::optional<std::size_t> selected_;
  std::string origin_ = "typed in";
  KernelResources resources_{32, 0, 0};
  int block_size_ = 256;
  std::uint64_t dynamic_shared_ = 0;
  std::optional<Occupancy> result_;
  std::string error_;
  std::string note_;
  std::vector<OccupancyPoint> by_block_;
  std::vector<OccupancyPoint> by_registers_;
  std::vector<OccupancyPoint> by_shared_;
};

}  // namespace gpulab::viewer
