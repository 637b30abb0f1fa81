// Filled in at build time by cmake/WriteBuildInfo.cmake.
#pragma once

namespace mpsb {
const char* build_git_commit();
bool build_git_dirty();
const char* build_version();
}  // namespace mpsb
