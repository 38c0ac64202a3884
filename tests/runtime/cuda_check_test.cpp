// The error path: GPULAB_CHECK throws a CudaError naming call, place and error;
// GPULAB_CHECK_NOEXCEPT reports and returns false; cuBLAS statuses go through the same check.
#include <gtest/gtest.h>

#include <string>

#include "gpulab/runtime/cublas_check.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "test_device.hpp"

namespace {

TEST(CudaCheck, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(GPULAB_CHECK(cudaSuccess));
}

TEST(CudaCheck, FailureThrowsCudaErrorWithCallPlaceAndName) {
  const int line = __LINE__ + 2;
  try {
    GPULAB_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "GPULAB_CHECK did not throw";
  } catch (const gpulab::CudaError& e) {
    EXPECT_EQ(e.library(), "CUDA");
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(e.error_name(), "cudaErrorMemoryAllocation");
    EXPECT_EQ(e.call(), "cudaErrorMemoryAllocation");
    EXPECT_EQ(e.line(), line);
    EXPECT_NE(e.file().find("cuda_check_test.cpp"), std::string::npos);
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorMemoryAllocation (2)"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_check_test.cpp:" + std::to_string(line)), std::string::npos) << what;
    EXPECT_NE(what.find("out of memory"), std::string::npos) << what;
  }
}

TEST(CudaCheck, CallTextIsTheSourceOfTheCall) {
  int* pointer = nullptr;
  try {
    GPULAB_CHECK(cudaMalloc(reinterpret_cast<void**>(&pointer), ~std::size_t{0}));
    FAIL() << "allocating 2^64-1 bytes succeeded";
  } catch (const gpulab::CudaError& e) {
    EXPECT_NE(e.call().find("cudaMalloc(reinterpret_cast<void**>(&pointer), ~std::size_t{0})"),
              std::string::npos)
        << e.call();
  }
  (void)cudaGetLastError();
}

TEST(CudaCheck, NoexceptVariantReportsOnStderrAndReturnsFalse) {
  testing::internal::CaptureStderr();
  const bool ok = GPULAB_CHECK_NOEXCEPT(cudaErrorInvalidValue);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("cudaErrorInvalidValue"), std::string::npos) << err;
  EXPECT_NE(err.find("cuda_check_test.cpp"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "expected exactly one line: " << err;

  testing::internal::CaptureStderr();
  EXPECT_TRUE(GPULAB_CHECK_NOEXCEPT(cudaSuccess));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(CudaCheck, CublasStatusThrowsWithCublasName) {
  try {
    GPULAB_CHECK(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "GPULAB_CHECK did not throw on a cuBLAS error";
  } catch (const gpulab::CudaError& e) {
    EXPECT_EQ(e.library(), "cuBLAS");
    EXPECT_EQ(e.code(), 7);
    EXPECT_EQ(e.error_name(), "CUBLAS_STATUS_INVALID_VALUE");
    EXPECT_NE(std::string(e.what()).find("cuBLAS error CUBLAS_STATUS_INVALID_VALUE"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(GPULAB_CHECK(CUBLAS_STATUS_SUCCESS));
}

TEST(CudaCheck, LaunchCheckThrowsOnPendingErrorAndClearsIt) {
  // Without a driver the runtime's initialization error is sticky: it cannot be cleared.
  GPULAB_REQUIRE_DEVICE();
  // A failed runtime call leaves its error for cudaGetLastError, as a failed launch does.
  void* pointer = nullptr;
  ASSERT_NE(cudaMalloc(&pointer, ~std::size_t{0}), cudaSuccess);
  try {
    GPULAB_CHECK_LAUNCH();
    FAIL() << "GPULAB_CHECK_LAUNCH did not report the pending error";
  } catch (const gpulab::CudaError& e) {
    EXPECT_NE(e.call().find("kernel launch"), std::string::npos) << e.call();
  }
  EXPECT_NO_THROW(GPULAB_CHECK_LAUNCH());
}

TEST(CudaCheck, LaunchCheckReportsAPendingError) {
  void* pointer = nullptr;
  ASSERT_NE(cudaMalloc(&pointer, ~std::size_t{0}), cudaSuccess);
  EXPECT_THROW(GPULAB_CHECK_LAUNCH(), gpulab::CudaError);
}

}  // namespace
