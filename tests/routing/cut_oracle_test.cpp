// The oracle of the degraded-routing tests (cut_oracle.h) and the degraded
// variants (degradations.h), checked on cases whose numbers are worked out by
// hand: a two-leaf, two-spine tree with hand-written tables (good, broken by
// a black hole and a loop, after a link failure), and a small three-level
// ROFT whose pods are cut off from the cores.
#include <gtest/gtest.h>

#include "routing/congestion.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/path_stability.h"
#include "tests/routing/degradations.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {
namespace {

// Leaves L0, L1 (ports 1-2: CAs, 3: S0, 4: S1) and spines S0, S1 (port 1:
// L0, port 2: L1). CAs A0, A1 on L0 and B0, B1 on L1. LIDs: L0 1, L1 2,
// S0 3, S1 4, A0 5, A1 6, B0 7, B1 8. Switch indices follow: L0 0, L1 1,
// S0 2, S1 3.
constexpr Lid kA0{5}, kA1{6}, kB0{7}, kB1{8};
constexpr uint32_t kL0 = 0, kL1 = 1, kS0 = 2, kS1 = 3;

Fabric two_by_two(bool l0_s1_down = false) {
  FabricBuilder b;
  NodeId l0 = b.add_node(NodeType::kSwitch, 4, Guid{0x11}, Guid{0x11}, "L0");
  NodeId l1 = b.add_node(NodeType::kSwitch, 4, Guid{0x12}, Guid{0x12}, "L1");
  NodeId s0 = b.add_node(NodeType::kSwitch, 2, Guid{0x13}, Guid{0x13}, "S0");
  NodeId s1 = b.add_node(NodeType::kSwitch, 2, Guid{0x14}, Guid{0x14}, "S1");
  uint16_t lid = 1;
  for (NodeId s : {l0, l1, s0, s1}) {
    const uint16_t l = lid++;  // one read: the arguments' order of evaluation is unspecified
    EXPECT_TRUE(b.set_port(s, PortNum{0}, Guid{0x100u + l}, Lid{l}).ok());
  }
  EXPECT_TRUE(b.connect(l0, PortNum{3}, s0, PortNum{1}).ok());
  EXPECT_TRUE(b.connect(l0, PortNum{4}, s1, PortNum{1}, LinkWidth::kUnknown, LinkSpeed::kUnknown,
                        l0_s1_down ? PortState::kDown : PortState::kActive)
                  .ok());
  EXPECT_TRUE(b.connect(l1, PortNum{3}, s0, PortNum{2}).ok());
  EXPECT_TRUE(b.connect(l1, PortNum{4}, s1, PortNum{2}).ok());
  const char* names[] = {"a0 mlx5_0", "a1 mlx5_0", "b0 mlx5_0", "b1 mlx5_0"};
  for (int i = 0; i < 4; ++i) {
    NodeId ca = b.add_node(NodeType::kCa, 1, Guid{0x21u + i}, Guid{0x21u + i}, names[i]);
    EXPECT_TRUE(b.set_port(ca, PortNum{1}, Guid{0x121u + i}, Lid{lid++}).ok());
    EXPECT_TRUE(b.connect(ca, PortNum{1}, i < 2 ? l0 : l1, PortNum{static_cast<uint8_t>(1 + i % 2)}).ok());
  }
  auto f = b.build();
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  return std::move(f).value();
}

// D-mod-K: A0 and B0 through S0, A1 and B1 through S1.
ForwardingTables healthy_tables() {
  ForwardingTables t(4, 9);
  t.set(kL0, kA0, 1), t.set(kL0, kA1, 2), t.set(kL0, kB0, 3), t.set(kL0, kB1, 4);
  t.set(kL1, kB0, 1), t.set(kL1, kB1, 2), t.set(kL1, kA0, 3), t.set(kL1, kA1, 4);
  for (uint32_t s : {kS0, kS1}) {
    t.set(s, kA0, 1), t.set(s, kA1, 1), t.set(s, kB0, 2), t.set(s, kB1, 2);
  }
  return t;
}

// After L0-S1 went down: everything through S0; S1 cannot reach A0, A1.
ForwardingTables rerouted_tables() {
  ForwardingTables t = healthy_tables();
  t.set(kL0, kB1, 3);
  t.set(kL1, kA1, 3);
  t.set(kS1, kA0, ForwardingTables::kNoPath);
  t.set(kS1, kA1, ForwardingTables::kNoPath);
  return t;
}

PortId ca_port(const Fabric& f, const char* name) { return f.primary_port(f.find_name(name)); }

TEST(CutOracle, HealthyTwoByTwoAllToAll) {
  Fabric f = two_by_two();
  CutOracle o(f);
  AllToAllLoad a = o.all_to_all(healthy_tables());
  EXPECT_EQ(a.live_cas, 4u);
  EXPECT_EQ(a.pairs, 12u);
  EXPECT_EQ(a.delivered, 12u);
  EXPECT_EQ(a.connectable, 12u);
  // Each up link carries the 2 CAs of its leaf to 1 remote CA; each CA link 3.
  EXPECT_EQ(a.max_switch_load, 2u);
  EXPECT_EQ(a.max_load, 3u);
  // Bounds: a CA alone 3 / 1; a leaf 2 x 2 / 2 = 2. Max 3.
  EXPECT_EQ(a.bound, 3u);
  EXPECT_DOUBLE_EQ(a.ratio(), 1.0);
}

TEST(CutOracle, LinkDownTwoByTwoAllToAllAndBound) {
  Fabric f = two_by_two(true);
  CutOracle o(f);
  AllToAllLoad a = o.all_to_all(rerouted_tables());
  EXPECT_EQ(a.delivered, 12u);
  // L0 -> S0 carries A0, A1 to B0, B1: 4 flows, and so does S0 -> L0.
  EXPECT_EQ(a.max_switch_load, 4u);
  EXPECT_EQ(a.max_load, 4u);
  // L0 has one usable link: 2 x 2 / 1 = 4 (L1: 4 / 2 = 2; a CA: 3).
  EXPECT_EQ(a.bound, 4u);
}

TEST(CutOracle, DrainedLinkIsNoCapacityButCarries) {
  Fabric f = two_by_two();
  std::vector<uint8_t> drained(f.num_links(), 0);
  drained[f.port(f.port_id(f.find_name("L1"), PortNum{4})).link.value()] = 1;  // L1-S1
  CutOracle o(f, drained);
  AllToAllLoad a = o.all_to_all(healthy_tables());
  EXPECT_EQ(a.delivered, 12u);
  EXPECT_EQ(a.max_load, 3u);
  EXPECT_EQ(a.bound, 4u);  // L1 keeps one usable link: 4 / 1
  // Both of L1's links drained: its only way out, so they count again (4 / 2).
  drained[f.port(f.port_id(f.find_name("L1"), PortNum{3})).link.value()] = 1;
  EXPECT_EQ(CutOracle(f, drained).all_to_all_bound(), 3u);
}

TEST(CutOracle, BlackholeAndLoopAreCountedApart) {
  Fabric f = two_by_two(true);
  ForwardingTables t = rerouted_tables();
  t.set(kL0, kB1, 4);  // into the dead link: A0, A1 -> B1 dropped
  t.set(kS0, kB0, 1);  // back down to L0, which sends it up again: A0, A1 -> B0 loop
  CutOracle o(f);
  AllToAllLoad a = o.all_to_all(t);
  EXPECT_EQ(a.pairs, 12u);
  EXPECT_EQ(a.blackholed, 2u);
  EXPECT_EQ(a.looped, 2u);  // B1 -> B0 stays on L1
  EXPECT_EQ(a.delivered, 8u);
  EXPECT_EQ(a.lost_connectable, 4u);  // L0 and L1 still share S0
  // Lost flows load nothing: no delivered flow leaves L0; L1 -> S0 -> L0
  // carries B0, B1 -> A0, A1.
  EXPECT_EQ(a.max_switch_load, 4u);
}

TEST(CutOracle, PermutationLoadsAndBound) {
  Fabric f = two_by_two();
  std::vector<Flow> swap = {{ca_port(f, "a0 mlx5_0"), ca_port(f, "b0 mlx5_0")},
                            {ca_port(f, "a1 mlx5_0"), ca_port(f, "b1 mlx5_0")},
                            {ca_port(f, "b0 mlx5_0"), ca_port(f, "a0 mlx5_0")},
                            {ca_port(f, "b1 mlx5_0"), ca_port(f, "a1 mlx5_0")}};
  FlowsLoad h = CutOracle(f).flows(healthy_tables(), swap);
  EXPECT_EQ(h.delivered, 4u);
  EXPECT_EQ(h.max_load, 1u);
  EXPECT_EQ(h.bound, 1u);  // 2 flows out of each leaf over 2 links
  Fabric g = two_by_two(true);
  FlowsLoad d = CutOracle(g).flows(rerouted_tables(), swap);
  EXPECT_EQ(d.max_load, 2u);
  EXPECT_EQ(d.bound, 2u);  // 2 flows out of L0 over its 1 link
  // Dropped flows: counted, loading nothing.
  ForwardingTables t = rerouted_tables();
  t.set(kL0, kB1, ForwardingTables::kNoPath);
  FlowsLoad b = CutOracle(g).flows(t, swap);
  EXPECT_EQ(b.lost, 1u);
  EXPECT_EQ(b.lost_connectable, 1u);
  EXPECT_EQ(b.delivered, 3u);
  EXPECT_EQ(b.max_load, 2u);  // S0 -> L0: b0 -> a0 and b1 -> a1
}

TEST(CutOracle, ShiftsOfTwoByTwo) {
  // Hosts a0, a1, b0, b1 (one rail): shift k sends host i to host i + k.
  Fabric f = two_by_two();
  RailMap rails = map_rails(f, {});
  ASSERT_EQ(rails.hosts.size(), 4u);
  ShiftSweep s = CutOracle(f).shifts(healthy_tables(), rails, false);
  EXPECT_EQ(s.shifts, 3u);
  EXPECT_EQ(s.max_load, 1u);
  EXPECT_EQ(s.worst_excess, 0);
  EXPECT_EQ(s.lost, 0u);
  // Everything from L0 through S0: k = 2 sends a0 -> b0 and a1 -> b1 both up
  // L0 -> S0, where the bound is 1 (2 flows out of L0 over 2 links).
  ForwardingTables t = healthy_tables();
  t.set(kL0, kB1, 3);
  ShiftSweep bad = CutOracle(f).shifts(t, rails, false);
  EXPECT_EQ(bad.worst_k, 2);
  EXPECT_EQ(bad.worst_max, 2u);
  EXPECT_EQ(bad.worst_bound, 1u);
  EXPECT_EQ(bad.worst_excess, 1);
  // With L0-S1 down the same load is the bound.
  ShiftSweep down = CutOracle(two_by_two(true)).shifts(rerouted_tables(), rails, false);
  EXPECT_EQ(down.max_load, 2u);
  EXPECT_EQ(down.worst_excess, 0);
  // Stride 2: only k = 1 and 3.
  EXPECT_EQ(CutOracle(f).shifts(healthy_tables(), rails, false, 2).shifts, 2u);
}

TEST(CutOracle, PathStabilityCountsChangedAndCrossedEntries) {
  Fabric before = two_by_two();
  Fabric after = two_by_two(true);
  PathStability p = path_stability(before, healthy_tables(), after, {}, rerouted_tables());
  EXPECT_EQ(p.entries, 16u);  // 4 switches x 4 CA LIDs
  // L0[B1], L1[A1], S1[A0], S1[A1].
  EXPECT_EQ(p.changed, 4u);
  // Healthy routes over L0-S1: L0 -> B1; L1 -> A1 and S1 -> A1; S1 -> A0.
  EXPECT_EQ(p.crossed, 4u);
  // The same tables again: nothing changed.
  EXPECT_EQ(path_stability(before, healthy_tables(), after, {}, healthy_tables()).changed, 0u);
  // Draining instead of cutting fails the same link.
  std::vector<uint8_t> drained(before.num_links(), 0);
  drained[before.port(before.port_id(before.find_name("L0"), PortNum{4})).link.value()] = 1;
  EXPECT_EQ(path_stability(before, healthy_tables(), before, drained, healthy_tables()).crossed, 4u);
}

TEST(CutOracle, StructuralLevels) {
  Fabric f = two_by_two(true);
  std::vector<int32_t> level = switch_levels(f);
  EXPECT_EQ(level[f.find_name("L0").value()], 1);
  EXPECT_EQ(level[f.find_name("S1").value()], 2);  // a down link still shows the structure
  EXPECT_EQ(level[f.find_name("a0 mlx5_0").value()], 0);
}

// A 3-level ROFT, radix 8: 16 servers x 2 rails, 4 CAs per leaf, 8 leaves in
// 2 pods (pod p = rail p), 4 spines per pod, 4 cores (one per plane) each
// joined to spine j of both pods by 4 parallel links. 32 CAs.
Fabric small_three_level() { return generate(roft(16, 2, 3, 8)); }

std::vector<LinkId> links_between(const Fabric& f, const std::string& a, const std::string& b_prefix) {
  std::vector<LinkId> out;
  NodeId n = f.find_name(a);
  const Node& nd = f.node(n);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    PortId pid = f.port_id(n, PortNum{static_cast<uint8_t>(p)});
    NodeId r = f.remote_node(pid);
    if (r.valid() && f.desc(r).substr(0, b_prefix.size()) == b_prefix) out.push_back(f.port(pid).link);
  }
  return out;
}

