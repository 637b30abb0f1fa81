// --param KERNEL.NAME=VALUE, --allreduce BYTES and --mix TENANT:RANKS,...:
// their parsing, their one-line rejections, and the plan a mix makes
// (harness/cli/options.cpp, harness/measure/plan.cpp).
#include <gtest/gtest.h>

#include <memory>

#include "cli/options.hpp"
#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/preflight.hpp"
#include "registry.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

// A kernel with parameters, registered in this test binary only, so the
// parameter handling is tested whatever kernels the project has. It is never
// made (plans only).
KernelInfo param_kernel_info() {
  KernelInfo info;
  info.name = "paramtest";
  info.summary = "test-only kernel with two parameters";
  info.suite_order = 1000;
  info.precisions = {"fp16", "bf16"};
  info.default_precisions = {"fp16"};
  info.default_gpu_sizes = {8, 64, 512};
  info.default_cpu_sizes = {1, 4};
  info.max_size = 4096;
  info.primary = PrimaryMetric::items;
  info.params = {KernelParam{"width", 32, 16, 1024, "width of a layer"},
                 KernelParam{"depth", 2, 1, 8, "layers"}};
  info.per_iteration_latency = true;
  info.device_bytes = [](const std::string&, std::int64_t, const KernelParams&) { return 0.0; };
  info.make = [](const WorkloadArgs&) -> std::unique_ptr<Workload> { return nullptr; };
  return info;
}
MPSB_REGISTER_KERNEL(param_kernel_info);

Options parse(std::vector<std::string> args) { return parse_options(args); }

std::string error_of(const std::vector<std::string>& args) {
  return usage_error_text([&] { parse_options(args); });
}

// The rejection is one line and holds `fragment`.
void expect_error(const std::vector<std::string>& args, const std::string& fragment) {
  const std::string e = error_of(args);
  std::string typed;
  for (const auto& a : args) typed += a + " ";
  EXPECT_NE(e.find(fragment), std::string::npos) << typed << "-> '" << e << "', expected '" << fragment << "'";
  EXPECT_EQ(e.find('\n'), std::string::npos) << typed << "-> '" << e << "'";
}

// The plan the command line `o` asks for.
std::vector<Config> plan_of(const Options& o, DeviceKind device, int max_ranks, int devices) {
  return build_plan(o.plan, o.mode, device, max_ranks, devices);
}

std::string plan_error(const Options& o, DeviceKind device, int max_ranks) {
  return usage_error_text([&] { plan_of(o, device, max_ranks, 1); });
}

Config plain(const std::string& kernel, const std::string& precision, std::int64_t size, int ranks,
             KernelParams params = {}) {
  return Config{kernel, precision, size, ranks, std::move(params), {}};
}

Tenant tenant(const std::string& kernel, const std::string& precision, std::int64_t size, int ranks,
              std::map<std::string, std::int64_t> params = {}) {
  return Tenant{kernel, precision, size, ranks, std::move(params)};
}

// ---------------------------------------------------------------- --param

TEST(Param, SetsTheNamedParameterOfTheKernel) {
  const Options o = parse({"--param", "paramtest.width=64", "--param=paramtest.depth=5"});
  ASSERT_EQ(o.plan.kernel_params.count("paramtest"), 1u);
  EXPECT_EQ(o.plan.kernel_params.at("paramtest"), (std::map<std::string, std::int64_t>{{"width", 64}, {"depth", 5}}));
  EXPECT_TRUE(parse({}).plan.kernel_params.empty());
}

TEST(Param, TheLastValueOfARepeatedParameterWins) {
  const Options o = parse({"--param", "paramtest.width=64", "--param", "paramtest.width=128"});
  EXPECT_EQ(o.plan.kernel_params.at("paramtest").at("width"), 128);
  EXPECT_EQ(o.plan.kernel_params.at("paramtest").count("depth"), 0u);
}

TEST(Param, TheRangeEndsAreAccepted) {
  EXPECT_EQ(parse({"--param", "paramtest.width=16"}).plan.kernel_params.at("paramtest").at("width"), 16);
  EXPECT_EQ(parse({"--param", "paramtest.width=1024"}).plan.kernel_params.at("paramtest").at("width"), 1024);
}

