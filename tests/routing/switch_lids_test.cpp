// Switch LIDs through the turn switch (routing/unicast_engine/switch_turns.cpp)
// and, where it cannot reach, the repair (switch_repair.cpp):
// on generated 2- and 3-level ROFTs, plain fat trees and rail-only fabrics,
// healthy, with links missing and with drains, every switch LID (spines,
// cores and leaves) is reachable from every switch of its piece of the
// fabric (so from every CA), the channel dependency graph stays acyclic with
// switch LIDs included, and the only entries that differ from up*/down*
// alone are switch-LID entries that were empty: CA LIDs keep every byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/generator.h"
#include "routing/hop_resolver.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"
#include "tests/routing/switch_pieces_oracle.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing {
namespace {

using test::generate;
using test::roft;

struct Compared {
  uint64_t switch_pairs = 0;        // every switch x every switch LID (the verifier's walks)
  uint64_t unreachable_before = 0;  // of those, not delivered
  uint64_t unreachable_after = 0;
  uint64_t core_pairs = 0;          // every switch x the LIDs of switches without CAs
  uint64_t core_unreachable_before = 0;
  uint64_t core_unreachable_after = 0;
  uint64_t turned = 0;
  uint64_t repaired = 0;  // filled under the dependency check (switch_repair.cpp)
};

// Switch sources that do not arrive at the LIDs of switches without CAs
// (spines, cores), walking the tables; `pairs` counts the walks.
uint64_t unreached_core_lids(const Fabric& f, const ForwardingTables& tables, uint64_t& pairs) {
  SwitchGraph g(f);
  HopResolver hr(f, g, tables);
  const uint32_t n = g.num_switches();
  uint64_t missed = 0;
  pairs = 0;
  for (uint32_t d = 0; d < n; ++d) {
    if (g.num_cas(d) != 0) continue;
    const Lid lid = f.port(f.node(g.node(d)).first_port).lid;
    if (!lid.valid()) continue;
    for (uint32_t s0 = 0; s0 < n; ++s0) {
      ++pairs;
      uint32_t s = s0;
      for (uint32_t hop = 0; hop <= n && s != d; ++hop) {
        const uint32_t e = hr.next(s, lid);
        if (e >= g.num_entries()) break;
        s = g.remote(e);
      }
      missed += s != d;
    }
  }
  return missed;
}

// Routes `f` with and without turns and checks the properties; returns the counts.
Compared route_both_ways(const Fabric& f, const policies::Policy& policy, const std::string& what) {
  SCOPED_TRACE(what);
  Compared out;
  RailMap rails = map_rails(f, policy.rails);
  auto options = plan_routing(f, policy, rails);
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().message);
  if (!options.ok()) return out;
  RoutingOptions plain = *options;
  plain.switch_turns = false;
  auto before = route_unicast(f, plain);
  auto after = route_unicast(f, *options);
  EXPECT_TRUE(before.ok() && after.ok());
  if (!before.ok() || !after.ok()) return out;
  out.turned = after->report.switch_entries_turned;
  out.repaired = after->report.switch_entries_repaired;
  EXPECT_EQ(before->report.switch_entries_turned, 0u);
  EXPECT_EQ(before->report.switch_entries_repaired, 0u);

