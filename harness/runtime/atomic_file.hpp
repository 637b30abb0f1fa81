// Writing result files safely in a shared, world-writable directory (a
// cluster's scratch space, /tmp): never through a link someone planted, never
// over something that is not a regular file, never at a predictable temporary
// name, and never torn (readers see the old file or the new one).
#pragma once

#include <string>

namespace mpsb {

// Throws std::runtime_error naming `path` when a result file could not be
// written there: it exists and is not a regular file (a symbolic link, a
// directory, a FIFO, a device such as /dev/null, a socket), or its directory
// does not exist. An existing regular file is fine: it will be replaced.
void check_output_target(const std::string& path);

// Throws std::runtime_error naming `path` unless it is an existing regular
// file (not a link to one): what --resume reads and later replaces.
void check_input_file(const std::string& path);

// A temporary file beside `path` (same directory, so the final rename is
// atomic), created with an unpredictable name and O_EXCL (mkstemp), mode 0644
// less the umask. commit() flushes it to disk and renames it over `path`
// after checking the target again; a temporary never committed is removed.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int fd() const { return fd_; }
  const std::string& temp_path() const { return temp_; }
  void write_all(const std::string& content);
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
};

// Writes `content` through a TemporaryFile and commits it. Throws
// std::runtime_error naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& content);

// `preferred` if nothing (not even a dangling link) exists there, else
// preferred with -2, -3, ... before the extension: a default name never
// overwrites an earlier run.
std::string first_free_path(const std::string& preferred);

}  // namespace mpsb
