// Phase B in two lanes (routing/unicast_engine/phase_b_lanes.cpp): on
// fabrics degraded enough that phase B has 65,536 or more choices to make,
// the route splits it between two lanes that see each other's displaced
// flows only round by round. What must still hold there, on ROFTs and a
// plain fat tree, cut and drained, 1,536 to 4,096 CAs: the split happened;
// every pair an up*/down* path can connect is connected, no loop, no credit
// loop, minimal routes; all-to-all within the bounds against the
// tests' own cut oracle (tests/routing/cut_oracle.h); the same tables from
// a second route and from the fabric listed in reverse node order (the cut,
// the rounds and the shares depend on the fabric only, never on which
// thread runs first). tests/routing/reroute_test.cpp holds a reroute of such
// a fabric to its full route.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/degradations.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {
namespace {

using test::options_for;

struct Case {
  TopologyKind kind;
  uint32_t servers, rails, radix;
  double cut_pct, drain_pct;
};

// Three levels each; 1,536 CAs is a partial last pod.
constexpr Case kCases[] = {
    {TopologyKind::kRoft, 512, 8, 64, 10, 0},     // 4,096 CAs, 10% cut
    {TopologyKind::kRoft, 256, 8, 32, 10, 0},     // 2,048 CAs
    {TopologyKind::kRoft, 256, 8, 32, 0, 10},     // 10% drained
    {TopologyKind::kRoft, 384, 4, 32, 10, 0},     // 1,536 CAs
    {TopologyKind::kFatTree, 512, 4, 32, 10, 0},  // 2,048 CAs, a plain fat tree
};

Degraded degrade(const Degrader& d, const Case& c) {
  return c.drain_pct > 0 ? d.drain(c.drain_pct, Tier::kAny, 1) : d.cut(c.cut_pct, Tier::kAny, 1);
}

TEST(PhaseBLanes, SplitRoutesStayConnectedDeadlockFreeMinimalAndBalanced) {
  for (const Case& c : kCases) {
    GeneratorSpec spec = roft(c.servers, c.rails, 3, c.radix);
    spec.kind = c.kind;
    const Fabric base = generate(spec);
    const Degraded d = degrade(Degrader(base), c);
    auto r = route_unicast(d.fabric, options_for(d.fabric, d.drained));
    ASSERT_TRUE(r.ok()) << d.name;
    EXPECT_EQ(r->report.phase_b_lanes, 2u) << d.name << ": " << r->report.phase_b_waiting << " choices";
    EXPECT_GE(r->report.phase_b_waiting, 65536u) << d.name;

    const VerifyReport v = verify_tables(d.fabric, r->tables);
    const CutOracle oracle(d.fabric, d.drained);
    const AllToAllLoad a2a = oracle.all_to_all(r->tables);
    std::cout << d.name << (c.kind == TopologyKind::kFatTree ? " fat tree" : "") << ": a2a " << a2a.max_load << "/"
              << a2a.bound << " = " << a2a.ratio() << ", " << r->report.phase_b_waiting << " choices in phase B\n";
    EXPECT_EQ(a2a.lost_connectable, 0u) << d.name;
    EXPECT_GT(a2a.connectable, 0u) << d.name;
    EXPECT_EQ(v.reachable, a2a.delivered) << d.name;
    EXPECT_EQ(v.looped, 0u) << d.name;
    EXPECT_TRUE(v.cdg_ca.acyclic) << d.name << ": " << v.cdg_ca.cycle;
    EXPECT_TRUE(v.cdg_all.acyclic) << d.name << ": " << v.cdg_all.cycle;
    EXPECT_EQ(v.max_stretch, 0u) << d.name;
    // Issue 10's bound at 10% is 1.3x. Tighter here: with each lane counting
    // its own displaced flows once, as if the other sent none in the round,
    // the 4,096-CA case reaches 1.053x (1.013x as split, 1.002x in one lane;
    // 1.07-1.13x at 16k CAs, 5-10% cut); the others are 1.012-1.045x (the
    // 2,048-CA ROFT 1.045x since phase B lets a slot that keeps a leaf
    // pair's extra flows apart be 1/64 busier than the least loaded one).
    EXPECT_GT(a2a.bound, 0u) << d.name;
    EXPECT_LE(a2a.ratio(), 1.05) << d.name;

    auto again = route_unicast(d.fabric, options_for(d.fabric, d.drained));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->tables == r->tables) << d.name << ": two routes of the same input differ";

    // The same fabric listed in reverse: links too, so the drain mask is
    // reversed with them.
    const Fabric rev = reversed(d.fabric);
    std::vector<uint8_t> rev_drained(d.drained.rbegin(), d.drained.rend());
    auto b = route_unicast(rev, options_for(rev, rev_drained));
    ASSERT_TRUE(b.ok()) << d.name;
    EXPECT_EQ(b->report.phase_b_lanes, 2u) << d.name;
    const auto [compared, differ] = compare_by_guid(d.fabric, r->tables, rev, b->tables);
    EXPECT_GT(compared, 0u);
    EXPECT_EQ(differ, 0u) << d.name << ": the tables depend on the node order";
  }
}

// Phase B with few choices stays in one lane: a single link down.
TEST(PhaseBLanes, FewChoicesStayInOneLane) {
  const Fabric base = generate(roft(256, 8, 3, 32));
  const Degraded d = Degrader(base).link_down(Tier::kSpineCore, 1);
  auto r = route_unicast(d.fabric, options_for(d.fabric, d.drained));
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->report.phase_b_waiting, 0u);
  EXPECT_LT(r->report.phase_b_waiting, 65536u);
  EXPECT_EQ(r->report.phase_b_lanes, 1u);
  auto healthy = route_unicast(base, options_for(base, {}));
  ASSERT_TRUE(healthy.ok());
  EXPECT_EQ(healthy->report.phase_b_waiting, 0u);
  EXPECT_EQ(healthy->report.phase_b_lanes, 0u);
}

}  // namespace
}  // namespace railyard::routing::test
