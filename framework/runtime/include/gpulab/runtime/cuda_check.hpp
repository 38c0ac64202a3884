// One error path for the CUDA runtime and CUDA libraries.
//
//   GPULAB_CHECK(cudaMalloc(&p, bytes));     throws gpulab::CudaError on failure
//   GPULAB_CHECK_NOEXCEPT(cudaFree(p));      for destructors: reports on stderr, returns false
//   kernel<<<grid, block>>>(...);
//   GPULAB_CHECK_LAUNCH();                   a bad launch configuration throws here
//
// check() is a template over the status type; StatusTraits<cudaError_t> is defined here and
// StatusTraits<cublasStatus_t> in cublas_check.hpp, so one macro covers both.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gpulab {

/// A failed CUDA runtime or CUDA library call: what was called, where, and the error. On sim,
/// after a kernel failed, also why: the sim's diagnosis (diagnosis()), the last line of what().
class CudaError : public std::runtime_error {
 public:
  /// library: "CUDA" or "cuBLAS"; code: the status value; call: the source text of the call.
  CudaError(std::string library, int code, std::string error_name, std::string description,
            std::string call, std::string file, int line);

  [[nodiscard]] const std::string& library() const noexcept { return library_; }
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] const std::string& error_name() const noexcept { return error_name_; }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }
  /// On sim, while the device holds the error a kernel left: which kernel failed, in which block
  /// and threads, what went wrong and on which line (sim::kernel_failure()); empty otherwise.
  [[nodiscard]] const std::string& diagnosis() const noexcept { return diagnosis_; }

 private:
  CudaError(std::string library, int code, std::string error_name, std::string description,
            std::string call, std::string file, int line, std::string diagnosis);

  std::string library_;
  int code_;
  std::string error_name_;
  std::string description_;
  std::string call_;
  std::string file_;
  int line_;
  std::string diagnosis_;
};

/// How to read a status type: specialised for cudaError_t here, cublasStatus_t in cublas_check.
template <class Status>
struct StatusTraits;

template <>
struct StatusTraits<cudaError_t> {
  static constexpr const char* library = "CUDA";
  static bool ok(cudaError_t status) noexcept { return status == cudaSuccess; }
  static const char* name(cudaError_t status) noexcept { return cudaGetErrorName(status); }
  static const char* description(cudaError_t status) noexcept { return cudaGetErrorString(status); }
};

namespace detail {
[[noreturn]] void throw_status(const char* library, int code, const char* name,
                               const char* description, const char* call, const char* file,
                               int line);
void report_status(const char* library, int code, const char* name, const char* description,
                   const char* call, const char* file, int line) noexcept;
}  // namespace detail

/// Throws CudaError when `status` is not success. Use through GPULAB_CHECK.
template <class Status>
void check(Status status, const char* call, const char* file, int line) {
  using Traits = StatusTraits<Status>;
  if (!Traits::ok(status)) [[unlikely]] {
    detail::throw_status(Traits::library, static_cast<int>(status), Traits::name(status),
                         Traits::description(status), call, file, line);
  }
}

/// Reports a failed status on stderr and returns false; never throws. For destructors and other
/// places where an exception would terminate the program. Use through GPULAB_CHECK_NOEXCEPT.
template <class Status>
bool check_noexcept(Status status, const char* call, const char* file, int line) noexcept {
  using Traits = StatusTraits<Status>;
  if (Traits::ok(status)) [[likely]] {
    return true;
  }
  detail::report_status(Traits::library, static_cast<int>(status), Traits::name(status),
                        Traits::description(status), call, file, line);
  return false;
}

}  // namespace gpulab

/// Checks a CUDA runtime or library call; throws gpulab::CudaError naming the call and file:line.
#define GPULAB_CHECK(call) ::gpulab::check((call), #call, __FILE__, __LINE__)
/// Checks a call without throwing (destructors): reports on stderr, evaluates to false on error.
#define GPULAB_CHECK_NOEXCEPT(call) ::gpulab::check_noexcept((call), #call, __FILE__, __LINE__)
/// After a <<<...>>> launch: a launch error (bad configuration, too much shared memory, no
/// kernel image for this GPU) is reported by cudaGetLastError, not by the launch itself. Errors
/// during execution surface at the next synchronizing call, which GPULAB_CHECK also checks.
#define GPULAB_CHECK_LAUNCH() \
  ::gpulab::check(cudaGetLastError(), "kernel launch (cudaGetLastError)", __FILE__, __LINE__)
