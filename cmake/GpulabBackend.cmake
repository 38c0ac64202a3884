# Backend pairs: every piece of code that talks to the CUDA runtime (framework/runtime,
# kernels/, labs/, solutions/) is built once per backend:
#
#   <name>.cuda   nvcc for .cu files, the host compiler for .cpp files, linked to CUDA::cudart
#   <name>.sim    the host compiler for everything, against framework/sim's CUDA runtime
#
# A process uses one backend: a binary links the .cuda or the .sim member of each pair, never both
# (the two define the same symbols). The compile definition GPULAB_BACKEND_CUDA or
# GPULAB_BACKEND_SIM tells code which one it is built for.
#
#   gpulab_add_backend_library(<name>
#     SOURCES <files...>                 .cpp and .cu
#     [PUBLIC_INCLUDE_DIRS <dirs...>]
#     [LINK <targets...>]                backend-neutral targets, linked PUBLIC
#     [LINK_BACKEND <pair names...>])    other pairs: links <pair>.<backend> PUBLIC
#
#   gpulab_add_backend_executable(<name> SOURCES ... [LINK ...] [LINK_BACKEND ...] [BACKENDS ...])
#     one executable per backend, named <name>.<backend>; BACKENDS restricts the list.
#
# Memory counting on sim (framework/sim/src/counting.cpp): outside AddressSanitizer builds, every
# translated .cu file is compiled so that each load and store calls a callback the sim runtime
# defines, and each basic block adds the operations it executes, by class, to a thread-local array
# (docs/sim.md, "Counted instructions"). A compiler plugin of the project does both
# (framework/sim/plugin): with GCC a GCC plugin, beside GCC's kernel-address instrumentation
# (outlined, with no ASan runtime, its own load and store checks off: the plugin's rule reads its
# no_sanitize_address); with clang an LLVM pass plugin. Host code in those files pays a call per
# access; kernels pay it too when counting is off. GCC defines __SANITIZE_ADDRESS__ for this mode as
# for AddressSanitizer; -U keeps that macro meaning "AddressSanitizer build" (the asan preset) for
# the project's code. GPULAB_SIM_COUNTING=OFF builds them without (to measure what the calls cost).
# Three of GCC's optimizations are off in counted files, as they make accesses and operations that
# a GPU thread does not: the vectorizer packs a thread's independent scalar operations and accesses
# into SSE vectors (a GPU thread has none: its vector is the warp; clang's two vectorizers are off
# too), scalar replacement of aggregates turns a 16-byte float4 load whose members are used one by
# one into four 4-byte loads (nvcc keeps one 16-byte load), and loop distribution turns a loop that
# zeroes or copies an array into a call of memset or memcpy, whose stores no callback sees (a GPU
# thread makes them one by one; the sanitizer took shared memory such a loop zeroed for unwritten).
# The counts follow the source, not the build type: which loads, stores and operations a kernel
# makes is the host optimizer's choice (at -O3 GCC inlines and unrolls more, and a local array a
# loop indexes stays in registers or goes to the stack), so in a counting build every sim target
# is compiled at one optimization level, GPULAB_SIM_KERNEL_OPTIMIZATION, whatever the build type
# gives the rest (_gpulab_backend_configure; its precompiled header too, since GCC takes the
# optimization level of a precompiled header into the files that use it). Another level (-O0, to
# step through kernels in a debugger: docs/sim.md, section 7) counts other figures than every
# default build.
option(GPULAB_SIM_COUNTING "Let sim kernels count their memory traffic and arithmetic" ON)
set(GPULAB_SIM_KERNEL_OPTIMIZATION "-O2" CACHE STRING
    "Optimization level of sim targets in a counting build, whatever the build type (-O2: the \
counts every default build agrees on)")
if(NOT GPULAB_SIM_KERNEL_OPTIMIZATION MATCHES "^-O[0-3gs]?$")
  message(FATAL_ERROR "GPULAB_SIM_KERNEL_OPTIMIZATION must be an optimization flag such as -O2 or "
                      "-O0, not '${GPULAB_SIM_KERNEL_OPTIMIZATION}'")
