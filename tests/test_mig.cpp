// MIG through the injectable snapshot (MPSBENCH_FAKE_MIG): what a results
// file records per GPU, how the runtime's UUID is labelled, and --gpus with
// GPU-/MIG- UUIDs mapped to CUDA device indices. No GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "cli/options.hpp"
#include "measure/placement.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"
#include "scratch_dir.hpp"
#include "sharing/device.hpp"
#include "sharing/mig.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

const std::string kA100 = "GPU-5d6a4e1c-7e8f-4a1b-9c2d-3e4f5a6b7c8d";
const std::string kMig1 = "MIG-0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d";
const std::string kMig2 = "MIG-1b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d";
const std::string kH100 = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
const std::string kV100 = "GPU-2aaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";

const char* const kSnapshotJson = R"({
  "gpus": [
    {"uuid": "GPU-5d6a4e1c-7e8f-4a1b-9c2d-3e4f5a6b7c8d", "mig_mode": "enabled",
     "instances": [
       {"uuid": "MIG-0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", "gpu_instance_id": 1, "sm_count": 42,
        "memory_total_bytes": 21139292160},
       {"uuid": "MIG-1B1C2D3E-4F50-5A6B-8C7D-9E0F1A2B3C4D", "gpu_instance_id": 2, "sm_count": null}]},
    {"uuid": "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8", "mig_mode": "disabled"},
    {"uuid": "GPU-2aaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "mig_mode": "unsupported", "instances": []}
  ]
})";

MigSnapshot sample() { return parse_mig_snapshot(kSnapshotJson); }

TEST(Mig, ParsesTheInjectedSnapshot) {
  const MigSnapshot s = sample();
  EXPECT_TRUE(s.problem.empty());
  ASSERT_EQ(s.gpus.size(), 3u);
  EXPECT_EQ(s.gpus[0].mig_mode, "enabled");
  ASSERT_EQ(s.gpus[0].instances.size(), 2u);
  EXPECT_EQ(s.gpus[0].instances[0].uuid, kMig1);
  EXPECT_EQ(s.gpus[0].instances[0].gpu_instance_id, 1);
  EXPECT_EQ(s.gpus[0].instances[0].sm_count, 42);
  EXPECT_EQ(s.gpus[0].instances[0].memory_total_bytes, 21139292160ull);
  EXPECT_EQ(s.gpus[0].instances[1].sm_count, std::nullopt);
  EXPECT_EQ(s.gpus[0].instances[1].memory_total_bytes, std::nullopt);
  EXPECT_EQ(s.gpus[1].mig_mode, "disabled");
  EXPECT_TRUE(s.gpus[1].instances.empty());
  EXPECT_EQ(s.gpus[2].mig_mode, "unsupported");
  EXPECT_THROW(parse_mig_snapshot(R"({"gpus": [{"uuid": "GPU-1", "mig_mode": "on"}]})"), std::exception);
}

TEST(Mig, TheProbeReadsMpsbenchFakeMig) {
  ScratchDir dir;
  std::ofstream(dir / "mig.json") << kSnapshotJson;
  ::setenv("MPSBENCH_FAKE_MIG", (dir / "mig.json").c_str(), 1);
  const MigSnapshot s = read_mig_snapshot();
  EXPECT_TRUE(s.problem.empty()) << s.problem;
  EXPECT_EQ(s.gpus.size(), 3u);

  std::ofstream(dir / "broken.json") << "{";
  ::setenv("MPSBENCH_FAKE_MIG", (dir / "broken.json").c_str(), 1);
  EXPECT_NE(read_mig_snapshot().problem.find("MPSBENCH_FAKE_MIG: '"), std::string::npos);
  ::setenv("MPSBENCH_FAKE_MIG", (dir / "missing.json").c_str(), 1);
  EXPECT_NE(read_mig_snapshot().problem.find("cannot read"), std::string::npos);
  EXPECT_TRUE(read_mig_snapshot().gpus.empty());
  ::unsetenv("MPSBENCH_FAKE_MIG");
}

TEST(Mig, LabelsTheRuntimesUuidByWhatItNames) {
  const MigSnapshot s = sample();
  EXPECT_EQ(cuda_uuid_text("0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", s), kMig1);
  EXPECT_EQ(cuda_uuid_text("1b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", s), kMig2);  // NVML's case does not matter
  EXPECT_EQ(cuda_uuid_text("18f96ea3-1bcf-7253-29db-c89d0ab4e1e8", s), kH100);
  EXPECT_EQ(cuda_uuid_text("18f96ea3-1bcf-7253-29db-c89d0ab4e1e8", MigSnapshot{}), kH100);
  // Without NVML a MIG device cannot be told from a GPU.
  EXPECT_EQ(cuda_uuid_text("0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", MigSnapshot{{}, "NVML not loaded"}),
            "GPU-0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d");
}