TEST(Param, RejectionsNameTheValue) {
  for (const char* text : {"paramtest.width", "paramtest=3", ".width=3", "paramtest.=3", "width=3.x", "=3", ""}) {
    expect_error({"--param", text}, std::string("--param: '") + text + "' is not KERNEL.NAME=VALUE");
  }
  expect_error({"--param", "gemm.width=3"}, "--param: unknown kernel 'gemm'");
  expect_error({"--param", "paramtest.nope=3"}, "--param: kernel paramtest has no parameter 'nope' (known: width, depth)");
  expect_error({"--param", "matmul.hidden=3"}, "--param: kernel matmul has no parameter 'hidden' (it has none)");
  expect_error({"--param", "paramtest.width=8"}, "--param paramtest.width: 8 is out of range [16, 1024]");
  expect_error({"--param", "paramtest.width=1025"}, "--param paramtest.width: 1025 is out of range [16, 1024]");
  expect_error({"--param", "paramtest.depth=0"}, "--param paramtest.depth: 0 is out of range [1, 8]");
  expect_error({"--param", "paramtest.width=abc"}, "--param paramtest.width: 'abc' is not an integer");
  expect_error({"--param", "paramtest.width=64x"}, "'64x' is not an integer");
  expect_error({"--param", "paramtest.width="}, "--param paramtest.width: '' is not an integer");
  expect_error({"--param"}, "--param");
}

TEST(Param, PlanFillsDefaultsAndOverridesForItsKernelOnly) {
  const Options o = parse({"--kernel", "matmul,paramtest", "--precision", "all", "--size", "matmul=64",
                           "--size", "paramtest=4", "--ranks-per-gpu", "1", "--param", "paramtest.width=64"});
  const auto plan = plan_of(o, DeviceKind::cpu, 2, 1);
  int with_params = 0;
  for (const auto& c : plan) {
    if (c.kernel == "matmul") {
      EXPECT_TRUE(c.params.empty()) << c.precision;
    } else {
      ASSERT_EQ(c.kernel, "paramtest");
      EXPECT_EQ(c.params, (KernelParams{{"depth", 2}, {"width", 64}})) << c.precision;
      ++with_params;
    }
    EXPECT_FALSE(c.is_mix());
  }
  EXPECT_EQ(with_params, 2);  // fp16, bf16
  // Without --param: every declared parameter at its default.
  const auto defaults = plan_of(parse({"--kernel", "paramtest", "--size", "4", "--ranks-per-gpu", "1"}),
                                   DeviceKind::cpu, 1, 1);
  ASSERT_EQ(defaults.size(), 1u);
  EXPECT_EQ(defaults[0].params, (KernelParams{{"depth", 2}, {"width", 32}}));
}

TEST(Param, ConfigsDifferingOnlyInParamsAreDifferent) {
  EXPECT_FALSE(plain("paramtest", "fp16", 4, 1, {{"width", 32}}) == plain("paramtest", "fp16", 4, 1, {{"width", 64}}));
  EXPECT_TRUE(plain("paramtest", "fp16", 4, 1, {{"width", 32}}) == plain("paramtest", "fp16", 4, 1, {{"width", 32}}));
}

// The kernels of the spec, once they are registered.
TEST(Param, InferenceDeclaresHiddenAndLayers) {
  const KernelInfo* k = find_kernel("inference");
  if (k == nullptr) GTEST_SKIP() << "kernel inference not registered yet";
  EXPECT_TRUE(k->per_iteration_latency);
  EXPECT_EQ(k->primary, PrimaryMetric::items);
  const Options o = parse({"--param", "inference.hidden=64", "--param", "inference.layers=2"});
  EXPECT_EQ(o.plan.kernel_params.at("inference"), (std::map<std::string, std::int64_t>{{"hidden", 64}, {"layers", 2}}));
  expect_error({"--param", "inference.nope=3"}, "--param: kernel inference has no parameter 'nope' (known: ");
  expect_error({"--param", "inference.hidden=15"}, "--param inference.hidden: 15 is out of range [16, 16384]");
  expect_error({"--param", "inference.hidden=16385"}, "--param inference.hidden: 16385 is out of range [16, 16384]");
  expect_error({"--param", "inference.layers=0"}, "--param inference.layers: 0 is out of range [1, 64]");
  expect_error({"--param", "inference.layers=65"}, "--param inference.layers: 65 is out of range [1, 64]");
  const auto plan = plan_of(parse({"--kernel", "inference", "--precision", "fp16", "--size", "4", "--ranks-per-gpu",
                                      "1", "--param", "inference.hidden=64"}),
                               DeviceKind::cpu, 1, 1);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].params, (KernelParams{{"hidden", 64}, {"layers", 4}}));
}

