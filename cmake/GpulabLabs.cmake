# Labs: one call per lab builds everything `gpulab run`, ctest and `gpulab grade` need.
#
#   gpulab_add_lab(<lab>                       e.g. lab01
#     DIR <folder>                             e.g. lab01_benchmarking (under labs/, solutions/,
#                                              tests/labs/)
#     TITLE <text>                             e.g. "Benchmarking a kernel correctly"
#     STUDENT_FILES <files...>                 the files with TODO(<lab>) regions, relative to the
#                                              folder; solutions/<folder>/ has the same names
#     REPORT <file>                            the instructor-owned report program in labs/<folder>
#     TESTS <files...>                         graded suites, relative to tests/labs/<folder>
#     [FORBIDDEN_CALLS <call=functions>...]    framework functions that do the lab's work, which
#                                              its code must not call: a demangled name prefix
#                                              and the lab functions whose work it does, e.g.
#                                              "gpulab::summarize(=summarize_samples"; a call
#                                              fails the graded tests covering them. Part of the
#                                              contract the lab's header states
#     [ALLOWED_CALLS <prefixes...>]            framework functions the lab's code may call
#                                              (demangled name prefixes, e.g.
#                                              "gpulab::flush_l2("), beside those every lab may
#                                              (GPULAB_EVERY_LAB_ALLOWED_CALLS) and the C/C++
#                                              library and CUDA runtime the grader allows
#                                              (framework/grader/.../code_checks.hpp)
#     [CUDA_CALLS <names...>]                  the CUDA runtime functions the lab's code may
#                                              call (e.g. "cudaGetLastError"); without it, all
#                                              of them. For labs whose tests judge what kernels
#                                              did: no copies to the host or pinned memory
#     [LINK <targets...>] [LINK_BACKEND <pairs...>])
#
# Hidden suites: every *.cpp in ${GPULAB_EXTRA_TESTS_DIR}/<folder>/ is graded with the public
# suites but never shipped to students (scripts/release-student leaves the folder out). In the
# instructor's tree a lab's public and hidden points total 100; in a tree without solutions/ (a
# student release) the public points alone may total less.
#
# For each variant and backend it builds
#   gpulab.<lab>.<variant>.<backend>         library pair of the student files (the interface
#                                            header's folder, labs/<folder>, is on the include path)
#   gpulab.<lab>.report.<backend>            the report program's code (REPORT), compiled once
#   gpulab.<lab>.<variant>.run.<backend>     the lab's report (`gpulab run <lab>`; not for
#                                            the submission variant; part of gpulab-programs)
#   gpulab.test.<lab>.objects.<backend>      the graded suites' code, compiled once per backend
#   gpulab.test.<lab>.<variant>.<backend>    the graded suites, linked with the variant's library
# The variants: student (labs/<folder>), solution (solutions/<folder>, when it exists) and, with
# tests, one submission variant per grading slot: the files `gpulab grade` copies from the code it
# grades into <build>/grading/slot<N>/submission/<folder>/ (not built by default; `gpulab grade`
# builds it). Slot 0's variant is named submission, slot N's submissionN. GPULAB_GRADING_SLOTS
# gradings of one build run at once (framework/grader/src/session.cpp takes a free slot).
#
# Each graded test case of the student, solution and slot 0 variants is one ctest test,
# gpulab.<lab>.<variant>.<backend>/<Suite>.<Name>,
# labelled <lab>, <variant>, <backend> and graded, run by gpulab-grade-runner (its own process
# group, a time limit, a verdict from exit status + gtest's XML + the premature-exit file; see
# framework/grader/runner.cpp). Graded test cases are declared with
# GPULAB_GRADED_TEST(Suite, Name, points, "functions", "what it checks")
# (tests/labs/graded_test.hpp); they are read from the sources here, so ctest knows every graded
# test without running a binary. The student variant's tests first build it (the fixture test
# gpulab.<lab>.student.<backend>/build), so they never run a program older than the student's
# files; where configuring saw no GPU its cuda tests are not listed.
#
# gpulab_write_lab_manifest() writes <build>/grading/manifest.json (schema_version 8): every lab,
# its student files, and per variant, slot and backend the folder of the student files, the
# report program, the graded suites' target, program, result folder and environment, and each
# graded test with its points, the lab functions it covers and what it checks. `gpulab run`
# starts the report programs it names; `gpulab grade` builds the targets and runs each graded test
# through the runner with the arguments ctest uses, then reads the verdicts from the result folder.

set(GPULAB_LAB_TEST_TIMEOUT 120 CACHE STRING "Timeout of each graded lab test case, in seconds")
set(GPULAB_GRADING_SLOTS 2 CACHE STRING
    "How many `gpulab grade` runs one build serves at once (each slot builds its own copy of a lab's student code)")
