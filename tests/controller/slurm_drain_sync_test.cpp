// The drain sync's pure part: `scontrol show node --oneliner` lines as
// Slurm 22.05 prints them, and what is asked of Slurm for each case (ours,
// someone else's, healthy again, a changed reason, unknown nodes).
#include "controller/slurm_drain_sync.h"

#include <gtest/gtest.h>

#include "controller/config.h"

namespace railyard::controller {
namespace {

// Lines as scontrol 22.05 printed them for nodes without slurmd.
constexpr const char* kShow =
    "NodeName=node001 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A AvailableFeatures=(null) "
    "ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=node001  RealMemory=1 AllocMem=0 FreeMem=N/A "
    "Sockets=1 Boards=1 State=UNKNOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=all  BootTime=None SlurmdStartTime=None LastBusyTime=2026-12-01T22:51:53 "
    "CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "
    "ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=railyard: rail 2 down [root@2026-12-01T22:51:59]\n"
    "NodeName=node002 CoresPerSocket=1 NodeAddr=127.0.0.1 State=IDLE ThreadsPerCore=1 Partitions=all\n"
    "NodeName=node003 CoresPerSocket=1 State=IDLE+DRAIN+NOT_RESPONDING Partitions=all "
    "Reason=maintenance: fan [admin@2026-12-01T20:00:00]\n"
    "NodeName=node004 State=DOWN+NOT_RESPONDING Reason=Not responding [slurm@2026-12-01T20:00:00]\n"
    "\n"
    "garbage line\n";

HostRails host(const std::string& name, std::vector<RailHealth> rails) {
  HostRails h;
  h.host = name;
  for (size_t r = 0; r < rails.size(); ++r) {
    RailState s;
    s.rail = static_cast<int32_t>(r);
    s.health = rails[r];
    h.rails.push_back(s);
    h.healthy += rails[r] == RailHealth::kHealthy;
  }
  return h;
}

TEST(SlurmDrainSync, ParsesOneliners) {
  const auto nodes = parse_scontrol_nodes(kShow);
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].name, "node001");
  EXPECT_EQ(nodes[0].state, "UNKNOWN+DRAIN");
  EXPECT_EQ(nodes[0].reason, "railyard: rail 2 down");
  EXPECT_TRUE(nodes[0].drain);
  EXPECT_TRUE(nodes[0].ours());
  EXPECT_EQ(nodes[1].reason, "");
  EXPECT_FALSE(nodes[1].drain);
  EXPECT_EQ(nodes[2].reason, "maintenance: fan");
  EXPECT_TRUE(nodes[2].drain);
  EXPECT_FALSE(nodes[2].ours());
  EXPECT_EQ(nodes[3].state, "DOWN+NOT_RESPONDING");
  EXPECT_FALSE(nodes[3].drain);
}

TEST(SlurmDrainSync, DrainsResumesAndLeavesOthersAlone) {
  RailHealthMap m;
  // node001: drained by us for rail 2, now healthy -> resume.
  m.hosts.push_back(host("node001", {RailHealth::kHealthy, RailHealth::kDegraded, RailHealth::kHealthy}));
  // node002: idle, rail 1 isolated and rail 2 drained -> drain.
  m.hosts.push_back(host("node002", {RailHealth::kHealthy, RailHealth::kIsolated, RailHealth::kDrained}));
  // node003: someone else's drain, rail 0 down -> left alone.
  m.hosts.push_back(host("node003", {RailHealth::kDown}));
  // node004: down with Slurm's own reason, rail 0 down -> left alone.
  m.hosts.push_back(host("node004", {RailHealth::kDown}));
  // node999: not in Slurm -> nothing.
  m.hosts.push_back(host("node999", {RailHealth::kDown}));
  const auto actions = plan_drain_sync(m, parse_scontrol_nodes(kShow));
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, SlurmAction::Kind::kResume);
  EXPECT_EQ(actions[0].node, "node001");
  EXPECT_EQ(actions[1].kind, SlurmAction::Kind::kDrain);
  EXPECT_EQ(actions[1].node, "node002");
  EXPECT_EQ(actions[1].reason, "railyard: rail 1 isolated, rail 2 drained");
}

TEST(SlurmDrainSync, OurDrainIsKeptOrItsReasonUpdated) {
  const auto nodes = parse_scontrol_nodes(kShow);
  RailHealthMap same;
  same.hosts.push_back(host("node001", {RailHealth::kHealthy, RailHealth::kHealthy, RailHealth::kDown}));
  EXPECT_TRUE(plan_drain_sync(same, nodes).empty()) << "the same reason: nothing to do";
  RailHealthMap changed;
  changed.hosts.push_back(host("node001", {RailHealth::kDrained, RailHealth::kHealthy, RailHealth::kDown}));
  const auto actions = plan_drain_sync(changed, nodes);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, SlurmAction::Kind::kDrain);
  EXPECT_EQ(actions[0].reason, "railyard: rail 0 drained, rail 2 down");
}

TEST(SlurmDrainSync, ConfigIsOptIn) {
  auto off = parse_controller_config("fabric: {source: offline, topology_file: f.topo}\n", "/etc/railyard/r.yaml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->slurm_drain_sync);
  auto on = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\n"
      "slurm: {drain_sync: true, scontrol: bin/scontrol, slurm_conf: slurm.conf, interval_s: 5}\n",
      "/etc/railyard/r.yaml");
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->slurm_drain_sync);
  EXPECT_EQ(on->slurm_scontrol, "/etc/railyard/bin/scontrol");
  EXPECT_EQ(on->slurm_conf, "/etc/railyard/slurm.conf");
  EXPECT_EQ(on->slurm_interval_s, 5u);
  auto bad = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\nslurm: {drain_sync: yes please}\n", "r.yaml");
  EXPECT_FALSE(bad.ok());
  auto zero = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\nslurm: {interval_s: 0}\n", "r.yaml");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("r.yaml:2"), std::string::npos) << zero.error().message;
}

}  // namespace
}  // namespace railyard::controller
