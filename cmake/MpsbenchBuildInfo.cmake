# Generates build_info.cpp with the git commit on every build (not only at
# configure time), rewriting it only when the commit or dirty state changed so
# nothing rebuilds needlessly.
set(MPSBENCH_BUILD_INFO_CPP "${CMAKE_CURRENT_BINARY_DIR}/generated/build_info.cpp")
add_custom_target(mpsbench_build_info_gen
  COMMAND "${CMAKE_COMMAND}"
          -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
          -DOUTPUT=${MPSBENCH_BUILD_INFO_CPP}
          -DVERSION=${PROJECT_VERSION}
          -P "${CMAKE_CURRENT_LIST_DIR}/WriteBuildInfo.cmake"
  BYPRODUCTS "${MPSBENCH_BUILD_INFO_CPP}"
  COMMENT "Recording git commit"
  VERBATIM)