TEST(Mig, RecordsTheModeAndInstancesOfTheDevicesGpu) {
  const MigSnapshot s = sample();
  const auto instance = mig_record_for(kMig1, s);
  ASSERT_TRUE(instance.has_value());
  EXPECT_EQ(instance->mode, "enabled");
  EXPECT_EQ(instance->parent_uuid, kA100);
  EXPECT_TRUE(instance->is_instance);
  EXPECT_EQ(instance->instances.size(), 2u);

  const auto parent = mig_record_for(kA100, s);
  ASSERT_TRUE(parent.has_value());
  EXPECT_FALSE(parent->is_instance);
  EXPECT_EQ(parent->instances.size(), 2u);

  const auto plain = mig_record_for(kH100, s);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->mode, "disabled");
  EXPECT_EQ(plain->parent_uuid, kH100);
  EXPECT_TRUE(plain->instances.empty());

  EXPECT_EQ(mig_record_for(kV100, s)->mode, "unsupported");
  EXPECT_EQ(mig_record_for("GPU-99999999-0000-0000-0000-000000000000", s), std::nullopt);
  EXPECT_EQ(mig_record_for(kH100, MigSnapshot{{}, "NVML not loaded"}), std::nullopt);
}

TEST(Mig, GpusSelectsByIndexOrUuid) {
  const std::vector<std::string> devices{kH100, kMig1, kMig2};
  EXPECT_EQ(resolve_gpu_selection({}, devices).usable, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(resolve_gpu_selection({"2", "0"}, devices).usable, (std::vector<int>{2, 0}));
  EXPECT_EQ(resolve_gpu_selection({kMig2, kH100}, devices).usable, (std::vector<int>{2, 0}));
  EXPECT_EQ(resolve_gpu_selection({"MIG-0B1C2D3E", "GPU-18f9"}, devices).usable, (std::vector<int>{1, 0}));
  // The runtime does not say whether its UUID names a MIG device: GPU- finds a MIG device too.
  EXPECT_EQ(resolve_gpu_selection({"GPU-0b1c"}, devices).usable, (std::vector<int>{1}));

  const GpuProbe missing = resolve_gpu_selection({"GPU-ffff"}, devices);
  EXPECT_TRUE(missing.usable.empty());
  EXPECT_EQ(missing.problem, "--gpus: no visible CUDA device has UUID GPU-ffff (3 visible)");
  const GpuProbe bare = resolve_gpu_selection({"MIG-"}, devices);  // names nothing (options refuse it first)
  EXPECT_EQ(bare.problem, "--gpus: no visible CUDA device has UUID MIG- (3 visible)");
  const GpuProbe several = resolve_gpu_selection({"GPU-1"}, std::vector<std::string>{kMig2, kH100, kMig1, kMig2});
  EXPECT_TRUE(several.usable.empty());
  EXPECT_EQ(several.problem, "--gpus: GPU-1 names several CUDA devices (0, 1, 3); give more of the UUID");
  const GpuProbe beyond = resolve_gpu_selection({"0", "3"}, devices);
  EXPECT_TRUE(beyond.usable.empty());
  EXPECT_EQ(beyond.problem, "--gpus: GPU 3 does not exist (3 visible)");
  EXPECT_EQ(resolve_gpu_selection({"1", kMig1}, devices).problem,
            "--gpus: " + kMig1 + " is CUDA device 1, listed already");
}

TEST(Mig, UuidSelectorsMatchByHexPrefix) {
  EXPECT_TRUE(uuid_selector_matches("GPU-18F96EA3", kH100));
  EXPECT_TRUE(uuid_selector_matches(kMig1, kMig1));
  EXPECT_FALSE(uuid_selector_matches("GPU-", kH100));
  EXPECT_FALSE(uuid_selector_matches("18f96ea3", kH100));
  EXPECT_FALSE(uuid_selector_matches("GPU-18f96ea4", kH100));
}

TEST(Mig, GpusOptionTakesIndicesAndUuids) {
  EXPECT_EQ(parse_options({"--gpus", "00,1," + kMig1 + ",GPU-18f9"}).gpus,
            (std::vector<std::string>{"0", "1", kMig1, "GPU-18f9"}));
  const auto error = [](const std::string& list) { return usage_error_text([&] { parse_options({"--gpus", list}); }); };
  EXPECT_EQ(error("0,00"), "--gpus: GPU 00 listed twice");
  EXPECT_EQ(error(kMig1 + "," + kMig1), "--gpus: GPU " + kMig1 + " listed twice");
  EXPECT_EQ(error("-1"), "--gpus: '-1' is neither a CUDA device index nor a GPU-/MIG- UUID");
  EXPECT_EQ(error("gpu0"), "--gpus: 'gpu0' is neither a CUDA device index nor a GPU-/MIG- UUID");
  EXPECT_EQ(error("GPU-xyz"), "--gpus: 'GPU-xyz' is not a GPU-/MIG- UUID (hex digits and dashes after the prefix)");
  EXPECT_NE(error("MIG-GPU-5d6a4e1c-7e8f-4a1b-9c2d-3e4f5a6b7c8d/1/0").find("old MIG-GPU-<uuid>/<gi>/<ci> form"),
            std::string::npos);
  EXPECT_NE(error("1024").find("out of range"), std::string::npos);
}

GpuInfo mig_gpu(const MigSnapshot& s, const std::string& uuid) {
  GpuInfo g;
  g.index = 0;
  g.name = "NVIDIA A100-SXM4-80GB MIG 3g.40gb";
  g.uuid = uuid;
  g.sm_count = 42;
  g.memory_total_bytes = 21139292160ull;
  g.memory_free_bytes = 2000000000ull;
  g.compute_mode = "DEFAULT";
  g.sm_clock_peak_khz = 1410000;
  g.mps_enabled = true;
  g.mps_pinned_mem_limit_bytes = std::uint64_t{2} << 30;
  g.mig = mig_record_for(uuid, s);
  return g;
}

TEST(Mig, TheRecordTravelsBetweenRanksAndIntoTheContext) {
  const MigSnapshot s = sample();
  const RankPlacement sent = describe_rank(0, "gpu01", 0, DeviceKind::gpu, mig_gpu(s, kMig1));
  const RankPlacement got = deserialize_rank(serialize(sent));
  ASSERT_TRUE(got.gpu.mig.has_value());
  EXPECT_EQ(*got.gpu.mig, *sent.gpu.mig);
  EXPECT_EQ(got.gpu.mps_pinned_mem_limit_bytes, std::uint64_t{2} << 30);
  GpuInfo plain = mig_gpu(s, kH100);
  plain.mig.reset();
  plain.mps_pinned_mem_limit_bytes.reset();
  const RankPlacement none = deserialize_rank(serialize(describe_rank(1, "gpu01", 1, DeviceKind::gpu, plain)));
  EXPECT_FALSE(none.gpu.mig.has_value());
  EXPECT_FALSE(none.gpu.mps_pinned_mem_limit_bytes.has_value());

  Context c;
  c.placement = build_placement(DeviceKind::gpu, {got, none});
  c.other_mps_processes = std::vector<MpsProcess>{{1207, 4000000, "nvidia-cuda-mps-server", "gpu01"}};
  const auto j = to_json(c);
  const auto& mig = j["gpus"][0]["mig"];
  EXPECT_EQ(mig["mode"], "enabled");
  EXPECT_EQ(mig["parent_uuid"], kA100);
  EXPECT_EQ(mig["is_instance"], true);
  ASSERT_EQ(mig["instances"].size(), 2u);
  EXPECT_EQ(mig["instances"][0]["uuid"], kMig1);
  EXPECT_EQ(mig["instances"][0]["sm_count"], 42);
  EXPECT_TRUE(mig["instances"][1]["sm_count"].is_null());
  EXPECT_TRUE(j["gpus"][1]["mig"].is_null());
  EXPECT_EQ(j["ranks"][0]["mps_pinned_mem_limit_bytes"], std::uint64_t{2} << 30);
  EXPECT_TRUE(j["ranks"][1]["mps_pinned_mem_limit_bytes"].is_null());
  EXPECT_EQ(j["other_mps_processes"][0]["pid"], 1207);
  EXPECT_EQ(j["other_mps_processes"][0]["process"], "nvidia-cuda-mps-server");
  c.other_mps_processes.reset();
  EXPECT_TRUE(to_json(c)["other_mps_processes"].is_null());
}

}  // namespace
}  // namespace mpsb
