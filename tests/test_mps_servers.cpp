// Other users' MPS servers and control daemons, found in a fake /proc tree:
// what is found, the one line that says what it does to the measurement, and
// --other-mps-users refuse|go-on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/options.hpp"
#include "scratch_dir.hpp"
#include "sharing/mps_servers.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

constexpr unsigned kMe = 1000;
constexpr unsigned kOther = 4000000;

// /proc/<pid>/status with Name and Uid, and a cmdline unless `cmdline` is null.
void add_raw_process(const ScratchDir& root, int pid, const std::string& name, unsigned uid, const char* cmdline,
                     std::size_t cmdline_size) {
  const std::filesystem::path dir = root.path() / std::to_string(pid);
  std::filesystem::create_directories(dir);
  std::ofstream status(dir / "status");
  status << "Name:\t" << name << "\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t" << pid << "\nPid:\t" << pid
         << "\nPPid:\t1\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid << "\nGid:\t0\t0\t0\t0\n";
  if (cmdline != nullptr) {
    std::ofstream out(dir / "cmdline", std::ios::binary);
    out.write(cmdline, static_cast<std::streamsize>(cmdline_size));
  }
}

void add_process(const ScratchDir& root, int pid, const std::string& name, unsigned uid, const std::string& argv0) {
  const std::string cmdline = argv0 + std::string(1, '\0') + "-d" + std::string(1, '\0');
  add_raw_process(root, pid, name, uid, cmdline.data(), cmdline.size());
}

// A typical host: init, our own daemon and server, another user's server and
// a root control daemon, a process whose command line is hidden, and noise.
void populate(const ScratchDir& root) {
  add_process(root, 1, "systemd", 0, "/sbin/init");
  add_process(root, 310, "nvidia-cuda-mps", 0, "/usr/bin/nvidia-cuda-mps-control");
  add_process(root, 420, "nvidia-cuda-mps", kMe, "nvidia-cuda-mps-control");
  add_process(root, 421, "nvidia-cuda-mps", kMe, "nvidia-cuda-mps-server");
  add_process(root, 1207, "nvidia-cuda-mps", kOther, "nvidia-cuda-mps-server");
  add_raw_process(root, 1300, "nvidia-cuda-mps", kOther + 1, nullptr, 0);  // cmdline hidden (hidepid, or gone)
  add_process(root, 1400, "nvidia-cuda-mps", kOther, "/opt/bin/nvidia-cuda-mps-tool");  // not a server
  add_process(root, 1500, "bash", kOther, "bash");
  std::filesystem::create_directories(root.path() / "self");        // not a PID
  std::filesystem::create_directories(root.path() / "1600");        // vanished: no status
  std::ofstream(root.path() / "1700");                              // a file, not a directory
}

TEST(MpsServers, FindsServersAndControlDaemonsInAFakeProcTree) {
  ScratchDir root;
  populate(root);
  const auto found = find_mps_processes(root.path().string());
  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(found[0].pid, 310);
  EXPECT_EQ(found[0].uid, 0u);
  EXPECT_EQ(found[0].process, "nvidia-cuda-mps-control");
  EXPECT_EQ(found[1].process, "nvidia-cuda-mps-control");
  EXPECT_EQ(found[2].process, "nvidia-cuda-mps-server");
  EXPECT_EQ(found[3].pid, 1207);
  EXPECT_EQ(found[3].process, "nvidia-cuda-mps-server");
  EXPECT_EQ(found[4].pid, 1300);
  EXPECT_EQ(found[4].process, "nvidia-cuda-mps");  // server or control daemon: cannot tell

  const auto others = of_other_users(found, kMe);
  ASSERT_EQ(others.size(), 3u);
  EXPECT_EQ(others[0].pid, 310);
  EXPECT_EQ(others[1].pid, 1207);
  EXPECT_EQ(others[2].pid, 1300);
}

TEST(MpsServers, AnUntruncatedNameNeedsNoCommandLine) {
  ScratchDir root;
  add_raw_process(root, 7, "nvidia-cuda-mps-server", kOther, nullptr, 0);
  add_raw_process(root, 8, "nvidia-cuda-mps-control", kOther, nullptr, 0);
  const auto found = find_mps_processes(root.path().string());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].process, "nvidia-cuda-mps-server");
  EXPECT_EQ(found[1].process, "nvidia-cuda-mps-control");
}

