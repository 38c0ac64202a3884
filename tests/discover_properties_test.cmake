# cmake -DMODULE=<cmake/GpulabTestDiscovery.cmake> -P <this file>
#
# gpulab_property_pairs_problem, the check of gpulab_discover_tests: NAME value pairs pass; a list
# value (LABELS "framework;grading", two words once flattened), a missing value and a lower-case
# word where a name belongs are each refused with what is wrong. Run by ctest (tests/CMakeLists.txt).
if(NOT DEFINED MODULE)
  message(FATAL_ERROR "discover_properties_test.cmake: MODULE is not set")
endif()
include("${MODULE}")

function(expect what expected_match)
  gpulab_property_pairs_problem(problem ${ARGN})
  set(ok FALSE)
  if(expected_match STREQUAL "" AND problem STREQUAL "")
    set(ok TRUE)
  elseif(NOT expected_match STREQUAL "" AND problem MATCHES "${expected_match}")
    set(ok TRUE)
  endif()
  if(ok)
    message(STATUS "ok: ${what}")
  else()
    message(SEND_ERROR "FAILED: ${what}: got \"${problem}\", expected \"${expected_match}\"")
  endif()
endfunction()

expect("pairs" "" LABELS framework TIMEOUT 60 RESOURCE_GROUPS grading_slots:2)
expect("no properties" "")
expect("a list of labels" "\"grading\" where a property's name belongs"
       LABELS "framework;grading" TIMEOUT 600 RESOURCE_GROUPS grading_slots:2)
expect("a name without its value" "an odd number of words" LABELS framework TIMEOUT)
expect("a list as the last value" "\"cuda\" where a property's name belongs"
       TIMEOUT 60 LABELS "framework;cuda")
expect("a value missing at the end" "an odd number of words" TIMEOUT 60 LABELS)
