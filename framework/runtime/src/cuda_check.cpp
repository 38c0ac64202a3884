#include "gpulab/runtime/cuda_check.hpp"

#include <cstdio>
#include <string>
#include <utility>

#if GPULAB_BACKEND_SIM
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab {
namespace {

std::string describe(const char* library, int code, const char* name, const char* description,
                     const char* call, const char* file, int line) {
  return std::string(library) + " error " + (name ? name : "?") + " (" + std::to_string(code) +
         ") at " + file + ":" + std::to_string(line) + " in " + call + ": " +
         (description ? description : "no description");
}

// Why the device failed, as far as the backend knows: on sim, the kernel failure the device holds.
std::string device_diagnosis() {
#if GPULAB_BACKEND_SIM
  return sim::kernel_failure();
#else
  return {};
#endif
}

}  // namespace

CudaError::CudaError(std::string library, int code, std::string error_name, std::string description,
                     std::string call, std::string file, int line)
    : CudaError(std::move(library), code, std::move(error_name), std::move(description),
                std::move(call), std::move(file), line, device_diagnosis()) {}

CudaError::CudaError(std::string library, int code, std::string error_name, std::string description,
                     std::string call, std::string file, int line, std::string diagnosis)
    : std::runtime_error(describe(library.c_str(), code, error_name.c_str(), description.c_str(),
                                  call.c_str(), file.c_str(), line) +
                         (diagnosis.empty() ? "" : "\ngpulab sim: " + diagnosis)),
      library_(std::move(library)),
      code_(code),
      error_name_(std::move(error_name)),
      description_(std::move(description)),
      call_(std::move(call)),
      file_(std::move(file)),
      line_(line),
      diagnosis_(std::move(diagnosis)) {}

namespace detail {

void throw_status(const char* library, int code, const char* name, const char* description,
                  const char* call, const char* file, int line) {
  throw CudaError(library, code, name ? name : "?", description ? description : "", call, file,
                  line);
}

void report_status(const char* library, int code, const char* name, const char* description,
                   const char* call, const char* file, int line) noexcept {
  try {
    const std::string text = describe(library, code, name, description, call, file, line);
    std::fprintf(stderr, "gpulab: warning: %s\n", text.c_str());
  } catch (...) {
    std::fputs("gpulab: warning: a CUDA call failed (and describing it ran out of memory)\n",
               stderr);
  }
}

}  // namespace detail
}  // namespace gpulab