TEST(CutOracle, PodBoundOnThreeLevels) {
  Fabric f = small_three_level();
  Degrader d(f);
  EXPECT_EQ(d.label(), "3L r8 32CA");
  ASSERT_EQ(d.links(Tier::kSpineCore).size(), 32u);
  ASSERT_EQ(d.links(Tier::kLeafSpine).size(), 32u);
  // Healthy: a CA alone 31; a leaf 4 x 28 / 4 = 28; a pod 16 x 16 / 16 = 16.
  EXPECT_EQ(CutOracle(f).all_to_all_bound(), 31u);
  // Pod 0 keeps only spine p00 s00's 4 core links: 16 x 16 / 4 = 64.
  std::vector<LinkId> cut;
  for (const char* s : {"spine p00 s01", "spine p00 s02", "spine p00 s03"}) {
    for (LinkId l : links_between(f, s, "core")) cut.push_back(l);
  }
  ASSERT_EQ(cut.size(), 12u);
  Degraded down = d.apply(cut, {}, "pod 0 on one spine");
  EXPECT_EQ(down.name, "3L r8 32CA: pod 0 on one spine");
  EXPECT_EQ(CutOracle(down.fabric).all_to_all_bound(), 64u);
  // Drained rather than down: the same bound.
  Degraded drained = d.apply({}, cut, "drained");
  EXPECT_EQ(CutOracle(drained.fabric, drained.drained).all_to_all_bound(), 64u);
  // A permutation sending all of pod 0 to pod 1 (rail 0 -> rail 1): 16 / 4.
  RailMap rails = map_rails(f, {});
  std::vector<Flow> cross = shift_flows(f, rails, 0, true);
  ASSERT_EQ(cross.size(), 32u);
  EXPECT_EQ(CutOracle(down.fabric).flows_bound(cross), 4u);
  EXPECT_EQ(CutOracle(f).flows_bound(cross), 1u);
}

