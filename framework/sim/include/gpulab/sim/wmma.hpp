// What the sim's <mma.h> shares with the runtime: how a WMMA fragment's elements are spread over
// the 32 lanes of a warp, and the warp-collective call every WMMA function makes.
//
// The element mapping is the sim's own (CUDA leaves it unspecified, and it differs between GPU
// generations). A fragment is `lines` rows (or, for a col_major matrix_a or matrix_b, columns) of
// `length` elements, cut into pieces of 16 bytes (8 halves or 4 floats; a whole lane's share when
// that is less). The pieces are numbered through each group of 8 lines, piece by piece: piece 0 of
// lines 0-7, piece 1 of lines 0-7, ..., then the next 8 lines. Lane l holds pieces l, l + 32, ...:
// its elements are num_elements = lines * length / 32. So the 8 lanes of a phase (lanes 0-7, 8-15,
// ...) read the same piece of 8 different lines, as a GPU's ldmatrix does (shared-memory bank
// conflicts, and the padding that removes them, count as on a GPU), and the k-th access of all 32
// lanes covers whole lines (a global load or store moves whole sectors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>

namespace gpulab::sim::detail {

inline constexpr int kWarpLanes = 32;

/// The element types of fragments.
enum class MatrixElement : std::uint8_t { f16, bf16, f32 };

/// Where element `i` of `lane` sits in a rows x cols fragment of `element_bytes` elements (see
/// above).
struct MatrixPosition {
  int row = 0;
  int col = 0;
};
[[nodiscard]] constexpr MatrixPosition fragment_position(int rows, int cols, bool column_major,
                                                         int element_bytes, unsigned lane,
                                                         int i) noexcept {
  const int lines = column_major ? cols : rows;
  const int length = column_major ? rows : cols;
  const int per_lane = rows * cols / kWarpLanes;
  const int piece = 16 / element_bytes < per_lane ? 16 / element_bytes : per_lane;
  const int q = i / piece * kWarpLanes + static_cast<int>(lane);  // the lane's (i / piece)-th
  const int group = lines < 8 ? lines : 8;
  const int per_group = group * (length / piece);
  const int line = q / per_group * group + q % per_group % group;
  const int at = q % per_group / group * piece + i % piece;
  return column_major ? MatrixPosition{at, line} : MatrixPosition{line, at};
}

/// One lane's fragment, as the runtime sees it.
struct FragmentView {
  const void* elements = nullptr;
  MatrixElement type = MatrixElement::f32;
  int rows = 0;
  int cols = 0;
  bool column_major = false;
};

enum class MatrixOp : std::uint8_t { fill, load, store, mma };

/// What one lane passes to a WMMA call. Every lane of the warp must make the same call (same
/// source location) with the same arguments: the runtime checks `pointer`, `ldm`, `layout`,
/// `value` and the fragments' shapes and types across lanes, and for mma_sync computes
/// d = a * b + c for the whole warp at once.
struct MatrixCall {
  MatrixOp op = MatrixOp::fill;
  const void* pointer = nullptr;  // load and store: mptr
  unsigned ldm = 0;
  int layout = 0;           // load and store: 0 row-major, 1 column-major in memory
  std::uint32_t value = 0;  // fill: the value's bits
  FragmentView a, b, c;     // mma: the operands
  void* d = nullptr;        // mma: the result's elements (d.type and shape are c's)
  MatrixElement d_type = MatrixElement::f32;
  // load and store: this lane's fragment, and the call site (memory counting's instruction)
  FragmentView fragment;
  void* fragment_elements = nullptr;
  const void* pc = nullptr;
};

/// Every WMMA call: waits until all 32 lanes of the calling thread's warp made the same call with
/// the same arguments; then fill and load write this lane's fragment, store writes it to memory,
/// and mma_sync computes every lane's d.
/// A warp with fewer than 32 threads, a lane that exited or waits elsewhere, or lanes that disagree
/// end the launch with cudaErrorLaunchFailure and a message that says which lanes did what.
void warp_matrix(MatrixCall& call, const char* name, std::source_location where);

/// Memory counting of accesses made outside the instrumented code (the WMMA loads and stores): an
/// access of `bytes` at `address`, made by the instruction at `pc`.
void count_access(const void* address, std::size_t bytes, bool store, const void* pc) noexcept;

}  // namespace gpulab::sim::detail
