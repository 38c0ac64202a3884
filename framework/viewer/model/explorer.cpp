// The occupancy explorer (see explorer.hpp): inputs clamped to the spec, the occupancy at them and
// the three sweeps, recomputed once per change. The arithmetic is occupancy.hpp's; what this file
// adds is keeping the inputs valid while the spec changes under them and turning every failure
// into one line for the panel.
#include "gpulab/viewer/explorer.hpp"

#include <algorithm>
#include <exception>
#include <string_view>

#include "gpulab/core/kernel_table.hpp"

namespace gpulab::viewer {

namespace {

// Registers per thread the explorer offers (occupancy.hpp accepts 0..255; 0 is "no registers",
// which no real kernel reports).
constexpr int kMinRegisters = 1;
constexpr int kMaxRegisters = 255;

// Step of the shared-memory sweep: 1 KiB, the unit people think of shared memory in.
constexpr std::uint64_t kSharedStepBytes = 1024;

std::string sm_name(int sm) {
  return "sm_" + std::to_string(sm);
}

std::string sm_of(const GpuSpec& spec) {
  return sm_name(spec.cc_major * 10 + spec.cc_minor);
}

}  // namespace

OccupancyExplorer::OccupancyExplorer(const GpuSpec& spec) : spec_(spec) {
  try {
    for (const std::string_view name : kernel_names()) {
      kernels_.emplace_back(name);
    }
    if (kernels_.empty()) {
      table_note_ = std::string(kernel_table_status());
      if (table_note_.empty()) {
        table_note_ = "the build's kernel table lists no kernels";
      }
    }
  } catch (const std::exception& e) {
    kernels_.clear();
    table_note_ = std::string("the kernel table could not be read: ") + e.what();
  }
  set_spec(spec);
}

void OccupancyExplorer::set_spec(const GpuSpec& spec) {
  spec_ = spec;
  note_.clear();
  if (selected_) {
    const std::string& name = kernels_[*selected_];
    if (const std::optional<KernelTableEntry> entry =
            find_kernel(name, spec_.cc_major, spec_.cc_minor)) {
      resources_ = resources_of(*entry);
      origin_ = "ptxas, " + sm_name(entry->sm) + " (" + std::string(entry->source) + ")";
    } else {
      // Keep the numbers (they are the closest there are) but stop claiming they are ptxas's for
      // this architecture.
      note_ = "no " + sm_of(spec_) + " (or older) figures for " + name +
              "; its figures are kept as typed-in values";
      select_custom();
    }
  }
  resources_.registers_per_thread =
      std::clamp(resources_.registers_per_thread, kMinRegisters, kMaxRegisters);
  block_size_ = std::clamp(block_size_, 1, max_block_size());
  dynamic_shared_ = std::min(dynamic_shared_, max_dynamic_shared_bytes());
  recompute();
}

bool OccupancyExplorer::select_kernel(std::size_t index) {
  if (index >= kernels_.size()) {
    return false;
  }
  const std::string& name = kernels_[index];
  const std::optional<KernelTableEntry> entry = find_kernel(name, spec_.cc_major, spec_.cc_minor);
  if (!entry) {
    note_ = "no " + sm_of(spec_) + " (or older) figures for " + name + " in the kernel table";
    return false;
  }
  selected_ = index;
  resources_ = resources_of(*entry);
  resources_.registers_per_thread =
      std::clamp(resources_.registers_per_thread, kMinRegisters, kMaxRegisters);
  origin_ = "ptxas, " + sm_name(entry->sm) + " (" + std::string(entry->source) + ")";
  note_.clear();
  block_size_ = std::clamp(block_size_, 1, max_block_size());
  dynamic_shared_ = std::min(dynamic_shared_, max_dynamic_shared_bytes());
  recompute();
  return true;
}

void OccupancyExplorer::select_custom() {
  selected_.reset();
  origin_ = "typed in";
}

void OccupancyExplorer::set_block_size(int threads) {
  block_size_ = std::clamp(threads, 1, max_block_size());
  recompute();
}

void OccupancyExplorer::set_registers(int registers_per_thread) {
  select_custom();
  resources_.registers_per_thread = std::clamp(registers_per_thread, kMinRegisters, kMaxRegisters);
  recompute();
}

void OccupancyExplorer::set_dynamic_shared_bytes(std::uint64_t bytes) {
  dynamic_shared_ = std::min(bytes, max_dynamic_shared_bytes());
  recompute();
}

int OccupancyExplorer::max_block_size() const {
  int limit = spec_.max_threads_per_block;
  if (resources_.max_threads_per_block > 0) {
    limit = std::min(limit, resources_.max_threads_per_block);
  }
  return std::max(1, limit);
}

std::uint64_t OccupancyExplorer::max_dynamic_shared_bytes() const {
  const std::uint64_t optin = spec_.shared_memory_per_block_optin_bytes;
  return optin > resources_.static_shared_bytes ? optin - resources_.static_shared_bytes : 0;
}

void OccupancyExplorer::recompute() {
  result_.reset();
  error_.clear();
  try {
    result_ = compute_occupancy(spec_, resources_, block_size_, dynamic_shared_);
  } catch (const std::exception& e) {
    // std::invalid_argument: the configuration cannot launch; std::runtime_error: this build or
    // the toolkit cannot compute occupancy for the spec. Either way, one line for the panel.
    error_ = e.what();
    if (error_.empty()) {
      error_ = "occupancy could not be computed";
    }
  }

  // The sweeps skip configurations that cannot launch point by point; what they throw is a
  // calculator that cannot run at all, which error() already says for the current point.
  by_block_.clear();
  by_registers_.clear();
  by_shared_.clear();
  try {
    by_block_ = sweep_block_size(spec_, resources_, dynamic_shared_);
    by_registers_ = sweep_registers(spec_, resources_, block_size_, dynamic_shared_);
    by_shared_ = sweep_shared_memory(spec_, resources_, block_size_, kSharedStepBytes);
  } catch (const std::exception&) {
    by_block_.clear();
    by_registers_.clear();
    by_shared_.clear();
  }
}

}  // namespace gpulab::viewer
