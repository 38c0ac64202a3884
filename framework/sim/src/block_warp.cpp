// Warp collectives and WMMA calls on sim: a warp's lanes wait in the call until every lane it
// needs arrived, then complete it together (block_worker.hpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "block_worker.hpp"

namespace gpulab::sim::detail {

// The lane a shuffle reads for `reader`, or -1 when it keeps its own value.
int shuffle_source(const CudaThread& reader, unsigned lane) {
  const int width = reader.width;
  const int own = static_cast<int>(lane);
  const int segment = own / width * width;
  switch (reader.op) {
    case WarpOp::shfl:
      return segment + ((reader.lane_arg % width) + width) % width;
    case WarpOp::shfl_up:
      return own - segment - reader.lane_arg < 0 ? -1 : own - reader.lane_arg;
    case WarpOp::shfl_down:
      return own - segment + reader.lane_arg >= width ? -1 : own + reader.lane_arg;
    case WarpOp::shfl_xor: {
      const int source = own ^ reader.lane_arg;
      return source >= segment + width || source >= static_cast<int>(kWarp) ? -1 : source;
    }
    default:
      return -1;
  }
}

// Completes the collective that the non-exited lanes of `mask` in `warp` wait in, if all of them
// have arrived with the same operation and mask. Returns whether it completed.
bool try_complete(Worker& w, unsigned warp, unsigned mask, WarpOp op) {
  // Not before every lane the call needs waits in a collective: those of the mask in the block
  // that have not exited.
  const unsigned in_block = w.thread_count - warp * kWarp;
  const unsigned lanes = in_block >= kWarp ? ~0u : (1u << in_block) - 1;
  if ((mask & lanes & ~w.warp_exited[warp] & ~w.warp_waiting[warp]) != 0) {
    return false;
  }
  unsigned arrived = 0;
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    const unsigned linear = warp * kWarp + lane;
    if ((mask & (1u << lane)) == 0 || linear >= w.thread_count) {
      continue;
    }
    const CudaThread& t = w.threads[linear];
    if (t.state == State::done) {
      continue;  // exited lanes named in the mask do not take part
    }
    if (t.state != State::at_warp || t.mask != mask || t.op != op) {
      return false;
    }
    arrived |= 1u << lane;
  }
  unsigned ballot = 0;
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    if ((arrived & (1u << lane)) != 0 && w.threads[warp * kWarp + lane].value != 0) {
      ballot |= 1u << lane;
    }
  }
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    if ((arrived & (1u << lane)) == 0) {
      continue;
    }
    CudaThread& t = w.threads[warp * kWarp + lane];
    switch (op) {
      case WarpOp::sync:
        t.result = 0;
        break;
      case WarpOp::ballot:
        t.result = ballot;
        break;
      case WarpOp::any:
        t.result = ballot != 0 ? 1 : 0;
        break;
      case WarpOp::all:
        t.result = ballot == arrived ? 1 : 0;
        break;
      default: {
        const int source = shuffle_source(t, lane);
        if (source < 0) {
          t.result = t.value;
        } else if ((arrived & (1u << static_cast<unsigned>(source))) != 0) {
          t.result = w.threads[warp * kWarp + static_cast<unsigned>(source)].value;
        } else {
          // Reading a lane that does not take part is undefined on a GPU: all-ones bits (NaN for
          // floating point, -1 for integers) make the mistake visible.
          t.result = ~std::uint64_t{0};
        }
      }
    }
    if (t.state == State::at_warp) {
      t.state = State::runnable;
      ++w.ready;
      w.warp_waiting[warp] &= ~(1u << lane);
    }
  }
  if (w.counter != nullptr) {
    counting_warp_collective(op, warp, arrived);
  }
  return true;
}

// Completes the WMMA call the lanes of the (full) `warp` wait in, once all 32 made it: checks that
// they agree, and for mma_sync computes every lane's result. Fails the block when they can never
// meet (a lane exited) or disagree. Returns whether it completed.
// Every warp-level mma_sync completed (gpulab::sim::tensor_core_operations).
std::atomic<std::uint64_t>& tensor_core_operation_count() {
  static std::atomic<std::uint64_t> count{0};
  return count;
}

bool try_complete_matrix(Worker& w, unsigned warp) {
  const unsigned base = warp * kWarp;
  unsigned waiting = 0;
  unsigned exited = 0;
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    const State state = w.threads[base + lane].state;
    waiting |= state == State::at_matrix ? 1u << lane : 0u;
    exited |= state == State::done ? 1u << lane : 0u;
  }
  if (waiting == 0) {
    return false;
  }
  if (exited != 0 && (waiting | exited) == ~0u) {
    fail_block(w, cudaErrorLaunchFailure,
               "a WMMA call waits for all 32 lanes of warp " + std::to_string(warp) +
                   ", and some have exited: " + describe_lanes(w, warp) +
                   ". Every lane of a warp must make each WMMA call");
    return false;
  }
  if (waiting != ~0u) {
    return false;
  }
  const CudaThread& first = w.threads[base];
  std::array<MatrixCall*, kWarp> calls{};
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    const CudaThread& t = w.threads[base + lane];
    if (t.matrix->op != first.matrix->op || !same_location(t.where, first.where)) {
      fail_block(w, cudaErrorLaunchFailure,
                 "the lanes of warp " + std::to_string(warp) + " are in different WMMA calls: " +
                     describe_lanes(w, warp) + ". Every lane of a warp must make the same call");
      return false;
    }
    calls[lane] = t.matrix;
  }
  if (const std::string differ = matrix_disagreement(calls); !differ.empty()) {
    fail_block(w, cudaErrorLaunchFailure,
               std::string(first.matrix_name) + " (" + location(first.where) +
                   "): the lanes of warp " + std::to_string(warp) +
                   " passed different arguments (" + differ +
                   "); they must be the same in every lane");
    return false;
  }
  if (first.matrix->op == MatrixOp::mma) {
    multiply_fragments(calls);
    tensor_core_operation_count().fetch_add(1, std::memory_order_relaxed);
    if (w.counter != nullptr) {
      counting_tensor_mma(first.matrix->a.type, first.matrix->a.rows, first.matrix->b.cols,
                          first.matrix->a.cols);
    }
  }
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    CudaThread& t = w.threads[base + lane];
    t.state = State::runnable;
    t.matrix = nullptr;
  }
  w.ready += kWarp;
  return true;
}

}  // namespace gpulab::sim::detail
