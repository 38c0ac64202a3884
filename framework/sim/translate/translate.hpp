// The sim backend's source translator: the build step between a .cu file and the host compiler.
//
// The sim backend builds every .cu file with the host compiler, but two CUDA constructs are not
// C++: the launch `kernel<<<grid, block, smem, stream>>>(args)` and the dynamic shared memory
// declaration `extern __shared__ float s[];`, and one pragma is not GCC's. Sources stay plain CUDA
// C++, so the build (gpulab-sim-translate, run from cmake/GpulabBackend.cmake) rewrites exactly
// these three, the first two into calls to the sim runtime, and copies everything else verbatim.
// Every line keeps its line number, so compiler errors, gdb and sanitizers point at the original
// .cu lines.
//
//   k<<<CFG>>>(args)          becomes
//       ::gpulab::sim::detail::make_launcher(GPULAB_SIM_KERNEL(k), "k", CFG)(args)
//   extern __shared__ T s[];  becomes
//       T* const s = ::gpulab::sim::detail::dynamic_shared<T>();
//
// nvcc's `#pragma unroll`, which GCC does not know, becomes GCC's `#pragma GCC unroll`, so that
// the host compiler unrolls (and the sim counts) a loop as nvcc compiles it:
//
//   #pragma unroll            becomes  #pragma GCC unroll 64   (kFullUnrollFactor)
//   #pragma unroll N          becomes  #pragma GCC unroll N    (N a number; another count stays)
//
// Comments, string and character literals are never rewritten; preprocessor lines are (a macro
// may launch a kernel). In a directive, `>>>` need not be followed by `(`: a macro may take the
// arguments from its caller. Columns in errors are 1-based byte offsets in the line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpulab::sim {

/// The unroll factor a bare `#pragma unroll` (nvcc: unroll completely where the trip count is a
/// constant) becomes for GCC: a loop of constant trip count up to 64 is unrolled completely before
/// the sim's instruction counting, as nvcc would; a longer one, or one whose trip count is known
/// only at run time, keeps its loop in the counts (GCC unrolls it later, in RTL, by this factor).
inline constexpr int kFullUnrollFactor = 64;

/// A construct the translator cannot rewrite; line and column (bytes) are 1-based.
struct TranslateError {
  int line;
  int column;
  std::string message;
};

/// The translated source, and every error found (the text is complete only when there are none).
struct Translation {
  std::string text;
  std::vector<TranslateError> errors;
};

/// Rewrites CUDA-only syntax in one .cu source for the host compiler; everything else verbatim.
Translation translate_cuda_source(std::string_view source);

}  // namespace gpulab::sim