TEST(Param, StreamHasNoParametersAndCountsBytes) {
  const KernelInfo* k = find_kernel("stream");
  if (k == nullptr) GTEST_SKIP() << "kernel stream not registered yet";
  EXPECT_EQ(k->primary, PrimaryMetric::bytes);
  EXPECT_FALSE(k->per_iteration_latency);
  expect_error({"--param", "stream.hidden=3"}, "--param: kernel stream has no parameter 'hidden' (it has none)");
}

// ---------------------------------------------------------------- --allreduce

TEST(Allreduce, ByteCountsWithAndWithoutUnits) {
  EXPECT_FALSE(parse({}).measure.allreduce_bytes.has_value());
  EXPECT_EQ(parse({"--allreduce", "8"}).measure.allreduce_bytes, 8);
  EXPECT_EQ(parse({"--allreduce", "1024"}).measure.allreduce_bytes, 1024);
  EXPECT_EQ(parse({"--allreduce", "64K"}).measure.allreduce_bytes, 65536);
  EXPECT_EQ(parse({"--allreduce=64k"}).measure.allreduce_bytes, 65536);
  EXPECT_EQ(parse({"--allreduce", "1K"}).measure.allreduce_bytes, 1024);
  EXPECT_EQ(parse({"--allreduce", "4M"}).measure.allreduce_bytes, 4 * 1024 * 1024);
  EXPECT_EQ(parse({"--allreduce", "1G"}).measure.allreduce_bytes, std::int64_t{1} << 30);
  EXPECT_EQ(parse({"--allreduce", "1073741824"}).measure.allreduce_bytes, std::int64_t{1} << 30);
  // With other options of a normal run.
  const Options o = parse({"--device", "cpu", "--kernel", "matmul", "--allreduce", "64K", "--ranks-per-gpu", "1,2"});
  EXPECT_EQ(o.measure.allreduce_bytes, 65536);
}

TEST(Allreduce, RejectionsNameTheValue) {
  expect_error({"--allreduce", "7"}, "--allreduce: 7 must be a multiple of 8 bytes");
  expect_error({"--allreduce", "12"}, "--allreduce: 12 must be a multiple of 8 bytes");
  expect_error({"--allreduce", "2G"}, "--allreduce: 2G must be a multiple of 8 bytes (doubles), at most 1G");
  expect_error({"--allreduce", "1048577K"}, "--allreduce: 1048577K must be a multiple of 8 bytes (doubles), at most 1G");
  expect_error({"--allreduce", "0"}, "--allreduce: 0 is out of range");
  expect_error({"--allreduce", "0K"}, "--allreduce: 0 is out of range");
  for (const char* text : {"abc", "-8", "K", "8KB", "1.5K", "", " 8", "8 ", "+8", "8T"}) {
    expect_error({"--allreduce", text}, std::string("--allreduce: '") + text + "' is not a byte count");
  }
  expect_error({"--allreduce"}, "--allreduce");
  expect_error({"--allreduce", "8", "--device", "cpu", "--mode", "streams"}, "--allreduce: needs one rank per instance");
}

// ---------------------------------------------------------------- --mix

TEST(Mix, ParsesTenantsAsTyped) {
  const Options o = parse({"--mix", "matmul:1,nbody:1"});
  EXPECT_EQ(o.plan.mix, "matmul:1,nbody:1");
  ASSERT_EQ(o.plan.mix_tenants.size(), 2u);
  EXPECT_EQ(o.plan.mix_tenants[0], tenant("matmul", "", 0, 1));
  EXPECT_EQ(o.plan.mix_tenants[1], tenant("nbody", "", 0, 1));

  const Options full = parse({"--mix=matmul/bf16/64:3,nbody/fp64:2,paramtest/bf16/4:1"});
  ASSERT_EQ(full.plan.mix_tenants.size(), 3u);
  EXPECT_EQ(full.plan.mix_tenants[0], tenant("matmul", "bf16", 64, 3));
  EXPECT_EQ(full.plan.mix_tenants[1], tenant("nbody", "fp64", 0, 2));
  EXPECT_EQ(full.plan.mix_tenants[2], tenant("paramtest", "bf16", 4, 1));
  EXPECT_TRUE(parse({}).plan.mix.empty());
  EXPECT_TRUE(parse({}).plan.mix_tenants.empty());
}

