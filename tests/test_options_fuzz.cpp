// A generated corpus for parse_options: thousands of seeded random argv
// vectors built from the real flags, good values and nasty ones. Whatever the
// input, parsing must return or throw UsageError, and a rejection must be one
// line that names something the user typed, so they can find the mistake.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "options.hpp"
#include "registry.hpp"

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

}  // namespace
}  // namespace mpsb