TEST(CutOracle, UpDownConnectivityOnThreeLevels) {
  Fabric f = small_three_level();
  // Leaf g000 r0 keeps only spine p00 s00, which loses its cores: its 4 CAs
  // reach the rest of pod 0 but no CA of pod 1 (16), either way.
  std::vector<LinkId> cut = links_between(f, "spine p00 s00", "core");
  for (const char* s : {"spine p00 s01", "spine p00 s02", "spine p00 s03"}) {
    for (LinkId l : links_between(f, "leaf g000 r0", s)) cut.push_back(l);
  }
  ASSERT_EQ(cut.size(), 7u);
  Degraded down = Degrader(f).apply(cut, {}, "cut off");
  CutOracle o(down.fabric);
  ForwardingTables empty(static_cast<uint32_t>(f.switches().size()), f.max_lid().value + 1u);
  AllToAllLoad a = o.all_to_all(empty);
  EXPECT_EQ(a.pairs, 32u * 31u);
  EXPECT_EQ(a.connectable, 32u * 31u - 2u * 4u * 16u);
  EXPECT_EQ(a.delivered, 0u);
  EXPECT_EQ(a.blackholed, a.pairs);
  EXPECT_EQ(a.lost_connectable, a.connectable);
}

TEST(CutOracle, DeadLeafTakesItsCasOut) {
  Fabric f = small_three_level();
  Degrader d(f);
  Degraded leaf = d.switch_down(1, 3);
  EXPECT_EQ(leaf.down.size(), 8u);  // 4 CA links, 4 uplinks
  CutOracle o(leaf.fabric);
  EXPECT_EQ(o.live_cas(), 28u);
  EXPECT_EQ(o.dead_cas(), 4u);
  // 28 - 1 for a CA; a leaf of the dead leaf's pod 4 x 24 / 4 = 24; its pod
  // 12 x 16 / 16 = 12.
  EXPECT_EQ(o.all_to_all_bound(), 27u);
}