TEST(Mix, RejectionsNameTheValue) {
  expect_error({"--mix", "matmul:1"}, "--mix: 'matmul:1' names one tenant; a mix needs at least two");
  expect_error({"--mix", "matmul/fp32/64:2"}, "'matmul/fp32/64:2' names one tenant");
  expect_error({"--mix", "matmul,nbody:1"}, "--mix: 'matmul' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
  expect_error({"--mix", ":2,nbody:1"}, "--mix: ':2' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
  expect_error({"--mix", "/fp32:2,nbody:1"}, "--mix: '/fp32:2' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
  expect_error({"--mix", "matmul/fp32/64/1:2,nbody:1"}, "--mix: 'matmul/fp32/64/1:2' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
  expect_error({"--mix", "matmul:0,nbody:1"}, "--mix matmul:0: 0 is out of range [1, 1024]");
  expect_error({"--mix", "matmul:x,nbody:1"}, "--mix matmul:x: 'x' is not an integer");
  expect_error({"--mix", "matmul:,nbody:1"}, "--mix matmul:: '' is not an integer");
  expect_error({"--mix", "gemm:1,nbody:1"}, "--mix: unknown kernel 'gemm'");
  expect_error({"--mix", "matmul/fp8:1,nbody:1"}, "--mix: kernel matmul has no precision 'fp8'");
  expect_error({"--mix", "matmul/fp32/0:1,nbody:1"}, "--mix matmul/fp32/0:1: 0 is out of range [1, 46340]");
  expect_error({"--mix", "matmul/fp32/46341:1,nbody:1"}, "46341 is out of range [1, 46340]");
  expect_error({"--mix", "matmul/fp32/big:1,nbody:1"}, "'big' is not an integer");
  expect_error({"--mix", "matmul:1,,nbody:1"}, "--mix");
  expect_error({"--mix", ""}, "--mix");
}

TEST(Mix, RefusesWhatContradictsIt) {
  expect_error({"--mix", "matmul:1,nbody:1", "--allreduce", "8"}, "--allreduce: the tenants of --mix");
  expect_error({"--allreduce", "8", "--mix", "matmul:1,nbody:1"}, "--allreduce: the tenants of --mix");
  expect_error({"--mix", "matmul:1,nbody:1", "--device", "cpu", "--mode", "streams"},
               "--mix: tenants are separate ranks");
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--kernel", "matmul"}, {"--precision", "fp32"}, {"--size", "64"}, {"--size", "matmul=64"},
           {"--ranks-per-gpu", "2"}}) {
    std::vector<std::string> args{"--mix", "matmul:1,nbody:1"};
    args.insert(args.end(), extra.begin(), extra.end());
    expect_error(args, "--mix: sets the plan itself");
  }
  // --param goes with a mix: it sets the tenants' parameters.
  EXPECT_NO_THROW(parse({"--mix", "matmul:1,paramtest:1", "--param", "paramtest.width=64"}));
}

// ---------------------------------------------------------------- the mix plan

TEST(MixPlan, EachTenantAloneThenAtTheTotalThenTheMix) {
  const Options o = parse({"--device", "cpu", "--mix", "matmul/fp32/64:1,nbody:1"});
  const auto plan = plan_of(o, DeviceKind::cpu, 2, 1);
  const KernelInfo& nbody = *find_kernel("nbody");
  const std::int64_t nbody_size = nbody.default_cpu_sizes[nbody.default_cpu_sizes.size() / 2];
  const std::string nbody_precision = nbody.default_precisions.front();
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0], plain("matmul", "fp32", 64, 1));
  EXPECT_EQ(plan[1], plain("nbody", nbody_precision, nbody_size, 1));
  EXPECT_EQ(plan[2], plain("matmul", "fp32", 64, 2));
  EXPECT_EQ(plan[3], plain("nbody", nbody_precision, nbody_size, 2));
  const Config& mix = plan[4];
  EXPECT_TRUE(mix.is_mix());
  EXPECT_EQ(mix.kernel, "mix");
  EXPECT_EQ(mix.kernel, kMixKernel);
  EXPECT_EQ(mix.precision, "matmul/fp32/64:1,nbody/" + nbody_precision + "/" + std::to_string(nbody_size) + ":1");
  EXPECT_EQ(mix.size, 0);
  EXPECT_EQ(mix.ranks_per_gpu, 2);
  EXPECT_TRUE(mix.params.empty());
  ASSERT_EQ(mix.tenants.size(), 2u);
  EXPECT_EQ(mix.tenants[0], tenant("matmul", "fp32", 64, 1));
  EXPECT_EQ(mix.tenants[1], tenant("nbody", nbody_precision, nbody_size, 1));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_FALSE(plan[i].is_mix()) << i;
}

