// Graded test cases of the lab autograder.
//
//   GPULAB_GRADED_TEST(Lab01Summary, MedianOfOddAndEvenCounts, 5, "summarize_samples",
//                      "the median of an odd and of an even number of samples") { ... }
//
// declares a GoogleTest case worth 5 points, which exercises the lab function summarize_samples
// (several: "time_kernel summarize_samples") and checks what the last string says, in one line a
// student reads next to a failure. cmake/GpulabLabs.cmake reads the declarations from the source
// (the strings hold no quote, backslash, semicolon or square bracket; do not comment a
// declaration out: delete it), checks that each function it names is defined in the lab's
// solution files, adds one ctest test per case and checks that a lab's points total 100.
// `gpulab check` and `gpulab grade` print the line and where the named functions are in the
// student's files; a forbidden call (labs/CMakeLists.txt) fails the tests that cover the
// functions whose work it does.
//
//   GPULAB_COUNTED_TEST(Lab04Traffic, FlashReadsQkvAndWritesOOnce, 5, "flash_attention", "...")
//
// declares a graded test judged from what the sim counts (memory traffic, tensor-core
// operations): the cuda build's copy skips, and a cuda grading runs it from the sim build of the
// same submission (gpulab/grader/manifest.hpp, grading_run), so a submission earns the same points
// on either backend.
#pragma once

#include <gtest/gtest.h>

#define GPULAB_GRADED_TEST(suite, name, points, covers, checks)                             \
  static_assert((points) > 0 && (points) <= 100, "a graded test is worth 1 to 100 points"); \
  static_assert(sizeof(covers) > 1 && sizeof(checks) > 1,                                   \
                "a graded test names the lab functions it covers and what it checks");      \
  TEST(suite, name)

#define GPULAB_COUNTED_TEST(suite, name, points, covers, checks) \
  GPULAB_GRADED_TEST(suite, name, points, covers, checks)
