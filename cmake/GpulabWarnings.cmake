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
# Warnings are errors only where GPULAB_WERROR asks for it, and never in student code (the lab
# libraries built from labs/ and from a graded submission carry GPULAB_STUDENT_CODE): a warning
# there is shown, and `gpulab grade` lists it, but it costs no points.
set(_gpulab_werror $<AND:$<BOOL:${GPULAB_WERROR}>,$<NOT:$<BOOL:$<TARGET_PROPERTY:GPULAB_STUDENT_CODE>>>>)
target_compile_options(gpulab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:${_gpulab_cxx_warnings}>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,${_gpulab_werror}>:-Werror>)

# nvcc: its own diagnostics as errors, and the host compiler's warnings on the host side of .cu
# files. -Wpedantic and -Wold-style-cast are left out there: nvcc's generated host stubs trip them.
target_compile_options(gpulab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,${_gpulab_werror}>:-Werror=all-warnings -Xcompiler=-Werror>)

# Address and undefined-behaviour sanitizers for the asan preset (host code only).
option(GPULAB_SANITIZE "Build host code with AddressSanitizer and UBSan" OFF)
if(GPULAB_SANITIZE)
  target_compile_options(gpulab_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(gpulab_warnings INTERFACE -fsanitize=address,undefined)
endif()