if(NOT GPULAB_GRADING_SLOTS MATCHES "^[1-9][0-9]?$")
  message(FATAL_ERROR "GPULAB_GRADING_SLOTS must be a number from 1 to 99, not \"${GPULAB_GRADING_SLOTS}\"")
endif()
# ctest's view of the grading slots, in the build folder (the test presets' resourceSpecFile): as
# many as the build serves, so ctest starts no more gradings at once than `gpulab grade` runs; a
# test that needs every slot asks for GPULAB_GRADING_SLOTS of them (tests/cli). Written here, not
# shipped with the tests: a student release has no tests/grading/.
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/ctest-resources.json" CONTENT [[{
  "version": {"major": 1, "minor": 0},
  "local": [{"grading_slots": [{"id": "build", "slots": @GPULAB_GRADING_SLOTS@}]}]
}
]] @ONLY)
find_program(GPULAB_FLOCK flock)  # util-linux: ctest's student builds take the build lock
set(GPULAB_EXTRA_TESTS_DIR "${PROJECT_SOURCE_DIR}/tests/hidden" CACHE PATH
    "Hidden graded suites, one folder per lab (<dir>/<lab folder>/*.cpp); not shipped to students")

# What a graded test sees in the sandbox (framework/grader/include/gpulab/grader/sandbox.hpp)
# beyond the system's programs and libraries and its own program (the runner shows that): nothing
# of the source or build trees, so none of the solutions, hidden suites, other grading slots'
# files or programs. A lab whose tests read files of the trees names them here (--visible), and
# folders inside those to show empty (--hide).
set(GPULAB_SANDBOX_VISIBLE "")
set(GPULAB_SANDBOX_HIDDEN "")
set(GPULAB_SANDBOX_ARGUMENTS "")
foreach(folder IN LISTS GPULAB_SANDBOX_VISIBLE)
  list(APPEND GPULAB_SANDBOX_ARGUMENTS --visible "${folder}")
endforeach()
foreach(folder IN LISTS GPULAB_SANDBOX_HIDDEN)
  list(APPEND GPULAB_SANDBOX_ARGUMENTS --hide "${folder}")
endforeach()

# `text` as a JSON string: quotes, backslashes and control characters escaped.
function(_gpulab_json_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\r" "\\r" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# Sets string member `key` of the JSON object in variable `var`.
function(_gpulab_json_set_string var key text)
  _gpulab_json_string(quoted "${text}")
  string(JSON value SET "${${var}}" "${key}" "${quoted}")
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

# Appends JSON `value` (text) to the JSON array in variable `var`.
function(_gpulab_json_append var value)
  string(JSON length LENGTH "${${var}}")
  string(JSON array SET "${${var}}" ${length} "${value}")
  set(${var} "${array}" PARENT_SCOPE)
endfunction()

# The blank-separated `names` (identifiers) as a JSON array of strings.
function(_gpulab_json_names out names)
  string(REGEX MATCHALL "[^ ]+" items "${names}")
  set(array "[]")
  foreach(item IN LISTS items)
    _gpulab_json_append(array "\"${item}\"")
  endforeach()
  set(${out} "${array}" PARENT_SCOPE)
endfunction()

# The folder of grading slot `slot`: its staged files, logs, verdicts and lock.
function(_gpulab_slot_dir out slot)
  set(${out} "${PROJECT_BINARY_DIR}/grading/slot${slot}" PARENT_SCOPE)
endfunction()

# Where an executable target of this project is written (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
function(_gpulab_program_path out target)
  get_target_property(dir ${target} RUNTIME_OUTPUT_DIRECTORY)
  if(NOT dir)
    message(FATAL_ERROR "${target} has no RUNTIME_OUTPUT_DIRECTORY")
  endif()
  set(${out} "${dir}/${target}${CMAKE_EXECUTABLE_SUFFIX}" PARENT_SCOPE)
endfunction()

# The graded tests declared in the sources ARGN: "Suite.Name" in out_names, and, in the same
# order, their points, the lab functions they cover (a string of names), what they check and
# whether they are counted (GPULAB_COUNTED_TEST: true or false).
function(_gpulab_scan_graded_tests out_names out_points out_covers out_checks out_counted)
  set(names "")
  set(counted "")
  set(points "")
  set(covers "")
  set(checks "")
  set(ws "[ \t\r\n]*")
  set(id "[A-Za-z0-9_]+")
  # "..." and what clang-format splits off; no quote, backslash, semicolon or square bracket
  # inside (CMake lists would split or join them).
  set(str "\"[^]\";\\[]*\"(${ws}\"[^]\";\\[]*\")*")
  set(declaration
      "GPULAB_(GRADED|COUNTED)_TEST${ws}\\(${ws}(${id})${ws},${ws}(${id})${ws},${ws}([0-9]+)${ws},${ws}(${str})${ws},${ws}(${str})${ws}\\)")
  foreach(src IN LISTS ARGN)
    file(READ "${src}" content)
    string(REGEX MATCHALL "GPULAB_(GRADED|COUNTED)_TEST${ws}\\(" uses "${content}")
    string(REGEX MATCHALL "${declaration}" found "${content}")
    list(LENGTH uses use_count)
    list(LENGTH found found_count)
    if(NOT use_count EQUAL found_count)
      message(FATAL_ERROR "${src}: ${use_count} graded test declarations, ${found_count} "
                          "of them in the form GPULAB_GRADED_TEST(Suite, Name, points, "
                          "\"functions\", \"what it checks\"), strings without quotes, "
                          "backslashes, semicolons or square brackets (tests/labs/graded_test.hpp)")
    endif()
    foreach(match IN LISTS found)
      string(REGEX MATCH "${declaration}" unused "${match}")
      if(CMAKE_MATCH_1 STREQUAL "COUNTED")
        set(is_counted true)
      else()
        set(is_counted false)
      endif()
      set(name "${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
      set(point "${CMAKE_MATCH_4}")
      set(fields "")
      foreach(text IN ITEMS "${CMAKE_MATCH_5}" "${CMAKE_MATCH_7}")
        string(REGEX REPLACE "\"${ws}\"" "" text "${text}")  # "a " "b" -> "a b"
        string(REGEX REPLACE "^\"(.*)\"$" "\\1" text "${text}")
        string(STRIP "${text}" text)
        if(text STREQUAL "")
          message(FATAL_ERROR "${src}: graded test ${name} names no functions or checks nothing")
        endif()
        list(APPEND fields "${text}")
      endforeach()
      list(GET fields 0 covered)
      list(GET fields 1 checked)
      if(name IN_LIST names)
        message(FATAL_ERROR "${src}: graded test ${name} is declared twice")
      endif()
      list(APPEND names "${name}")
      list(APPEND points "${point}")
      list(APPEND covers "${covered}")
      list(APPEND checks "${checked}")
      list(APPEND counted ${is_counted})
    endforeach()
  endforeach()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_points} "${points}" PARENT_SCOPE)
  set(${out_covers} "${covers}" PARENT_SCOPE)
  set(${out_checks} "${checks}" PARENT_SCOPE)
  set(${out_counted} "${counted}" PARENT_SCOPE)