TEST(MpsServers, AMissingRootOrOnlyOurOwnDaemonsFindNothingToReport) {
  EXPECT_TRUE(find_mps_processes("/nonexistent-mpsbench-proc").empty());
  ScratchDir root;
  add_process(root, 420, "nvidia-cuda-mps", kMe, "nvidia-cuda-mps-control");
  add_process(root, 421, "nvidia-cuda-mps", kMe, "nvidia-cuda-mps-server");
  EXPECT_TRUE(of_other_users(find_mps_processes(root.path().string()), kMe).empty());
  EXPECT_EQ(decide_other_mps_users(OtherMpsUsers::refuse, {}), "");
  EXPECT_EQ(decide_other_mps_users(OtherMpsUsers::go_on, {}), "");
}

TEST(MpsServers, OneLineSaysWhatTheOtherUsersServerDoesToTheMeasurement) {
  MpsProcess server{1207, kOther, "nvidia-cuda-mps-server", "gpu01"};
  MpsProcess control{310, 0, "nvidia-cuda-mps-control", "gpu01"};
  const std::string line = describe_other_mps_users({control, server});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.rfind("another user's MPS server is running (", 0), 0u) << line;
  EXPECT_NE(line.find("nvidia-cuda-mps-control pid 310 uid 0 on gpu01, nvidia-cuda-mps-server pid 1207 uid 4000000 "
                      "on gpu01"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("wait until that server has no clients left"), std::string::npos) << line;
  EXPECT_NE(line.find("silently serialising the two users' jobs"), std::string::npos) << line;
  EXPECT_NE(line.find("timings would include that wait"), std::string::npos) << line;

  EXPECT_EQ(describe_other_mps_users({control}).rfind("another user's MPS control daemon is running", 0), 0u);
  EXPECT_EQ(describe_other_mps_users({MpsProcess{1300, kOther, "nvidia-cuda-mps", ""}})
                .rfind("another user's MPS server or control daemon is running (nvidia-cuda-mps pid 1300 uid "
                       "4000000)",
                       0),
            0u);
}

TEST(MpsServers, RefuseIsAUsageErrorAndGoOnAWarning) {
  const std::vector<MpsProcess> others{{1207, kOther, "nvidia-cuda-mps-server", "gpu01"}};
  const std::string refused = usage_error_text([&] { decide_other_mps_users(OtherMpsUsers::refuse, others); });
  EXPECT_NE(refused.find("another user's MPS server is running"), std::string::npos) << refused;
  EXPECT_NE(refused.find("pass --other-mps-users go-on to measure anyway"), std::string::npos) << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos);
  const std::string warning = decide_other_mps_users(OtherMpsUsers::go_on, others);
  EXPECT_NE(warning.find("timings would include that wait"), std::string::npos) << warning;
  EXPECT_NE(warning.find("(--other-mps-users go-on: measuring anyway)"), std::string::npos) << warning;
  EXPECT_EQ(warning.find('\n'), std::string::npos);
}

TEST(MpsServers, WhatAHostSendsSurvivesTheTrip) {
  const std::vector<MpsProcess> mine{{310, 0, "nvidia-cuda-mps-control", ""}, {1207, kOther, "nvidia-cuda-mps", ""}};
  const auto back = deserialize_mps_processes(serialize_mps_processes(mine), "gpu07");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].pid, 310);
  EXPECT_EQ(back[0].uid, 0u);
  EXPECT_EQ(back[0].process, "nvidia-cuda-mps-control");
  EXPECT_EQ(back[1].uid, kOther);
  EXPECT_EQ(back[1].host, "gpu07");
  EXPECT_TRUE(deserialize_mps_processes("", "gpu07").empty());
}

TEST(MpsServers, TheProcRootComesFromTheEnvironment) {
  ::unsetenv("MPSBENCH_PROC_ROOT");
  EXPECT_EQ(proc_root_from_environment(), "/proc");
  ::setenv("MPSBENCH_PROC_ROOT", "/tmp/fake-proc", 1);
  EXPECT_EQ(proc_root_from_environment(), "/tmp/fake-proc");
  ::unsetenv("MPSBENCH_PROC_ROOT");
}

TEST(MpsServers, OptionDefaultsToRefuse) {
  EXPECT_EQ(parse_options({}).other_mps_users, OtherMpsUsers::refuse);
  EXPECT_EQ(parse_options({"--other-mps-users", "go-on"}).other_mps_users, OtherMpsUsers::go_on);
  EXPECT_EQ(parse_options({"--other-mps-users=refuse"}).other_mps_users, OtherMpsUsers::refuse);
  EXPECT_EQ(usage_error_text([] { parse_options({"--other-mps-users", "ignore"}); }),
            "--other-mps-users: unknown value 'ignore' (choose refuse or go-on)");
  EXPECT_STREQ(to_string(OtherMpsUsers::go_on), "go-on");
  EXPECT_NE(usage_text().find("--other-mps-users refuse|go-on"), std::string::npos);
}

}  // namespace
}  // namespace mpsb