TEST(Degradations, SeededPicksAndNames) {
  Fabric f = generate(roft(24, 4, 2, 16));  // 12 leaves x 8 spines = 96 links
  Degrader d(f);
  EXPECT_EQ(d.label(), "2L r16 96CA");
  EXPECT_EQ(d.links(Tier::kLeafSpine).size(), 96u);
  EXPECT_EQ(d.links(Tier::kSpineCore).size(), 0u);
  Degraded c = d.cut(5, Tier::kAny, 7);
  EXPECT_EQ(c.name, "2L r16 96CA: 5% cut seed 7");
  EXPECT_EQ(c.down.size(), 5u);  // round(4.8)
  EXPECT_EQ(d.cut(5, Tier::kAny, 7).down, c.down);
  EXPECT_NE(d.cut(5, Tier::kAny, 8).down, c.down);
  for (LinkId l : c.down) EXPECT_EQ(c.fabric.link(l).state, PortState::kDown);
  EXPECT_TRUE(c.drained.empty());
  Degraded m = d.cut_and_drain(2, 3, Tier::kAny, 1);
  EXPECT_EQ(m.name, "2L r16 96CA: 2% cut + 3% drained seed 1");
  EXPECT_EQ(m.down.size(), 2u);  // round(1.92)
  EXPECT_EQ(m.drained_links.size(), 3u);  // round(2.88)
  ASSERT_EQ(m.drained.size(), f.num_links());
  for (LinkId l : m.drained_links) {
    EXPECT_EQ(m.drained[l.value()], 1);
    EXPECT_NE(m.fabric.link(l).state, PortState::kDown);
    EXPECT_FALSE(std::binary_search(m.down.begin(), m.down.end(), l));
  }
  Degraded s = d.switch_down(2, 1);
  EXPECT_EQ(s.name, "2L r16 96CA: spine down seed 1");
  EXPECT_EQ(s.down.size(), 12u);  // a spine's 12 leaf links
  EXPECT_EQ(d.link_down(Tier::kLeafSpine, 2).down.size(), 1u);
  EXPECT_EQ(d.link_down(Tier::kLeafSpine, 2).name, "2L r16 96CA: leaf-spine link down seed 2");
}

