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
# defines <target>, a host-only OBJECT library: the generated table, which registers itself with
# the lookups of gpulab.core.host (framework/core/src/kernel_table.cpp) when a program starts.
# Every backend program links it (cmake/GpulabBackend.cmake); a host-only program that reads the
# table links it itself. It always exists: without nvcc its table is empty and
# kernel_table_status() says why in one line.
#
# Besides SOURCES, each solutions/<lab>/*.cu holding a __global__ joins the table (scanned at
# configure time): those are the reference kernels of the labs. The student files in labs/ (and
# grading slots' submissions) do not: they change with every edit and may not compile with nvcc
# yet, and the `gpulab` command links the table. Each of their programs links a table of its own
# instead (gpulab_add_program_kernel_table, at the end of this file).
#
# How (per source file, then once):
#   1. kernel_table_ptxas.cmake runs `nvcc --fatbin -Xptxas=-v -gencode ...` for every
#      architecture at once and keeps the output in <build>/generated/kernel_table/<path>.ptxas.txt.
#      nvcc -MD writes a depfile, so a change to the .cu file or any header it includes reruns it.
#      --fatbin rather than -c: the device code and ptxas's report are the same, and it skips the
#      host compiler's pass over the file (about a third of nvcc's time here).
#   2. gpulab-kernel-table-gen (tools/kernel_table) parses every report and writes
#      <build>/generated/kernel_table/kernel_table_data.cpp; unexpected ptxas output fails the
#      build naming the file and the line.
# Cost: nvcc's front end (cicc) runs once per file and architecture and dominates. Measured on
# the project's 2-core machine (CUDA 13.0): kernels/attention/flash.cu (three fully unrolled flash
# kernels) is a fresh build's longest step, 213 s of wall time for the five architectures in the
# build of 2026-12-02, before lab 04's attention.cu (83 s), attention.cu (47 s) and gemm.cu
# (39 s). Only a clean build pays it all: an edited kernel file (or a header it includes) reruns
# its own step.
#
# Sets GPULAB_KERNEL_TABLE_SMS (cache, internal): the architectures the table has, empty when it
# is empty; tests/core passes it to the table's test.

# sm_70 (V100 in the spec database) is left out: CUDA 13 no longer compiles for it. The list is
# checked against `nvcc --list-gpu-code` at configure time and unsupported entries are dropped
# with a message. An empty list turns the table off (an empty table, with the reason).
set(GPULAB_KERNEL_TABLE_ARCHITECTURES "75;80;86;89;90" CACHE STRING
    "Architectures of the kernel table (ptxas figures per kernel), e.g. 75;80;86;89;90")

# The architectures of a program's own table (gpulab_add_program_kernel_table): nvcc compiles a
# student's file again for every edit and every graded submission, so only for the architecture
# the sim is graded on by default (H100's sm_90: gpulab::default_spec()); find_launched_kernel
# takes the nearest one for other specs. Entries not in GPULAB_KERNEL_TABLE_ARCHITECTURES are
# left out.
set(GPULAB_PROGRAM_KERNEL_TABLE_ARCHITECTURES "90" CACHE STRING
    "Architectures of the lab programs' own kernel tables (the student's files), e.g. 80;90")

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