  // Only empty entries of switch LIDs change: CA LIDs keep every byte, and
  // so does every entry up*/down* routed (a leaf LID's too).
  SwitchGraph g(f);
  std::vector<uint8_t> is_switch_lid(f.max_lid().value + 1u, 0);
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    const Port& p0 = f.port(f.node(g.node(s)).first_port);
    if (!p0.lid.valid()) continue;
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) is_switch_lid[p0.lid.value + k] = 1;
  }
  uint64_t changed = 0, bad = 0;
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    auto b = before->tables.row(s);
    auto a = after->tables.row(s);
    for (uint32_t lid = 0; lid < b.size(); ++lid) {
      if (a[lid] == b[lid]) continue;
      ++changed;
      if (!is_switch_lid[lid] || b[lid] != ForwardingTables::kNoPath) ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << "entries changed that were CA LIDs, or already routed";
  EXPECT_EQ(changed, out.turned + out.repaired);

  VerifyReport vb = verify_tables(f, before->tables);
  VerifyReport va = verify_tables(f, after->tables);
  out.switch_pairs = va.switch_pairs;
  out.unreachable_before = vb.switch_pairs - vb.switch_pairs_reachable;
  out.unreachable_after = va.switch_pairs - va.switch_pairs_reachable;
  out.core_unreachable_before = unreached_core_lids(f, before->tables, out.core_pairs);
  out.core_unreachable_after = unreached_core_lids(f, after->tables, out.core_pairs);
  // CA routes: the same verdict (the bytes are the same, checked above).
  EXPECT_EQ(va.reachable, vb.reachable);
  EXPECT_EQ(va.pairs, vb.pairs);
  EXPECT_TRUE(va.cdg_ca.acyclic) << va.cdg_ca.cycle;
  EXPECT_TRUE(va.cdg_all.acyclic) << va.cdg_all.cycle;
  EXPECT_EQ(va.looped, 0u);
  return out;
}

void expect_all_switch_lids_reached(const Fabric& f, const std::string& what, const policies::Policy& policy = {}) {
  Compared c = route_both_ways(f, policy, what);
  EXPECT_EQ(c.core_unreachable_after, test::switch_pairs_apart(f, false)) << what << ": " << c.core_unreachable_before << " before";
  // The verifier's walks: every switch to every switch LID, leaves' too.
  EXPECT_EQ(c.unreachable_after, test::switch_pairs_apart(f))
      << what << ": every switch LID, leaves' too; " << c.unreachable_before << " before";
}

TEST(SwitchLids, SpinesReachEachOtherOnTheDemoSizedTwoLevelTree) {
  // 256 CAs, 16 leaves and 16 spines: 1,024 switch pairs, of which the 240
  // spine-to-spine pairs were unreachable under up*/down*.
  Fabric f = generate(roft(32, 8, 2, 32));
  Compared c = route_both_ways(f, {}, "2-level 256 CAs");
  EXPECT_EQ(c.switch_pairs, 1024u);
  EXPECT_EQ(c.unreachable_before, 240u);
  EXPECT_EQ(c.unreachable_after, 0u);
  EXPECT_EQ(c.turned, 240u);
}

TEST(SwitchLids, SpinesAndCoresReachEachOtherOnAThreeLevelTree) {
  Fabric f = generate(roft(128, 8, 3, 16));
  Compared c = route_both_ways(f, {}, "3-level 1,024 CAs");
  EXPECT_GT(c.unreachable_before, 0u);
  EXPECT_EQ(c.unreachable_after, 0u);
}

TEST(SwitchLids, FivePercentDegradedTreesReachEverySwitchLid) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    for (uint32_t levels : {2u, 3u}) {
      GeneratorSpec spec = levels == 2 ? roft(64, 8, 2, 32) : roft(128, 8, 3, 16);
      spec.seed = seed;
      spec.remove_switch_links = levels == 2 ? 26 : 51;  // ~5% of 512 / 1,024
      expect_all_switch_lids_reached(generate(spec), std::to_string(levels) + "-level, seed " + std::to_string(seed));
    }
  }
  GeneratorSpec wide = roft(256, 8, 3, 32);
  wide.remove_switch_links = 60;
  wide.seed = 3;
  expect_all_switch_lids_reached(generate(wide), "3-level radix 32");
}

// The fills go eight entries at a time where eight switch LIDs are eight in
// a row (generated fabrics: switches first), one at a time elsewhere: the
// same guarantees with every LID dealt out again at random, switch LIDs among
// CA LIDs (as OpenSM numbers them).
TEST(SwitchLids, SwitchLidsAmongCaLidsAreReachedAlike) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    GeneratorSpec spec = roft(128, 8, 3, 16);
    spec.seed = seed;
    spec.remove_switch_links = 51;
    const Fabric f = test::with_lids_scattered(generate(spec), seed);
    expect_all_switch_lids_reached(f, "3-level 5%, LIDs scattered, seed " + std::to_string(seed));
  }
  expect_all_switch_lids_reached(test::with_lids_scattered(generate(roft(64, 8, 2, 32)), 9), "2-level, LIDs scattered");
  // Entries left empty: a rail-only fabric's rows toward another rail's
  // switches (one piece per rail).
  GeneratorSpec rail_only = roft(32, 4, 2, 16);
  rail_only.kind = TopologyKind::kRailOnly;
  expect_all_switch_lids_reached(test::with_lids_scattered(generate(rail_only), 4), "rail-only, LIDs scattered");
}

