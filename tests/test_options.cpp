#include <gtest/gtest.h>

#include <map>

#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "registry.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

Options parse(std::vector<std::string> args) { return parse_options(args); }

std::string error_of(const std::vector<std::string>& args) {
  return usage_error_text([&] { parse_options(args); });
}

TEST(Options, DefaultsWhenEmpty) {
  const Options o = parse({});
  EXPECT_TRUE(o.plan.kernels.empty());
  EXPECT_TRUE(o.plan.sizes.empty());
  EXPECT_EQ(o.device, DeviceChoice::automatic);
  EXPECT_DOUBLE_EQ(o.measure.min_time_s, 0.25);
  EXPECT_EQ(o.measure.repetitions, 5);
  EXPECT_FALSE(o.measure.one_rank_repetitions);  // --repetitions at one rank per GPU too
  EXPECT_TRUE(o.turns.empty());                   // no turns outside mpsbench-sweep
  EXPECT_TRUE(o.output.empty());
}

TEST(Options, OneRankRepetitionsAndTurns) {
  const Options o = parse({"--repetitions", "2", "--one-rank-repetitions", "6", "--turns", "/tmp/t/0.sock"});
  EXPECT_EQ(o.measure.repetitions, 2);
  EXPECT_EQ(o.measure.one_rank_repetitions, 6);
  EXPECT_EQ(o.turns, "/tmp/t/0.sock");
  EXPECT_NE(error_of({"--one-rank-repetitions", "0"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of({"--turns", ""}).find("--turns: empty path"), std::string::npos);
  // In turns there is no GPU monitor (measure/gpu_watch.hpp), so no clocks to drop a repetition by.
  EXPECT_NE(error_of({"--turns", "/tmp/t/0.sock", "--discard-throttled"}).find("--discard-throttled: needs the GPU"),
            std::string::npos);
  EXPECT_NO_THROW(parse({"--turns", "/tmp/t/0.sock", "--discard-cpu-slowed"}));
}

TEST(Options, ParsesListsAndBothValueForms) {
  const Options o = parse({"--kernel", "matmul", "--precision=fp32,bf16", "--size", "512,1024", "--ranks-per-gpu=1,8",
                           "--device", "cpu", "--gpus", "0,1", "--min-time", "0.5", "--repetitions", "7",
                           "--seed", "42", "--output", "out.json"});
  EXPECT_EQ(o.plan.kernels, std::vector<std::string>{"matmul"});
  EXPECT_EQ(o.plan.precisions, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_EQ(o.plan.sizes, (std::vector<std::int64_t>{512, 1024}));
  EXPECT_EQ(o.plan.ranks_per_gpu, (std::vector<int>{1, 8}));
  EXPECT_EQ(o.device, DeviceChoice::cpu);
  EXPECT_EQ(o.gpus, (std::vector<std::string>{"0", "1"}));
  EXPECT_DOUBLE_EQ(o.measure.min_time_s, 0.5);
  EXPECT_EQ(o.measure.repetitions, 7);
  EXPECT_EQ(o.measure.seed, 42u);
  EXPECT_EQ(o.output, "out.json");
}

TEST(Options, PerKernelSizes) {
  const Options o = parse({"--size", "matmul=64,128"});
  ASSERT_EQ(o.plan.kernel_sizes.count("matmul"), 1u);
  EXPECT_EQ(o.plan.kernel_sizes.at("matmul"), (std::vector<std::int64_t>{64, 128}));
  EXPECT_TRUE(o.plan.sizes.empty());
}

TEST(Options, FlagsWithoutValues) {
  EXPECT_TRUE(parse({"--help"}).show_help);
  EXPECT_TRUE(parse({"-h"}).show_help);
  EXPECT_TRUE(parse({"--version"}).show_version);
  EXPECT_TRUE(parse({"--list-kernels"}).list_kernels);
}

TEST(Options, RejectionsNameTheBadValue) {
  EXPECT_NE(error_of({"--kernel", "gemm"}).find("unknown kernel 'gemm'"), std::string::npos);
  EXPECT_NE(error_of({"--precision", "fp8"}).find("'fp8'"), std::string::npos);
  EXPECT_NE(error_of({"--size", "0"}).find("size 0 must be positive"), std::string::npos);
  EXPECT_NE(error_of({"--size", "-3"}).find("size -3 must be positive"), std::string::npos);
  EXPECT_NE(error_of({"--size", "abc"}).find("'abc' is not an integer"), std::string::npos);
  EXPECT_NE(error_of({"--size", "12x"}).find("'12x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of({"--size", "99999999999999999999"}).find("not an integer"), std::string::npos);
  EXPECT_NE(error_of({"--size", "100000"}).find("exceeds the largest matmul size"), std::string::npos);
  EXPECT_NE(error_of({"--size", "64,,128"}).find("empty item"), std::string::npos);
  EXPECT_NE(error_of({"--size", "64,"}).find("empty item"), std::string::npos);
  EXPECT_NE(error_of({"--size", "nokernel=64"}).find("unknown kernel 'nokernel'"), std::string::npos);
  EXPECT_NE(error_of({"--ranks-per-gpu", "0"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of({"--device", "tpu"}).find("unknown device 'tpu'"), std::string::npos);
  EXPECT_NE(error_of({"--gpus", "0,1,0"}).find("GPU 0 listed twice"), std::string::npos);
  EXPECT_NE(error_of({"--min-time", "-1"}).find("-1 must be in"), std::string::npos);
  EXPECT_NE(error_of({"--min-time", "nan"}).find("'nan' is not a number"), std::string::npos);
  EXPECT_NE(error_of({"--repetitions", "0"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of({"--output"}).find("--output: missing value"), std::string::npos);
  EXPECT_NE(error_of({"--help=yes"}).find("takes no value"), std::string::npos);
  EXPECT_NE(error_of({"--bogus"}).find("unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(error_of({"matmul"}).find("unknown option 'matmul'"), std::string::npos);
}

TEST(Options, ARepeatedListItemCountsOnceInTheOrderGiven) {
  const Options o = parse({"--kernel", "nbody,matmul,nbody", "--precision", "fp32,fp64,fp32", "--size",
                           "32,64,32,032", "--size", "matmul=16,16", "--ranks-per-gpu", "2,1,2"});
  EXPECT_EQ(o.plan.kernels, (std::vector<std::string>{"nbody", "matmul"}));
  EXPECT_EQ(o.plan.precisions, (std::vector<std::string>{"fp32", "fp64"}));
  EXPECT_EQ(o.plan.sizes, (std::vector<std::int64_t>{32, 64}));
  EXPECT_EQ(o.plan.kernel_sizes.at("matmul"), (std::vector<std::int64_t>{16}));
  EXPECT_EQ(o.plan.ranks_per_gpu, (std::vector<int>{2, 1}));
  EXPECT_TRUE(parse({"--precision", "all,all"}).plan.all_precisions);
}

TEST(Options, RejectionMessagesAreOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--kernel", "x"}, {"--size", "x"}, {"--device", "x"}, {"--gpus", "-1"}, {"--wat"}}) {
    const std::string message = error_of(args);
    ASSERT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Options, UsageMentionsEveryFlag) {
  const std::string usage = usage_text();
  for (const char* flag : {"--kernel", "--precision", "--size", "--ranks-per-gpu", "--device", "--gpus",
                           "--min-time", "--repetitions", "--seed", "--output", "--list-kernels", "--version",
                           "--help"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

// `text` with every run of spaces and line breaks as one space: --help wraps the help texts.
std::string words_of(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!space) out += c;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  return out;
}

// A command line that sets each option of the table (and what it needs beside it).
const std::map<std::string, std::vector<std::string>>& samples() {
  static const std::map<std::string, std::vector<std::string>> by_option = {
      {"--kernel", {"--kernel", "matmul"}},
      {"--precision", {"--precision", "fp32"}},
      {"--size", {"--size", "matmul=64"}},
      {"--ranks-per-gpu", {"--ranks-per-gpu", "1,2"}},
      {"--device", {"--device", "cpu"}},
      {"--mode", {"--mode", "streams"}},
      {"--gpus", {"--gpus", "0,GPU-8932f937"}},
      {"--other-mps-users", {"--other-mps-users", "go-on"}},
      {"--min-time", {"--min-time", "0.5"}},
      {"--repetitions", {"--repetitions", "3"}},
      {"--warmup-time", {"--warmup-time", "0"}},
      {"--max-noise", {"--max-noise", "1%"}},
      {"--max-time", {"--max-noise", "1", "--max-time", "5"}},
      {"--discard-throttled", {"--discard-throttled"}},
      {"--throttle-retries", {"--discard-throttled", "--throttle-retries", "2"}},
      {"--clock-threshold", {"--clock-threshold", "80"}},
      {"--cpu-threshold", {"--cpu-threshold", "50"}},
      {"--discard-cpu-slowed", {"--discard-cpu-slowed"}},
      {"--cpu-retries", {"--discard-cpu-slowed", "--cpu-retries", "2"}},
      {"--energy-min-span", {"--energy-min-span", "1"}},
      {"--seed", {"--seed", "7"}},
      {"--output", {"--output", "out.json"}},
      {"--timeout", {"--timeout", "0"}},
      {"--turns", {"--turns", "/tmp/mpsb-turns-x/0.sock"}},
      {"--one-rank-repetitions", {"--one-rank-repetitions", "6"}},
      {"--resume", {"--resume", "old.json"}},
      {"--param", {"--param", "inference.hidden=64"}},
      {"--allreduce", {"--allreduce", "64K"}},
      {"--mix", {"--mix", "matmul:1,nbody:1"}},
      {"--preset", {"--preset", "quick"}},
      {"--list-kernels", {"--list-kernels"}},
      {"--list-presets", {"--list-presets"}},
      {"--list-modes", {"--list-modes"}},
      {"--version", {"--version"}},
      {"--help", {"--help"}},
  };
  return by_option;
}

TEST(OptionTable, EveryOptionIsInTheUsageAndAcceptedByTheParser) {
  const std::string usage = usage_text();
  for (const auto& spec : option_table()) {
    const std::string head = std::string("\n  ") + (*spec.alias != '\0' ? std::string(spec.alias) + ", " : "") +
                             spec.name + (*spec.placeholder != '\0' ? std::string(" ") + spec.placeholder : "");
    EXPECT_NE(usage.find(head), std::string::npos) << head;
    std::string help = spec.help;
    if (*spec.shown_default != '\0') help += std::string(" (default: ") + spec.shown_default + ")";
    EXPECT_NE(words_of(usage).find(words_of(help)), std::string::npos) << spec.name << ": " << help;
    const auto sample = samples().find(spec.name);
    ASSERT_NE(sample, samples().end()) << "no sample command line for " << spec.name;
    if (spec.name == std::string("--param") && find_kernel("inference") == nullptr) continue;  // not registered
    EXPECT_EQ(error_of(sample->second), "") << spec.name;
    if (*spec.alias != '\0') {
      EXPECT_EQ(error_of({spec.alias}), "") << spec.alias;
    }
  }
  EXPECT_EQ(samples().size(), option_table().size()) << "a sample names an option the table no longer has";
}

TEST(OptionTable, AValueIsRequiredExactlyWhereThereIsAPlaceholder) {
  for (const auto& spec : option_table()) {
    const std::string name = spec.name;
    if (*spec.placeholder != '\0') {
      EXPECT_EQ(error_of({name}), name + ": missing value");
    } else {
      EXPECT_EQ(error_of({name + "=x"}), name + ": takes no value (got 'x')");
    }
  }
}

}  // namespace
}  // namespace mpsb