TEST(MixPlan, DefaultsAreTheFirstPrecisionAndTheMiddleSizeOfTheDevice) {
  const Options o = parse({"--mix", "matmul:2,nbody:2"});
  const auto gpu = plan_of(o, DeviceKind::gpu, 4, 1);
  ASSERT_EQ(gpu.size(), 5u);
  // matmul GPU sizes {512, 1024, 2048, 4096, 8192}: 2048; nbody {4096, 16384, 65536}: 16384.
  EXPECT_EQ(gpu[4].precision, "matmul/fp32/2048:2,nbody/fp32/16384:2");
  EXPECT_EQ(gpu[0], plain("matmul", "fp32", 2048, 2));
  EXPECT_EQ(gpu[1], plain("nbody", "fp32", 16384, 2));
  EXPECT_EQ(gpu[2], plain("matmul", "fp32", 2048, 4));
  EXPECT_EQ(gpu[3], plain("nbody", "fp32", 16384, 4));
  EXPECT_EQ(gpu[4].ranks_per_gpu, 4);
  // CPU: matmul {64, 128, 256}: 128; nbody {256, 512}: 512.
  const auto cpu = plan_of(o, DeviceKind::cpu, 4, 1);
  EXPECT_EQ(cpu[4].precision, "matmul/fp32/128:2,nbody/fp32/512:2");
}

TEST(MixPlan, ThreeTenantsGiveSevenConfigurations) {
  const Options o = parse({"--mix", "matmul/fp32/64:1,nbody/fp64/256:2,matmul/bf16/32:1"});
  const auto plan = plan_of(o, DeviceKind::cpu, 4, 1);
  ASSERT_EQ(plan.size(), 7u);
  EXPECT_EQ(plan[0], plain("matmul", "fp32", 64, 1));
  EXPECT_EQ(plan[1], plain("nbody", "fp64", 256, 2));
  EXPECT_EQ(plan[2], plain("matmul", "bf16", 32, 1));
  EXPECT_EQ(plan[3], plain("matmul", "fp32", 64, 4));
  EXPECT_EQ(plan[4], plain("nbody", "fp64", 256, 4));
  EXPECT_EQ(plan[5], plain("matmul", "bf16", 32, 4));
  EXPECT_EQ(plan[6].precision, "matmul/fp32/64:1,nbody/fp64/256:2,matmul/bf16/32:1");
  EXPECT_EQ(plan[6].ranks_per_gpu, 4);
}

TEST(MixPlan, ATenantRepeatedIsMeasuredAloneOnce) {
  const auto plan = plan_of(parse({"--mix", "matmul/fp32/64:1,matmul/fp32/64:1"}), DeviceKind::cpu, 2, 1);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0], plain("matmul", "fp32", 64, 1));
  EXPECT_EQ(plan[1], plain("matmul", "fp32", 64, 2));
  EXPECT_TRUE(plan[2].is_mix());
  EXPECT_EQ(plan[2].precision, "matmul/fp32/64:1,matmul/fp32/64:1");
}

