#include "runtime/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mpsb {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw std::runtime_error("cannot " + what + " '" + path + "': " + std::strerror(error));
}

// "a symbolic link", "a FIFO", ...: what lstat found where a regular file should be.
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Refuses an existing non-regular file at `path`; a missing one is fine.
void refuse_non_regular(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail("inspect", path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error("'" + path + "' is " + kind_of(st.st_mode) +
                             ", not a regular file: refusing to replace it");
  }
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

void fsync_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; durability of the entry is best effort
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void check_output_target(const std::string& path) {
  if (path.empty() || path.back() == '/') throw std::runtime_error("'" + path + "' names no file");
  refuse_non_regular(path);
  const std::string directory = directory_of(path);
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) fail("create a file in the directory of", path, errno);
  if (!S_ISDIR(st.st_mode)) fail("create a file in the directory of", path, ENOTDIR);
}

void check_input_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) fail("read", path, errno);
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error("'" + path + "' is " + kind_of(st.st_mode) + ", not a regular file");
  }
}

TemporaryFile::TemporaryFile(std::string path) : path_(std::move(path)) {
  check_output_target(path_);
  const std::string directory = directory_of(path_);
  std::string name_template = directory + "/." + base_name_of(path_) + ".XXXXXX";
  std::vector<char> buffer(name_template.begin(), name_template.end());
  buffer.push_back('\0');
  fd_ = ::mkostemp(buffer.data(), O_CLOEXEC);  // O_CREAT | O_EXCL, a random suffix, mode 0600
  if (fd_ < 0) fail("create a temporary file for", path_, errno);
  temp_ = buffer.data();
  // Results are for sharing: the mode a plain open() would have given.
  if (::fchmod(fd_, 0644 & ~current_umask()) != 0) {
    const int saved = errno;
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_.c_str());
    fail("set the mode of", temp_, saved);
  }
}

TemporaryFile::~TemporaryFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void TemporaryFile::write_all(const std::string& content) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd_, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", temp_, errno);
    }
    written += static_cast<std::size_t>(n);
  }
}

void TemporaryFile::commit() {
  if (::fsync(fd_) != 0) fail("flush", temp_, errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail("flush", temp_, errno);
  // Again: something may have been put at the target since the constructor looked.
  refuse_non_regular(path_);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail("rename onto", path_, errno);
  temp_.clear();
  fsync_directory(directory_of(path_));
}

void write_file_atomically(const std::string& path, const std::string& content) {
  TemporaryFile file(path);
  file.write_all(content);
  file.commit();
}

std::string first_free_path(const std::string& preferred) {
  struct stat st {};
  if (::lstat(preferred.c_str(), &st) != 0) return preferred;
  const auto dot = preferred.rfind('.');
  const auto slash = preferred.rfind('/');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string stem = has_extension ? preferred.substr(0, dot) : preferred;
  const std::string extension = has_extension ? preferred.substr(dot) : "";
  for (int n = 2;; ++n) {
    const std::string candidate = stem + "-" + std::to_string(n) + extension;
    if (::lstat(candidate.c_str(), &st) != 0) return candidate;
  }
}

}  // namespace mpsb
