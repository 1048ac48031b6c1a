// The scheduler's tree (blocks of hosts sharing their rail leaves, pods, the
// fabric) and per-rail health, on generated rail-optimized fabrics whose
// shape the generator documents (routing/generator.h): the expectations are
// computed here from that documented shape, not from the code under test.
#include "controller/rail_health.h"
#include "controller/scheduler_topology.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "routing/generator.h"
#include "routing/node_lookup.h"

namespace railyard::controller {
namespace {

std::shared_ptr<const FabricView> view_of(routing::Fabric fabric) {
  auto v = build_view(std::move(fabric), policies::Policy{}, "test", 1);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return *v;
}

routing::Fabric roft(uint32_t servers, uint32_t rails, uint32_t levels, uint32_t radix) {
  routing::GeneratorSpec spec;
  spec.servers = servers;
  spec.rails = rails;
  spec.levels = levels;
  spec.radix = radix;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g->fabric);
}

std::string host(uint32_t i) {  // 0-based server -> "node001"
  char b[16];
  std::snprintf(b, sizeof b, "node%03u", i + 1);
  return b;
}

std::string leaf(uint32_t g, uint32_t r) {
  char b[32];
  std::snprintf(b, sizeof b, "leaf g%03u r%u", g, r);
  return b;
}

std::set<std::string> names(const SchedulerTopology& t, const TopologyGroup& g) {
  std::set<std::string> out;
  for (uint32_t h : g.hosts) out.insert(t.hosts[h]);
  return out;
}

TEST(SchedulerTopology, TwoLevelRoftIsBlocksUnderTheFabric) {
  // radix 16: d = 8 servers per group; 32 servers -> 4 groups; leaf (g, r).
  auto v = view_of(roft(32, 4, 2, 16));
  const SchedulerTopology t = scheduler_topology(*v);
  ASSERT_EQ(t.tiers.size(), 2u);
  ASSERT_EQ(t.tiers[0].size(), 4u);
  for (uint32_t g = 0; g < 4; ++g) {
    const TopologyGroup& b = t.tiers[0][g];
    std::set<std::string> want;
    for (uint32_t i = 0; i < 8; ++i) want.insert(host(g * 8 + i));
    EXPECT_EQ(names(t, b), want) << "block " << g;
    ASSERT_EQ(b.leaves.size(), 4u);
    for (uint32_t r = 0; r < 4; ++r) EXPECT_EQ(v->fabric.desc(b.leaves[r]), leaf(g, r));
    EXPECT_EQ(b.name, "leaf_g00" + std::to_string(g) + "_r0");
  }
  ASSERT_EQ(t.tiers[1].size(), 1u);
  EXPECT_EQ(t.tiers[1][0].name, "fabric");
  EXPECT_EQ(t.tiers[1][0].children, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.tiers[1][0].hosts.size(), 32u);
  EXPECT_TRUE(t.unplaced.empty());
  for (uint32_t h = 0; h < 32; ++h) EXPECT_EQ(t.group_of(t.host_block[h], 1), 0u);
}

TEST(SchedulerTopology, ThreeLevelRoftHasPods) {
  // radix 8: d = 4; 32 servers -> 8 groups; 2 rails -> 16 leaves in
  // rail-major order (r, g), cut into pods of d = 4 leaves: leaf (r, g) is in
  // pod (r * 8 + g) / 4. Servers of groups g and g' share pods on every rail
  // iff g / 4 == g' / 4: two pods of 4 blocks (16 hosts) each.
  auto v = view_of(roft(32, 2, 3, 8));
  const SchedulerTopology t = scheduler_topology(*v);
  ASSERT_EQ(t.tiers.size(), 3u);
  ASSERT_EQ(t.tiers[0].size(), 8u);
  ASSERT_EQ(t.tiers[1].size(), 2u);
  ASSERT_EQ(t.tiers[2].size(), 1u);
  EXPECT_EQ(t.tiers[2][0].name, "fabric");
  std::map<uint32_t, std::set<std::string>> pods;  // (pod of rail 0) -> hosts
  for (uint32_t s = 0; s < 32; ++s) pods[(0 * 8 + s / 4) / 4].insert(host(s));
  ASSERT_EQ(pods.size(), 2u);
  std::set<std::set<std::string>> want, got;
  for (auto& [p, hosts] : pods) want.insert(hosts);
  for (const TopologyGroup& g : t.tiers[1]) {
    got.insert(names(t, g));
    EXPECT_EQ(g.children.size(), 4u);
    EXPECT_EQ(g.name.rfind("pod", 0), 0u);
  }
  EXPECT_EQ(got, want);
  // Every host in exactly one block, and its block under the pod that holds it.
  std::map<std::string, int> seen;
  for (uint32_t b = 0; b < t.tiers[0].size(); ++b) {
    for (uint32_t h : t.tiers[0][b].hosts) {
      ++seen[t.hosts[h]];
      EXPECT_EQ(t.host_block[h], b);
      const auto& pod = t.tiers[1][t.group_of(b, 1)].hosts;
      EXPECT_NE(std::find(pod.begin(), pod.end(), h), pod.end());
    }
  }
  EXPECT_EQ(seen.size(), 32u);
  for (auto& [h, n] : seen) EXPECT_EQ(n, 1) << h;
}

TEST(SchedulerTopology, NamesAreSafeAndShort) {
  EXPECT_EQ(scheduler_name("leaf g000 r0"), "leaf_g000_r0");
  EXPECT_EQ(scheduler_name("a=b,c[1]"), "a_b_c_1_");
  EXPECT_EQ(scheduler_name(std::string(100, 'x')).size(), 63u);
  EXPECT_EQ(scheduler_name(""), "_");
}

TEST(RailHealth, DownDrainedIsolatedDegraded) {
  routing::Fabric f = roft(32, 4, 2, 16);
  auto port_of = [&](const std::string& ca) {
    auto n = routing::find_node(f, ca);
    EXPECT_TRUE(n.ok()) << ca;
    return f.primary_port(*n);
  };
  // node003 rail 1: its cable down. All uplinks of leaf g001 r3 down: rail 3
  // of node009..node016 isolated. One uplink of leaf g002 r2 down: degraded.
  std::vector<std::string> down = {port_key(f, port_of("node003 mlx5_1"))};
  auto leaf_uplinks = [&](const std::string& name) {
    std::vector<std::string> out;
    const NodeId l = *routing::find_node(f, name);
    for (uint8_t p = 1; p <= f.node(l).num_ports; ++p) {
      const routing::Port& port = f.port(f.port_id(l, PortNum{p}));
      if (port.remote.valid() && f.is_switch(f.port(port.remote).node)) out.push_back(port_key(f, f.port_id(l, PortNum{p})));
    }
    return out;
  };
  for (const std::string& k : leaf_uplinks("leaf g001 r3")) down.push_back(k);
  down.push_back(leaf_uplinks("leaf g002 r2").front());
  auto v = view_of(with_links_down(f, down));
  // node005 rail 2: its link drained.
  std::vector<LinkStatus> links;
  const PortId drained_port = port_of("node005 mlx5_2");
  links.push_back(LinkStatus{v->fabric.port(drained_port).link, "x", LinkState::kUp, {7}});
  const RailHealthMap m = rail_health(*v, links);
  ASSERT_EQ(m.hosts.size(), 32u);
  for (const HostRails& h : m.hosts) {
    ASSERT_EQ(h.rails.size(), 4u) << h.host;
    for (uint32_t r = 0; r < 4; ++r) EXPECT_EQ(h.rails[r].rail, int32_t(r));
    const uint32_t n = std::stoi(h.host.substr(4)) - 1;
    for (uint32_t r = 0; r < 4; ++r) {
      RailHealth want = RailHealth::kHealthy;
      if (n == 2 && r == 1) want = RailHealth::kDown;
      if (n == 4 && r == 2) want = RailHealth::kDrained;
      if (n / 8 == 1 && r == 3) want = RailHealth::kIsolated;
      if (n / 8 == 2 && r == 2) want = RailHealth::kDegraded;
      EXPECT_EQ(h.rails[r].health, want) << h.host << " rail " << r;
    }
    const size_t broken_count = (n == 2) + (n == 4) + (n / 8 == 1);
    EXPECT_EQ(h.broken_rails().size(), broken_count) << h.host;
  }
  EXPECT_EQ(m.find("node009")->rails[3].uplinks_healthy, 0u);
  EXPECT_EQ(m.find("node009")->rails[3].uplinks_total, 8u);
  EXPECT_EQ(m.find("node017")->rails[2].uplinks_healthy, 7u);
  EXPECT_EQ(m.find("nodeXYZ"), nullptr);
  // Health never moves a host in the tree: the same blocks as without faults.
  const SchedulerTopology healthy = scheduler_topology(*view_of(roft(32, 4, 2, 16)));
  const SchedulerTopology faulty = scheduler_topology(*v);
  ASSERT_EQ(healthy.tiers[0].size(), faulty.tiers[0].size());
  for (size_t b = 0; b < healthy.tiers[0].size(); ++b) EXPECT_EQ(healthy.tiers[0][b].hosts, faulty.tiers[0][b].hosts);
}

}  // namespace
}  // namespace railyard::controller
