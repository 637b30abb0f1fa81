// A generated corpus for parse_options: thousands of seeded random argv
// vectors built from the real flags, good values and nasty ones. Whatever the
// input, parsing must return or throw UsageError, and a rejection must be one
// line that names something the user typed, so they can find the mistake.
// The second corpus aims --output and --resume at hostile file targets.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.hpp"
#include "registry.hpp"
#include "results/result_files.hpp"
#include "runtime/atomic_file.hpp"
#include "runtime/usage_error.hpp"
#include "scratch_dir.hpp"

namespace mpsb {
namespace {

const std::vector<std::string> kFlags = {
    "--kernel", "--precision", "--size", "--ranks-per-gpu", "--device", "--mode", "--gpus", "--min-time",
    "--repetitions", "--seed", "--output", "--timeout", "--resume", "--help", "-h", "--version",
    "--list-kernels", "--sizes", "-", "--", "---size", "--SIZE"};

std::vector<std::string> values() {
  std::vector<std::string> v = {
      "", "0", "1", "2", "-1", "-0", "+5", "1.5", "0.25", "3601", "1e6", "1e7", "1e-300", "1e309", "nan", "inf",
      "-inf", "0x10", " 1", "1 ", "99999999999999999999", "9223372036854775807", "-9223372036854775808",
      "1,,2", ",", "1,", ",1", "=", "a=b", "matmul=", "matmul=0", "matmul=16,24", "=16", "fp32", "fp8",
      "fp32,bf16", "tf32", "auto", "gpu", "cpu", "tpu", "mps", "mps-qos", "streams", "timeslice", "mps2",
      "out.json", "/nonexistent-dir/x.json", "\xff\xfe", "%s%n", std::string(1000, '9'), std::string(300, ','),
      "1,2,4,8", "0,1", "1023", "1024"};
  for (const auto& k : kernel_registry()) {
    v.push_back(k.name);
    v.push_back(k.name + "=8");
  }
  return v;
}

// Every piece of the argv a message could name: tokens, their flag and value
// halves, and list items (an empty piece counts only when quoted: '').
bool names_a_token(const std::string& message, const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (message.find("'" + a + "'") != std::string::npos) return true;
    std::vector<std::string> pieces = {a};
    for (char sep : {'=', ','}) {
      std::size_t begin = 0;
      for (std::size_t i = 0; i <= a.size(); ++i) {
        if (i == a.size() || a[i] == sep) {
          pieces.push_back(a.substr(begin, i - begin));
          begin = i + 1;
        }
      }
    }
    for (const auto& p : pieces) {
      if (!p.empty() && message.find(p) != std::string::npos) return true;
    }
  }
  return false;
}

std::string show(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += " [" + a.substr(0, 40) + "]";
  return out;
}

TEST(OptionsFuzz, EveryInputParsesOrIsOneLineUsageErrorNamingATokenOfIt) {
  const std::vector<std::string> pool = values();
  std::mt19937_64 rng(20261121);
  auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  };
  int accepted = 0, rejected = 0;
  for (int n = 0; n < 5000; ++n) {
    std::vector<std::string> args;
    const int count = std::uniform_int_distribution<int>(0, 6)(rng);
    for (int i = 0; i < count; ++i) {
      const int shape = std::uniform_int_distribution<int>(0, 9)(rng);
      if (shape < 5) {  // flag value
        args.push_back(pick(kFlags));
        args.push_back(pick(pool));
      } else if (shape < 8) {  // --flag=value
        args.push_back(pick(kFlags) + "=" + pick(pool));
      } else if (shape == 8) {  // a flag alone (maybe missing its value)
        args.push_back(pick(kFlags));
      } else {  // a mutated flag: one character changed
        std::string f = pick(kFlags);
        f[std::uniform_int_distribution<std::size_t>(0, f.size() - 1)(rng)] =
            static_cast<char>(std::uniform_int_distribution<int>(32, 126)(rng));
        args.push_back(f);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      parse_options(args);
      ++accepted;
    } catch (const UsageError& e) {
      ++rejected;
      const std::string message = e.what();
      EXPECT_FALSE(message.empty()) << show(args);
      EXPECT_EQ(message.find('\n'), std::string::npos) << show(args) << ": " << message;
      EXPECT_TRUE(names_a_token(message, args)) << show(args) << ": " << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UsageError:" << show(args) << ": " << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << show(args);
    if (HasFailure()) break;  // the first failing input is the useful one
  }
  // The corpus must exercise both outcomes, or it tests nothing.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 1000);
}

// What a user or a neighbour in a shared directory can put where the results go.
struct FileTargets {
  ScratchDir dir;
  std::string victim = dir / "victim.json";
  std::vector<std::string> paths;

  FileTargets() {
    std::ofstream(victim) << "someone else's file\n";
    std::ofstream(dir / "earlier.json") << "an earlier run\n";
    EXPECT_EQ(::mkdir((dir / "directory").c_str(), 0700), 0);
    EXPECT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    EXPECT_EQ(::symlink(victim.c_str(), (dir / "link.json").c_str()), 0);
    EXPECT_EQ(::symlink((dir / "nowhere.json").c_str(), (dir / "dangling.json").c_str()), 0);
    EXPECT_EQ(::mkdir((dir / "readonly").c_str(), 0500), 0);
    paths = {dir / "new.json",     dir / "earlier.json",          dir / "directory", dir / "directory/",
             dir / "fifo",         dir / "link.json",             dir / "dangling.json",
             dir / "readonly/x.json", dir / "missing-dir/x.json", dir / "victim.json/x.json",
             "/dev/null",          dir.path().string()};
  }

  // Nothing that was not a regular file became one, nothing was written through a link.
  void expect_untouched() const {
    std::ifstream in(victim);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "someone else's file");
    EXPECT_TRUE(std::filesystem::is_directory(dir / "directory"));
    EXPECT_TRUE(is_fifo(dir / "fifo"));
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.json"));
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "dangling.json"));
    EXPECT_FALSE(std::filesystem::exists(dir / "nowhere.json"));
    EXPECT_TRUE(is_char_device("/dev/null"));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      EXPECT_NE(entry.path().filename().string().front(), '.') << "temporary left behind: " << entry.path();
    }
  }
};

