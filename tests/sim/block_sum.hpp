// The planted race that tests/sim's suites share: a block's tree reduction in shared memory,
// with or without the __syncthreads between its steps.
#pragma once

namespace gpulab::testing {

inline constexpr unsigned kSumBlock = 256;
/// The line of `partial[t] += partial[t + stride]` in this file, where the race is.
inline constexpr int kSumRaceLine = __LINE__ + 13;

// Tree reduction of one block of kSumBlock threads. With `barrier_in_loop` false it has the
// classic bug: no __syncthreads between the steps, so a thread may read a partial sum before it
// is written.
template <bool barrier_in_loop>
__global__ void block_sum(const float* in, float* out) {
  __shared__ float partial[kSumBlock];
  const unsigned t = threadIdx.x;
  partial[t] = in[blockIdx.x * kSumBlock + t];
  __syncthreads();
  for (unsigned stride = kSumBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      partial[t] += partial[t + stride];
    }
    if (barrier_in_loop) {
      __syncthreads();
    }
  }
  if (t == 0) {
    out[blockIdx.x] = partial[0];
  }
}

}  // namespace gpulab::testing
