# Finding the CUDA toolkit.
#
# CMake finds nvcc only through CMAKE_CUDA_COMPILER, $CUDACXX or PATH. A fresh machine often has
# the toolkit in /usr/local/cuda without it being on PATH, so gpulab looks in the usual places
# itself before enabling the CUDA language: CMAKE_CUDA_COMPILER, $CUDACXX, CUDAToolkit_ROOT (CMake
# variable or environment), $CUDA_PATH, $CUDA_HOME, PATH, /usr/local/cuda, /opt/cuda.
#
# Sets GPULAB_HAVE_CUDA (ON when the cuda backend is built), GPULAB_BACKENDS ("cuda;sim" or "sim"),
# GPULAB_CUDA_STATUS (one line saying why the cuda backend is on or off) and, where the cache's
# GPULAB_CUDA_ARCHITECTURES is empty, the architectures chosen from GPULAB_GPU_SEEN.

set(GPULAB_MIN_CUDA_VERSION 12.0)

function(_gpulab_find_nvcc out)
  if(CMAKE_CUDA_COMPILER)
    set(${out} "${CMAKE_CUDA_COMPILER}" PARENT_SCOPE)
    return()
  endif()
  set(hints "")
  foreach(root IN ITEMS "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}"
                        "$ENV{CUDA_HOME}")
    if(root)
      list(APPEND hints "${root}/bin")
    endif()
  endforeach()
  if(DEFINED ENV{CUDACXX} AND EXISTS "$ENV{CUDACXX}")
    set(${out} "$ENV{CUDACXX}" PARENT_SCOPE)
    return()
  endif()
  find_program(GPULAB_NVCC nvcc HINTS ${hints} PATHS /usr/local/cuda/bin /opt/cuda/bin
               DOC "nvcc used for the cuda backend")
  set(${out} "${GPULAB_NVCC}" PARENT_SCOPE)
endfunction()

macro(gpulab_setup_cuda)
  set(GPULAB_HAVE_CUDA OFF)
  if(NOT GPULAB_ENABLE_CUDA)
    set(GPULAB_CUDA_STATUS "cuda backend off: GPULAB_ENABLE_CUDA=OFF")
  else()
    _gpulab_find_nvcc(_gpulab_nvcc)
    if(NOT _gpulab_nvcc)
      string(CONCAT GPULAB_CUDA_STATUS "cuda backend off: no CUDA toolkit found (looked for nvcc in "
                             "CUDAToolkit_ROOT, CUDA_PATH, PATH, /usr/local/cuda); building the sim backend only")
    else()
      execute_process(COMMAND "${_gpulab_nvcc}" --version OUTPUT_VARIABLE _nvcc_out
                      RESULT_VARIABLE _nvcc_rc ERROR_QUIET)
      string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${_nvcc_out}")
      set(_nvcc_version "${CMAKE_MATCH_1}")
      if(NOT _nvcc_rc EQUAL 0 OR NOT _nvcc_version)
        set(GPULAB_CUDA_STATUS "cuda backend off: ${_gpulab_nvcc} --version failed")
      elseif(_nvcc_version VERSION_LESS GPULAB_MIN_CUDA_VERSION)
        string(CONCAT GPULAB_CUDA_STATUS "cuda backend off: CUDA ${_nvcc_version} at ${_gpulab_nvcc} is older "
                               "than the ${GPULAB_MIN_CUDA_VERSION} gpulab needs")
      else()
        set(CMAKE_CUDA_COMPILER "${_gpulab_nvcc}" CACHE FILEPATH "CUDA compiler" FORCE)
        # Automatic architectures: machine code for A100 (8.0) and H100/H200 (9.0) where a GPU is
        # seen. Where none is, the cuda programs are built (a compile check, and for a GPU machine
        # that shares the build) but not run here: compute_80 PTX alone, which the driver compiles
        # for any GPU of 8.0 or later at the first launch (and caches), costs one nvcc pass per
        # file instead of two (tests/sim/wmma_test.cu on an idle 2-core machine: 13.8 s of CPU
        # against 18.9 s for 80;90).
        set(_gpulab_arch_note "")
        if(NOT GPULAB_CUDA_ARCHITECTURES)
          if(GPULAB_GPU_SEEN)
            set(GPULAB_CUDA_ARCHITECTURES "80;90")
          else()
            set(GPULAB_CUDA_ARCHITECTURES "80-virtual")
            string(CONCAT _gpulab_arch_note " (no GPU seen: PTX only, compiled by the driver at "
                          "the first launch; -DGPULAB_CUDA_ARCHITECTURES=80;90 for machine code)")
          endif()
        endif()
        set(CMAKE_CUDA_ARCHITECTURES "${GPULAB_CUDA_ARCHITECTURES}")
        enable_language(CUDA)
        # CMake 3.25 does not know nvcc's C++20 flag (nvcc 12+ accepts -std=c++20); tell it, so
        # CUDA targets get the same C++20 as host code (CXX_STANDARD also applies to CUDA).
        if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
          set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
          set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
        endif()
        set(CMAKE_CUDA_STANDARD 20)
        set(CMAKE_CUDA_STANDARD_REQUIRED ON)
        set(CMAKE_CUDA_EXTENSIONS OFF)
        find_package(CUDAToolkit ${GPULAB_MIN_CUDA_VERSION} REQUIRED)
        set(GPULAB_HAVE_CUDA ON)
        string(CONCAT GPULAB_CUDA_STATUS "cuda backend on: CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), "
                               "architectures ${GPULAB_CUDA_ARCHITECTURES}${_gpulab_arch_note}")
      endif()
    endif()
  endif()
  if(GPULAB_HAVE_CUDA)
    set(GPULAB_BACKENDS cuda sim)
  else()
    set(GPULAB_BACKENDS sim)
  endif()
  message(STATUS "gpulab: ${GPULAB_CUDA_STATUS}")
endmacro()
