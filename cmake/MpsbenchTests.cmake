# What tests/CMakeLists.txt registers its tests with: the Python interpreter, ctest's slots and costs, the
# unit-test executables.
# The interpreter itself, not a launcher in front of it (a pyenv shim is a bash script that costs a tenth
# of a second a start): the Python tests start hundreds of interpreters.
execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import sys; print(sys.executable)"
  OUTPUT_VARIABLE MPSBENCH_TEST_PYTHON OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT EXISTS "${MPSBENCH_TEST_PYTHON}")
  set(MPSBENCH_TEST_PYTHON "${Python3_EXECUTABLE}")
endif()

# ctest's PROCESSORS count slots, and a test that keeps a core busy takes this many; a test that mostly
# waits (the sweep's against fakes that sleep) takes one. scripts/bootstrap.sh sets it and runs
# ctest -j (cores x slots), so waiting tests overlap while busy ones still get a core each. With 1
# (the default) every test takes what it took before.
set(MPSBENCH_TEST_SLOTS_PER_CORE 1 CACHE STRING "ctest PROCESSORS slots per core a busy test keeps")
# A test of several seconds (the MPI end-to-end tests, the sweep's classes) has a COST, so that ctest starts
# it before the sub-second unit tests, which fill the gaps, also without the timings of an earlier run; a
# busy one first of all (its COST times its cores): it needs the slots of the whole machine at once, and
# started last it would run alone at the end.
set(MPSBENCH_LONG_TEST_COST 10)
function(mpsbench_test_cores test cores)
  math(EXPR slots "${cores} * ${MPSBENCH_TEST_SLOTS_PER_CORE}")
  math(EXPR cost "${cores} * ${MPSBENCH_LONG_TEST_COST}")
  set_tests_properties(${test} PROPERTIES PROCESSORS ${slots} COST ${cost})
endfunction()

# The unit tests: GoogleTest files linked against the same harness and kernels as the tool. They all go
# into one executable, mpsbench_unit_tests, made at the end of tests/CMakeLists.txt (one link and build step
# instead of one per file); ctest runs them one suite a process (GtestSuitesCtest.cmake): a process of
# one of these executables takes 0.07 s of system time to map cuBLAS alone, and one process per test
# (360 of them, gtest_discover_tests) cost half a minute of CPU. A file that registers a test-only
# kernel (MPSB_REGISTER_KERNEL) gets an executable of its own instead (mpsbench_add_unit_test_executable),
# so that no other test sees the kernel.
# The test files compile at -O0 (the harness and kernels they test keep the build's -O3): optimizing the
# GoogleTest and JSON-heavy test bodies cost 20 CPU-s more to compile at -O1 (40 % more again at -O3) and
# bought the tests 3 CPU-s of run time.
# Their main (tests/unit_main.cpp), compiled once: a suite whose every test skipped exits with this status,
# which its ctest entry reads as skipped (SKIP_RETURN_CODE).
set(MPSBENCH_ALL_SKIPPED_EXIT 77)
add_library(mpsbench_unit_main OBJECT "${PROJECT_SOURCE_DIR}/tests/unit_main.cpp")
target_link_libraries(mpsbench_unit_main PUBLIC GTest::gtest PRIVATE mpsbench_warnings)
target_compile_definitions(mpsbench_unit_main PRIVATE MPSBENCH_ALL_SKIPPED_EXIT=${MPSBENCH_ALL_SKIPPED_EXIT})
function(mpsbench_unit_test_target target)
  target_link_libraries(${target} PRIVATE mpsbench_harness mpsbench_unit_main mpsbench_warnings)
  target_compile_options(${target} PRIVATE $<$<AND:$<CONFIG:Release>,$<COMPILE_LANGUAGE:CXX>>:-O0>)
  target_compile_definitions(${target} PRIVATE
    MPSBENCH_SCHEMA_PATH="${PROJECT_SOURCE_DIR}/schema/mpsbench-results.schema.json")
  mpsbench_gtest_suites(${target})
endfunction()
# Registers `target`'s suites when ctest runs (the executable lists them then, as gtest_discover_tests'
# PRE_TEST mode does), through a small generated file that includes GtestSuitesCtest.cmake.
function(mpsbench_gtest_suites target)
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  file(GENERATE OUTPUT "${script}" CONTENT
"set(MPSBENCH_GTEST_EXE [==[$<TARGET_FILE:${target}>]==])
set(MPSBENCH_GTEST_PROCESSORS ${MPSBENCH_TEST_SLOTS_PER_CORE})
set(MPSBENCH_GTEST_ALL_SKIPPED ${MPSBENCH_ALL_SKIPPED_EXIT})
include([==[${CMAKE_CURRENT_FUNCTION_LIST_DIR}/GtestSuitesCtest.cmake]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
function(mpsbench_add_unit_test_executable name)
  add_executable(${name} ${ARGN})
  mpsbench_unit_test_target(${name})
endfunction()
set(mpsbench_unit_test_sources "")
macro(mpsbench_add_unit_test)
  list(APPEND mpsbench_unit_test_sources ${ARGN})
endmacro()
