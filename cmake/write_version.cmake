# cmake -DSOURCE_DIR=... -DOUT=... -DVERSION=... -P write_version.cmake
set(revision "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(revision "")
  endif()
endif()
set(content "// Generated at build time by cmake/write_version.cmake.
namespace gpulab::detail {
extern const char* const kVersion;
extern const char* const kGitRevision;
const char* const kVersion = \"${VERSION}\";
const char* const kGitRevision = \"${revision}\";
}  // namespace gpulab::detail
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE "${OUT}" "${content}")
endif()
