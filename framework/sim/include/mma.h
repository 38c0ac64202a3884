// The sim backend's <mma.h>: CUDA's warp matrix functions (nvcuda::wmma) for the half and bfloat16
// shapes, m16n16k16, m32n8k16 and m8n32k16, with float or half accumulators.
//
// Every function is warp-collective, as on a GPU: all 32 lanes of a warp must call it at the same
// place with the same arguments, or the launch fails with a message that says which lanes did
// what (a GPU would hang or compute garbage). Loads and stores are counted like the wide loads
// and stores they are on a GPU; mma_sync takes each element's k-term sum of products in double
// and rounds it once to the accumulator's type (a GPU's tensor cores round in their own,
// unspecified way: compare with tolerances). How a fragment's elements are spread over the lanes
// is the sim's own choice (gpulab/sim/wmma.hpp), as it is each GPU's: code that reads `x[i]` may
// apply the same operation to every element, but must not assume which matrix element it is, nor
// how many there are (num_elements of a half matrix_a is 16 on a GPU, 8 here).
// Not here: tf32, double, integer and sub-byte fragments, and the PTX mma.sync instruction.
#pragma once

#include <source_location>
#include <type_traits>

#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "gpulab/sim/uncounted.hpp"
#include "gpulab/sim/wmma.hpp"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
namespace precision {
struct tf32 {};  // not simulated: a fragment of it stops the build with the reason
}  // namespace precision
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace sim_detail {

using gpulab::sim::detail::MatrixElement;

template <class T>
constexpr MatrixElement element_of() {
  if constexpr (std::is_same_v<T, __half>) {
    return MatrixElement::f16;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return MatrixElement::bf16;
  } else {
    return MatrixElement::f32;
  }
}

template <class Use, int m, int n, int k>
constexpr int rows = std::is_same_v<Use, matrix_b> ? k : m;
template <class Use, int m, int n, int k>
constexpr int cols = std::is_same_v<Use, matrix_a> ? k : n;

template <class Use, int m, int n, int k, class T, class Layout>
constexpr bool supported() {
  const bool shape = (m == 16 && n == 16 && k == 16) || (m == 32 && n == 8 && k == 16) ||
                     (m == 8 && n == 32 && k == 16);
  if constexpr (std::is_same_v<Use, accumulator>) {
    return shape && std::is_void_v<Layout> &&
           (std::is_same_v<T, float> || std::is_same_v<T, __half>);
  } else {
    return shape && (std::is_same_v<Use, matrix_a> || std::is_same_v<Use, matrix_b>)&&(
                        std::is_same_v<Layout, row_major> ||
                        std::is_same_v<Layout, col_major>)&&(std::is_same_v<T, __half> ||
                                                             std::is_same_v<T, __nv_bfloat16>);
  }
}

}  // namespace sim_detail

/// A warp's share of a matrix: `num_elements` elements in each lane (which ones: see above).
template <class Use, int m, int n, int k, class T, class Layout = void>
class fragment {
  static_assert(sim_detail::supported<Use, m, n, k, T, Layout>(),
                "gpulab sim: this WMMA fragment is not simulated. The sim has matrix_a and "
                "matrix_b of __half or __nv_bfloat16 (row_major or col_major) and accumulators of "
                "float or __half (no layout), in the shapes m16n16k16, m32n8k16 and m8n32k16");

 public:
  using element_type = T;
  using storage_element_type = T;
  static constexpr int num_elements = sim_detail::rows<Use, m, n, k> *
                                      sim_detail::cols<Use, m, n, k> /
                                      gpulab::sim::detail::kWarpLanes;
  T x[num_elements];
};

namespace sim_detail {

template <class Use, int m, int n, int k, class T, class Layout>
gpulab::sim::detail::FragmentView view(const fragment<Use, m, n, k, T, Layout>& f) noexcept {
  return {f.x, element_of<T>(), rows<Use, m, n, k>, cols<Use, m, n, k>,
          std::is_same_v<Layout, col_major>};
}

// A load or store of `f` at `mptr`, made by the instruction at `pc`.
template <class Use, int m, int n, int k, class T, class Layout>
gpulab::sim::detail::MatrixCall memory_call(gpulab::sim::detail::MatrixOp op,
                                            const fragment<Use, m, n, k, T, Layout>& f,
                                            const T* mptr, unsigned ldm, bool column_major,
                                            const void* pc) noexcept {
  gpulab::sim::detail::MatrixCall call;
  call.op = op;
  call.pointer = mptr;
  call.ldm = ldm;
  call.layout = column_major ? 1 : 0;
  call.fragment = view(f);
  call.fragment_elements = const_cast<T*>(f.x);  // a store only reads it
  call.pc = pc;
  return call;
}

}  // namespace sim_detail