TEST(OptionsFuzz, HostileFileTargetsAreRefusedInOneLineOrWrittenAsRegularFiles) {
  FileTargets targets;
  std::mt19937_64 rng(20261124);
  auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  };
  int written = 0, refused = 0;
  for (int n = 0; n < 2000 && !HasFailure(); ++n) {
    std::vector<std::string> args = {"--device", "cpu"};
    const int shape = std::uniform_int_distribution<int>(0, 3)(rng);
    if (shape != 1) args.insert(args.end(), {"--output", pick(targets.paths)});
    if (shape != 0) args.insert(args.end(), {"--resume", pick(targets.paths)});
    std::string target;
    try {
      const Options options = parse_options(args);
      check_result_files(options.output, options.resume);
      target = options.output.empty() ? options.resume : options.output;
    } catch (const UsageError& e) {
      ++refused;
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << show(args) << ": " << message;
      EXPECT_TRUE(names_a_token(message, args)) << show(args) << ": " << message;
      EXPECT_TRUE(message.rfind("--output: ", 0) == 0 || message.rfind("--resume: ", 0) == 0) << message;
      continue;
    }
    // What rank 0 then does with the target (the reporter's first write); a
    // directory it may not write in is found only here (main reports it as bad input too).
    try {
      write_file_atomically(target, "{\"schema\": \"mpsbench-results\"}\n");
      ++written;
      struct stat st {};
      EXPECT_TRUE(::lstat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) << show(args);
    } catch (const std::runtime_error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << show(args) << ": " << e.what();
    }
  }
  targets.expect_untouched();
  EXPECT_GT(written, 50);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace mpsb
