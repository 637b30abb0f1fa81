# ctest build_info_commit: WriteBuildInfo.cmake takes the commit named by
# MPSBENCH_GIT_COMMIT over git's (a tree copied to a GPU node may carry a stale
# .git), and falls back to git's HEAD without it.
# Usage: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P build_info_commit.cmake
set(out "${WORK_DIR}/build_info_commit_test.cpp")
set(named "0123456789abcdef0123456789abcdef01234567")
file(REMOVE "${out}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "MPSBENCH_GIT_COMMIT=${named}"
                        "${CMAKE_COMMAND}" "-DSOURCE_DIR=${SOURCE_DIR}" "-DOUTPUT=${out}" -DVERSION=0.0.0
                        -P "${SOURCE_DIR}/cmake/WriteBuildInfo.cmake"
                RESULT_VARIABLE rc)
file(READ "${out}" text)
if(NOT rc EQUAL 0 OR NOT text MATCHES "return \"${named}\";")
  message(FATAL_ERROR "MPSBENCH_GIT_COMMIT=${named} was not taken (rc ${rc}):\n${text}")
endif()
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REMOVE "${out}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=MPSBENCH_GIT_COMMIT
                          "${CMAKE_COMMAND}" "-DSOURCE_DIR=${SOURCE_DIR}" "-DOUTPUT=${out}" -DVERSION=0.0.0
                          -P "${SOURCE_DIR}/cmake/WriteBuildInfo.cmake"
                  RESULT_VARIABLE rc)
  file(READ "${out}" text)
  if(NOT rc EQUAL 0 OR NOT text MATCHES "return \"${head}\";")
    message(FATAL_ERROR "without MPSBENCH_GIT_COMMIT the commit should be git's HEAD ${head}:\n${text}")
  endif()
endif()
