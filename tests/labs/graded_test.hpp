// Graded test cases of the lab autograder.
//
//   GPULAB_GRADED_TEST(Lab01Summary, MedianOfAnEvenCount, 5) { ... }
//
// declares a GoogleTest case worth 5 points. cmake/GpulabLabs.cmake reads the declarations from
// the source (keep each on one line of its own, and do not comment one out: delete it), adds one
// ctest test per case and checks that a lab's points total 100.
#pragma once

#include <gtest/gtest.h>

#define GPULAB_GRADED_TEST(suite, name, points)                                             \
  static_assert((points) > 0 && (points) <= 100, "a graded test is worth 1 to 100 points"); \
  TEST(suite, name)
