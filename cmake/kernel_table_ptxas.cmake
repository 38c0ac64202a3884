# cmake -DNVCC=<nvcc> -DSOURCE=<file.cu> -DREPORT=<report.txt> "-DARGS=<nvcc arguments>"
#       [-DPROGRAM=ON] -P kernel_table_ptxas.cmake
#
# One step of the kernel table (cmake/GpulabKernelTable.cmake): compiles one kernel source's
# device code with nvcc, whose ptxas prints a resource report for every kernel (ARGS holds
# -Xptxas=-v), and keeps that output in REPORT for gpulab-kernel-table-gen. nvcc prints nothing
# it could write to a file itself, hence this script. The compiled code is thrown away. A failing
# nvcc fails the build with its messages, unless PROGRAM (a program's own file, a student's: code
# the sim compiles need not compile with nvcc yet): then the report holds one line,
# gpulab-kernel-table-gen's failure marker (tools/kernel_table/ptxas_report.hpp) and nvcc's
# first error, nvcc's messages are kept in REPORT.log, and one line in a compiler's warning format
# says so. A program's file without the word
# __global__ has no kernel: its report is empty, and nvcc does not run (most lab files: a student
# build and every graded submission would pay for it).
foreach(var IN ITEMS NVCC SOURCE REPORT ARGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "kernel_table_ptxas.cmake: ${var} is not set")
  endif()
endforeach()

# Ninja makes the folders of a command's outputs, Makefiles do not; nvcc writes its depfile and
# the throwaway fatbin there.
get_filename_component(report_dir "${REPORT}" DIRECTORY)
file(MAKE_DIRECTORY "${report_dir}")
set(throwaway "${REPORT}.fatbin")
# The depfile of a report nvcc did not write (see below): it depends on the source alone. Make
# syntax: a space in a path is escaped.
string(REPLACE " " "\\ " depfile_report "${REPORT}")
string(REPLACE " " "\\ " depfile_source "${SOURCE}")
set(depfile_line "${depfile_report}: ${depfile_source}\n")
if(PROGRAM)
  file(READ "${SOURCE}" text)
  if(NOT text MATCHES "__global__")
    file(WRITE "${REPORT}" "")
    file(WRITE "${REPORT}.d" "${depfile_line}")
    return()
  endif()
endif()
# One variable for both pipes keeps the lines in the order nvcc printed them.
execute_process(COMMAND "${NVCC}" ${ARGS} -o "${throwaway}" "${SOURCE}"
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE rc)
file(REMOVE "${throwaway}")
if(NOT rc EQUAL 0)
  if(NOT PROGRAM)
    message(FATAL_ERROR "kernel table: nvcc failed on ${SOURCE} (${rc}):\n${output}")
  endif()
  string(REGEX MATCH "[^\n]*error[^\n]*" first_error "${output}")
  if(NOT first_error)
    string(REGEX MATCH "[^\n]+" first_error "${output}")
  endif()
  if(NOT first_error)
    set(first_error "exit status ${rc}")
  endif()
  # One line in a compiler's warning format, which `gpulab check` and `gpulab grade` show with
  # the build's warnings; nvcc's messages go to a log beside the report.
  file(WRITE "${REPORT}.log" "${output}")
  message(NOTICE "${SOURCE}: warning: nvcc cannot compile this file, so on a GPU it would not "
                 "build and the sim's modeled clock assumes the registers of its kernels. nvcc: "
                 "${first_error} (all of nvcc's messages: ${REPORT}.log)")
  file(WRITE "${REPORT}" "gpulab-kernel-table: nvcc failed: ${first_error}\n")
  if(NOT EXISTS "${REPORT}.d")
    file(WRITE "${REPORT}.d" "${depfile_line}")
  endif()
  return()
endif()
file(WRITE "${REPORT}" "${output}")
