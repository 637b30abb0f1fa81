# ctest build_info_commit: WriteBuildInfo.cmake takes the commit named by
# MPSBENCH_GIT_COMMIT over git's (a tree copied to a GPU node may carry a stale
# .git), and falls back to git's HEAD without it.
# Usage: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P build_info_commit.cmake
set(out "${WORK_DIR}/build_info_commit_test.cpp")

# Runs WriteBuildInfo.cmake under `cmake -E env ENV_ARG` into a fresh ${out};
# the generated text in `text`, or a fatal error when the script fails.
function(write_build_info env_arg)
  file(REMOVE "${out}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "${env_arg}"
                          "${CMAKE_COMMAND}" "-DSOURCE_DIR=${SOURCE_DIR}" "-DOUTPUT=${out}" -DVERSION=0.0.0
                          -P "${SOURCE_DIR}/cmake/WriteBuildInfo.cmake"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "WriteBuildInfo.cmake with ${env_arg} failed (rc ${rc})")
  endif()
  file(READ "${out}" generated)
  set(text "${generated}" PARENT_SCOPE)
endfunction()

set(named "0123456789abcdef0123456789abcdef01234567")
write_build_info("MPSBENCH_GIT_COMMIT=${named}")
if(NOT text MATCHES "return \"${named}\";")
  message(FATAL_ERROR "MPSBENCH_GIT_COMMIT=${named} was not taken:\n${text}")
endif()
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE)
  write_build_info("--unset=MPSBENCH_GIT_COMMIT")
  if(NOT text MATCHES "return \"${head}\";")
    message(FATAL_ERROR "without MPSBENCH_GIT_COMMIT the commit should be git's HEAD ${head}:\n${text}")
  endif()
endif()
