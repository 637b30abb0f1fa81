// The context fields for MIG, the MPS pinned memory limit and other users'
// MPS processes against schema/mpsbench-results.schema.json: filled, null,
// and absent (files written before them stay valid).
#include <gtest/gtest.h>

#include "results/result.hpp"
#include "results/result_json.hpp"
#include "results_schema.hpp"

namespace mpsb {
namespace {

Context context_with(bool filled) {
  const MigSnapshot snapshot = parse_mig_snapshot(R"({"gpus": [
    {"uuid": "GPU-5d6a4e1c-7e8f-4a1b-9c2d-3e4f5a6b7c8d", "mig_mode": "enabled", "instances": [
      {"uuid": "MIG-0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", "gpu_instance_id": 1, "sm_count": 42,
       "memory_total_bytes": 21139292160},
      {"uuid": "MIG-1b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d", "gpu_instance_id": null, "sm_count": null,
       "memory_total_bytes": null}]}]})");
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < 2; ++r) {
    GpuInfo g;
    g.index = 0;
    g.name = "NVIDIA A100-SXM4-80GB MIG 3g.40gb";
    g.uuid = "MIG-0b1c2d3e-4f50-5a6b-8c7d-9e0f1a2b3c4d";
    g.sm_count = 42;
    g.memory_total_bytes = 21139292160ull;
    g.memory_free_bytes = 2000000000ull;
    g.compute_mode = "DEFAULT";
    g.sm_clock_peak_khz = 1410000;
    g.mps_enabled = true;
    if (filled) {
      g.mig = mig_record_for(g.uuid, snapshot);
      g.mps_pinned_mem_limit_bytes = std::uint64_t{2} << 30;
    }
    ranks.push_back(describe_rank(r, "gpu01", r, DeviceKind::gpu, g));
  }
  Context c;
  c.version = "0.1.0";
  c.git_commit = "0123456789abcdef0123456789abcdef01234567";
  c.date_utc = "2026-11-21T14:41:00Z";
  c.argv = {"mpsbench"};
  c.hosts = {"gpu01"};
  c.mpi_library_version = "Open MPI v4.1.6";
  c.world_size = 2;
  c.device_requested = "auto";
  c.cuda = CudaVersions{13000, 13000, 130100};
  c.placement = build_placement(DeviceKind::gpu, ranks);
  if (filled) {
    c.other_mps_processes = std::vector<MpsProcess>{{1207, 4000000, "nvidia-cuda-mps-server", "gpu01"},
                                                    {310, 0, "nvidia-cuda-mps", "gpu01"}};
  }
  return c;
}

TEST(MpsContextSchema, FilledFieldsAreValid) {
  const auto context = to_json(context_with(true));
  ASSERT_EQ(context["gpus"][0]["mig"]["instances"].size(), 2u);
  const auto doc = nlohmann::json::parse(results_document(context, {}, true).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
}

TEST(MpsContextSchema, NullFieldsAreValid) {
  const auto context = to_json(context_with(false));
  ASSERT_TRUE(context["gpus"][0]["mig"].is_null());
  ASSERT_TRUE(context["other_mps_processes"].is_null());
  const auto doc = nlohmann::json::parse(results_document(context, {}, true).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
}

TEST(MpsContextSchema, FilesWithoutTheFieldsStayValid) {
  auto doc = nlohmann::json::parse(results_document(to_json(context_with(true)), {}, true).dump());
  auto& c = doc["context"];
  c.erase("other_mps_processes");
  for (auto& g : c["gpus"]) g.erase("mig");
  for (auto& r : c["ranks"]) r.erase("mps_pinned_mem_limit_bytes");
  EXPECT_EQ(results_schema_errors(doc), "");
}

TEST(MpsContextSchema, RejectsWrongValues) {
  auto doc = nlohmann::json::parse(results_document(to_json(context_with(true)), {}, true).dump());
  doc["context"]["gpus"][0]["mig"]["mode"] = "on";
  EXPECT_NE(results_schema_errors(doc), "");
  doc = nlohmann::json::parse(results_document(to_json(context_with(true)), {}, true).dump());
  doc["context"]["ranks"][0]["mps_pinned_mem_limit_bytes"] = 0;
  EXPECT_NE(results_schema_errors(doc), "");
  doc = nlohmann::json::parse(results_document(to_json(context_with(true)), {}, true).dump());
  doc["context"]["other_mps_processes"][0]["process"] = "bash";
  EXPECT_NE(results_schema_errors(doc), "");
}

}  // namespace
}  // namespace mpsb
