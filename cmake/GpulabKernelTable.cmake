# The kernel table (framework/core/include/gpulab/core/kernel_table.hpp): registers, static shared
# memory and local memory of every project kernel on every architecture of
# GPULAB_KERNEL_TABLE_ARCHITECTURES, read from ptxas's resource report when the project builds, so
# occupancy can be computed from the compiler's real figures on any machine, the sim backend
# included. It needs nvcc, not the cuda backend: GPULAB_ENABLE_CUDA=OFF with a toolkit installed
# still gets the table.
#
#   gpulab_add_kernel_table(<target>
#     SOURCES <files.cu...>              the kernel sources (kernels/CMakeLists.txt passes
#                                        gpulab.kernels' own list)
#     [INCLUDE_DIRS <dirs...>]           -I for nvcc, as the cuda build has them
#     [SYSTEM_INCLUDE_DIRS <dirs...>])   -isystem for nvcc (third-party headers)
#
# defines <target>, a host-only STATIC library (framework/core/src/kernel_table.cpp and the
# generated table) that links gpulab.core.host. It always exists: without nvcc its table is empty
# and kernel_table_status() says why in one line.
#
# Besides SOURCES, each solutions/<lab>/*.cu holding a __global__ joins the table (scanned at
# configure time): those are the reference kernels of the labs. The student files in labs/ do
# not: they change with every edit and may not compile yet, and the `gpulab` command links the
# table.
#
# How (per source file, then once):
#   1. kernel_table_ptxas.cmake runs `nvcc --fatbin -Xptxas=-v -gencode ...` for every
#      architecture at once and keeps the output in <build>/generated/kernel_table/<path>.ptxas.txt.
#      nvcc -MD writes a depfile, so a change to the .cu file or any header it includes reruns it.
#      --fatbin rather than -c: the device code and ptxas's report are the same, and it skips the
#      host compiler's pass over the file (about a third of nvcc's time here).
#   2. gpulab-kernel-table-gen (framework/core/tools) parses every report and writes
#      <build>/generated/kernel_table/kernel_table_data.cpp; unexpected ptxas output fails the
#      build naming the file and the line.
# Cost: nvcc's front end (cicc) runs once per file and architecture and dominates. Measured on
# the project's 2-core machine (CUDA 13.0): the six kernel files for the default five
# architectures take about 27 s of CPU, 22 s of wall time with -j2 while the machine was busy
# (attention.cu, the longest, about 6 s of CPU alone); one architecture about 8 s of CPU. Only a
# clean build pays it all: an edited kernel file (or a header it includes) reruns its own step.
#
# Sets GPULAB_KERNEL_TABLE_SMS (cache, internal): the architectures the table has, empty when it
# is empty; tests/core passes it to the table's test.

# sm_70 (V100 in the spec database) is left out: CUDA 13 no longer compiles for it. The list is
# checked against `nvcc --list-gpu-code` at configure time and unsupported entries are dropped
# with a message. An empty list turns the table off (an empty table, with the reason).
set(GPULAB_KERNEL_TABLE_ARCHITECTURES "75;80;86;89;90" CACHE STRING
    "Architectures of the kernel table (ptxas figures per kernel), e.g. 75;80;86;89;90")

set(_gpulab_kernel_table_script ${CMAKE_CURRENT_LIST_DIR}/kernel_table_ptxas.cmake)

# Sets <out_nvcc> to the nvcc that builds the table and <out_sms> to the architectures it
# supports, or <out_status> to why there is no table.
function(_gpulab_kernel_table_toolchain out_nvcc out_sms out_status)
  set(${out_nvcc} "" PARENT_SCOPE)
  set(${out_sms} "" PARENT_SCOPE)
  set(suffix "kernel figures unavailable")
  if(NOT GPULAB_KERNEL_TABLE_ARCHITECTURES)
    set(${out_status} "this build has no kernel table architectures (GPULAB_KERNEL_TABLE_ARCHITECTURES is empty): ${suffix}" PARENT_SCOPE)
    return()
  endif()
  foreach(sm IN LISTS GPULAB_KERNEL_TABLE_ARCHITECTURES)
    if(NOT sm MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "GPULAB_KERNEL_TABLE_ARCHITECTURES: \"${sm}\" is not an architecture "
                          "number such as 80 (a list such as 75;80;86;89;90)")
    endif()
  endforeach()
  # The cuda backend's nvcc when it is on; otherwise the same search (cmake/GpulabCuda.cmake):
  # CMAKE_CUDA_COMPILER, $CUDACXX, CUDAToolkit_ROOT, CUDA_PATH, CUDA_HOME, PATH, /usr/local/cuda.
  _gpulab_find_nvcc(nvcc)
  if(NOT nvcc)
    set(${out_status} "this build found no nvcc: ${suffix}; install the CUDA toolkit" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE version_text
                  RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${version_text}")
  set(version "${CMAKE_MATCH_1}")
  if(NOT rc EQUAL 0 OR NOT version)
    set(${out_status} "${nvcc} --version failed: ${suffix}" PARENT_SCOPE)
    return()
  endif()
  if(version VERSION_LESS GPULAB_MIN_CUDA_VERSION)
    set(${out_status} "nvcc at ${nvcc} is CUDA ${version}, older than ${GPULAB_MIN_CUDA_VERSION}: ${suffix}; install a newer CUDA toolkit" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${nvcc}" --list-gpu-code OUTPUT_VARIABLE codes RESULT_VARIABLE rc
                  ERROR_QUIET)
  set(supported "")
  set(dropped "")
  foreach(sm IN LISTS GPULAB_KERNEL_TABLE_ARCHITECTURES)
    if(rc EQUAL 0 AND codes MATCHES "(^|\n)sm_${sm}(\n|$)")
      list(APPEND supported ${sm})
    else()
      list(APPEND dropped sm_${sm})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES supported)
  if(dropped)
    list(JOIN dropped ", " dropped_text)
    message(STATUS "gpulab: kernel table: ${dropped_text} left out: nvcc ${version} does not "
                   "compile for it")
  endif()
  if(NOT supported)
    set(${out_status} "nvcc ${version} compiles for none of GPULAB_KERNEL_TABLE_ARCHITECTURES (${GPULAB_KERNEL_TABLE_ARCHITECTURES}): ${suffix}" PARENT_SCOPE)
    return()
  endif()
  set(${out_nvcc} "${nvcc}" PARENT_SCOPE)
  set(${out_sms} "${supported}" PARENT_SCOPE)
  set(${out_status} "" PARENT_SCOPE)
