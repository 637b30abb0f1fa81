#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "random_inputs.hpp"
#include "registry.hpp"
#include "stream_cpu.hpp"

namespace mpsb::stream {
namespace {

constexpr std::uint64_t kSeed = 42;

template <typename T>
std::vector<T> inputs(std::int64_t n, std::uint64_t seed) {
  std::vector<T> v(static_cast<std::size_t>(n));
  fill_inputs(v.data(), n, seed);
  return v;
}

// The triad written the obvious way, in float64 then rounded once.
template <typename T>
std::vector<T> naive_triad(const std::vector<T>& b, const std::vector<T>& c) {
  std::vector<T> a(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    a[i] = static_cast<T>(static_cast<double>(b[i]) + 3.0 * static_cast<double>(c[i]));
  }
  return a;
}

TEST(Inputs, AreTheSplitmixSequenceAddressedByIndex) {
  std::uint64_t state = kSeed;
  for (std::int64_t i = 0; i < 1000; ++i) {
    const std::uint64_t z = splitmix64(state);
    const auto m = static_cast<std::int64_t>(z >> 42);
    EXPECT_EQ(static_cast<double>(input_value(kSeed, i)), static_cast<double>(2 * m + 1 - (1 << 22)) / (1 << 22))
        << i;
  }
}

TEST(Inputs, AreOddMultiplesOfTwoToTheMinus22InsideTheUnitInterval) {
  for (std::int64_t i = 0; i < 100000; ++i) {
    const float v = input_value(7, i);
    ASSERT_GT(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    const double k = static_cast<double>(v) * (1 << 22);
    ASSERT_EQ(k, std::floor(k)) << i;
    ASSERT_EQ(std::fmod(std::fabs(k), 2.0), 1.0) << i;  // odd: never zero
  }
}

TEST(Inputs, MakeTheTriadRoundOnceWithOrWithoutFma) {
  // s c is exact in float, so a fused and an unfused triad agree bit for bit:
  // the GPU (which contracts to FMA) and the host reference cannot differ.
  for (std::int64_t i = 0; i < 200000; ++i) {
    const float b = input_value(seed_b(3), i), c = input_value(seed_c(3), i);
    const float product = 3.0f * c;
    ASSERT_EQ(static_cast<double>(product), 3.0 * static_cast<double>(c)) << i;
    ASSERT_EQ(std::fma(3.0f, c, b), b + product) << i;
  }
}

class CpuOps : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(CpuOps, TriadAndCopyMatchTheNaiveReference) {
  const std::int64_t n = GetParam();
  {
    const auto b = inputs<double>(n, seed_b(kSeed)), c = inputs<double>(n, seed_c(kSeed));
    std::vector<double> a(b.size(), NAN);
    triad(a.data(), b.data(), c.data(), n);
    EXPECT_EQ(a, naive_triad(b, c));
  }
  {
    const auto b = inputs<float>(n, seed_b(kSeed)), c = inputs<float>(n, seed_c(kSeed));
    std::vector<float> a(b.size(), NAN);
    triad(a.data(), b.data(), c.data(), n);
    EXPECT_EQ(a, naive_triad(b, c));
  }
  {
    const auto src = inputs<double>(n, seed_src(kSeed));
    std::vector<double> dst(src.size(), NAN);
    copy(dst.data(), src.data(), n);
    EXPECT_EQ(dst, src);
  }
}
// Sizes not divisible by the GPU vector widths (2, 4) as well as divisible ones.
INSTANTIATE_TEST_SUITE_P(Sizes, CpuOps, ::testing::Values(1, 2, 3, 4, 5, 7, 1000, 1023, 65537));

// A correct output of `op` for the workload seed kSeed, as float64 values
// (converted to the element type by output_bytes).
std::vector<double> correct_output(Op op, std::int64_t n) {
  if (op == Op::copy) return inputs<double>(n, seed_src(kSeed));
  if (op == Op::triad_fp64) return naive_triad(inputs<double>(n, seed_b(kSeed)), inputs<double>(n, seed_c(kSeed)));
  const auto a = naive_triad(inputs<float>(n, seed_b(kSeed)), inputs<float>(n, seed_c(kSeed)));
  return std::vector<double>(a.begin(), a.end());
}

Verification verify_values(Op op, const std::vector<double>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  if (op == Op::triad_fp32) {
    const std::vector<float> f(values.begin(), values.end());
    return verify_output(op, f.data(), n, kSeed, 9);
  }
  return verify_output(op, values.data(), n, kSeed, 9);
}

double next_up(Op op, double x) {
  return op == Op::triad_fp32 ? static_cast<double>(std::nextafter(static_cast<float>(x), 2.0f))
                              : std::nextafter(x, 2.0);
}

const Op kOps[] = {Op::triad_fp64, Op::triad_fp32, Op::copy};

TEST(StreamVerify, AcceptsACorrectOutputInEveryPrecision) {
  for (const Op op : kOps) {
    const std::int64_t n = 4099;
    const Verification v = verify_values(op, correct_output(op, n));
    EXPECT_TRUE(v.ok) << static_cast<int>(op) << ": " << v.detail;
    EXPECT_EQ(v.checked, n);  // small n: every element
    EXPECT_EQ(v.max_rel_error, 0.0);
    EXPECT_EQ(v.tolerance, 0.0);
  }
}

TEST(StreamVerify, FlagsOneElementOffByOneUlpInEveryPrecision) {
  for (const Op op : kOps) {
    auto out = correct_output(op, 4099);
    out[1234] = next_up(op, out[1234]);
    const Verification v = verify_values(op, out);
    EXPECT_FALSE(v.ok) << static_cast<int>(op);
    EXPECT_GT(v.max_rel_error, v.tolerance);
    const std::string where = op == Op::copy ? "dst[1234]" : "a[1234]";
    EXPECT_NE(v.detail.find(where), std::string::npos) << v.detail;
  }
}

TEST(StreamVerify, FlagsANaNInEveryPrecision) {
  for (const Op op : kOps) {
    auto out = correct_output(op, 4099);
    out[17] = NAN;
    const Verification v = verify_values(op, out);
    EXPECT_FALSE(v.ok) << static_cast<int>(op);
    EXPECT_NE(v.detail.find("not finite"), std::string::npos) << v.detail;
  }
}

TEST(StreamVerify, LargeArraysAreSampledButEndsAndFinitenessAlwaysChecked) {
  const std::int64_t n = kFullCheckMax + 4097;
  for (const Op op : kOps) {
    auto out = correct_output(op, n);
    const Verification good = verify_values(op, out);
    ASSERT_TRUE(good.ok) << good.detail;
    EXPECT_GE(good.checked, kSampledElements / 2);
    EXPECT_LE(good.checked, kSampledElements + 2);

    auto last = out;
    last[static_cast<std::size_t>(n - 1)] = next_up(op, last[static_cast<std::size_t>(n - 1)]);
    EXPECT_FALSE(verify_values(op, last).ok);
    auto first = out;
    first[0] = next_up(op, first[0]);
    EXPECT_FALSE(verify_values(op, first).ok);

    // An unwritten element between samples: the finiteness scan covers all.
    for (const std::size_t where : {std::size_t{1}, std::size_t{777777}, static_cast<std::size_t>(n - 2)}) {
      auto nan = out;
      nan[where] = NAN;
      const Verification v = verify_values(op, nan);
      EXPECT_FALSE(v.ok) << where;
      EXPECT_NE(v.detail.find("[" + std::to_string(where) + "]"), std::string::npos) << v.detail;
    }
  }
}

TEST(StreamVerify, ChunkedCheckingAgreesWithTheWholeArray) {
  for (const Op op : kOps) {
    const std::int64_t n = kFullCheckMax + 12345;  // sampled: samples must be found across chunk edges
    const auto out = correct_output(op, n);
    const std::vector<float> f(out.begin(), out.end());
    const void* data = op == Op::triad_fp32 ? static_cast<const void*>(f.data()) : out.data();
    const Verification whole = verify_output(op, data, n, kSeed, 9);
    OutputChecker checker(op, n, kSeed, 9);
    const std::int64_t chunk = 100003;
    for (std::int64_t begin = 0; begin < n; begin += chunk) {
      const std::int64_t count = std::min(chunk, n - begin);
      const auto* p = static_cast<const unsigned char*>(data) + static_cast<std::size_t>(begin) * element_bytes(op);
      checker.check(p, begin, count);
    }
    const Verification chunked = checker.result();
    EXPECT_TRUE(chunked.ok) << chunked.detail;
    EXPECT_EQ(chunked.checked, whole.checked);
  }
}

TEST(StreamVerify, ChunksOutOfOrderOrMissingAreRefused) {
  const auto out = correct_output(Op::copy, 100);
  OutputChecker checker(Op::copy, 100, kSeed, 1);
  EXPECT_THROW(checker.check(out.data() + 10, 10, 10), std::logic_error);
  checker.check(out.data(), 0, 50);
  const Verification v = checker.result();  // half the array never arrived
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("only 50 of 100"), std::string::npos) << v.detail;
}

TEST(StreamVerify, WrongSeedFails) {
  // The reference depends on the inputs: an output from other inputs fails.
  const auto out = correct_output(Op::triad_fp64, 64);
  EXPECT_FALSE(verify_output(Op::triad_fp64, out.data(), 64, kSeed + 1, 1).ok);
}

TEST(Counting, WorkFollowsTheCountingRule) {
  const std::int64_t n = 1000;
  const Work fp64 = work_per_iteration("fp64", n);
  EXPECT_DOUBLE_EQ(fp64.bytes, 3.0 * n * 8);
  EXPECT_DOUBLE_EQ(fp64.flops, 2.0 * n);
  const Work fp32 = work_per_iteration("fp32", n);
  EXPECT_DOUBLE_EQ(fp32.bytes, 3.0 * n * 4);
  EXPECT_DOUBLE_EQ(fp32.flops, 2.0 * n);
  const Work cp = work_per_iteration("copy", n);
  EXPECT_DOUBLE_EQ(cp.bytes, 2.0 * n * 8);
  EXPECT_DOUBLE_EQ(cp.flops, 0.0);
  for (const Work& w : {fp64, fp32, cp}) {
    EXPECT_EQ(w.items, 0.0);
    EXPECT_TRUE(w.item_unit.empty());
  }
  // Sizes beyond 32 bits count exactly.
  EXPECT_DOUBLE_EQ(work_per_iteration("fp64", (std::int64_t{1} << 31) - 1).bytes, 24.0 * 2147483647.0);
}

TEST(Counting, UnknownPrecisionIsRefused) {
  EXPECT_FALSE(is_supported_precision("fp16"));
  EXPECT_THROW(op_for("fp16"), std::invalid_argument);
  EXPECT_THROW(work_per_iteration("triad", 8), std::invalid_argument);
}

TEST(Info, FieldsAsSpecified) {
  const KernelInfo* k = find_kernel("stream");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->name, "stream");
  EXPECT_EQ(k->precisions, (std::vector<std::string>{"fp64", "fp32", "copy"}));
  EXPECT_EQ(k->default_precisions, (std::vector<std::string>{"fp64", "copy"}));
  EXPECT_EQ(k->default_gpu_sizes, (std::vector<std::int64_t>{std::int64_t{1} << 25}));
  EXPECT_EQ(k->default_cpu_sizes, (std::vector<std::int64_t>{std::int64_t{1} << 20}));
  EXPECT_EQ(k->max_size, (std::int64_t{1} << 31) - 1);
  EXPECT_EQ(k->primary, PrimaryMetric::bytes);
  EXPECT_TRUE(k->params.empty());
  EXPECT_FALSE(k->per_iteration_latency);
  EXPECT_GT(k->suite_order, 30);  // after hybrid
  EXPECT_LT(k->suite_order, 40);  // before inference
  EXPECT_NE(k->summary.find("3 N"), std::string::npos) << k->summary;  // the counting rule
  EXPECT_NE(k->summary.find("2 N"), std::string::npos) << k->summary;
  for (const auto& other : kernel_registry()) {
    if (other.name != "stream") {
      EXPECT_NE(other.suite_order, k->suite_order) << other.name;
    }
  }
  for (const auto& p : k->precisions) EXPECT_TRUE(is_supported_precision(p)) << p;
}

TEST(Info, DeviceBytesAreTheArrays) {
  const KernelInfo* k = find_kernel("stream");
  ASSERT_NE(k, nullptr);
  const std::int64_t n = std::int64_t{1} << 25;
  EXPECT_DOUBLE_EQ(k->device_bytes("fp64", n, {}), 3.0 * 8 * n);
  EXPECT_DOUBLE_EQ(k->device_bytes("fp32", n, {}), 3.0 * 4 * n);
  EXPECT_DOUBLE_EQ(k->device_bytes("copy", n, {}), 2.0 * 8 * n);
}

std::unique_ptr<Workload> cpu_stream(const std::string& precision, std::int64_t size) {
  WorkloadArgs args;
  args.device = DeviceKind::cpu;
  args.precision = precision;
  args.size = size;
  return find_kernel("stream")->make(args);
}

TEST(StreamCpuWorkload, RunsAndVerifiesThroughTheRegistry) {
  const KernelInfo* k = find_kernel("stream");
  ASSERT_NE(k, nullptr);
  for (const auto& p : k->precisions) {
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1001}, k->default_cpu_sizes.front()}) {
      auto w = cpu_stream(p, n);
      w->setup(11);
      w->run();
      w->sync();
      const Work work = w->work();
      EXPECT_DOUBLE_EQ(work.bytes, work_per_iteration(p, n).bytes);
      const Verification v = w->verify();
      EXPECT_TRUE(v.ok) << p << " " << n << ": " << v.detail;
      EXPECT_GT(v.checked, 0);
    }
  }
}

TEST(StreamCpuWorkload, PoisonedOutputFailsUntilTheNextRun) {
  for (const char* p : {"fp64", "fp32", "copy"}) {
    auto w = cpu_stream(p, 333);
    w->setup(1);
    w->run();
    ASSERT_TRUE(w->verify().ok) << p;
    w->poison_outputs();  // what the harness does before the last repetition
    EXPECT_FALSE(w->verify().ok) << p;
    w->run();
    EXPECT_TRUE(w->verify().ok) << p;
  }
}

TEST(StreamCpuWorkload, UnrunWorkloadFailsVerification) {
  for (const char* p : {"fp64", "fp32", "copy"}) {
    auto w = cpu_stream(p, 64);
    w->setup(1);  // output NaN, never computed
    const Verification v = w->verify();
    EXPECT_FALSE(v.ok) << p;
    EXPECT_NE(v.detail.find("not finite"), std::string::npos) << v.detail;
  }
}

}  // namespace
}  // namespace mpsb::stream
