// The results file in a shared, world-writable directory: written through an
// unpredictable temporary, never through a planted link, never over a FIFO,
// a device or a directory.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/atomic_file.hpp"
#include "scratch_dir.hpp"

namespace mpsb {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of_write(const std::string& path) {
  try {
    write_file_atomically(path, "new results\n");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// Entries of the directory besides the ones the test made.
std::vector<std::string> leftovers(const ScratchDir& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> extra;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) extra.push_back(name);
  }
  return extra;
}

TEST(AtomicFile, WritesANewFileAndReplacesARegularOneWithModeFromTheUmask) {
  ScratchDir dir;
  const std::string path = dir / "results.json";
  write_file_atomically(path, "first\n");
  EXPECT_EQ(read_text(path), "first\n");
  write_file_atomically(path, "second\n");
  EXPECT_EQ(read_text(path), "second\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0644 & ~mask);
  EXPECT_TRUE(leftovers(dir, {"results.json"}).empty());
}

TEST(AtomicFile, PlantedLinksAtPredictableTemporaryNamesHaveNoEffect) {
  ScratchDir dir;
  const std::string victim = dir / "victim.json";
  write_text(victim, "someone else's file\n");
  const std::string path = dir / "results.json";
  // The names a writer that appends its pid (or a counter) would use.
  for (const std::string& suffix :
       std::vector<std::string>{".tmp." + std::to_string(::getpid()), ".tmp", "~", ".part"}) {
    ASSERT_EQ(::symlink(victim.c_str(), (path + suffix).c_str()), 0);
  }
  write_file_atomically(path, "new results\n");
  EXPECT_EQ(read_text(victim), "someone else's file\n");
  EXPECT_EQ(read_text(path), "new results\n");
}

TEST(AtomicFile, RefusesEveryTargetThatIsNotARegularFileAndLeavesItAsItWas) {
  ScratchDir dir;
  const std::string victim = dir / "victim.json";
  write_text(victim, "someone else's file\n");
  const std::string link = dir / "link.json";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  const std::string dangling = dir / "dangling.json";
  ASSERT_EQ(::symlink((dir / "nowhere.json").c_str(), dangling.c_str()), 0);
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string directory = dir / "directory";
  ASSERT_EQ(::mkdir(directory.c_str(), 0700), 0);

  const std::pair<std::string, std::string> cases[] = {
      {link, "is a symbolic link, not a regular file: refusing to replace it"},
      {dangling, "is a symbolic link"},
      {fifo, "is a FIFO"},
      {directory, "is a directory"},
      {"/dev/null", "is a character device"},
      {dir / "missing/results.json", "No such file or directory"},
      {dir / "victim.json/results.json", "Not a directory"},
  };
  for (const auto& [path, expected] : cases) {
    const std::string message = error_of_write(path);
    EXPECT_NE(message.find(expected), std::string::npos) << path << ": " << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_THROW(check_output_target(path), std::runtime_error) << path;
  }
  EXPECT_EQ(read_text(victim), "someone else's file\n");
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_TRUE(fs::is_directory(directory) && fs::is_empty(directory));
  EXPECT_TRUE(fs::is_symlink(link) && fs::is_symlink(dangling));
  EXPECT_TRUE(is_char_device("/dev/null"));
  EXPECT_TRUE(leftovers(dir, {"victim.json", "link.json", "dangling.json", "fifo", "directory"}).empty());
}

TEST(AtomicFile, ATargetPlantedAfterTheTemporaryWasCreatedIsStillRefused) {
  ScratchDir dir;
  const std::string path = dir / "results.json";
  TemporaryFile file(path);
  file.write_all("new results\n");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THROW(file.commit(), std::runtime_error);
  EXPECT_TRUE(is_fifo(path));
}

TEST(AtomicFile, AnUncommittedTemporaryIsRemoved) {
  ScratchDir dir;
  {
    TemporaryFile file(dir / "results.json");
    file.write_all("never committed\n");
    EXPECT_TRUE(fs::exists(file.temp_path()));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// Root writes into read-only directories, so as root (CI) the write is tried
// by a child that has given up root for the unprivileged "nobody" (uid 65534).
TEST(AtomicFile, AReadOnlyDirectoryIsAnErrorNamingThePath) {
  ScratchDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string readonly = dir / "readonly";
  ASSERT_EQ(::mkdir(readonly.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(readonly.c_str(), 0555), 0);
  const std::string target = readonly + "/results.json";
  auto refused = [&] {
    const std::string message = error_of_write(target);
    return message.find("Permission denied") != std::string::npos && message.find(target) != std::string::npos;
  };
  if (!running_as_root()) {
    EXPECT_TRUE(refused()) << error_of_write(target);
  } else {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
      ::_exit(refused() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: not refused as expected, 2: could not drop root";
  }
  EXPECT_TRUE(fs::is_empty(readonly));
}

TEST(AtomicFile, InputFilesMustBeRegularFilesNotLinksToThem) {
  ScratchDir dir;
  const std::string file = dir / "results.json";
  write_text(file, "{}\n");
  const std::string link = dir / "link.json";
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  EXPECT_NO_THROW(check_input_file(file));
  EXPECT_THROW(check_input_file(link), std::runtime_error);
  EXPECT_THROW(check_input_file(dir.path().string()), std::runtime_error);
  EXPECT_THROW(check_input_file(dir / "missing.json"), std::runtime_error);
}

TEST(AtomicFile, FirstFreePathSkipsDanglingLinks) {
  ScratchDir dir;
  const std::string preferred = dir / "mpsbench-1.json";
  EXPECT_EQ(first_free_path(preferred), preferred);
  ASSERT_EQ(::symlink((dir / "nowhere").c_str(), preferred.c_str()), 0);
  EXPECT_EQ(first_free_path(preferred), dir / "mpsbench-1-2.json");
}

}  // namespace
}  // namespace mpsb
