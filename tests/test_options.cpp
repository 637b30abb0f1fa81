#include <gtest/gtest.h>

#include "cli/options.hpp"
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
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.25);
  EXPECT_EQ(o.repetitions, 5);
  EXPECT_TRUE(o.output.empty());
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
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.5);
  EXPECT_EQ(o.repetitions, 7);
  EXPECT_EQ(o.seed, 42u);
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

}  // namespace
}  // namespace mpsb
