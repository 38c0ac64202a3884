#include "matrix.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "gpulab/sim/float16.hpp"

namespace gpulab::sim::detail {
namespace {

std::size_t element_bytes(MatrixElement type) {
  return type == MatrixElement::f32 ? 4 : 2;
}

const char* element_name(MatrixElement type) {
  switch (type) {
    case MatrixElement::f16:
      return "__half";
    case MatrixElement::bf16:
      return "__nv_bfloat16";
    case MatrixElement::f32:
      return "float";
  }
  return "float";
}

double read_element(const void* elements, MatrixElement type, int i) {
  if (type == MatrixElement::f32) {
    float value = 0;
    std::memcpy(&value, static_cast<const char*>(elements) + 4 * i, 4);
    return static_cast<double>(value);
  }
  std::uint16_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(elements) + 2 * i, 2);
  return type == MatrixElement::f16 ? fp16::decode<fp16::Binary16>(bits)
                                    : fp16::decode<fp16::Bfloat16>(bits);
}

// `value` rounded to nearest even into element i.
void write_element(void* elements, MatrixElement type, int i, double value) {
  if (type == MatrixElement::f32) {
    const auto narrowed = static_cast<float>(value);
    std::memcpy(static_cast<char*>(elements) + 4 * i, &narrowed, 4);
    return;
  }
  const std::uint16_t bits = type == MatrixElement::f16 ? fp16::encode<fp16::Binary16>(value)
                                                        : fp16::encode<fp16::Bfloat16>(value);
  std::memcpy(static_cast<char*>(elements) + 2 * i, &bits, 2);
}

int per_lane(const FragmentView& f) {
  return f.rows * f.cols / kWarpLanes;
}

MatrixPosition position(const FragmentView& f, unsigned lane, int i) {
  return fragment_position(f.rows, f.cols, f.column_major, static_cast<int>(element_bytes(f.type)),
                           lane, i);
}

// The largest fragment: 32 x 16 (or 16 x 32) elements.
constexpr std::size_t kMaxElements = 512;
using Matrix = std::array<double, kMaxElements>;

// The operand as a rows x cols row-major matrix, gathered from the 32 lanes. (No heap and no
// strings here: this runs on a CUDA thread, where out-of-line library code may be a copy compiled
// with the counting callbacks, and its accesses would count as the thread's.)
void gather(std::span<MatrixCall* const, kWarpLanes> lanes, FragmentView MatrixCall::*operand,
            Matrix& matrix) {
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    const FragmentView& f = lanes[lane]->*operand;
    for (int i = 0; i < per_lane(f); ++i) {
      const MatrixPosition p = position(f, lane, i);
      matrix[static_cast<std::size_t>(p.row * f.cols + p.col)] =
          read_element(f.elements, f.type, i);
    }
  }
}

std::string hex(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

// "16x16 __half col_major"
std::string shape(const FragmentView& f) {
  return std::to_string(f.rows) + "x" + std::to_string(f.cols) + " " + element_name(f.type) +
         (f.column_major ? " col_major" : "");
}

std::string arguments(const MatrixCall& call) {
  switch (call.op) {
    case MatrixOp::fill: {
      char text[32];
      std::snprintf(text, sizeof text, "value bits 0x%x", call.value);
      return text;
    }
    case MatrixOp::load:
    case MatrixOp::store:
      return "mptr " + hex(call.pointer) + ", ldm " + std::to_string(call.ldm) + ", " +
             (call.layout == 1 ? "column-major" : "row-major") + ", " + shape(call.fragment);
    case MatrixOp::mma:
      return "a " + shape(call.a) + ", b " + shape(call.b) + ", c " + shape(call.c);
  }
  return "";
}

bool same_shape(const FragmentView& x, const FragmentView& y) {
  return x.rows == y.rows && x.cols == y.cols && x.type == y.type &&
         x.column_major == y.column_major;
}

}  // namespace

