// The WMMA calls of the sim's <mma.h> (internal to framework/sim): what each lane's call does and
// what the warp's lanes must agree on. block.cpp makes the lanes wait for each other
// (detail::warp_matrix) and calls these.
#pragma once

#include <span>
#include <string>

#include "gpulab/sim/wmma.hpp"

namespace gpulab::sim::detail {

/// What is wrong with one lane's arguments (a misaligned pointer, a bad ldm), or "".
[[nodiscard]] std::string matrix_argument_problem(const MatrixCall& call);

/// Where the 32 lanes' calls (made at one source location) disagree: "lane 0 mptr 0x.., ldm 16;
/// lane 5 mptr 0x.., ldm 16", or "" when they agree.
[[nodiscard]] std::string matrix_disagreement(std::span<MatrixCall* const, kWarpLanes> lanes);

/// mma_sync for the whole warp: every lane's d = a * b + c, each element's sum of products taken
/// in double and rounded once to d's type. d may be c.
void multiply_fragments(std::span<MatrixCall* const, kWarpLanes> lanes);

/// What a fill, load or store does in one lane, after the warp met: writes the fragment, or moves
/// it between the fragment and memory, counting each access (16 bytes at most, aligned, as the
/// elements' addresses allow).
void lane_matrix_access(const MatrixCall& call, unsigned lane);

}  // namespace gpulab::sim::detail
