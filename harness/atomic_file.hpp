#pragma once

#include <string>

namespace mpsb {

// Writes `content` to a temporary file beside `path`, flushes it to disk and
// renames it over `path`: readers see the old file or the new one, never a
// torn one. Throws std::runtime_error naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& content);

// `preferred` if nothing exists there, else preferred with -2, -3, ... before
// the extension: a default name never overwrites an earlier run.
std::string first_free_path(const std::string& preferred);

}  // namespace mpsb