std::string matrix_argument_problem(const MatrixCall& call) {
  if (call.op != MatrixOp::load && call.op != MatrixOp::store) {
    return {};
  }
  const std::size_t bytes = element_bytes(call.fragment.type);
  if (reinterpret_cast<std::uintptr_t>(call.pointer) % 32 != 0) {
    return "mptr " + hex(call.pointer) + " is not 32-byte (256-bit) aligned";
  }
  if (call.ldm * bytes % 16 != 0) {
    return "ldm " + std::to_string(call.ldm) + " is not a multiple of " +
           std::to_string(16 / bytes) + " (16 bytes of " + element_name(call.fragment.type) + ")";
  }
  return {};
}

std::string matrix_disagreement(std::span<MatrixCall* const, kWarpLanes> lanes) {
  const MatrixCall& first = *lanes[0];
  for (unsigned lane = 1; lane < kWarpLanes; ++lane) {
    const MatrixCall& other = *lanes[lane];
    if (other.pointer != first.pointer || other.ldm != first.ldm || other.layout != first.layout ||
        other.value != first.value || !same_shape(other.fragment, first.fragment) ||
        !same_shape(other.a, first.a) || !same_shape(other.b, first.b) ||
        !same_shape(other.c, first.c) || other.d_type != first.d_type) {
      return "lane 0 " + arguments(first) + "; lane " + std::to_string(lane) + " " +
             arguments(other);
    }
  }
  return {};
}

void multiply_fragments(std::span<MatrixCall* const, kWarpLanes> lanes) {
  Matrix a;
  Matrix b;
  Matrix c;
  gather(lanes, &MatrixCall::a, a);
  gather(lanes, &MatrixCall::b, b);
  gather(lanes, &MatrixCall::c, c);
  const int m = lanes[0]->a.rows;
  const int k = lanes[0]->a.cols;
  const int n = lanes[0]->b.cols;
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    const MatrixCall& call = *lanes[lane];
    const FragmentView d{call.d, call.d_type, m, n, false};
    for (int i = 0; i < m * n / kWarpLanes; ++i) {
      const MatrixPosition p = position(d, lane, i);
      double sum = c[static_cast<std::size_t>(p.row * n + p.col)];
      for (int kk = 0; kk < k; ++kk) {
        sum += a[static_cast<std::size_t>(p.row * k + kk)] *
               b[static_cast<std::size_t>(kk * n + p.col)];
      }
      write_element(call.d, call.d_type, i, sum);
    }
  }
}

void lane_matrix_access(const MatrixCall& call, unsigned lane) {
  const FragmentView& f = call.fragment;
  auto* elements = static_cast<char*>(const_cast<void*>(f.elements));
  const std::size_t size = element_bytes(f.type);
  const int count = per_lane(f);
  if (call.op == MatrixOp::fill) {
    for (int i = 0; i < count; ++i) {
      std::memcpy(elements + size * static_cast<std::size_t>(i), &call.value, size);
    }
    return;
  }
  const bool store = call.op == MatrixOp::store;
  const bool memory_column_major = call.layout == 1;
  auto offset = [&](int i) {
    const MatrixPosition p = position(f, lane, i);
    return memory_column_major ? static_cast<std::size_t>(p.col) * call.ldm + p.row
                               : static_cast<std::size_t>(p.row) * call.ldm + p.col;
  };
  auto* memory = static_cast<char*>(const_cast<void*>(call.pointer));
  // Runs of consecutive elements, as one access of 16, 8, 4 or 2 aligned bytes each.
  for (int i = 0; i < count;) {
    const std::size_t first = offset(i);
    char* address = memory + first * size;
    int run = static_cast<int>(16 / size);
    while (run > 1) {
      bool fits =
          i + run <= count &&
          reinterpret_cast<std::uintptr_t>(address) % (static_cast<std::size_t>(run) * size) == 0;
      for (int j = 1; fits && j < run; ++j) {
        fits = offset(i + j) == first + static_cast<std::size_t>(j);
      }
      if (fits) {
        break;
      }
      run /= 2;
    }
    const std::size_t bytes = static_cast<std::size_t>(run) * size;
    char* own = elements + size * static_cast<std::size_t>(i);
    if (store) {
      std::memcpy(address, own, bytes);
    } else {
      std::memcpy(own, address, bytes);
    }
    count_access(address, bytes, store, call.pc);
    i += run;
  }
}

}  // namespace gpulab::sim::detail