endfunction()

function(gpulab_add_kernel_table target)
  cmake_parse_arguments(ARG "" "" "SOURCES;INCLUDE_DIRS;SYSTEM_INCLUDE_DIRS" ${ARGN})
  set(out_dir "${PROJECT_BINARY_DIR}/generated/kernel_table")
  set(table_cpp "${out_dir}/kernel_table_data.cpp")

  set(sources "")
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    list(APPEND sources "${abs}")
  endforeach()
  # The labs' reference kernels (see the top of this file).
  file(GLOB solution_files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/solutions/*/*.cu")
  foreach(file IN LISTS solution_files)
    file(STRINGS "${file}" kernels REGEX "__global__")
    if(kernels)
      list(APPEND sources "${file}")
    endif()
  endforeach()

  _gpulab_kernel_table_toolchain(nvcc sms status)
  # For tests/core/kernel_table_test.cpp: the architectures the table has (empty: none).
  set(GPULAB_KERNEL_TABLE_SMS "${sms}" CACHE INTERNAL "Architectures in the kernel table")
  if(status)
    message(STATUS "gpulab: kernel table empty: ${status}")
    add_custom_command(OUTPUT "${table_cpp}"
      COMMAND gpulab-kernel-table-gen --output "${table_cpp}" --status "${status}"
      DEPENDS gpulab-kernel-table-gen
      COMMENT "Writing the (empty) kernel table"
      VERBATIM)
  else()
    # What the cuda backend compiles the files with (cmake/GpulabBackend.cmake), for the device
    # code: C++20, the backend's define, -lineinfo, and NDEBUG outside Debug builds (assert() in
    # a kernel costs registers).
    set(common_args --fatbin -std=c++20 -Xptxas=-v -lineinfo -DGPULAB_BACKEND_CUDA=1
        "$<$<NOT:$<CONFIG:Debug>>:-DNDEBUG>")
    if(CMAKE_CUDA_HOST_COMPILER)
      list(APPEND common_args -ccbin "${CMAKE_CUDA_HOST_COMPILER}")
    endif()
    foreach(sm IN LISTS sms)
      list(APPEND common_args -gencode "arch=compute_${sm},code=sm_${sm}")
    endforeach()
    foreach(dir IN LISTS ARG_INCLUDE_DIRS)
      list(APPEND common_args "-I${dir}")
    endforeach()
    foreach(dir IN LISTS ARG_SYSTEM_INCLUDE_DIRS)
      list(APPEND common_args -isystem "${dir}")
    endforeach()

    set(reports "")
    set(pairs "")
    list(JOIN sms "," sms_text)
    string(REPLACE "," ", sm_" sms_comment "sm_${sms_text}")
    foreach(abs IN LISTS sources)
      file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
      set(report "${out_dir}/${rel}.ptxas.txt")
      set(args ${common_args})
      # A lab's solution includes its interface header from labs/<lab>.
      if(rel MATCHES "^solutions/([^/]+)/")
        list(APPEND args "-I${PROJECT_SOURCE_DIR}/labs/${CMAKE_MATCH_1}")
      endif()
      # -MT names the report: the depfile's target must be the command's output.
      list(APPEND args -MD -MF "${report}.d" -MT "${report}")
      add_custom_command(OUTPUT "${report}"
        COMMAND ${CMAKE_COMMAND} "-DNVCC=${nvcc}" "-DSOURCE=${abs}" "-DREPORT=${report}"
                "-DARGS=${args}" -P "${_gpulab_kernel_table_script}"
        DEPENDS "${abs}" "${_gpulab_kernel_table_script}"
        DEPFILE "${report}.d"
        COMMENT "Reading ptxas's resource report of ${rel} (${sms_comment})"
        VERBATIM)
      list(APPEND reports "${report}")
      list(APPEND pairs "${rel}" "${report}")
    endforeach()
    add_custom_command(OUTPUT "${table_cpp}"
      COMMAND gpulab-kernel-table-gen --output "${table_cpp}" --architectures "${sms_text}"
              ${pairs}
      DEPENDS gpulab-kernel-table-gen ${reports}
      COMMENT "Writing the kernel table (${sms_comment})"
      VERBATIM)
    message(STATUS "gpulab: kernel table: ${sms_comment} from ptxas (${nvcc})")
  endif()

  add_library(${target} STATIC "${PROJECT_SOURCE_DIR}/framework/core/src/kernel_table.cpp"
              "${table_cpp}")
  target_link_libraries(${target} PUBLIC gpulab.core.host PRIVATE gpulab::warnings)
endfunction()
