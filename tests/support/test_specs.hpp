// Looking up a GPU of the spec database in a test: a missing name fails the test (rather than
// throwing or returning an empty optional every caller must check).
#pragma once

#include <gtest/gtest.h>

#include <optional>

#include "gpulab/core/specs.hpp"

namespace gpulab::testing {

/// The database entry find_spec(name) finds; a test failure and an empty spec when none.
inline GpuSpec spec(const char* name) {
  const std::optional<GpuSpec> found = find_spec(name);
  if (!found) {
    ADD_FAILURE() << "find_spec(\"" << name << "\") found nothing";
    return GpuSpec{};
  }
  return *found;
}

}  // namespace gpulab::testing
