// Can any table meet issue 10's shift target after a single failure ("every
// rail-aligned shift <= its bound")? tests/routing/shift_feasibility.h asks z3
// whether some LFT of minimal legal routes keeps every rail-aligned shift of
// one rail within its cut bound, on a 3-level ROFT small enough to solve
// exactly: radix 8, 32 servers x 4 rails (128 CAs, 8 pods of 4 leaves, a rail
// on 2 pods, 4 cores per plane, one link from a core to each pod). It has the
// structure of the 1,024-CA radix-16 ROFT of the quality tests (16 pods, a
// rail on 2 pods, one link per core and pod) at half the radix; that one is
// feasible too (DISABLED_ below: 4 minutes).
//
// Rails share no link (a rail's pods are its own, a core joins them by one
// link each), so the rail that a failure touches is a problem of its own:
// its shifts are modelled, the other rails keep their healthy D-mod-K routes,
// which meet every bound (first test).
//
// Findings (docs/routing.md, "Shifts after a failure"): with a core or a
// spine-core link down, a table with every shift at its bound exists, also
// within issue 10's path-stability limit; the engine's loads some shift 3
// times its bound of 1. None exists that moves only the routes that crossed
// the failure (as the engine's phase A keeps the others), here nor on a
// 2-level ROFT with a spine down. Each feasible answer's table is judged again by
// CutOracle, and the model is checked against CutOracle on the engine's own
// table (feasible at the excess CutOracle measures, not one below).
#include <gtest/gtest.h>

#include <iostream>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/degradations.h"
#include "tests/routing/shift_feasibility.h"
#include "tests/routing/path_stability.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {
namespace {

constexpr unsigned kTimeoutMs = 300'000;

const Fabric& small_roft() {
  static const Fabric f = generate(roft(32, 4, 3, 8));
  return f;
}

// One degradation of a fabric, one rail's rail-aligned shifts, the engine's
// table and CutOracle's judgement of it.
struct Case {
  const Fabric& base;
  Degraded d;
  RailMap rails;
  std::vector<std::vector<Flow>> shifts;
  ForwardingTables tables;
  ShiftSweep engine;
};

Case make_case(const Fabric& base, Degraded d, int32_t rail) {
  Case c{base, std::move(d), map_rails(base, policies::RailNaming()), {}, {}, {}};
  c.shifts = CutOracle::shift_patterns(c.d.fabric, c.rails, false);
  for (auto& flows : c.shifts) {
    std::erase_if(flows, [&](const Flow& f) { return c.rails.rail[c.d.fabric.port(f.src).node.value()] != rail; });
  }
  auto options = plan_routing(c.d.fabric, {}, c.rails);
  EXPECT_TRUE(options.ok());
  if (!options.ok()) return c;
  auto r = route_unicast(c.d.fabric, *options);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return c;
  c.tables = std::move(r->tables);
  c.engine = CutOracle(c.d.fabric).shifts(c.tables, c.shifts);
  std::cout << c.d.name << ", rail " << rail << ": the engine's worst rail-aligned shift k=" << c.engine.worst_k
            << " loads " << c.engine.worst_max << ", bound " << c.engine.worst_bound << "\n";
  return c;
}

// The rail of the leaves under the lower end of a failed spine-core link.
int32_t rail_below(const Fabric& base, const RailMap& rails, LinkId failed) {
  const std::vector<int32_t> level = switch_levels(base);
  const Link& l = base.link(failed);
  NodeId spine = base.port(l.a).node;
  if (level[base.port(l.b).node.value()] < level[spine.value()]) spine = base.port(l.b).node;
  const Node& nd = base.node(spine);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    NodeId r = base.remote_node(base.port_id(spine, PortNum{static_cast<uint8_t>(p)}));
    if (r.valid() && level[r.value()] == 1) return rails.rail[r.value()];
  }
  return -1;
}

// A feasible answer comes with a table: CutOracle must find it within the
// slack too, every flow delivered.
Feasible solve(const Case& c, int32_t slack, const ForwardingTables* fixed = nullptr,
               const ForwardingTables* before = nullptr, uint64_t max_changed = 0,
               const std::vector<uint8_t>* may_change = nullptr) {
  ShiftFeasibility model(c.d.fabric);
  const CutOracle oracle(c.d.fabric);
  Feasible answer = model.solve(oracle, c.shifts, slack, kTimeoutMs, fixed, before, max_changed, may_change);
  if (answer == Feasible::kYes && !fixed) {
    ShiftSweep judged = oracle.shifts(model.solution(), c.shifts);
    EXPECT_LE(judged.worst_excess, slack) << c.d.name << ": the solver's table, k=" << judged.worst_k;
    EXPECT_EQ(judged.lost, 0u) << c.d.name << ": the solver's table loses flows";
  }
  return answer;
}

// The model agrees with CutOracle on the engine's table: feasible with the
// excess CutOracle measured, infeasible with one less.
void expect_model_agrees(const Case& c) {
  ASSERT_GT(c.engine.shifts, 0u);
  const int32_t excess = static_cast<int32_t>(c.engine.worst_excess);
  EXPECT_EQ(solve(c, excess, &c.tables), Feasible::kYes) << c.d.name;
  EXPECT_EQ(solve(c, excess - 1, &c.tables), Feasible::kNo) << c.d.name;
}

