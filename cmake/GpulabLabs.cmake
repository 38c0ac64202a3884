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
#     [LINK <targets...>] [LINK_BACKEND <pairs...>])
#
# For each variant (student: labs/<folder>; solution: solutions/<folder>, when it exists) and
# backend it builds
#   gpulab.<lab>.<variant>.<backend>         library pair of the student files (the interface
#                                            header's folder, labs/<folder>, is on the include path)
#   gpulab.<lab>.<variant>.run.<backend>     the lab's report (`gpulab run <lab>`)
#   gpulab.test.<lab>.<variant>.<backend>    the graded suites
# and adds one ctest test per graded test case, named
# gpulab.<lab>.<variant>.<backend>/<Suite>.<Name> and labelled <lab>, <variant>, <backend> and
# graded. Graded test cases are declared with GPULAB_GRADED_TEST(Suite, Name, points)
# (tests/labs/graded_test.hpp); the points are read from the sources here, so ctest knows every
# graded test without running a binary, and configuring fails unless a lab's points total 100.
#
# gpulab_write_lab_manifest() writes <build>/grading/manifest.json: every lab, its runs and graded
# tests with their points, for `gpulab run` and `gpulab grade`.

set(GPULAB_LAB_TEST_TIMEOUT 120 CACHE STRING "Timeout of each graded lab test case, in seconds")

function(_gpulab_scan_graded_tests out_names out_points)
  set(names "")
  set(points "")
  set(ws "[ \t\r\n]*")
  foreach(src IN LISTS ARGN)
    file(READ "${src}" content)
    string(REGEX MATCHALL
      "GPULAB_GRADED_TEST\\(${ws}[A-Za-z0-9_]+${ws},${ws}[A-Za-z0-9_]+${ws},${ws}[0-9]+${ws}\\)"
      found "${content}")
    foreach(match IN LISTS found)
      string(REGEX REPLACE
        "GPULAB_GRADED_TEST\\(${ws}([A-Za-z0-9_]+)${ws},${ws}([A-Za-z0-9_]+)${ws},${ws}([0-9]+)${ws}\\)"
        "\\1.\\2;\\3" parts "${match}")
      list(GET parts 0 name)
      list(GET parts 1 point)
      if(name IN_LIST names)
        message(FATAL_ERROR "${src}: graded test ${name} is declared twice")
      endif()
      list(APPEND names "${name}")
      list(APPEND points "${point}")
    endforeach()
  endforeach()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_points} "${points}" PARENT_SCOPE)
endfunction()

