# gpulab_discover_tests(<target> [TEST_PREFIX p] [TEST_FILTER f] PROPERTIES <NAME> <value> ...):
# gtest_discover_tests with the cases listed when ctest starts (PRE_TEST) within the project's
# discovery timeout (GPULAB_TEST_DISCOVERY_TIMEOUT); the one way this project discovers tests.
# CMake 3.25 writes the properties into the test file unquoted, so a list value (LABELS "a;b")
# becomes two words there and shifts every property after it: the test silently loses its label,
# time limit and resource groups. One value per property, checked here.
#
# gpulab_property_pairs_problem(<out> <NAME> <value> ...): <out> is empty when the arguments are
# NAME value pairs (names in capitals), else what is wrong. Tested by
# tests/discover_properties_test.cmake (cmake -P: this file defines functions only).

function(gpulab_property_pairs_problem out)
  list(LENGTH ARGN count)
  set(problem "")
  set(index 0)
  while(index LESS count AND NOT problem)
    list(GET ARGN ${index} name)
    if(NOT name MATCHES "^[A-Z_]+$")
      set(problem "\"${name}\" where a property's name belongs")
    endif()
    math(EXPR index "${index} + 2")
  endwhile()
  math(EXPR odd "${count} % 2")
  if(odd AND NOT problem)
    set(problem "an odd number of words")
  endif()
  if(problem)
    list(JOIN ARGN " " words)
    string(CONCAT problem "PROPERTIES must be NAME value pairs with one value each (no list such "
                          "as LABELS \"a;b\"): ${problem} in \"${words}\"")
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

function(gpulab_discover_tests target)
  cmake_parse_arguments(ARG "" "" "PROPERTIES" ${ARGN})
  gpulab_property_pairs_problem(problem ${ARG_PROPERTIES})
  if(problem)
    message(FATAL_ERROR "gpulab_discover_tests(${target}): ${problem}")
  endif()
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT ${GPULAB_TEST_DISCOVERY_TIMEOUT} ${ARG_UNPARSED_ARGUMENTS}
    PROPERTIES ${ARG_PROPERTIES})
endfunction()
