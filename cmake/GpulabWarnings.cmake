# Warning flags for project code, on one interface target (gpulab.warnings) that every project
# target links privately. Third-party headers come in as SYSTEM includes and are not affected.
add_library(gpulab_warnings INTERFACE)
add_library(gpulab::warnings ALIAS gpulab_warnings)

set(_gpulab_cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Wunused -Woverloaded-virtual -Wdouble-promotion -Wformat=2
    -Wimplicit-fallthrough)
# GCC 12 at -O3 reports false -Wrestrict warnings inside std::string concatenation (GCC bug
# 105329, fixed in GCC 13).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND _gpulab_cxx_warnings -Wno-restrict)
endif()
if(GPULAB_WERROR)
  list(APPEND _gpulab_cxx_warnings -Werror)
endif()
target_compile_options(gpulab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:${_gpulab_cxx_warnings}>)

# nvcc: its own diagnostics as errors, and the host compiler's warnings on the host side of .cu
# files. -Wpedantic and -Wold-style-cast are left out there: nvcc's generated host stubs trip them.
if(GPULAB_WERROR)
  set(_gpulab_cuda_werror -Werror=all-warnings)
  set(_gpulab_cuda_host_werror ",-Werror")
endif()
target_compile_options(gpulab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:${_gpulab_cuda_werror} -Xcompiler=-Wall,-Wextra${_gpulab_cuda_host_werror}>)

# Address and undefined-behaviour sanitizers for the asan preset (host code only).
option(GPULAB_SANITIZE "Build host code with AddressSanitizer and UBSan" OFF)
if(GPULAB_SANITIZE)
  target_compile_options(gpulab_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(gpulab_warnings INTERFACE -fsanitize=address,undefined)
endif()