// Where the oracle and the repository's own tools measure the same thing,
// they agree: delivered pairs (the verifier) and the busiest link of
// all-to-all (the congestion analyzer: switch links, and n - 1 on CA links).
TEST(CutOracle, AgreesWithVerifierAndCongestionAnalyzer) {
  Fabric f = generate(roft(40, 8, 3, 16));
  Degrader d(f);
  for (const Degraded& v : {d.cut(5, Tier::kAny, 1), d.switch_down(1, 2), d.drain(5, Tier::kAny, 3)}) {
    RailMap rails = map_rails(v.fabric, {});
    auto options = plan_routing(v.fabric, {}, rails);
    ASSERT_TRUE(options.ok());
    options->drained = v.drained;
    auto r = route_unicast(v.fabric, *options);
    ASSERT_TRUE(r.ok());
    AllToAllLoad a = CutOracle(v.fabric, v.drained).all_to_all(r->tables);
    VerifyOptions vo;
    vo.check_switch_lids = false;
    VerifyReport rep = verify_tables(v.fabric, r->tables, vo);
    EXPECT_EQ(rep.reachable, a.delivered) << v.name;
    CongestionOptions co;
    co.random_permutations = 0;
    co.max_shifts = 1;
    CongestionReport cong = analyze_congestion(v.fabric, r->tables, rails, co);
    ASSERT_EQ(cong.patterns.back().name, "all-to-all");
    if (a.dead_cas == 0) {
      EXPECT_EQ(cong.patterns.back().max_load, a.max_load) << v.name;
    }
  }
}

}  // namespace
}  // namespace railyard::routing::test

