// Lab 02: profiling the components of attention. Fill in the TODO(lab02) regions; lab02.hpp has
// the contract of every function and README.md the background.
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/lab.hpp"
#include "gpulab/core/ranges.hpp"
#include "gpulab/core/stats.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/runtime/bench.hpp"
#include "lab02.hpp"

namespace gpulab::lab02 {

Profile profile_attention(const kernels::AttentionConfig& config,
                          kernels::AttentionBuffers& buffers, cudaStream_t stream,
                          const gpulab::BenchOptions& options) {
  // TODO(lab02) BEGIN: per component, a gpulab::ScopedRange around gpulab::measure; then shares
  static_cast<void>(config), static_cast<void>(buffers), static_cast<void>(stream),
      static_cast<void>(options);
  gpulab::not_implemented("lab02", "profile_attention");
  // TODO(lab02) END
}

std::string format_profile(const Profile& profile) {
  // TODO(lab02) BEGIN: check the profile, then the header, a row per component, Total, Bottleneck
  static_cast<void>(profile);
  gpulab::not_implemented("lab02", "format_profile");
  // TODO(lab02) END
}

}  // namespace gpulab::lab02
