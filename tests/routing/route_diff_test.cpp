// walk_route against the fabric's structure, and diff_routes against a brute
// force over every CA pair (walk both tables, compare the hops).
#include <gtest/gtest.h>

#include "routing/generator.h"
#include "routing/route_diff.h"
#include "routing/unicast_engine.h"

namespace railyard::routing {
namespace route_diff_test {  // not anonymous: unity builds compile several test files as one

Fabric roft(uint32_t servers, uint32_t rails, uint32_t radix, uint32_t levels = 2) {
  GeneratorSpec spec;
  spec.servers = servers;
  spec.rails = rails;
  spec.radix = radix;
  spec.levels = levels;
  spec.assign_lids = true;
  auto g = generate_fabric(spec);
  EXPECT_TRUE(g.ok());
  return std::move(g).value().fabric;
}

// The first switch-switch link of the first switch.
LinkId some_spine_link(const Fabric& f) {
  for (NodeId s : f.switches()) {
    const Node& nd = f.node(s);
    for (uint8_t p = 1; p <= nd.num_ports; ++p) {
      const Port& port = f.port(f.port_id(s, PortNum{p}));
      if (port.remote.valid() && f.is_switch(f.port(port.remote).node)) return port.link;
    }
  }
  return LinkId();
}

bool same_hops(const RouteWalk& a, const RouteWalk& b) {
  if (a.end != b.end || a.hops.size() != b.hops.size()) return false;
  for (size_t i = 0; i < a.hops.size(); ++i) {
    if (a.hops[i].node != b.hops[i].node || a.hops[i].out_port != b.hops[i].out_port) return false;
  }
  return true;
}

TEST(RouteWalk, FollowsTheTablesToTheDestination) {
  const Fabric f = roft(16, 4, 16);
  auto r = route_unicast(f);
  ASSERT_TRUE(r.ok());
  for (NodeId src : f.cas()) {
    for (NodeId dst : f.cas()) {
      const PortId sp = f.primary_port(src);
      const Lid lid = f.port(f.primary_port(dst)).lid;
      const RouteWalk w = walk_route(f, r->tables, sp, lid);
      ASSERT_EQ(w.end, RouteEnd::kDelivered) << f.desc(src) << " -> " << f.desc(dst);
      EXPECT_EQ(w.hops.front().node, src);
      EXPECT_EQ(w.hops.back().node, dst);
      // Every hop leaves by the port the next hop is cabled to.
      for (size_t i = 0; i + 1 < w.hops.size(); ++i) {
        const Port& out = f.port(f.port_id(w.hops[i].node, PortNum{w.hops[i].out_port}));
        ASSERT_TRUE(out.remote.valid());
        EXPECT_EQ(f.port(out.remote).node, w.hops[i + 1].node);
        EXPECT_EQ(f.port(out.remote).num.value, w.hops[i + 1].in_port);
      }
      // Same leaf: CA, leaf, CA; otherwise up to a spine and down: 5 nodes.
      if (src != dst) EXPECT_TRUE(w.hops.size() == 3 || w.hops.size() == 5) << w.hops.size();
    }
  }
}

TEST(RouteWalk, ReportsBlackholesAndUnknownLids) {
  const Fabric f = roft(8, 2, 8);
  auto r = route_unicast(f);
  ASSERT_TRUE(r.ok());
  ForwardingTables broken = r->tables;
  const PortId sp = f.primary_port(f.cas()[0]);
  const Lid lid = f.port(f.primary_port(f.cas().back())).lid;
  for (uint32_t s = 0; s < broken.num_switches(); ++s) broken.set(s, lid, ForwardingTables::kNoPath);
  EXPECT_EQ(walk_route(f, broken, sp, lid).end, RouteEnd::kNoPath);
  EXPECT_EQ(walk_route(f, r->tables, sp, Lid{0x3000}).end, RouteEnd::kBadLid);
}

TEST(RouteDiff, IdenticalTablesChangeNothing) {
  const Fabric f = roft(16, 4, 16);
  auto r = route_unicast(f);
  ASSERT_TRUE(r.ok());
  const RouteDiff d = diff_routes(f, r->tables, r->tables);
  EXPECT_EQ(d.entries_changed, 0u);
  EXPECT_EQ(d.blocks_changed, 0u);
  EXPECT_EQ(d.pairs_rerouted, 0u);
}

TEST(RouteDiff, CountsExactlyThePairsWhosePathChanged) {
  for (uint32_t levels : {2u, 3u}) {
    const Fabric f = roft(levels == 2 ? 16 : 32, 4, levels == 2 ? 16 : 8, levels);
    auto before = route_unicast(f);
    ASSERT_TRUE(before.ok());
    RoutingOptions drained;
    drained.drained.assign(f.num_links(), 0);
    drained.drained[some_spine_link(f).value()] = 1;
    auto after = route_unicast(f, drained);
    ASSERT_TRUE(after.ok());

    uint64_t brute = 0;
    for (NodeId src : f.cas()) {
      for (NodeId dst : f.cas()) {
        if (src == dst) continue;
        const PortId sp = f.primary_port(src);
        const Lid lid = f.port(f.primary_port(dst)).lid;
        brute += !same_hops(walk_route(f, before->tables, sp, lid), walk_route(f, after->tables, sp, lid));
      }
    }
    const RouteDiff d = diff_routes(f, before->tables, after->tables);
    EXPECT_GT(brute, 0u) << "draining a spine link must move some pairs (levels " << levels << ")";
    EXPECT_EQ(d.pairs_rerouted, brute) << "levels " << levels;
    EXPECT_GT(d.entries_changed, 0u);
    EXPECT_GE(d.entries_changed, d.blocks_changed);
    EXPECT_GT(d.switches_touched, 0u);
  }
}

}  // namespace route_diff_test
}  // namespace railyard::routing