/// Sets every element of the fragment to `value`.
template <class Use, int m, int n, int k, class T, class Layout>
__attribute__((noinline, GPULAB_SIM_UNCOUNTED)) void fill_fragment(
    fragment<Use, m, n, k, T, Layout>& a, std::type_identity_t<T> value,
    std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::MatrixCall call;
  call.op = gpulab::sim::detail::MatrixOp::fill;
  call.fragment = sim_detail::view(a);
  call.fragment_elements = a.x;
  if constexpr (sizeof(T) == 2) {
    call.value = __builtin_bit_cast(unsigned short, value);
  } else {
    call.value = __builtin_bit_cast(unsigned, value);
  }
  gpulab::sim::detail::warp_matrix(call, "wmma::fill_fragment", where);
}

/// Loads matrix_a or matrix_b from `mptr` (32-byte aligned; `ldm` elements between rows of a
/// row_major fragment or columns of a col_major one, a multiple of 16 bytes).
template <class Use, int m, int n, int k, class T, class Layout>
requires(!std::is_same_v<Use, accumulator>)
    __attribute__((noinline, GPULAB_SIM_UNCOUNTED)) void load_matrix_sync(
        fragment<Use, m, n, k, T, Layout>& a, const T* mptr, unsigned ldm,
        std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::MatrixCall call =
      sim_detail::memory_call(gpulab::sim::detail::MatrixOp::load, a, mptr, ldm,
                              std::is_same_v<Layout, col_major>, __builtin_return_address(0));
  gpulab::sim::detail::warp_matrix(call, "wmma::load_matrix_sync", where);
}

/// Loads an accumulator from `mptr`, stored row- or column-major.
template <int m, int n, int k, class T>
__attribute__((noinline, GPULAB_SIM_UNCOUNTED)) void load_matrix_sync(
    fragment<accumulator, m, n, k, T>& a, const T* mptr, unsigned ldm, layout_t layout,
    std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::MatrixCall call =
      sim_detail::memory_call(gpulab::sim::detail::MatrixOp::load, a, mptr, ldm,
                              layout == mem_col_major, __builtin_return_address(0));
  gpulab::sim::detail::warp_matrix(call, "wmma::load_matrix_sync", where);
}

/// Stores an accumulator to `mptr`, row- or column-major.
template <int m, int n, int k, class T>
__attribute__((noinline, GPULAB_SIM_UNCOUNTED)) void store_matrix_sync(
    T* mptr, const fragment<accumulator, m, n, k, T>& a, unsigned ldm, layout_t layout,
    std::source_location where = std::source_location::current()) {
  gpulab::sim::detail::MatrixCall call =
      sim_detail::memory_call(gpulab::sim::detail::MatrixOp::store, a, mptr, ldm,
                              layout == mem_col_major, __builtin_return_address(0));
  gpulab::sim::detail::warp_matrix(call, "wmma::store_matrix_sync", where);
}

/// d = a * b + c for the warp's fragments. (CUDA's satf argument exists for integer fragments
/// only, which the sim does not have.)
template <int m, int n, int k, class Tab, class La, class Lb, class Tc, class Td>
__attribute__((noinline, GPULAB_SIM_UNCOUNTED)) void mma_sync(
    fragment<accumulator, m, n, k, Td>& d, const fragment<matrix_a, m, n, k, Tab, La>& a,
    const fragment<matrix_b, m, n, k, Tab, Lb>& b, const fragment<accumulator, m, n, k, Tc>& c,
    std::source_location where = std::source_location::current()) {
  static_assert(
      std::is_same_v<Tab, __half> || (std::is_same_v<Tc, float> && std::is_same_v<Td, float>),
      "gpulab sim: bfloat16 matrices multiply into float accumulators only (as on a GPU)");
  gpulab::sim::detail::MatrixCall call;
  call.op = gpulab::sim::detail::MatrixOp::mma;
  call.a = sim_detail::view(a);
  call.b = sim_detail::view(b);
  call.c = sim_detail::view(c);
  call.d = d.x;
  call.d_type = sim_detail::element_of<Td>();
  gpulab::sim::detail::warp_matrix(call, "wmma::mma_sync", where);
}

}  // namespace nvcuda::wmma