namespace railyard::routing::test {
namespace {

// all_to_all_link_loads on the two-by-two tree, worked out by hand: healthy,
// each of A0, A1 sends to B0 over S0 and to B1 over S1 (and back), so every
// switch link carries 2 flows each way; with L0-S1 down everything crosses
// S0: 4 each way on L0-S0 and L1-S0, nothing on the S1 links.
TEST(CutOracle, AllToAllLinkLoadsPerDirection) {
  auto load = [](const Fabric& f, const std::vector<LinkLoad>& loads, const char* from, uint8_t port) {
    const PortId p = f.port_id(f.find_name(from), PortNum{port});
    const LinkLoad& l = loads[f.port(p).link.value()];
    const bool is_a = f.link(f.port(p).link).a == p;
    return std::pair{is_a ? l.a_to_b : l.b_to_a, is_a ? l.b_to_a : l.a_to_b};  // {out of `from`, into it}
  };
  using P = std::pair<uint64_t, uint64_t>;
  Fabric f = two_by_two();
  std::vector<LinkLoad> healthy = all_to_all_link_loads(f, healthy_tables());
  ASSERT_EQ(healthy.size(), f.num_links());
  for (const char* leaf : {"L0", "L1"}) {
    EXPECT_EQ(load(f, healthy, leaf, 3), P(2, 2)) << leaf;
    EXPECT_EQ(load(f, healthy, leaf, 4), P(2, 2)) << leaf;
    EXPECT_EQ(load(f, healthy, leaf, 1), P(0, 0)) << leaf << ": CA links are not counted";
  }
  Fabric down = two_by_two(true);
  std::vector<LinkLoad> rerouted = all_to_all_link_loads(down, rerouted_tables());
  EXPECT_EQ(load(down, rerouted, "L0", 3), P(4, 4));
  EXPECT_EQ(load(down, rerouted, "L1", 3), P(4, 4));
  EXPECT_EQ(load(down, rerouted, "L0", 4), P(0, 0));
  EXPECT_EQ(load(down, rerouted, "L1", 4), P(0, 0));
  EXPECT_EQ(rerouted[down.port(down.port_id(down.find_name("L0"), PortNum{3})).link.value()].max(), 4u);
}

}  // namespace
}  // namespace railyard::routing::test
