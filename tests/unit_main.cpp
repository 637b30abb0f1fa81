// The unit-test executables' main, in place of gtest_main: ctest runs them one suite a process
// (cmake/GtestSuitesCtest.cmake) and reports a suite skipped when every test in it skipped (a GPU suite
// without a GPU). A pattern on the output cannot say that (ctest's skip pattern wins over a failure),
// so the exit status does: MPSBENCH_ALL_SKIPPED_EXIT (cmake/MpsbenchTests.cmake defines it and gives it
// to the entries as SKIP_RETURN_CODE), only then; a failure exits 1.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  const bool all_skipped = unit.successful_test_count() == 0 && unit.skipped_test_count() > 0;
  return status == 0 && all_skipped ? MPSBENCH_ALL_SKIPPED_EXIT : status;
}
