// CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: parsing, the limit that applies to a
// rank's device, the check that it is in force, and the out-of-memory message
// that names it.
#include <gtest/gtest.h>

#include "runtime/check.hpp"
#include "sharing/mps_memory_limit.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
const std::string kUuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
const std::string kMig = "MIG-4f8f1e2a-2b5c-5a3e-9e3b-0a1b2c3d4e5f";

std::string error_of(const std::string& text) {
  return usage_error_text([&] { parse_pinned_mem_limits(text); });
}

TEST(PinnedMemLimit, ParsesDevicesAndSizes) {
  const auto limits = parse_pinned_mem_limits("0=1G,1=512MB, 2 = 4096 ,GPU-8932f937=2g,3=1GiB,4=64k,5=1T,6=100B");
  ASSERT_EQ(limits.size(), 8u);
  EXPECT_EQ(limits[0].device, "0");
  EXPECT_EQ(limits[0].bytes, kGiB);
  EXPECT_EQ(limits[1].bytes, 512 * kMiB);
  EXPECT_EQ(limits[2].device, "2");
  EXPECT_EQ(limits[2].bytes, 4096u);
  EXPECT_EQ(limits[3].device, "GPU-8932f937");
  EXPECT_EQ(limits[3].bytes, 2 * kGiB);
  EXPECT_EQ(limits[4].bytes, kGiB);
  EXPECT_EQ(limits[5].bytes, 64u * 1024);
  EXPECT_EQ(limits[6].bytes, 1024 * kGiB);
  EXPECT_EQ(limits[7].bytes, 100u);
  EXPECT_EQ(parse_pinned_mem_limits(kMig + "=3G").front().device, kMig);
}

TEST(PinnedMemLimit, RejectsMalformedItemsInOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "is empty"},
      {"1G", "has no '='"},
      {"=1G", "names no device"},
      {"gpu0=1G", "names no device"},
      {"GPU-=1G", "names no device"},
      {"-1=1G", "names no device"},
      {"0=", "has no valid size"},
      {"0=1X", "has no valid size"},
      {"0=1.5G", "has no valid size"},
      {"0=G", "has no valid size"},
      {"0=1GBB", "has no valid size"},
      {"0=99999999999999T", "has no valid size"},
      {"0=0", "sets a zero limit"},
      {"0=1G,", "is an empty item"},
      {"0=1G,,1=1G", "is an empty item"},
  };
  for (const auto& [text, why] : cases) {
    const std::string e = error_of(text);
    EXPECT_EQ(e.rfind("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT='" + text + "': ", 0), 0u) << text << ": " << e;
    EXPECT_NE(e.find(why), std::string::npos) << text << ": " << e;
    EXPECT_NE(e.find("e.g. 0=1G,1=512M"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(PinnedMemLimit, TheFirstItemNamingTheDeviceApplies) {
  const auto limits = parse_pinned_mem_limits("1=1G,GPU-8932F937=2G,0=3G," + kMig + "=4G");
  EXPECT_EQ(pinned_mem_limit_for(limits, 1, "GPU-00000000-0000-0000-0000-000000000000"), kGiB);
  // By UUID prefix (case-insensitive), before the later ordinal item.
  EXPECT_EQ(pinned_mem_limit_for(limits, 0, kUuid), 2 * kGiB);
  EXPECT_EQ(pinned_mem_limit_for(limits, 0, "GPU-11111111-0000-0000-0000-000000000000"), 3 * kGiB);
  EXPECT_EQ(pinned_mem_limit_for(limits, 5, kMig), 4 * kGiB);
  EXPECT_EQ(pinned_mem_limit_for(limits, 5, "GPU-11111111-0000-0000-0000-000000000000"), std::nullopt);
}

TEST(PinnedMemLimit, AppliesOnlyToAnMpsClient) {
  const std::optional<std::string> text = std::string("0=2G");
  EXPECT_EQ(applicable_pinned_mem_limit(text, true, 0, kUuid), 2 * kGiB);
  EXPECT_EQ(applicable_pinned_mem_limit(text, false, 0, kUuid), std::nullopt);  // CUDA ignores it without MPS
  EXPECT_EQ(applicable_pinned_mem_limit(std::nullopt, true, 0, kUuid), std::nullopt);
  EXPECT_EQ(applicable_pinned_mem_limit(text, true, 1, kUuid), std::nullopt);
  // Malformed is an error with or without MPS: the same verdict on every rank.
  EXPECT_THROW(applicable_pinned_mem_limit(std::string("0=lots"), false, 0, kUuid), UsageError);
}

TEST(PinnedMemLimit, FormatsGibibytes) {
  EXPECT_EQ(format_gib(2 * kGiB), "2.00 GiB");
  EXPECT_EQ(format_gib(512 * kMiB), "0.50 GiB");
}

TEST(PinnedMemLimit, AcceptsFreeMemoryWithinTheLimit) {
  EXPECT_NO_THROW(verify_pinned_mem_limits({}));
  EXPECT_NO_THROW(verify_pinned_mem_limits({
      {0, "gpu01", 0, 2 * kGiB, 2 * kGiB - 300 * kMiB},  // the limit less the context
      {1, "gpu01", 0, 2 * kGiB, 2 * kGiB + 10 * kMiB},   // within 1 %
      {2, "gpu01", 0, std::nullopt, 79 * kGiB},           // no limit
      {3, "gpu01", 0, 100 * kGiB, 79 * kGiB},             // above the GPU's memory: binds nothing
  }));
}

TEST(PinnedMemLimit, RefusesALimitThatIsNotInForce) {
  const std::string e = usage_error_text([] {
    verify_pinned_mem_limits({{0, "gpu01", 0, 2 * kGiB, 2 * kGiB - kMiB}, {1, "gpu02", 3, 2 * kGiB, 79 * kGiB}});
  });
  EXPECT_EQ(e,
            "rank 1 on gpu02: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT limits GPU 3 to 2.00 GiB, but its MPS client sees "
            "79.00 GiB free (cudaMemGetInfo): the limit is not in force, so the run would not measure what it asks "
            "for");
}

TEST(PinnedMemLimit, OutOfMemoryErrorsNameTheLimit) {
  set_pinned_memory_limit(2 * kGiB);
  try {
    MPSB_CUDA(cudaErrorMemoryAllocation);
    FAIL() << "no exception";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out of memory [cudaErrorMemoryAllocation] (this MPS client's pinned device memory limit "
                        "is 2.00 GiB)"),
              std::string::npos)
        << what;
  }
  set_pinned_memory_limit(std::nullopt);
  EXPECT_EQ(pinned_memory_limit_note(), "");
  try {
    MPSB_CUDA(cudaErrorMemoryAllocation);
    FAIL() << "no exception";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).find("pinned device memory limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mpsb
