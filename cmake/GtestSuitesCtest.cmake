# Run by ctest, not by CMake (a directory's TEST_INCLUDE_FILES, written by mpsbench_gtest_suites() in
# MpsbenchTests.cmake): lists a GoogleTest executable's tests and registers one ctest entry per test
# suite, named after the suite, running `EXE --gtest_filter=SUITE.*`. An entry whose every test skipped
# (a GPU suite without a GPU) exits MPSBENCH_GTEST_ALL_SKIPPED (tests/unit_main.cpp) and is reported
# skipped. Expects MPSBENCH_GTEST_EXE, MPSBENCH_GTEST_PROCESSORS and MPSBENCH_GTEST_ALL_SKIPPED.
execute_process(COMMAND "${MPSBENCH_GTEST_EXE}" --gtest_list_tests
  OUTPUT_VARIABLE listed ERROR_VARIABLE listing_error RESULT_VARIABLE listing_status)
get_filename_component(executable_name "${MPSBENCH_GTEST_EXE}" NAME)
if(NOT listing_status EQUAL 0)
  # An entry that fails and says why, rather than no tests at all.
  add_test("${executable_name}_lists_its_tests" "${MPSBENCH_GTEST_EXE}" --gtest_list_tests)
  return()
endif()
string(REPLACE "\n" ";" lines "${listed}")
foreach(line IN LISTS lines)
  # A suite's line: its name and a dot at the start ("Stats.", "SizesAndSweeps/CpuStep.", "Typed/0.  #
  # TypeParam = int"); its tests follow, indented.
  if(line MATCHES "^([^ ]+)\\.( +#.*)?$")
    set(suite "${CMAKE_MATCH_1}")
    add_test("${suite}" "${MPSBENCH_GTEST_EXE}" "--gtest_filter=${suite}.*")
    set_tests_properties("${suite}" PROPERTIES
      SKIP_RETURN_CODE "${MPSBENCH_GTEST_ALL_SKIPPED}"
      PROCESSORS "${MPSBENCH_GTEST_PROCESSORS}")
  endif()
endforeach()