function(gpulab_add_lab lab)
  cmake_parse_arguments(ARG "" "DIR;TITLE;REPORT" "STUDENT_FILES;TESTS;LINK;LINK_BACKEND" ${ARGN})
  set(lab_dir "${PROJECT_SOURCE_DIR}/labs/${ARG_DIR}")
  set(variants student)
  if(EXISTS "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}")
    list(APPEND variants solution)
  endif()

  set(test_sources "")
  foreach(test IN LISTS ARG_TESTS)
    list(APPEND test_sources "${PROJECT_SOURCE_DIR}/tests/labs/${ARG_DIR}/${test}")
  endforeach()
  set(graded_names "")
  set(graded_points "")
  if(GPULAB_BUILD_TESTS)
    _gpulab_scan_graded_tests(graded_names graded_points ${test_sources})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${test_sources})
    set(total 0)
    foreach(point IN LISTS graded_points)
      math(EXPR total "${total} + ${point}")
    endforeach()
    if(NOT total EQUAL 100)
      message(FATAL_ERROR "${lab}: the graded tests in tests/labs/${ARG_DIR} total ${total} "
                          "points, not 100")
    endif()
  endif()

  set(runs_json "")
  foreach(variant IN LISTS variants)
    if(variant STREQUAL "student")
      set(variant_dir "${lab_dir}")
    else()
      set(variant_dir "${PROJECT_SOURCE_DIR}/solutions/${ARG_DIR}")
    endif()
    set(sources "")
    foreach(file IN LISTS ARG_STUDENT_FILES)
      if(NOT EXISTS "${variant_dir}/${file}")
        message(FATAL_ERROR "${lab}: ${variant_dir}/${file} is missing")
      endif()
      list(APPEND sources "${variant_dir}/${file}")
    endforeach()
    gpulab_add_backend_library(gpulab.${lab}.${variant}
      SOURCES ${sources}
      PUBLIC_INCLUDE_DIRS ${lab_dir}
      LINK ${ARG_LINK}
      LINK_BACKEND ${ARG_LINK_BACKEND})
    gpulab_add_backend_executable(gpulab.${lab}.${variant}.run
      SOURCES "${lab_dir}/${ARG_REPORT}"
      LINK_BACKEND gpulab.${lab}.${variant} gpulab.labkit)
    foreach(backend IN LISTS GPULAB_BACKENDS)
      target_compile_definitions(gpulab.${lab}.${variant}.run.${backend} PRIVATE
        GPULAB_LAB_ID="${lab}" GPULAB_LAB_TITLE="${ARG_TITLE}" GPULAB_LAB_VARIANT="${variant}")
    endforeach()

    if(GPULAB_BUILD_TESTS)
      gpulab_add_backend_executable(gpulab.test.${lab}.${variant}
        SOURCES ${test_sources} "${PROJECT_SOURCE_DIR}/tests/labs/graded_main.cpp"
        LINK GTest::gtest
        LINK_BACKEND gpulab.${lab}.${variant})
    endif()
    foreach(backend IN LISTS GPULAB_BACKENDS)
      set(tests_json "")
      if(GPULAB_BUILD_TESTS)
        set(exe gpulab.test.${lab}.${variant}.${backend})
        # graded_test.hpp, and test_device.hpp (GPULAB_REQUIRE_DEVICE: a test that needs a
        # device skips without one, and a skip earns nothing).
        target_include_directories(${exe} PRIVATE "${PROJECT_SOURCE_DIR}/tests/labs"
                                   "${PROJECT_SOURCE_DIR}/tests/framework")
        set(xml_dir "${PROJECT_BINARY_DIR}/grading/xml/${lab}.${variant}.${backend}")
        foreach(name point IN ZIP_LISTS graded_names graded_points)
          set(test "gpulab.${lab}.${variant}.${backend}/${name}")
          add_test(NAME "${test}"
            COMMAND ${exe} --gtest_filter=${name} --gtest_output=xml:${xml_dir}/${name}.xml)
          # graded_main.cpp exits 77 when the test skipped (e.g. no CUDA device): a skip is
          # never a pass.
          set_tests_properties("${test}" PROPERTIES
            LABELS "${lab};${variant};${backend};graded"
            SKIP_RETURN_CODE 77
            TIMEOUT ${GPULAB_LAB_TEST_TIMEOUT})
          if(tests_json)
            string(APPEND tests_json ",")
          endif()
          string(APPEND tests_json "{\"name\": \"${test}\", \"points\": ${point}}")
        endforeach()
      endif()
      if(runs_json)
        string(APPEND runs_json ",")
      endif()
      string(APPEND runs_json
        "\n      {\"variant\": \"${variant}\", \"backend\": \"${backend}\", "
        "\"runner\": \"gpulab.${lab}.${variant}.run.${backend}\", \"tests\": [${tests_json}]}")
    endforeach()
  endforeach()

  set_property(GLOBAL APPEND PROPERTY GPULAB_LAB_MANIFEST_ENTRIES
    "\n    {\"id\": \"${lab}\", \"title\": \"${ARG_TITLE}\", \"dir\": \"${ARG_DIR}\", \"runs\": [${runs_json}]}")
endfunction()

function(gpulab_write_lab_manifest)
  get_property(entries GLOBAL PROPERTY GPULAB_LAB_MANIFEST_ENTRIES)
  list(JOIN entries "," joined)
  file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/grading/manifest.json" CONTENT
    "{\n  \"schema_version\": 1,\n  \"source_dir\": \"${PROJECT_SOURCE_DIR}\",\n  \"labs\": [${joined}\n  ]\n}\n")
endfunction()