// The fills follow a turn tree whose next hops depend on the turn switch
// only where the ways come down to it: when the turn switch loses an up
// link and another leaf takes over, only the switches just above the two
// (and the two) fill differently; every other switch keeps its table. (Fills
// that followed the turn switch's own LID moved in nearly every row.)
// Rows of `before` and `after` (tables of f and of f with a link of switch
// `skip` down) whose entries differ for the LID of a switch other than
// `skip` (whose own LID follows one of its CAs' routes, as they move).
uint32_t rows_moved(const Fabric& f, const ForwardingTables& before, const ForwardingTables& after, NodeId skip) {
  uint32_t rows = 0;
  for (uint32_t s = 0; s < before.num_switches(); ++s) {
    auto x = before.row(s), y = after.row(s);
    bool moved = false;
    for (uint32_t lid = 1; lid < x.size() && !moved; ++lid) {
      const PortId owner = f.lid_owner(Lid{static_cast<uint16_t>(lid)});
      moved = owner.valid() && f.is_switch(f.port(owner).node) && f.port(owner).node != skip && x[lid] != y[lid];
    }
    rows += moved;
  }
  return rows;
}

// The first switch-to-switch link of switch n.
LinkId first_up_link(const Fabric& f, NodeId n) {
  const Node& nd = f.node(n);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    const PortId pid(nd.first_port.value() + p);
    const NodeId far = f.remote_node(pid);
    if (far.valid() && f.is_switch(far)) return f.port(pid).link;
  }
  return LinkId();
}

TEST(SwitchLids, ANewTurnSwitchMovesFewRows) {
  for (const GeneratorSpec& spec : {roft(64, 8, 3, 16), roft(64, 8, 2, 32)}) {
    const Fabric f = generate(spec);
    auto before = route_unicast(f, test::options_for(f, {}));
    ASSERT_TRUE(before.ok());
    ASSERT_EQ(before->report.turn_switches.size(), 1u);
    const NodeId turn = before->report.turn_switches[0];
    SwitchGraph graph(f);
    // A leaf's first up link down: the turn switch's, and another leaf's
    // (the leaf LIDs' and CA LIDs' own changes, without the turns).
    NodeId other;
    for (uint32_t s = 0; s < graph.num_switches() && !other.valid(); ++s) {
      if (graph.num_cas(s) != 0 && graph.node(s) != turn) other = graph.node(s);
    }
    uint32_t moved[2] = {0, 0};
    NodeId next_turn;
    for (int k = 0; k < 2; ++k) {
      FabricBuilder b(f);
      ASSERT_TRUE(b.set_link_state(first_up_link(f, k == 0 ? turn : other), PortState::kDown).ok());
      const Fabric g = std::move(b.build()).value();
      auto after = route_unicast(g, test::options_for(g, {}));
      ASSERT_TRUE(after.ok());
      ASSERT_EQ(after->report.turn_switches.size(), 1u);
      if (k == 0) next_turn = after->report.turn_switches[0];
      moved[k] = rows_moved(f, before->tables, after->tables, k == 0 ? turn : other);
    }
    ASSERT_NE(next_turn, turn) << "the turn switch did not move: nothing tested";
    // Beyond what any leaf's link moves: the switches next to the two turn
    // switches, and the two.
    uint32_t near = 2;
    for (NodeId t : {turn, next_turn}) near += graph.end(graph.switch_index(t)) - graph.begin(graph.switch_index(t));
    EXPECT_LE(moved[0], moved[1] + near) << moved[0] << " rows moved, " << moved[1] << " for another leaf, of "
                                         << graph.num_switches();
  }
}

