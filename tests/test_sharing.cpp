// MPS-state verification through an injectable probe: a result is recorded
// only under a mode its ranks' contexts confirm.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "sharing/sharing_state.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

class FakeProbe final : public MpsProbe {
 public:
  FakeProbe(bool mps, int sms, std::map<std::string, std::string> env = {})
      : mps_(mps), sms_(sms), env_(std::move(env)) {}
  bool mps_enabled(int) const override { return mps_; }
  int sm_count(int) const override { return sms_; }
  std::optional<std::string> environment(const char* name) const override {
    const auto it = env_.find(name);
    if (it == env_.end()) return std::nullopt;
    return it->second;
  }

 private:
  bool mps_;
  int sms_;
  std::map<std::string, std::string> env_;
};

RankSharing rank(int r, const MpsProbe& probe) { return RankSharing{r, "node1", read_sharing_state(probe, 0)}; }

std::string error_of(SharingMode mode, const std::vector<RankSharing>& ranks) {
  return usage_error_text([&] { verify_sharing_state(mode, ranks); });
}

TEST(Sharing, ParsesModes) {
  EXPECT_EQ(parse_sharing_mode("mps-qos"), SharingMode::mps_qos);
  EXPECT_EQ(parse_sharing_mode("streams"), SharingMode::streams);
  EXPECT_STREQ(to_string(SharingMode::timeslice), "timeslice");
  EXPECT_THROW(parse_sharing_mode("MPS"), UsageError);
}

TEST(ModeTable, EveryModeHasOneRowAndAUniqueName) {
  std::set<std::string> names;
  std::set<SharingMode> ids;
  for (const auto& m : sharing_modes()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_TRUE(ids.insert(m.id).second) << m.name;
    EXPECT_EQ(parse_sharing_mode(m.name), m.id);
    EXPECT_STREQ(to_string(m.id), m.name);
    EXPECT_NE(std::string(m.description), "") << m.name;
    // A mode that refuses some state says what to do about it, where the refusal has no fixed text.
    if (m.mps_client == Expect::no || m.thread_percentage == Expect::no) {
      EXPECT_NE(std::string(m.hint), "") << m.name;
    }
    EXPECT_TRUE(!m.green_contexts || m.one_process) << m.name << ": green contexts partition one process";
  }
  for (const auto mode : {SharingMode::automatic, SharingMode::timeslice, SharingMode::mps, SharingMode::mps_qos,
                          SharingMode::streams, SharingMode::green}) {
    EXPECT_EQ(ids.count(mode), 1u) << static_cast<int>(mode);
  }
  // "auto, timeslice, ... or green": every name once, in the table's order.
  std::string choices;
  for (std::size_t i = 0; i < sharing_modes().size(); ++i) {
    choices += (i == 0 ? "" : i + 1 == sharing_modes().size() ? " or " : ", ") + std::string(sharing_modes()[i].name);
  }
  EXPECT_EQ(mode_choices(), choices);
}

TEST(ModeTable, ListingHasOneLinePerModeWithItsProperties) {
  std::istringstream listing(mode_listing());
  std::string line;
  std::size_t lines = 0;
  for (; std::getline(listing, line); ++lines) {
    std::istringstream fields(line);
    std::string name, mps, one_process, needs_gpu;
    fields >> name >> mps >> one_process >> needs_gpu;
    ASSERT_LT(lines, sharing_modes().size());
    const SharingModeInfo& m = sharing_modes()[lines];
    EXPECT_EQ(name, m.name);
    const char* expected_mps = m.mps_client == Expect::yes ? "yes" : m.mps_client == Expect::no ? "no" : "any";
    EXPECT_EQ(mps, std::string("mps=") + expected_mps);
    EXPECT_EQ(one_process, std::string("one-process=") + (m.one_process ? "yes" : "no"));
    EXPECT_EQ(needs_gpu, std::string("needs-gpu=") + (m.needs_gpu ? "yes" : "no"));
    EXPECT_NE(line.find(m.description), std::string::npos) << line;
  }
  EXPECT_EQ(lines, sharing_modes().size());
  EXPECT_NE(mode_listing().find("mps-qos    mps=yes one-process=no  needs-gpu=yes"), std::string::npos)
      << mode_listing();
}

