# cmake -DNVCC=<nvcc> -DSCRIPT=<cmake/kernel_table_ptxas.cmake> -DWORK=<folder> -P <this file>
#
# The kernel table's nvcc step (cmake/kernel_table_ptxas.cmake) for a program's own files (a
# student's, PROGRAM=ON): a file nvcc rejects (a host function called from a kernel, which the
# sim's host compiler accepts) gives a failure report, nvcc's messages in a log and one line in a
# compiler's warning format (which `gpulab check` and `gpulab grade` show), and does not fail; the
# same file fails the project's table; a file without __global__ gets an empty report without
# running nvcc; the depfiles it writes escape the spaces of their paths. Run by ctest
# (tests/core/CMakeLists.txt).
foreach(var IN ITEMS NVCC SCRIPT WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "kernel_table_ptxas_test.cmake: ${var} is not set")
  endif()
endforeach()

set(dir "${WORK}/with space")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${dir}")
file(WRITE "${dir}/host_call.cu" [[
int host_only() { return 1; }
__global__ void calls_the_host(int* out) { *out = host_only(); }
]])
file(WRITE "${dir}/no_kernels.cu" [[
int not_a_kernel(int x) { return x + 1; }
]])
set(args --fatbin -Xptxas=-v -gencode arch=compute_90,code=sm_90)

function(run_step out_rc out_output source report program nvcc)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" "-DNVCC=${nvcc}" "-DSOURCE=${source}" "-DREPORT=${report}"
            "-DARGS=${args}" "-DPROGRAM=${program}" -P "${SCRIPT}"
    OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE rc)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

# 1. A student's file nvcc rejects.
set(report "${dir}/host_call.cu.ptxas.txt")
run_step(rc output "${dir}/host_call.cu" "${report}" ON "${NVCC}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a program's file nvcc rejects failed the step (${rc}):\n${output}")
endif()
string(FIND "${output}" "host_call.cu: warning: nvcc cannot compile this file" at)
if(at EQUAL -1)
  message(FATAL_ERROR "no warning line for the file nvcc rejects:\n${output}")
endif()
file(READ "${report}" text)
if(NOT text MATCHES "^gpulab-kernel-table: nvcc failed: [^\n]*error")
  message(FATAL_ERROR "the report is not a failure report with nvcc's error:\n${text}")
endif()
if(NOT EXISTS "${report}.log")
  message(FATAL_ERROR "nvcc's messages were not kept in ${report}.log")
endif()
file(READ "${report}.d" depfile)
if(NOT depfile MATCHES "with\\\\ space/host_call\\.cu")
  message(FATAL_ERROR "the depfile does not escape the space of its path:\n${depfile}")
endif()

# 2. The same file in the project's table fails the build.
run_step(rc output "${dir}/host_call.cu" "${dir}/project.ptxas.txt" OFF "${NVCC}")
if(rc EQUAL 0)
  message(FATAL_ERROR "a project file nvcc rejects did not fail the step:\n${output}")
endif()

# 3. A file without kernels: an empty report, and nvcc not run (this nvcc does not exist).
set(report "${dir}/no_kernels.cu.ptxas.txt")
run_step(rc output "${dir}/no_kernels.cu" "${report}" ON "${dir}/no-such-nvcc")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a file without kernels ran nvcc or failed (${rc}):\n${output}")
endif()
file(READ "${report}" text)
if(NOT text STREQUAL "")
  message(FATAL_ERROR "a file without kernels has a non-empty report:\n${text}")
endif()
message(STATUS "kernel_table_ptxas_test: all checks passed")
