// What went wrong in a block, in words: where, which threads and lanes, which barrier or
// collective (block_worker.hpp).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "block_worker.hpp"

namespace gpulab::sim::detail {

std::string location(const std::source_location& where) {
  std::string file = where.file_name();
  if (const auto slash = file.find_last_of('/'); slash != std::string::npos) {
    file.erase(0, slash + 1);
  }
  return file + ":" + std::to_string(where.line());
}

bool same_location(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         (a.file_name() == b.file_name() || std::strcmp(a.file_name(), b.file_name()) == 0);
}

const char* barrier_name(BarrierOp op) {
  switch (op) {
    case BarrierOp::sync:
      return "__syncthreads";
    case BarrierOp::count:
      return "__syncthreads_count";
    case BarrierOp::all:
      return "__syncthreads_and";
    case BarrierOp::any:
      return "__syncthreads_or";
  }
  return "__syncthreads";
}

const char* warp_name(WarpOp op) {
  switch (op) {
    case WarpOp::sync:
      return "__syncwarp";
    case WarpOp::ballot:
      return "__ballot_sync";
    case WarpOp::any:
      return "__any_sync";
    case WarpOp::all:
      return "__all_sync";
    case WarpOp::shfl:
      return "__shfl_sync";
    case WarpOp::shfl_up:
      return "__shfl_up_sync";
    case WarpOp::shfl_down:
      return "__shfl_down_sync";
    case WarpOp::shfl_xor:
      return "__shfl_xor_sync";
    case WarpOp::active:
      return "__activemask";
  }
  return "warp collective";
}

std::string hex_mask(unsigned mask) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", mask);
  return text;
}

std::string triple(unsigned x, unsigned y, unsigned z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

// What one thread is doing, in words; equal strings are merged into thread ranges.
std::string describe(const CudaThread& t) {
  switch (t.state) {
    case State::done:
      return "have exited";
    case State::at_barrier:
      return std::string("wait at ") + barrier_name(t.barrier) + " (" + location(t.where) + ")";
    case State::at_warp:
      return std::string("wait in ") + warp_name(t.op) + " with mask " + hex_mask(t.mask) + " (" +
             location(t.where) + ")";
    case State::at_matrix:
      return std::string("wait in ") + t.matrix_name + " (" + location(t.where) + ")";
    default:
      return "are running";
  }
}

// "threads 0-31 wait at __syncthreads (k.cu:12); threads 32-63 have exited"
std::string describe_block(const Worker& w) {
  std::string text;
  unsigned first = 0;
  for (unsigned i = 1; i <= w.thread_count; ++i) {
    if (i < w.thread_count && describe(w.threads[i]) == describe(w.threads[first])) {
      continue;
    }
    if (!text.empty()) {
      text += "; ";
    }
    text += first + 1 == i ? "thread " + std::to_string(first)
                           : "threads " + std::to_string(first) + "-" + std::to_string(i - 1);
    text += " " + describe(w.threads[first]);
    first = i;
  }
  if (w.launch->spec.block.y * w.launch->spec.block.z > 1) {
    text += " (linear thread index x + blockDim.x * (y + blockDim.y * z))";
  }
  return text;
}

// "lanes 0-30 wait in wmma::mma_sync (k.cu:12); lane 31 has exited"
std::string describe_lanes(const Worker& w, unsigned warp) {
  const unsigned base = warp * kWarp;
  std::string text;
  unsigned first = 0;
  for (unsigned lane = 1; lane <= kWarp; ++lane) {
    if (lane < kWarp && describe(w.threads[base + lane]) == describe(w.threads[base + first])) {
      continue;
    }
    if (!text.empty()) {
      text += "; ";
    }
    const std::string what = describe(w.threads[base + first]);
    if (first + 1 == lane) {
      text += "lane " + std::to_string(first) + " " + (what == "have exited" ? "has exited" : what);
    } else {
      text += "lanes " + std::to_string(first) + "-" + std::to_string(lane - 1) + " " + what;
    }
    first = lane;
  }
  return text;
}

void fail_block(Worker& w, cudaError_t error, const std::string& what) {
  // The failing thread is no longer counted: the bookkeeping below may run instrumented copies of
  // library templates (the linker keeps one copy of each, possibly a translated file's), whose
  // accesses are not the kernel's.
  counting_leave_thread();
  if (w.failure) {
    return;
  }
  const LaunchSpec& spec = w.launch->spec;
  const dim3 grid = spec.grid;
  const unsigned b = w.block_linear;
  w.failure = KernelFailure{
      error, "kernel " + std::string(spec.name) + " (launched at " + location(spec.where) +
                 ") failed in block " +
                 triple(b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)) + ": " + what};
}

}  // namespace gpulab::sim::detail