TEST(MixPlan, TenantsCarryTheRunsParameters) {
  const Options o = parse({"--mix", "paramtest/bf16/4:1,matmul/fp32/64:1", "--param", "paramtest.depth=3"});
  const auto plan = plan_of(o, DeviceKind::cpu, 2, 1);
  ASSERT_EQ(plan.size(), 5u);
  const KernelParams params{{"depth", 3}, {"width", 32}};
  EXPECT_EQ(plan[0], plain("paramtest", "bf16", 4, 1, params));
  EXPECT_EQ(plan[2], plain("paramtest", "bf16", 4, 2, params));
  EXPECT_TRUE(plan[1].params.empty());
  EXPECT_TRUE(plan[4].params.empty());  // the mix record's own params: {}
  EXPECT_EQ(plan[4].tenants[0].params, (std::map<std::string, std::int64_t>(params.begin(), params.end())));
  EXPECT_TRUE(plan[4].tenants[1].params.empty());
}

TEST(MixPlan, MoreRanksThanExistIsAUsageError) {
  const Options o = parse({"--mix", "matmul:4,nbody:4"});
  EXPECT_EQ(plan_error(o, DeviceKind::cpu, 2),
            "--mix: matmul:4,nbody:4 needs 8 active ranks per host, but only 2 exist");
  EXPECT_EQ(plan_error(o, DeviceKind::gpu, 4),
            "--mix: matmul:4,nbody:4 needs 8 active ranks per GPU, but only 4 exist");
  EXPECT_EQ(plan_error(o, DeviceKind::gpu, 8), "");
  EXPECT_EQ(plan_error(parse({"--mix", "matmul:1,nbody:2"}), DeviceKind::cpu, 2),
            "--mix: matmul:1,nbody:2 needs 3 active ranks per host, but only 2 exist");
}

TEST(MixPlan, NameIsCanonical) {
  EXPECT_EQ(mix_name({tenant("matmul", "fp32", 2048, 4), tenant("inference", "fp16", 64, 4)}),
            "matmul/fp32/2048:4,inference/fp16/64:4");
  EXPECT_EQ(mix_name({tenant("a", "p", 1, 1)}), "a/p/1:1");
  EXPECT_EQ(mix_name({}), "");
}

TEST(MixPlan, SlotsFallInTenantsInOrder) {
  const std::vector<Tenant> tenants{tenant("matmul", "fp32", 64, 2), tenant("nbody", "fp64", 256, 1),
                                    tenant("paramtest", "fp16", 4, 3, {{"width", 16}})};
  const Config mix{kMixKernel, mix_name(tenants), 0, 6, {}, tenants};
  const std::vector<int> expected{0, 0, 1, 2, 2, 2};
  for (int slot = 0; slot < 6; ++slot) EXPECT_EQ(tenant_of_slot(mix, slot), expected[slot]) << slot;
  EXPECT_EQ(config_of_slot(mix, 0), plain("matmul", "fp32", 64, 2));
  EXPECT_EQ(config_of_slot(mix, 1), plain("matmul", "fp32", 64, 2));
  EXPECT_EQ(config_of_slot(mix, 2), plain("nbody", "fp64", 256, 1));
  EXPECT_EQ(config_of_slot(mix, 3), plain("paramtest", "fp16", 4, 3, {{"width", 16}}));
  EXPECT_EQ(config_of_slot(mix, 5), plain("paramtest", "fp16", 4, 3, {{"width", 16}}));
  EXPECT_FALSE(config_of_slot(mix, 0).is_mix());
  // A homogeneous configuration: every slot runs it, tenant 0.
  const Config one = plain("matmul", "fp32", 64, 4);
  for (int slot = 0; slot < 4; ++slot) {
    EXPECT_EQ(config_of_slot(one, slot), one);
    EXPECT_EQ(tenant_of_slot(one, slot), 0);
  }
}

// The preflight memory check skips the mix: its tenants were checked alone at
// the mix's total.
TEST(MixPlan, PreflightSkipsTheMixRecord) {
  GpuInfo gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-0";
  gpu.memory_free_bytes = std::uint64_t{1} << 40;
  const Placement p = build_placement(DeviceKind::gpu, {describe_rank(0, "h", 0, DeviceKind::gpu, gpu),
                                                        describe_rank(1, "h", 1, DeviceKind::gpu, gpu)});
  const auto plan = plan_of(parse({"--mix", "matmul/fp32/64:1,nbody/fp32/256:1"}), DeviceKind::gpu, 2, 1);
  EXPECT_TRUE(preflight_memory(plan, p).empty());
}

}  // namespace
}  // namespace mpsb