// Heavier degradation: a pair whose only routes turn outside the turn
// switch's up-closure (a core of a plane the turn leaf lost, toward a core of
// another plane) is joined by the repair, each dependency it adds checked
// against the graph of every route. Every switch LID is reached and the
// dependency graph (the verifier's, above) stays acyclic. Shares are of the
// switch links: 1,864 on the 3-level tree, 512 on the 2-level one.
TEST(SwitchLids, TenPercentCutAndMissingUplinksReachEverySwitchLid) {
  uint64_t repaired = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (uint32_t levels : {2u, 3u}) {
      GeneratorSpec spec = levels == 2 ? roft(64, 8, 2, 32) : roft(128, 8, 3, 16);
      spec.seed = seed;
      spec.remove_switch_links = levels == 2 ? 52 : 187;  // 10%
      const std::string what = std::to_string(levels) + "-level 10%, seed " + std::to_string(seed);
      Compared c = route_both_ways(generate(spec), {}, what);
      EXPECT_EQ(c.core_unreachable_after, 0u) << what << ": " << c.core_unreachable_before << " before";
      EXPECT_EQ(c.unreachable_after, 0u) << what << ": " << c.unreachable_before << " before";
      repaired += c.repaired;
    }
  }
  EXPECT_GT(repaired, 0u) << "the turn switch alone reached everything: the repair went untested";
  GeneratorSpec heavy = roft(64, 8, 2, 32);
  heavy.remove_switch_links = 92;  // 18%
  heavy.seed = 3;
  expect_all_switch_lids_reached(generate(heavy), "2-level 18%");
  GeneratorSpec one = roft(64, 8, 3, 16);
  one.remove_uplink_per_leaf = 1;  // substitute planes route the CA LIDs
  expect_all_switch_lids_reached(generate(one), "3-level, one uplink per leaf missing");
  GeneratorSpec wider = roft(128, 8, 3, 16);
  wider.remove_uplink_per_leaf = 1;
  wider.seed = 2;
  expect_all_switch_lids_reached(generate(wider), "3-level 1,024 CAs, one uplink per leaf missing");
  GeneratorSpec two = roft(48, 4, 2, 24);
  two.remove_uplink_per_leaf = 2;
  two.seed = 7;
  expect_all_switch_lids_reached(generate(two), "2-level radix 24, two uplinks per leaf missing");
}

// Far beyond the 10% (29% of the 2-level tree's switch links cut),
// some dependencies the repair would add close a cycle: it refuses them (the
// verifier's graph above stays acyclic) and leaves a few pairs empty, still
// far fewer than the turn switch alone.
TEST(SwitchLids, FarBeyondTenPercentTheRepairRefusesCycles) {
  GeneratorSpec spec = roft(64, 8, 2, 32);
  spec.remove_switch_links = 150;
  spec.seed = 3;
  Compared c = route_both_ways(generate(spec), {}, "2-level 29%");
  EXPECT_GT(c.repaired, 0u);
  EXPECT_LT(c.unreachable_after * 4, c.unreachable_before);
}

TEST(SwitchLids, PlainFatTreeAndRailOnly) {
  GeneratorSpec tree = roft(128, 1, 3, 16);
  tree.kind = TopologyKind::kFatTree;
  tree.remove_switch_links = 20;
  expect_all_switch_lids_reached(generate(tree), "plain 3-level fat tree");
  GeneratorSpec rail_only;
  rail_only.kind = TopologyKind::kRailOnly;
  rail_only.servers = 32;
  rail_only.rails = 4;
  rail_only.levels = 2;
  rail_only.radix = 16;
  // One piece per rail: spines reach each other within their rail.
  expect_all_switch_lids_reached(generate(rail_only), "rail-only");
}

TEST(SwitchLids, DrainedLinksKeepTheGuarantees) {
  Fabric f = generate(roft(16, 2, 2, 16));
  policies::Policy policy;
  for (uint8_t p = 9; p <= 16; ++p) policy.drains.links.push_back({"leaf g000 r0", p});
  expect_all_switch_lids_reached(f, "2-level, one leaf's uplinks drained", policy);
}

}  // namespace
}  // namespace railyard::routing