TEST(Sharing, ReadsStateFromTheProbe) {
  const SharingState s = read_sharing_state(FakeProbe(true, 32, {{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25"}}), 0);
  EXPECT_TRUE(s.mps_enabled);
  EXPECT_EQ(s.sm_count, 32);
  ASSERT_TRUE(s.active_thread_percentage.has_value());
  EXPECT_EQ(*s.active_thread_percentage, 25);
  EXPECT_FALSE(read_sharing_state(FakeProbe(false, 132), 0).active_thread_percentage.has_value());
  EXPECT_THROW(read_sharing_state(FakeProbe(true, 132, {{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "250"}}), 0),
               UsageError);
}

TEST(Sharing, MpsModeRejectsARankThatSilentlyRanWithoutMps) {
  // The daemon was unreachable for rank 1: CUDA ran it without MPS.
  const FakeProbe client(true, 132), plain(false, 132);
  const std::string e = error_of(SharingMode::mps, {rank(0, client), rank(1, plain)});
  EXPECT_NE(e.find("--mode mps: rank 1 on node1 is not an MPS client"), std::string::npos) << e;
  EXPECT_EQ(error_of(SharingMode::mps, {rank(0, client), rank(1, client)}), "");
}

TEST(Sharing, TimesliceRejectsMpsClients) {
  const FakeProbe client(true, 132), plain(false, 132);
  EXPECT_NE(error_of(SharingMode::timeslice, {rank(0, plain), rank(1, client)}).find("rank 1 on node1 is an MPS"),
            std::string::npos);
  EXPECT_EQ(error_of(SharingMode::timeslice, {rank(0, plain), rank(1, plain)}), "");
}

TEST(Sharing, QosNeedsAPercentageAndMpsRejectsOne) {
  const FakeProbe limited(true, 66, {{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"}}), full(true, 132);
  EXPECT_EQ(error_of(SharingMode::mps_qos, {rank(0, limited)}), "");
  EXPECT_NE(error_of(SharingMode::mps_qos, {rank(0, full)}).find("no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
            std::string::npos);
  EXPECT_NE(error_of(SharingMode::mps, {rank(0, limited)}).find("use --mode mps-qos"), std::string::npos);
  EXPECT_NE(error_of(SharingMode::mps_qos, {rank(0, FakeProbe(false, 132, {{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                                                                             "50"}}))})
                .find("not an MPS client"),
            std::string::npos);
}

TEST(Sharing, AutoAndStreamsAcceptAnyState) {
  const FakeProbe client(true, 132), plain(false, 132);
  EXPECT_EQ(error_of(SharingMode::automatic, {rank(0, client), rank(1, plain)}), "");
  EXPECT_EQ(error_of(SharingMode::streams, {rank(0, client)}), "");
}

TEST(Sharing, EffectiveModeOfAuto) {
  const SharingState plain{false, 132, std::nullopt}, client{true, 132, std::nullopt}, qos{true, 33, 25};
  EXPECT_EQ(effective_mode(SharingMode::automatic, {plain, plain}), "timeslice");
  EXPECT_EQ(effective_mode(SharingMode::automatic, {client, client}), "mps");
  EXPECT_EQ(effective_mode(SharingMode::automatic, {qos, qos}), "mps-qos");
  EXPECT_EQ(effective_mode(SharingMode::automatic, {client, plain}), "mixed");
  EXPECT_EQ(effective_mode(SharingMode::mps, {client}), "mps");
  EXPECT_EQ(effective_mode(SharingMode::streams, {plain}), "streams");
}

}  // namespace
}  // namespace mpsb