endfunction()

# Fails configuring unless each of `names` (blank-separated) is a function the lab's solution
# files define; reads student_text, lab and ARG_DIR of gpulab_add_lab, its caller. Nothing is
# checked without solutions/ (a student release: the student's own files may be laid out
# otherwise, and a typo in the instructor's declarations was caught before the release).
function(_gpulab_check_lab_functions what names)
  if(student_text STREQUAL "")
    return()
  endif()
  string(REGEX MATCHALL "[^ ]+" functions "${names}")
  foreach(function IN LISTS functions)
    if(NOT student_text MATCHES "(^|\n)[^ \n/#][^\n]*[^A-Za-z0-9_:]${function}\\(")
      message(FATAL_ERROR "${lab}: ${what} ${function}, which no file of "
                          "solutions/${ARG_DIR} defines")
    endif()
  endforeach()
endfunction()

function(gpulab_add_lab lab)
  cmake_parse_arguments(ARG "" "DIR;TITLE;REPORT"
                        "STUDENT_FILES;TESTS;FORBIDDEN_CALLS;ALLOWED_CALLS;CUDA_CALLS;LINK;LINK_BACKEND"
                        ${ARGN})
  set(lab_dir "${PROJECT_SOURCE_DIR}/labs/${ARG_DIR}")
  set(variants student)
  if(EXISTS "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}")
    list(APPEND variants solution)
  endif()
  if(GPULAB_BUILD_TESTS)
    math(EXPR last_slot "${GPULAB_GRADING_SLOTS} - 1")
    foreach(slot RANGE ${last_slot})
      if(slot EQUAL 0)
        list(APPEND variants submission)
      else()
        list(APPEND variants submission${slot})
      endif()
    endforeach()
  endif()

  set(test_sources "")
  foreach(test IN LISTS ARG_TESTS)
    list(APPEND test_sources "${PROJECT_SOURCE_DIR}/tests/labs/${ARG_DIR}/${test}")
  endforeach()
  set(hidden_sources "")
  if(GPULAB_EXTRA_TESTS_DIR)
    file(GLOB hidden_sources CONFIGURE_DEPENDS "${GPULAB_EXTRA_TESTS_DIR}/${ARG_DIR}/*.cpp")
  endif()
  # Each lab function a test covers or a forbidden call does the work of is one the solution
  # files define (a name at the start of a line, the project's layout of a definition, followed
  # by its parameters).
  set(student_text "")
  if(EXISTS "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}")
    foreach(file IN LISTS ARG_STUDENT_FILES)
      file(READ "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}/${file}" text)
      string(APPEND student_text "${text}")
    endforeach()
  endif()

  set(graded_names "")
  set(graded_points "")
  set(graded_covers "")
  set(graded_checks "")
  set(graded_hidden "")
  if(GPULAB_BUILD_TESTS)
    _gpulab_scan_graded_tests(graded_names graded_points graded_covers graded_checks
                              graded_counted ${test_sources} ${hidden_sources})
    _gpulab_scan_graded_tests(hidden_names hidden_points hidden_covers hidden_checks
                              hidden_counted ${hidden_sources})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${test_sources}
                 ${hidden_sources})
    set(total 0)
    set(graded_tests_json "[]")  # as the manifest lists them, the same for every run of the lab
    foreach(name point covered checked counted IN ZIP_LISTS graded_names graded_points
            graded_covers graded_checks graded_counted)
      _gpulab_check_lab_functions("graded test ${name} covers" "${covered}")
      math(EXPR total "${total} + ${point}")
      if(name IN_LIST hidden_names)
        set(hidden true)
      else()
        set(hidden false)
      endif()
      list(APPEND graded_hidden ${hidden})
      _gpulab_json_names(covers_json "${covered}")
      _gpulab_json_string(checks_json "${checked}")
      _gpulab_json_append(graded_tests_json "{\"name\": \"${name}\", \"points\": ${point}, \"hidden\": ${hidden}, \"counted\": ${counted}, \"covers\": ${covers_json}, \"checks\": ${checks_json}}")
    endforeach()
    if(EXISTS "${PROJECT_SOURCE_DIR}/solutions" AND NOT total EQUAL 100)
      message(FATAL_ERROR "${lab}: the graded tests of tests/labs/${ARG_DIR} and hidden suites "
                          "total ${total} points, not 100")
    elseif(total GREATER 100 OR total EQUAL 0)
      message(FATAL_ERROR "${lab}: the graded tests total ${total} points (1 to 100 expected)")
    endif()
  endif()

  # The report program's code is the same for every variant: compiled once per backend, and
  # linked with the variant's library and a one-line source that names the variant
  # (labkit::report_variant, for GPULAB_LAB_INFO).
  foreach(backend IN LISTS GPULAB_BACKENDS)
    set(report gpulab.${lab}.report.${backend})
    add_library(${report} OBJECT "${lab_dir}/${ARG_REPORT}")
    _gpulab_backend_configure(${report} ${backend} LINK_BACKEND gpulab.labkit ${ARG_LINK_BACKEND}
                              LINK ${ARG_LINK})
    target_include_directories(${report} PRIVATE "${lab_dir}")
    target_compile_definitions(${report} PRIVATE GPULAB_LAB_ID="${lab}"
                               GPULAB_LAB_TITLE="${ARG_TITLE}")
  endforeach()

  # The graded suites' code is the same for every variant: compiled once per backend, and linked
  # with each variant's library (a grading slot's first grading only links).
  if(GPULAB_BUILD_TESTS)
    foreach(backend IN LISTS GPULAB_BACKENDS)
      set(objects gpulab.test.${lab}.objects.${backend})
      add_library(${objects} OBJECT ${test_sources} ${hidden_sources}
                  "${PROJECT_SOURCE_DIR}/tests/labs/graded_main.cpp")
      _gpulab_backend_configure(${objects} ${backend} LINK GTest::gtest gpulab.grader.lockdown
                                ${ARG_LINK} LINK_BACKEND ${ARG_LINK_BACKEND})
      # graded_test.hpp, and test_device.hpp (GPULAB_REQUIRE_DEVICE: a test that needs a
      # device skips without one, and a skip earns nothing).
      target_include_directories(${objects} PRIVATE "${lab_dir}" "${PROJECT_SOURCE_DIR}/tests/labs"
                                 "${PROJECT_SOURCE_DIR}/tests/support")
    endforeach()
  endif()

  set(runs "[]")
  foreach(variant IN LISTS variants)
    set(slot 0)
    if(variant STREQUAL "student")
      set(kind student)
      set(variant_dir "${lab_dir}")
    elseif(variant STREQUAL "solution")
      set(kind solution)
      set(variant_dir "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}")
    else()
      set(kind submission)
      string(REGEX REPLACE "^submission" "" slot "${variant}")
      if(slot STREQUAL "")
        set(slot 0)
      endif()
      _gpulab_slot_dir(slot_dir ${slot})
      set(variant_dir "${slot_dir}/submission/${ARG_DIR}")
    endif()
    set(sources "")
    foreach(file IN LISTS ARG_STUDENT_FILES)
      if(kind STREQUAL "submission")
        # `gpulab grade` stages the files it grades here. Until it does (or after a clean), the
        # stub, staged the same way by the same code; a file already staged is kept.
        add_custom_command(OUTPUT "${variant_dir}/${file}"
          COMMAND gpulab-grade-runner --stage-stub "${lab_dir}/${file}" "${variant_dir}/${file}"
          COMMENT "Staging the stub labs/${ARG_DIR}/${file} for gpulab grade"
          VERBATIM)
      elseif(NOT EXISTS "${variant_dir}/${file}")
        message(FATAL_ERROR "${lab}: ${variant_dir}/${file} is missing")
      endif()
      list(APPEND sources "${variant_dir}/${file}")
    endforeach()
    gpulab_add_backend_library(gpulab.${lab}.${variant}
      SOURCES ${sources}
      PUBLIC_INCLUDE_DIRS ${lab_dir}
      LINK ${ARG_LINK}
      LINK_BACKEND ${ARG_LINK_BACKEND})
    if(TARGET gpulab.${lab}.${variant}.sim)
      # On sim, lab code's host side must not reach device memory (docs/sim.md): its loads and
      # stores are checked by the counting callbacks, and the C library's memcpy family, which
      # is not instrumented, is renamed to the sim's checked versions (host_memory.cpp).
      set(checked "")
      foreach(function IN ITEMS memcpy memmove memset memcmp __memcpy_chk __memmove_chk
                                __memset_chk)
        list(APPEND checked --redefine-sym ${function}=gpulab_sim_checked_${function})
      endforeach()
      add_custom_command(TARGET gpulab.${lab}.${variant}.sim POST_BUILD
        COMMAND ${CMAKE_OBJCOPY} ${checked} $<TARGET_FILE:gpulab.${lab}.${variant}.sim>
        VERBATIM)
    endif()
    # On sim, the modeled clock takes the registers and static shared memory of the variant's
    # own kernels from ptxas (cmake/GpulabKernelTable.cmake); its programs link the table.
    set(program_kernels "")
    set(cu_sources "${sources}")
    list(FILTER cu_sources INCLUDE REGEX "\\.cu$")
    if(cu_sources AND NOT kind STREQUAL "solution" AND "sim" IN_LIST GPULAB_BACKENDS)
      gpulab_add_program_kernel_table(gpulab.${lab}.${variant}.kernel_table
        SOURCES ${cu_sources}
        INCLUDE_DIRS "${lab_dir}")
      if(TARGET gpulab.${lab}.${variant}.kernel_table)
        set(program_kernels gpulab.${lab}.${variant}.kernel_table)
        if(kind STREQUAL "submission")
          set_target_properties(${program_kernels} PROPERTIES EXCLUDE_FROM_ALL ON)
        endif()
      endif()
    endif()
    if(EXISTS "${lab_dir}/${lab}.hpp")
      # `gpulab grade` compiles the student files again for every submission. Most of that time
      # is parsing the lab's header and the CUDA runtime's (2.0 of 2.1 s for lab01's file on
      # sim), so they are parsed once, into a precompiled header, that every variant uses alike.
      # (nvcc compiles .cu files without it: CMake has no precompiled headers for CUDA.)
      # The grading slots reuse the student variant's (built with the student's own build; GCC
      # takes a header precompiled with -g into a compile without it, as the slots compile).
      foreach(backend IN LISTS GPULAB_BACKENDS)
        if(kind STREQUAL "submission")
          target_precompile_headers(gpulab.${lab}.${variant}.${backend} REUSE_FROM
                                    gpulab.${lab}.student.${backend})
        else()
          target_precompile_headers(gpulab.${lab}.${variant}.${backend} PRIVATE
                                    <cuda_runtime.h> "${lab_dir}/${lab}.hpp")
        endif()
      endforeach()
    endif()
    if(NOT kind STREQUAL "solution")
      # Student code: its warnings are never errors (cmake/GpulabWarnings.cmake).
      foreach(backend IN LISTS GPULAB_BACKENDS)
        set_target_properties(gpulab.${lab}.${variant}.${backend} PROPERTIES
                              GPULAB_STUDENT_CODE ON)
        if(kind STREQUAL "submission")
          # Compiled for every grading, and never debugged there: line tables only (-g1), which
          # the sim's reports name the student's lines from (docs/sim.md, 6.4), not the full
          # debug information (GCC's code is the same with and without; lab02's file on sim
          # 1.04 s with -g0, 1.13 s with -g1, more with -g). Students debug their own build (the
          # student variant) with -g.
          target_compile_options(gpulab.${lab}.${variant}.${backend} PRIVATE
                                 $<$<COMPILE_LANGUAGE:CXX>:-g1>)
        endif()
      endforeach()
    endif()
    if(NOT kind STREQUAL "submission")
      set(variant_source "${PROJECT_BINARY_DIR}/generated/labs/${variant}_variant.cpp")
      file(CONFIGURE OUTPUT "${variant_source}" CONTENT [[
// Generated by cmake/GpulabLabs.cmake: the code a lab's report program is linked with.
#include "gpulab/labkit/report_variant.hpp"

const char* gpulab::labkit::report_variant() noexcept {
  return "@variant@";
}
]] @ONLY)
      gpulab_add_backend_executable(gpulab.${lab}.${variant}.run
        SOURCES "${variant_source}"
        LINK_BACKEND gpulab.${lab}.${variant} gpulab.labkit)
      if(program_kernels)
        target_sources(gpulab.${lab}.${variant}.run.sim PRIVATE
                       $<TARGET_OBJECTS:${program_kernels}>)
      endif()
      foreach(backend IN LISTS GPULAB_BACKENDS)
        target_sources(gpulab.${lab}.${variant}.run.${backend} PRIVATE
                       $<TARGET_OBJECTS:gpulab.${lab}.report.${backend}>)
        set_property(GLOBAL APPEND PROPERTY GPULAB_PROGRAMS gpulab.${lab}.${variant}.run.${backend})
      endforeach()
    endif()

    if(GPULAB_BUILD_TESTS)
      gpulab_add_backend_executable(gpulab.test.${lab}.${variant}
        LINK GTest::gtest gpulab.grader.lockdown
        LINK_BACKEND gpulab.${lab}.${variant})
      foreach(backend IN LISTS GPULAB_BACKENDS)
        target_sources(gpulab.test.${lab}.${variant}.${backend} PRIVATE
                       $<TARGET_OBJECTS:gpulab.test.${lab}.objects.${backend}>)
      endforeach()
      if(program_kernels)
        target_sources(gpulab.test.${lab}.${variant}.sim PRIVATE
                       $<TARGET_OBJECTS:${program_kernels}>)
      endif()
    endif()
    foreach(backend IN LISTS GPULAB_BACKENDS)
      set(run "{}")
      _gpulab_json_set_string(run variant "${kind}")
      string(JSON run SET "${run}" slot ${slot})
      _gpulab_json_set_string(run backend "${backend}")
      _gpulab_json_set_string(run files_dir "${variant_dir}")
      if(kind STREQUAL "submission")
        # Built by `gpulab grade` only.
        set_target_properties(gpulab.${lab}.${variant}.${backend} PROPERTIES EXCLUDE_FROM_ALL ON)
        set(report "")
      else()
        _gpulab_program_path(report gpulab.${lab}.${variant}.run.${backend})
      endif()
      _gpulab_json_set_string(run report "${report}")
      # The student files' library: `gpulab grade` checks its object code (code_checks.hpp).
      set(library gpulab.${lab}.${variant}.${backend})
      _gpulab_json_set_string(run library_target "${library}")
      _gpulab_json_set_string(run library "${CMAKE_CURRENT_BINARY_DIR}/${CMAKE_STATIC_LIBRARY_PREFIX}${library}${CMAKE_STATIC_LIBRARY_SUFFIX}")
      set(tests "[]")
      set(environment "{}")
      set(exe "")
      set(exe_path "")
      set(out_dir "")
      if(GPULAB_BUILD_TESTS)
        set(tests "${graded_tests_json}")
        set(exe gpulab.test.${lab}.${variant}.${backend})
        _gpulab_program_path(exe_path ${exe})
        if(kind STREQUAL "submission")
          set_target_properties(${exe} PROPERTIES EXCLUDE_FROM_ALL ON)
          set(out_dir "${slot_dir}/results/${lab}.${variant}.${backend}")
        else()
          set(out_dir "${PROJECT_BINARY_DIR}/grading/results/${lab}.${variant}.${backend}")
        endif()
        # On sim, events read the modeled clock (docs/sim.md): timings are modeled from the
        # counted traffic, the same on a busy machine as on an idle one, so a grade does not
        # depend on the load of the grading machine.
        set(env_pairs "")
        if(backend STREQUAL "sim" AND GPULAB_SIM_COUNTING)
          set(env_pairs "GPULAB_SIM_CLOCK=modeled")
        endif()
        foreach(pair IN LISTS env_pairs)
          string(REGEX MATCH "^([^=]+)=(.*)$" unused "${pair}")
          _gpulab_json_set_string(environment "${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
        endforeach()
        math(EXPR backstop "${GPULAB_LAB_TEST_TIMEOUT} + 30")
        # ctest's student tests never run a program older than the student's files: the
        # variant's build comes first (a fixture each of its tests requires), one build at a time
        # in the build folder (grading/build.lock, which gpulab grade, check and run take too).
        # On a machine without a GPU the cuda ones could not run there: ctest does not list them.
        set(in_ctest TRUE)
        if(kind STREQUAL "student")
          if(backend STREQUAL "cuda" AND NOT GPULAB_GPU_SEEN)
            set(in_ctest FALSE)
          else()
            set(build_test "gpulab.${lab}.student.${backend}/build")
            set(lock_command "")
            if(GPULAB_FLOCK)
              set(lock_command ${GPULAB_FLOCK} "${PROJECT_BINARY_DIR}/grading/build.lock")
            endif()
            add_test(NAME "${build_test}"
              COMMAND ${lock_command} ${CMAKE_COMMAND} --build "${PROJECT_BINARY_DIR}" --target ${exe})
            set_tests_properties("${build_test}" PROPERTIES
              LABELS "${lab};student;${backend};build"
              FIXTURES_SETUP "gpulab.${lab}.student.${backend}.built")
          endif()
        endif()
        # Without a GPU the cuda program's graded cases would each start the runner only to skip:
        # the program runs whole instead, as a cuda unit test does (cmake/GpulabBackend.cmake).
        if(backend STREQUAL "cuda" AND NOT GPULAB_GPU_SEEN AND in_ctest AND slot EQUAL 0)
          list(JOIN graded_names ":" filter)
          _gpulab_add_whole_program_test("gpulab.${lab}.${variant}.${backend}" ${exe}
            "${lab};${variant};${backend};graded" "--gtest_filter=${filter}")
          set(in_ctest FALSE)
        endif()
        foreach(name IN LISTS graded_names)
          if(slot GREATER 0 OR NOT in_ctest)
            continue()  # graded by `gpulab grade` only; ctest lists slot 0's
          endif()
          set(test "gpulab.${lab}.${variant}.${backend}/${name}")
          add_test(NAME "${test}"
            COMMAND gpulab-grade-runner --test ${name} --out ${out_dir}
                    --timeout ${GPULAB_LAB_TEST_TIMEOUT} --sandbox auto
                    ${GPULAB_SANDBOX_ARGUMENTS} -- $<TARGET_FILE:${exe}>)
          # The runner exits 77 when the test skipped (e.g. no CUDA device): a skip is never a
          # pass. ctest's own timeout is only a backstop behind the runner's.
          set_tests_properties("${test}" PROPERTIES
            LABELS "${lab};${variant};${backend};graded"
            SKIP_RETURN_CODE 77
            TIMEOUT ${backstop})
          if(env_pairs)
            set_tests_properties("${test}" PROPERTIES ENVIRONMENT "${env_pairs}")
          endif()
          if(kind STREQUAL "student")
            set_tests_properties("${test}" PROPERTIES
              FIXTURES_REQUIRED "gpulab.${lab}.student.${backend}.built")
          endif()
          if(backend STREQUAL "cuda")
            # The graded tests time kernels; two test processes on one GPU take turns on it, and
            # each would time the other's work too. ctest -j runs them one at a time.
            set_tests_properties("${test}" PROPERTIES RESOURCE_LOCK gpulab_gpu)
          endif()
        endforeach()
      endif()
      _gpulab_json_set_string(run tests_target "${exe}")
      _gpulab_json_set_string(run tests_program "${exe_path}")
      _gpulab_json_set_string(run results_dir "${out_dir}")
      string(JSON run SET "${run}" environment "${environment}")
      string(JSON run SET "${run}" tests "${tests}")
      _gpulab_json_append(runs "${run}")
    endforeach()
  endforeach()

  set(entry "{}")
  _gpulab_json_set_string(entry id "${lab}")
  _gpulab_json_set_string(entry title "${ARG_TITLE}")
  _gpulab_json_set_string(entry dir "${ARG_DIR}")
  set(files "[]")
  foreach(file IN LISTS ARG_STUDENT_FILES)
    _gpulab_json_string(quoted "${file}")
    _gpulab_json_append(files "${quoted}")
  endforeach()
  string(JSON entry SET "${entry}" student_files "${files}")
  set(forbidden "[]")
  foreach(item IN LISTS ARG_FORBIDDEN_CALLS)
    if(NOT item MATCHES "^([^=]+)=([A-Za-z0-9_ ]+)$")
      message(FATAL_ERROR "${lab}: FORBIDDEN_CALLS \"${item}\" is not \"<name prefix>=<lab "
                          "functions whose work it does>\"")
    endif()
    set(call "${CMAKE_MATCH_1}")
    set(does "${CMAKE_MATCH_2}")
    _gpulab_check_lab_functions("FORBIDDEN_CALLS ${call} does the work of" "${does}")
    # A call must fail some public test, or a student release (no hidden suites) would reject
    # the whole lab where the instructor's grading rejects a few tests.
    string(REGEX MATCHALL "[^ ]+" functions "${does}")
    foreach(function IN LISTS functions)
      set(covered FALSE)
      foreach(covers hidden IN ZIP_LISTS graded_covers graded_hidden)
        if(NOT hidden AND " ${covers} " MATCHES " ${function} ")
          set(covered TRUE)
        endif()
      endforeach()
      if(GPULAB_BUILD_TESTS AND NOT covered)
        message(FATAL_ERROR "${lab}: FORBIDDEN_CALLS ${call} does the work of ${function}, which "
                            "no public graded test covers")
      endif()
    endforeach()
    _gpulab_json_string(call_json "${call}")
    _gpulab_json_names(does_json "${does}")
    _gpulab_json_append(forbidden "{\"call\": ${call_json}, \"does\": ${does_json}}")
  endforeach()
  string(JSON entry SET "${entry}" forbidden_calls "${forbidden}")
  set(allowed "[]")
  foreach(item IN LISTS GPULAB_EVERY_LAB_ALLOWED_CALLS ARG_ALLOWED_CALLS)
    _gpulab_json_string(item_json "${item}")
    _gpulab_json_append(allowed "${item_json}")
  endforeach()
  string(JSON entry SET "${entry}" allowed_calls "${allowed}")
  set(cuda_calls "[]")
  foreach(item IN LISTS ARG_CUDA_CALLS)
    if(NOT item MATCHES "^cuda[A-Za-z0-9_]+$")
      message(FATAL_ERROR "${lab}: CUDA_CALLS names CUDA runtime functions (cuda...), not \"${item}\"")
    endif()
    _gpulab_json_append(cuda_calls "\"${item}\"")
  endforeach()
  string(JSON entry SET "${entry}" cuda_calls "${cuda_calls}")
  string(JSON entry SET "${entry}" runs "${runs}")
  # A JSON object holds no ';' outside strings, and its strings none (paths with ';' do not build).
  set_property(GLOBAL APPEND PROPERTY GPULAB_LAB_MANIFEST_ENTRIES "${entry}")
endfunction()

function(gpulab_write_lab_manifest)
  get_property(entries GLOBAL PROPERTY GPULAB_LAB_MANIFEST_ENTRIES)
  set(labs "[]")
  foreach(entry IN LISTS entries)
    _gpulab_json_append(labs "${entry}")
  endforeach()
  set(manifest "{}")
  string(JSON manifest SET "${manifest}" schema_version 8)
  _gpulab_json_set_string(manifest source_dir "${PROJECT_SOURCE_DIR}")
  _gpulab_json_set_string(manifest build_dir "${PROJECT_BINARY_DIR}")
  _gpulab_json_set_string(manifest extra_tests_dir "${GPULAB_EXTRA_TESTS_DIR}")
  string(JSON manifest SET "${manifest}" test_timeout_s ${GPULAB_LAB_TEST_TIMEOUT})
  _gpulab_program_path(runner gpulab-grade-runner)
  _gpulab_json_set_string(manifest grade_runner "${runner}")
  _gpulab_json_set_string(manifest nm "${CMAKE_NM}")
  _gpulab_json_set_string(manifest objdump "${CMAKE_OBJDUMP}")
  # The compilers' own include folders (and the CUDA toolkit's): the system headers lab code may
  # include beside the lab's folder and the project's public headers (code_checks.hpp).
  set(system_dirs ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
  if(GPULAB_HAVE_CUDA)
    list(APPEND system_dirs ${CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES} ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  list(REMOVE_DUPLICATES system_dirs)
  set(array "[]")
  foreach(folder IN LISTS system_dirs)
    _gpulab_json_string(quoted "${folder}")
    _gpulab_json_append(array "${quoted}")
  endforeach()
  string(JSON manifest SET "${manifest}" system_include_dirs "${array}")
  set(sandbox "{}")
  foreach(key IN ITEMS visible hidden)
    string(TOUPPER "${key}" upper)
    set(array "[]")
    foreach(folder IN LISTS GPULAB_SANDBOX_${upper})
      _gpulab_json_string(quoted "${folder}")
      _gpulab_json_append(array "${quoted}")
    endforeach()
    string(JSON sandbox SET "${sandbox}" ${key} "${array}")
  endforeach()
  string(JSON manifest SET "${manifest}" sandbox "${sandbox}")
  set(slots "[]")
  math(EXPR last_slot "${GPULAB_GRADING_SLOTS} - 1")
  foreach(slot RANGE ${last_slot})
    _gpulab_slot_dir(dir ${slot})
    _gpulab_json_string(quoted "${dir}")
    _gpulab_json_append(slots "${quoted}")
  endforeach()
  string(JSON manifest SET "${manifest}" grading_slots "${slots}")
  string(JSON manifest SET "${manifest}" labs "${labs}")
  # Rewritten only when it changed, so what depends on it does not rerun for nothing.
  file(WRITE "${PROJECT_BINARY_DIR}/grading/manifest.json.new" "${manifest}\n")
  file(COPY_FILE "${PROJECT_BINARY_DIR}/grading/manifest.json.new"
       "${PROJECT_BINARY_DIR}/grading/manifest.json" ONLY_IF_DIFFERENT)
  file(REMOVE "${PROJECT_BINARY_DIR}/grading/manifest.json.new")
endfunction()