TEST(ShiftFeasibility, HealthyTreeEveryShiftAtItsBoundIsFeasibleAndTheEngineMeetsIt) {
  Case c = make_case(small_roft(), Degrader(small_roft()).healthy(), 0);
  EXPECT_EQ(c.engine.worst_excess, 0);
  expect_model_agrees(c);
  EXPECT_EQ(solve(c, 0), Feasible::kYes);
}

// A core down takes one uplink from the spine of its plane in every pod.
TEST(ShiftFeasibility, CoreDownSomeTableKeepsEveryRailAlignedShiftAtItsBound) {
  Case c = make_case(small_roft(), Degrader(small_roft()).switch_down(3, 1), 0);
  expect_model_agrees(c);
  EXPECT_EQ(solve(c, 0), Feasible::kYes);
}

// One spine-core link down: every shift at its bound, and at most twice as
// many of the modelled entries (those the rail's flows reach) changed as
// entries crossed the link (issue 10's path stability).
TEST(ShiftFeasibility, SpineCoreLinkDownSomeTableKeepsEveryShiftAtItsBoundWithinThePathStabilityLimit) {
  const Fabric& base = small_roft();
  RailMap rails = map_rails(base, policies::RailNaming());
  auto healthy = route_unicast(base, *plan_routing(base, {}, rails));
  ASSERT_TRUE(healthy.ok());
  Degraded d = Degrader(base).link_down(Tier::kSpineCore, 1);
  ASSERT_EQ(d.down.size(), 1u);
  const int32_t rail = rail_below(base, rails, d.down[0]);
  ASSERT_GE(rail, 0);
  Case c = make_case(base, std::move(d), rail);
  expect_model_agrees(c);
  PathStability st = path_stability(base, healthy->tables, c.d.fabric, {}, c.tables);
  ASSERT_GT(st.crossed, 0u);
  std::cout << "the engine changed " << st.changed << " entries, " << st.crossed << " crossed the link\n";
  EXPECT_EQ(solve(c, 0, nullptr, &healthy->tables, 2 * st.crossed), Feasible::kYes);
}

// The entries (switch x LID) whose route over `healthy` crossed a link the
// degradation took down.
std::vector<uint8_t> crossed_entries(const Fabric& base, const ForwardingTables& healthy, const Degraded& d) {
  std::vector<uint8_t> failed(base.num_links(), 0);
  for (LinkId l : d.down) failed[l.value()] = 1;
  std::vector<uint8_t> crossed(static_cast<size_t>(base.switches().size()) * healthy.num_lids(), 0);
  CutOracle(base).routes_crossing(healthy, failed, [&](Lid lid, uint32_t s) {
    crossed[static_cast<size_t>(s) * healthy.num_lids() + lid.value] = 1;
  });
  return crossed;
}

// A method that keeps every route the failure did not cross (as the
// engine's phase A does) cannot keep every shift at its bound: the tables
// above move other routes too. Each case is feasible without the restriction.
TEST(ShiftFeasibility, NoTableThatMovesOnlyTheCrossedRoutesKeepsEveryShiftAtItsBound) {
  struct Failure {
    const Fabric* base;
    Degraded d;
    int32_t rail;
  };
  static const Fabric two_level = generate(roft(40, 8, 2, 32));  // 320 CAs, leaves of 16, 16 and 8 per rail
  const Fabric& small = small_roft();
  RailMap small_rails = map_rails(small, policies::RailNaming());
  Degraded link = Degrader(small).link_down(Tier::kSpineCore, 1);
  const int32_t link_rail = rail_below(small, small_rails, link.down.at(0));
  std::vector<Failure> failures;
  failures.push_back({&small, Degrader(small).switch_down(3, 1), 0});
  failures.push_back({&small, std::move(link), link_rail});
  failures.push_back({&two_level, Degrader(two_level).switch_down(2, 1), 0});
  for (Failure& fail : failures) {
    const Fabric& base = *fail.base;
    RailMap rails = map_rails(base, policies::RailNaming());
    auto healthy = route_unicast(base, *plan_routing(base, {}, rails));
    ASSERT_TRUE(healthy.ok());
    std::vector<uint8_t> crossed = crossed_entries(base, healthy->tables, fail.d);
    Case c = make_case(base, std::move(fail.d), fail.rail);
    EXPECT_EQ(solve(c, 0), Feasible::kYes) << c.d.name;
    EXPECT_EQ(solve(c, 0, nullptr, &healthy->tables, UINT32_MAX, &crossed), Feasible::kNo) << c.d.name;
  }
}

// The 1,024-CA radix-16 ROFT of the quality tests, a core down (~4 minutes).
TEST(ShiftFeasibility, DISABLED_CoreDownOnTheRadix16RoftSomeTableKeepsEveryShiftAtItsBound) {
  static const Fabric big = generate(roft(128, 8, 3, 16));
  Case c = make_case(big, Degrader(big).switch_down(3, 1), 0);
  EXPECT_EQ(solve(c, 0), Feasible::kYes);
}

}  // namespace
}  // namespace railyard::routing::test