endif()
# A fully unrolled kernel with a callback at every access is one huge function, and GCC's variable
# tracking (where -g's variables live in optimized code) is quadratic in it:
# kernels/attention/flash.cu took 270 s to compile, 211 s of it tracking variables. Past a million
# slots GCC tracks such a function coarsely (it says so in a note): 50 s, the same code (debug
# information never changes it), every other file as before. Sim targets of a counting build only.
set(GPULAB_SIM_DEBUG_LIMIT "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(GPULAB_SIM_DEBUG_LIMIT "--param=max-vartrack-size=1000000")
endif()
# Counted arithmetic: GPULAB_SIM_COUNT_ARITHMETIC=OFF counts memory only (to measure what the
# arithmetic counts cost). GPULAB_SIM_COUNT_OPS: whether kernels count their arithmetic (tests of
# it skip without); GPULAB_SIM_COUNT_PLUGIN: the plugin's target, which counted files depend on
# (GPULAB_SIM_COUNT_PLUGIN_FILE: its file).
option(GPULAB_SIM_COUNT_ARITHMETIC "Let sim kernels count their arithmetic" ON)
set(GPULAB_SIM_COUNT_OPS OFF)
set(GPULAB_SIM_COUNT_PLUGIN "")
set(GPULAB_SIM_COUNTING_FLAGS "")
set(_gpulab_why "")
string(REGEX MATCH "^[0-9]+" _gpulab_major "${CMAKE_CXX_COMPILER_VERSION}")
set(_gpulab_skip "${PROJECT_SOURCE_DIR}/framework/sim/include/")  # the sim's headers: not counted
# The compiler's own include folders: an operation inlined from them is its caller's, and a
# function of them compiled out of line is not counted (framework/sim/plugin).
list(JOIN CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES "/," _gpulab_library)
if(NOT GPULAB_SIM_COUNTING)
  set(_gpulab_why "GPULAB_SIM_COUNTING=OFF")
elseif(GPULAB_SANITIZE)
  set(_gpulab_why "an AddressSanitizer build (GPULAB_SANITIZE)")
elseif(NOT APPLE AND NOT (CMAKE_SYSTEM_NAME STREQUAL "Linux" AND
                          CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm64)$"))
  # Where a thread's thread_local variables (the sim's __shared__) are is the platform's
  # (framework/sim/src/program_image.hpp).
  set(_gpulab_why "the sim finds a thread's __shared__ variables on Linux x86-64 and ARM64 and on "
                  "macOS, not on ${CMAKE_SYSTEM_NAME} ${CMAKE_SYSTEM_PROCESSOR}")
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(GPULAB_SIM_COUNTING_FLAGS -fsanitize=kernel-address --param
      asan-instrumentation-with-call-threshold=0 --param asan-stack=0 --param asan-globals=0
      -U__SANITIZE_ADDRESS__ -fno-tree-vectorize -fno-tree-sra -fno-tree-loop-distribute-patterns)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=plugin
                  OUTPUT_VARIABLE GPULAB_GCC_PLUGIN_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(EXISTS "${GPULAB_GCC_PLUGIN_DIR}/include/gcc-plugin.h")
    set(GPULAB_SIM_COUNT_PLUGIN gpulab_count_ops)
    set(GPULAB_SIM_COUNT_PLUGIN_FILE "${PROJECT_BINARY_DIR}/lib/gpulab_count_ops.so")
    list(APPEND GPULAB_SIM_COUNTING_FLAGS "-fplugin=${GPULAB_SIM_COUNT_PLUGIN_FILE}"
         "-fplugin-arg-gpulab_count_ops-skip=${_gpulab_skip}" "-fplugin-arg-gpulab_count_ops-memory"
         "-fplugin-arg-gpulab_count_ops-library=${_gpulab_library}/"
         --param asan-instrument-reads=0 --param asan-instrument-writes=0)
    if(NOT GPULAB_SIM_COUNT_ARITHMETIC)
      list(APPEND GPULAB_SIM_COUNTING_FLAGS "-fplugin-arg-gpulab_count_ops-no-arithmetic")
    endif()
  else()
    message(WARNING "GCC's plugin headers are missing (${GPULAB_GCC_PLUGIN_DIR}/include): sim "
                    "kernels will count memory traffic through AddressSanitizer's checks (which "
                    "miss a read-modify-write's store) and no arithmetic. Install "
                    "gcc-${_gpulab_major}-plugin-dev (scripts/setup does).")
  endif()
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # The LLVM pass plugin needs the headers of the LLVM that clang is: Debian's llvm-N-dev, or
  # beside clang's own folder (an LLVM installed whole: Homebrew's llvm, a release archive).
  get_filename_component(_gpulab_clang "${CMAKE_CXX_COMPILER}" REALPATH)
  get_filename_component(_gpulab_clang_prefix "${_gpulab_clang}" DIRECTORY)
  find_path(GPULAB_LLVM_INCLUDE_DIR llvm/Passes/PassPlugin.h
            PATHS "/usr/lib/llvm-${_gpulab_major}/include" "${_gpulab_clang_prefix}/../include"
            NO_DEFAULT_PATH
            DOC "Headers of the LLVM clang ${_gpulab_major} is built on")
  if(GPULAB_LLVM_INCLUDE_DIR)
    set(GPULAB_SIM_COUNT_PLUGIN gpulab_count_ops_llvm)
    set(GPULAB_SIM_COUNT_PLUGIN_FILE "${PROJECT_BINARY_DIR}/lib/gpulab_count_ops_llvm.so")
    # -fplugin loads it before clang reads -mllvm, which then knows the plugin's options. As GCC at
    # -O2, clang unrolls no loop that `#pragma unroll` does not ask for (it would unroll a loop of
    # unknown trip count, which nvcc and GCC keep: its branches count once an iteration).
    set(GPULAB_SIM_COUNTING_FLAGS "-fplugin=${GPULAB_SIM_COUNT_PLUGIN_FILE}" "-fpass-plugin=${GPULAB_SIM_COUNT_PLUGIN_FILE}"
        -mllvm "-gpulab-count-skip=${_gpulab_skip}" -fno-vectorize -fno-slp-vectorize
        -fno-unroll-loops)
    list(APPEND GPULAB_SIM_COUNTING_FLAGS -mllvm "-gpulab-count-library=${_gpulab_library}/")
    if(NOT GPULAB_SIM_COUNT_ARITHMETIC)
      list(APPEND GPULAB_SIM_COUNTING_FLAGS -mllvm -gpulab-count-arithmetic=false)
    endif()
  else()
    set(_gpulab_why "clang ${CMAKE_CXX_COMPILER_VERSION} without the headers of its LLVM (install "
                    "llvm-${_gpulab_major}-dev, or set GPULAB_LLVM_INCLUDE_DIR)")
  endif()
else()
  string(CONCAT _gpulab_why "the compiler is ${CMAKE_CXX_COMPILER_ID} "
                "${CMAKE_CXX_COMPILER_VERSION}, and counting needs GCC's plugin or clang's, which "
                "builds against its LLVM's headers (Apple's clang ships none: on macOS, use "
                "Homebrew's llvm)")
endif()
if(_gpulab_why)
  string(JOIN "" _gpulab_why ${_gpulab_why})
  message(STATUS "gpulab: sim counting off: ${_gpulab_why}. Sim programs count no memory traffic "
                 "and have no modeled clock: their times are CPU time of the simulation")
  set(GPULAB_SIM_COUNTING OFF)
elseif(GPULAB_SIM_COUNT_PLUGIN AND GPULAB_SIM_COUNT_ARITHMETIC)
  set(GPULAB_SIM_COUNT_OPS ON)
endif()

# The sim member compiles each .cu file through gpulab-sim-translate (framework/sim/translate),
# which rewrites the CUDA-only syntax (kernel launches, extern __shared__) into calls to the sim
# runtime and keeps every line number: <build>/sim_sources/<target>/<path of the .cu>.cpp, rebuilt
# when the .cu or the tool changes. The source stays plain CUDA C++; the generated file gets the
# .cu's directory as a quote-include directory, so `#include "x.cuh"` next to it still works.

function(_gpulab_backend_sources target backend out)
  set(result "")
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(ext "${abs}" LAST_EXT)
    if(backend STREQUAL "sim" AND ext STREQUAL ".cu")
      # A path below the source tree, or below the build tree (the grader's staged submissions),
      # wherever the build tree is.
      file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
      if(rel MATCHES "^\\.\\./")
        file(RELATIVE_PATH rel "${PROJECT_BINARY_DIR}" "${abs}")
        if(rel MATCHES "^\\.\\./")
          message(FATAL_ERROR "${target}: ${abs} is outside the source and build trees; the sim "
                              "backend translates .cu files of the project only")
        endif()
        set(rel "build-tree/${rel}")
      endif()
      # Per target, so one .cu file may be in several targets.
      set(translated "${PROJECT_BINARY_DIR}/sim_sources/${target}/${rel}.cpp")
      get_filename_component(dir "${abs}" DIRECTORY)
      add_custom_command(OUTPUT "${translated}"
        COMMAND gpulab-sim-translate "${abs}" "${translated}"
        DEPENDS "${abs}" gpulab-sim-translate
        COMMENT "Translating ${rel} for the sim backend"
        VERBATIM)
      # CUDA's pragmas (#pragma unroll, nv_diag_suppress, ...) mean nothing to the host compiler.
      set_source_files_properties("${translated}" PROPERTIES
        COMPILE_OPTIONS "-iquote;${dir};-Wno-unknown-pragmas;${GPULAB_SIM_COUNTING_FLAGS}")
      if(GPULAB_SIM_COUNT_PLUGIN)
        # Recompiled when the plugin changes (the target depends on it: _gpulab_backend_configure).
        set_property(SOURCE "${translated}" APPEND PROPERTY OBJECT_DEPENDS
                     "${GPULAB_SIM_COUNT_PLUGIN_FILE}")
        if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
          # The LLVM plugin knows an operation's file from line tables (its `skip` rule).
          set_property(SOURCE "${translated}" APPEND PROPERTY COMPILE_OPTIONS
                       "$<$<NOT:$<CONFIG:Debug,RelWithDebInfo>>:-gline-tables-only>")
        endif()
      endif()
      list(APPEND result "${translated}")
    else()
      list(APPEND result "${abs}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(_gpulab_backend_configure target backend)
  cmake_parse_arguments(ARG "" "" "PUBLIC_INCLUDE_DIRS;LINK;LINK_BACKEND" ${ARGN})
  string(TOUPPER "${backend}" BACKEND)
  target_compile_definitions(${target} PUBLIC GPULAB_BACKEND_${BACKEND}=1)
  if(ARG_PUBLIC_INCLUDE_DIRS)
    target_include_directories(${target} PUBLIC ${ARG_PUBLIC_INCLUDE_DIRS})
  endif()
  foreach(pair IN LISTS ARG_LINK_BACKEND)
    target_link_libraries(${target} PUBLIC ${pair}.${backend})
  endforeach()
  target_link_libraries(${target} PUBLIC ${ARG_LINK} PRIVATE gpulab::warnings)
  # A program gets the project's kernel table (cmake/GpulabKernelTable.cmake: an object that
  # registers it when the program starts), which the sim's modeled clock, occupancy and profiles
  # read; kernels/ defines it, so the libraries below it never link it.
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_link_libraries(${target} PRIVATE gpulab.kernel_table)
  endif()
  if(backend STREQUAL "cuda")
    target_link_libraries(${target} PUBLIC CUDA::cudart)
    # -lineinfo maps SASS back to source lines in Nsight Compute and compute-sanitizer.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${GPULAB_CUDA_ARCHITECTURES}")
  else()
    target_link_libraries(${target} PUBLIC gpulab.sim.runtime)
    if(GPULAB_SIM_COUNTING)
      # After the build type's flags, so it wins (see GPULAB_SIM_KERNEL_OPTIMIZATION above).
      target_compile_options(${target} PRIVATE
                             $<$<COMPILE_LANGUAGE:CXX>:${GPULAB_SIM_KERNEL_OPTIMIZATION}>)
      if(GPULAB_SIM_DEBUG_LIMIT)
        target_compile_options(${target} PRIVATE
                               $<$<COMPILE_LANGUAGE:CXX>:${GPULAB_SIM_DEBUG_LIMIT}>)
      endif()
    endif()
    if(GPULAB_SIM_COUNT_PLUGIN)
      add_dependencies(${target} ${GPULAB_SIM_COUNT_PLUGIN})
    endif()
    if(GPULAB_SIM_COUNT_OPS)
      # Tests of the counted arithmetic skip without the plugin.
      target_compile_definitions(${target} PRIVATE GPULAB_SIM_COUNT_OPS=1)
    endif()
  endif()
endfunction()

function(gpulab_add_backend_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_INCLUDE_DIRS;LINK;LINK_BACKEND" ${ARGN})
  foreach(backend IN LISTS GPULAB_BACKENDS)
    _gpulab_backend_sources(${name}.${backend} ${backend} sources ${ARG_SOURCES})
    add_library(${name}.${backend} STATIC ${sources})
    _gpulab_backend_configure(${name}.${backend} ${backend}
      PUBLIC_INCLUDE_DIRS ${ARG_PUBLIC_INCLUDE_DIRS} LINK ${ARG_LINK} LINK_BACKEND ${ARG_LINK_BACKEND})
  endforeach()
endfunction()

function(gpulab_add_backend_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK;LINK_BACKEND;BACKENDS" ${ARGN})
  if(NOT ARG_BACKENDS)
    set(ARG_BACKENDS ${GPULAB_BACKENDS})
  endif()
  foreach(backend IN LISTS ARG_BACKENDS)
    if(NOT backend IN_LIST GPULAB_BACKENDS)
      continue()
    endif()
    _gpulab_backend_sources(${name}.${backend} ${backend} sources ${ARG_SOURCES})
    add_executable(${name}.${backend} ${sources})
    _gpulab_backend_configure(${name}.${backend} ${backend} LINK ${ARG_LINK}
      LINK_BACKEND ${ARG_LINK_BACKEND})
  endforeach()
endfunction()

# Unit tests. Each test case runs in its own process (gtest_discover_tests), discovered when
# ctest runs (PRE_TEST), so building never executes a test binary. Where configure saw no GPU
# (GPULAB_GPU_SEEN), a cuda test program is one ctest test instead (run_without_gpu.sh): its cases
# that need a device would each start a process only to skip, and the rest still run.
#
#   gpulab_add_test(<name> SOURCES ... [LINK ...] LABEL <label>)
#     host-only test executable gpulab.test.<name>
#   gpulab_add_backend_test(<name> SOURCES ... [LINK ...] [LINK_BACKEND ...] [BACKENDS ...])
#     one executable per backend, gpulab.test.<name>.<backend>, labelled with the backend
function(_gpulab_discover target label)
  if(label STREQUAL "cuda" AND NOT GPULAB_GPU_SEEN)
    _gpulab_add_whole_program_test(${target} ${target} "${label}")
    return()
  endif()
  gpulab_discover_tests(${target} TEST_PREFIX "${target}/"
    PROPERTIES LABELS "${label}" TIMEOUT ${GPULAB_TEST_TIMEOUT})
endfunction()

# _gpulab_add_whole_program_test(<test name> <program target> <labels> [ARGS...]): the whole
# program as one ctest test, skipped (77) when every case skipped. Its time limit covers the
# cases that run without a device, a few at most.
function(_gpulab_add_whole_program_test test target labels)
  add_test(NAME ${test}
           COMMAND ${PROJECT_SOURCE_DIR}/cmake/run_without_gpu.sh $<TARGET_FILE:${target}> ${ARGN})
  math(EXPR limit "${GPULAB_TEST_TIMEOUT} * 3")
  set_tests_properties(${test} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT ${limit})
endfunction()

function(gpulab_add_test name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;LINK" ${ARGN})
  add_executable(gpulab.test.${name} ${ARG_SOURCES})
  target_link_libraries(gpulab.test.${name} PRIVATE ${ARG_LINK} GTest::gtest GTest::gtest_main
                        gpulab::warnings)
  _gpulab_discover(gpulab.test.${name} ${ARG_LABEL})
endfunction()

function(gpulab_add_backend_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK;LINK_BACKEND;BACKENDS" ${ARGN})
  gpulab_add_backend_executable(gpulab.test.${name} SOURCES ${ARG_SOURCES}
    LINK ${ARG_LINK} GTest::gtest GTest::gtest_main LINK_BACKEND ${ARG_LINK_BACKEND}
    BACKENDS ${ARG_BACKENDS})
  foreach(backend IN LISTS GPULAB_BACKENDS)
    if(TARGET gpulab.test.${name}.${backend})
      _gpulab_discover(gpulab.test.${name}.${backend} ${backend})
    endif()
  endforeach()
endfunction()