# Sets <out_report> to the report of ptxas on <abs> (shown as <rel>) for the architectures <sms>
# (a list), written to <report> by a custom command: nvcc with the table's arguments
# (GPULAB_KERNEL_TABLE_ARGS) and <extra_args>. <program> ON: a program's own file
# (kernel_table_ptxas.cmake's PROGRAM).
function(_gpulab_ptxas_report out_report abs rel report sms program)
  get_property(nvcc GLOBAL PROPERTY GPULAB_KERNEL_TABLE_NVCC)
  get_property(args GLOBAL PROPERTY GPULAB_KERNEL_TABLE_ARGS)
  set(script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/kernel_table_ptxas.cmake")
  foreach(sm IN LISTS sms)
    list(APPEND args -gencode "arch=compute_${sm},code=sm_${sm}")
  endforeach()
  list(JOIN sms ", sm_" sms_comment)
  # -MT names the report: the depfile's target must be the command's output.
  list(APPEND args ${ARGN} -MD -MF "${report}.d" -MT "${report}")
  add_custom_command(OUTPUT "${report}"
    COMMAND ${CMAKE_COMMAND} "-DNVCC=${nvcc}" "-DSOURCE=${abs}" "-DREPORT=${report}"
            "-DARGS=${args}" "-DPROGRAM=${program}" -P "${script}"
    DEPENDS "${abs}" "${script}"
    DEPFILE "${report}.d"
    COMMENT "Reading ptxas's resource report of ${rel} (sm_${sms_comment})"
    VERBATIM)
  set(${out_report} "${report}" PARENT_SCOPE)
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
    list(JOIN sms ", sm_" sms_comment)
    set(sms_comment "sm_${sms_comment}")
    foreach(dir IN LISTS ARG_INCLUDE_DIRS)
      list(APPEND common_args "-I${dir}")
    endforeach()
    foreach(dir IN LISTS ARG_SYSTEM_INCLUDE_DIRS)
      list(APPEND common_args -isystem "${dir}")
    endforeach()

    list(JOIN sms "," sms_text)
    set_property(GLOBAL PROPERTY GPULAB_KERNEL_TABLE_NVCC "${nvcc}")
    set_property(GLOBAL PROPERTY GPULAB_KERNEL_TABLE_ARGS "${common_args}")
    set_property(GLOBAL PROPERTY GPULAB_KERNEL_TABLE_SMS "${sms}")
    set(reports "")
    set(pairs "")
    foreach(abs IN LISTS sources)
      file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
      set(args "")
      # A lab's solution includes its interface header from labs/<lab>.
      if(rel MATCHES "^solutions/([^/]+)/")
        list(APPEND args "-I${PROJECT_SOURCE_DIR}/labs/${CMAKE_MATCH_1}")
      endif()
      _gpulab_ptxas_report(report "${abs}" "${rel}" "${out_dir}/${rel}.ptxas.txt" "${sms}" OFF
                           ${args})
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

  # Its one object registers the table when the program starts (gpulab::register_kernel_table);
  # nothing refers to it, so it is linked as an object, never from an archive: every backend
  # program links it (cmake/GpulabBackend.cmake), as its own table's.
  add_library(${target} OBJECT "${table_cpp}")
  target_link_libraries(${target} PUBLIC gpulab.core.host PRIVATE gpulab::warnings)
endfunction()

# gpulab_add_program_kernel_table(<target> SOURCES <files.cu...> [INCLUDE_DIRS <dirs...>])
#
# The kernels of files one program is built from alone (a lab's student or submission files):
# defines <target>, an OBJECT library that registers their ptxas figures
# (gpulab::register_program_kernels) when the program starts, so the sim's modeled clock finds a
# student kernel's own registers and static shared memory (find_launched_kernel) and never a
# solution's of the same name. Link its objects into the program
# ($<TARGET_OBJECTS:<target>>): nothing references them. Where the project's table is empty (no
# nvcc), <target> is not defined. nvcc failing on a file does not fail the build: that file's
# kernels have no figures (kernel_source_failure), and the build prints nvcc's messages.
function(gpulab_add_program_kernel_table target)
  cmake_parse_arguments(ARG "" "" "SOURCES;INCLUDE_DIRS" ${ARGN})
  get_property(nvcc GLOBAL PROPERTY GPULAB_KERNEL_TABLE_NVCC)
  if(NOT nvcc)
    return()
  endif()
  # The program's architectures: GPULAB_PROGRAM_KERNEL_TABLE_ARCHITECTURES among the project
  # table's, else the newest of those.
  get_property(table_sms GLOBAL PROPERTY GPULAB_KERNEL_TABLE_SMS)
  set(sms "")
  foreach(sm IN LISTS GPULAB_PROGRAM_KERNEL_TABLE_ARCHITECTURES)
    if(sm IN_LIST table_sms)
      list(APPEND sms ${sm})
    endif()
  endforeach()
  if(NOT sms)
    list(GET table_sms -1 sms)
  endif()
  list(JOIN sms "," sms_text)
  set(out_dir "${PROJECT_BINARY_DIR}/generated/kernel_table/programs/${target}")
  set(args "")
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    list(APPEND args "-I${dir}")
  endforeach()
  set(reports "")
  set(pairs "")
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(name "${abs}" NAME)
    # The table shows a file by its path in the project where it is one (a grading slot's copy of
    # a submission is under the build folder), else by its absolute path.
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
    if(rel MATCHES "^\\.\\./")
      set(rel "${abs}")
    endif()
    _gpulab_ptxas_report(report "${abs}" "${rel}" "${out_dir}/${name}.ptxas.txt" "${sms}" ON
                         ${args})
    list(APPEND reports "${report}")
    list(APPEND pairs "${rel}" "${report}")
  endforeach()
  set(table_cpp "${out_dir}/program_kernels.cpp")
  add_custom_command(OUTPUT "${table_cpp}"
    COMMAND gpulab-kernel-table-gen --program --output "${table_cpp}" --architectures
            "${sms_text}" ${pairs}
    DEPENDS gpulab-kernel-table-gen ${reports}
    COMMENT "Writing the kernel table of ${target}"
    VERBATIM)
  add_library(${target} OBJECT "${table_cpp}")
  target_link_libraries(${target} PRIVATE gpulab.core.host gpulab::warnings)
endfunction()
