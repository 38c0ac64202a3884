# cmake -DNVCC=<nvcc> -DSOURCE=<file.cu> -DREPORT=<report.txt> "-DARGS=<nvcc arguments>"
#       -P kernel_table_ptxas.cmake
#
# One step of the kernel table (cmake/GpulabKernelTable.cmake): compiles one kernel source's
# device code with nvcc, whose ptxas prints a resource report for every kernel (ARGS holds
# -Xptxas=-v), and keeps that output in REPORT for gpulab-kernel-table-gen. nvcc prints nothing
# it could write to a file itself, hence this script. The compiled code is thrown away. A failing
# nvcc fails the build with its messages.
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
# One variable for both pipes keeps the lines in the order nvcc printed them.
execute_process(COMMAND "${NVCC}" ${ARGS} -o "${throwaway}" "${SOURCE}"
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE rc)
file(REMOVE "${throwaway}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kernel table: nvcc failed on ${SOURCE} (${rc}):\n${output}")
endif()
file(WRITE "${REPORT}" "${output}")
