// Can any table meet issue 10's shift target after a single failure ("every
// rail-aligned shift <= its bound")? tests/routing/shift_feasibility.h asks z3
// whether some LFT of minimal legal routes keeps every rail-aligned shift of
// one rail within its cut bound, on fabrics small enough to solve exactly:
// mostly a 3-level ROFT of radix 8, 32 servers x 4 rails (128 CAs, 8 pods of
// 4 leaves, a rail on 2 pods, 4 cores per plane, one link from a core to each
// pod). It has the structure of the 1,024-CA radix-16 ROFT of the quality
// tests (16 pods, a rail on 2 pods, one link per core and pod) at half the
// radix; that one is feasible too (DISABLED_ below: 4 minutes).
//
// Rails share no link on these fabrics (a rail's pods are its own; a core
// joins each pod by its own link), so each rail is a problem of its own: a
// table is feasible when every rail's part is, and one rail's part being
// infeasible is enough for none. Each case asserts that a rail's shifts have
// the bound of the whole shift (all rails), so that the model is held to
// the target's own bound. A failure of a core touches every rail: every
// rail is solved.
//
// Findings (docs/routing.md, "Shifts after a failure"): with a core or a
// spine-core link down, a table with every shift at its bound exists, also
// within issue 10's path-stability limit (checked on the whole table); the
// engine's loads some shift 3 times its bound of 1. None exists that moves
// only the routes that crossed the failure (as the engine's phase A keeps
// the others), here nor on a 2-level ROFT with a spine down. Each feasible
// answer's table is judged again by CutOracle, and the model is checked
// against CutOracle on the engine's own table (feasible at the excess
// CutOracle measures, not one below).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/degradations.h"
#include "tests/routing/path_stability.h"
#include "tests/routing/shift_feasibility.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {
namespace {

constexpr unsigned kTimeoutMs = 60'000;

const Fabric& small_roft() {
  static const Fabric f = generate(roft(32, 4, 3, 8));
  return f;
}

// One degradation of a fabric, one rail's rail-aligned shifts, the engine's
// table and CutOracle's judgement of it.
struct FeasibilityCase {
  const Fabric& base;
  Degraded d;
  RailMap rails;
  std::vector<std::vector<Flow>> shifts;
  ForwardingTables tables;
  ShiftSweep engine;
};

// `rail` < 0: every rail's shifts.
FeasibilityCase make_case(const Fabric& base, Degraded d, int32_t rail) {
  FeasibilityCase c{base, std::move(d), map_rails(base, policies::RailNaming()), {}, {}, {}};
  c.shifts = CutOracle::shift_patterns(c.d.fabric, c.rails, false);
  const CutOracle oracle(c.d.fabric);
  for (uint32_t k = 0; k < c.shifts.size(); ++k) {
    std::vector<Flow>& flows = c.shifts[k];
    if (flows.empty()) continue;
    if (rail < 0) continue;
    const uint64_t whole = oracle.flows_bound(flows);
    std::erase_if(flows, [&](const Flow& f) { return c.rails.rail[c.d.fabric.port(f.src).node.value()] != rail; });
    EXPECT_EQ(oracle.flows_bound(flows), whole) << c.d.name << ", rail " << rail << ", k=" << k;
  }
  auto options = plan_routing(c.d.fabric, {}, c.rails);
  EXPECT_TRUE(options.ok());
  if (!options.ok()) return c;
  auto r = route_unicast(c.d.fabric, *options);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return c;
  c.tables = std::move(r->tables);
  c.engine = oracle.shifts(c.tables, c.shifts);
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

struct Ask {
  int32_t slack = 0;
  const ForwardingTables* fixed = nullptr;
  const ForwardingTables* before = nullptr;
  uint64_t max_changed = 0;
  const std::vector<uint8_t>* may_change = nullptr;
  unsigned timeout_ms = kTimeoutMs;
  uint64_t a2a_cap = 0;  // all-to-all too: at most this on every link
};

// A feasible answer comes with a table (into `found`): CutOracle must find
// it within the slack too, every flow delivered.
Feasible solve(const FeasibilityCase& c, const Ask& ask, ForwardingTables* found = nullptr) {
  ShiftFeasibility model(c.d.fabric);
  const CutOracle oracle(c.d.fabric);
  Feasible answer = model.solve(oracle, c.shifts, ask.slack, ask.timeout_ms, ask.fixed, ask.before, ask.max_changed,
                                ask.may_change, ask.a2a_cap);
  if (answer == Feasible::kYes && !ask.fixed) {
    ShiftSweep judged = oracle.shifts(model.solution(), c.shifts);
    EXPECT_LE(judged.worst_excess, ask.slack) << c.d.name << ": the solver's table, k=" << judged.worst_k;
    EXPECT_EQ(judged.lost, 0u) << c.d.name << ": the solver's table loses flows";
    if (ask.a2a_cap != 0) {
      const AllToAllLoad a2a = oracle.all_to_all(model.solution());
      EXPECT_LE(a2a.max_load, ask.a2a_cap) << c.d.name << ": the solver's table, all-to-all";
      EXPECT_EQ(a2a.lost_connectable, 0u) << c.d.name << ": the solver's table loses all-to-all flows";
    }
    if (found) *found = model.solution();
  }
  return answer;
}

// The model agrees with CutOracle on the engine's table: feasible with the
// excess CutOracle measured, infeasible with one less.
void expect_model_agrees(const FeasibilityCase& c) {
  ASSERT_GT(c.engine.shifts, 0u);
  const int32_t excess = static_cast<int32_t>(c.engine.worst_excess);
  EXPECT_EQ(solve(c, {.slack = excess, .fixed = &c.tables}), Feasible::kYes) << c.d.name;
  EXPECT_EQ(solve(c, {.slack = excess - 1, .fixed = &c.tables}), Feasible::kNo) << c.d.name;
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

// `under`, with the entries where `where` has a port taken from `over`.
ForwardingTables overlay(ForwardingTables under, const ForwardingTables& over, const ForwardingTables& where) {
  for (uint32_t s = 0; s < under.num_switches(); ++s) {
    for (uint32_t lid = 1; lid < under.num_lids(); ++lid) {
      const Lid l{static_cast<uint16_t>(lid)};
      if (where.get(s, l) != ForwardingTables::kNoPath) under.set(s, l, over.get(s, l));
    }
  }
  return under;
}

ForwardingTables healthy_tables(const Fabric& base) {
  auto r = route_unicast(base, *plan_routing(base, {}, map_rails(base, policies::RailNaming())));
  EXPECT_TRUE(r.ok());
  return r.ok() ? std::move(r->tables) : ForwardingTables{};
}

TEST(ShiftFeasibility, HealthyTreeEveryShiftAtItsBoundIsFeasibleAndTheEngineMeetsIt) {
  FeasibilityCase c = make_case(small_roft(), Degrader(small_roft()).healthy(), 0);
  EXPECT_EQ(c.engine.worst_excess, 0);
  expect_model_agrees(c);
  EXPECT_EQ(solve(c, {}), Feasible::kYes);
}

// A core down takes one uplink from the spine of its plane in every pod:
// every rail is solved.
TEST(ShiftFeasibility, CoreDownSomeTableKeepsEveryRailAlignedShiftAtItsBound) {
  const Fabric& base = small_roft();
  const uint32_t rails = map_rails(base, policies::RailNaming()).num_rails;
  ASSERT_EQ(rails, 4u);
  for (uint32_t rail = 0; rail < rails; ++rail) {
    FeasibilityCase c = make_case(base, Degrader(base).switch_down(3, 1), static_cast<int32_t>(rail));
    if (rail == 0) expect_model_agrees(c);
    EXPECT_GT(c.engine.worst_excess, 0) << "rail " << rail;
    EXPECT_EQ(solve(c, {}), Feasible::kYes) << "rail " << rail;
  }
}

// One spine-core link down: every shift at its bound, with at most twice as
// many entries changed as crossed the link (issue 10's path stability),
// counted on the whole table: the solver's entries for the rail's flows, the
// engine's for everything else.
TEST(ShiftFeasibility, SpineCoreLinkDownSomeTableKeepsEveryShiftAtItsBoundWithinThePathStabilityLimit) {
  const Fabric& base = small_roft();
  const RailMap rails = map_rails(base, policies::RailNaming());
  const ForwardingTables healthy = healthy_tables(base);
  Degraded d = Degrader(base).link_down(Tier::kSpineCore, 1);
  ASSERT_EQ(d.down.size(), 1u);
  const int32_t rail = rail_below(base, rails, d.down[0]);
  ASSERT_GE(rail, 0);
  FeasibilityCase c = make_case(base, std::move(d), rail);
  expect_model_agrees(c);
  const PathStability engine = path_stability(base, healthy, c.d.fabric, {}, c.tables);
  ASSERT_GT(engine.crossed, 0u);
  std::cout << "the engine changed " << engine.changed << " entries, " << engine.crossed << " crossed the link\n";
  // The budget for the modelled entries: the limit less what the engine's
  // entries outside the model changed (they stay in the merged table). A
  // first solve without a cap tells which entries the model covers.
  ForwardingTables modelled;
  ASSERT_EQ(solve(c, {}, &modelled), Feasible::kYes);
  const uint64_t outside =
      path_stability(base, healthy, c.d.fabric, {}, overlay(c.tables, healthy, modelled)).changed;
  ASSERT_LT(outside, 2 * engine.crossed);
  ForwardingTables found;
  ASSERT_EQ(solve(c, {.before = &healthy, .max_changed = 2 * engine.crossed - outside}, &found), Feasible::kYes);
  // The whole table: the solver's entries where it has them, the engine's elsewhere.
  const ForwardingTables merged = overlay(c.tables, found, found);
  const PathStability whole = path_stability(base, healthy, c.d.fabric, {}, merged);
  std::cout << "the solver's table changed " << whole.changed << " entries\n";
  EXPECT_LE(whole.changed, 2 * whole.crossed);
  EXPECT_LE(CutOracle(c.d.fabric).shifts(merged, c.shifts).worst_excess, 0);
  const VerifyReport v = verify_tables(c.d.fabric, merged);
  EXPECT_EQ(v.looped, 0u);
  EXPECT_EQ(v.max_stretch, 0u);
  EXPECT_TRUE(v.cdg_ca.acyclic) << v.cdg_ca.cycle;
}

// A method that keeps every route the failure did not cross (as the
// engine's phase A does) cannot keep every shift at its bound: the tables
// above move other routes too. The same restriction with a slack that any
// minimal table meets is feasible (the restriction alone is satisfiable).
TEST(ShiftFeasibility, NoTableThatMovesOnlyTheCrossedRoutesKeepsEveryShiftAtItsBound) {
  struct Failure {
    const Fabric* base;
    Degraded d;
    int32_t rail;
  };
  static const Fabric two_level = generate(roft(40, 8, 2, 32));  // 320 CAs, leaves of 16, 16 and 8 per rail
  const Fabric& small = small_roft();
  const RailMap small_rails = map_rails(small, policies::RailNaming());
  Degraded link = Degrader(small).link_down(Tier::kSpineCore, 1);
  const int32_t link_rail = rail_below(small, small_rails, link.down.at(0));
  std::vector<Failure> failures;
  failures.push_back({&small, Degrader(small).switch_down(3, 1), 0});
  failures.push_back({&small, std::move(link), link_rail});
  failures.push_back({&two_level, Degrader(two_level).switch_down(2, 1), 0});
  for (Failure& fail : failures) {
    const Fabric& base = *fail.base;
    const ForwardingTables healthy = healthy_tables(base);
    const std::vector<uint8_t> crossed = crossed_entries(base, healthy, fail.d);
    FeasibilityCase c = make_case(base, std::move(fail.d), fail.rail);
    expect_model_agrees(c);
    EXPECT_EQ(solve(c, {}), Feasible::kYes) << c.d.name;
    EXPECT_EQ(solve(c, {.slack = 1000, .before = &healthy, .max_changed = UINT32_MAX, .may_change = &crossed}),
              Feasible::kYes)
        << c.d.name;
    EXPECT_EQ(solve(c, {.before = &healthy, .max_changed = UINT32_MAX, .may_change = &crossed}), Feasible::kNo)
        << c.d.name;
  }
}

// CutOracle's spines' bound (spines_bound.h) is the least any table reaches
// where it raises the cuts': a 3-level ROFT of radix 8 and 20 CAs with a
// core down, whose spines of that plane lost every up link (the pods are
// not full). On each shift it raises, no table of minimal legal routes
// keeps the shift within the cuts' bound, and some table meets the spines'.
TEST(ShiftFeasibility, TheSpinesBoundIsTheLeastAnyTableReachesWhereItRaisesTheCuts) {
  static const Fabric base = generate(roft(10, 2, 3, 8));
  FeasibilityCase c = make_case(base, Degrader(base).switch_down(3, 1), -1);
  const CutOracle oracle(c.d.fabric);
  uint32_t raised = 0;
  for (uint32_t k = 0; k < c.shifts.size(); ++k) {
    if (c.shifts[k].empty() || oracle.flows_bound(c.shifts[k]) == oracle.cuts_bound(c.shifts[k])) continue;
    ++raised;
    FeasibilityCase one{c.base, c.d, c.rails, {c.shifts[k]}, c.tables, {}};
    ASSERT_EQ(oracle.flows_bound(c.shifts[k]), oracle.cuts_bound(c.shifts[k]) + 1) << "k=" << k;
    EXPECT_EQ(solve(one, {.slack = -1}), Feasible::kNo) << "k=" << k << ": a table within the cuts' bound";
    EXPECT_EQ(solve(one, {}), Feasible::kYes) << "k=" << k << ": no table within the spines' bound";
  }
  EXPECT_GE(raised, 3u);
}

// Both single-failure targets of issue 10 at once: every rail-aligned shift
// of every rail at its bound and all-to-all within 1.05 x its cut bound (the
// engine's all-to-all there: 132 of 127; its shifts 4/1). z3 finds such a
// table for a core down and for a spine-core link down (~50 and ~30 s), so
// the two targets do not exclude each other on this fabric.
TEST(ShiftFeasibility, DISABLED_SomeTableMeetsBothSingleFailureTargets) {
  const Degrader dg(small_roft());
  for (Degraded d : {dg.switch_down(3, 1), dg.link_down(Tier::kSpineCore, 1)}) {
    FeasibilityCase c = make_case(small_roft(), std::move(d), -1);
    const uint64_t bound = CutOracle(c.d.fabric).all_to_all(c.tables).bound;
    ASSERT_EQ(bound, 127u) << c.d.name;  // every other CA's flows on a CA's own link
    EXPECT_EQ(solve(c, {.timeout_ms = 600'000, .a2a_cap = bound + bound / 20}), Feasible::kYes) << c.d.name;
  }
}

// The 1,024-CA radix-16 ROFT of the quality tests, a core down (~4 minutes).
TEST(ShiftFeasibility, DISABLED_CoreDownOnTheRadix16RoftSomeTableKeepsEveryShiftAtItsBound) {
  static const Fabric big = generate(roft(128, 8, 3, 16));
  FeasibilityCase c = make_case(big, Degrader(big).switch_down(3, 1), 0);
  EXPECT_EQ(solve(c, {.timeout_ms = 1'800'000}), Feasible::kYes);
}

// The survey of docs/routing.md ("Shifts after a failure"): per failure, the
// engine's worst shift, whether some table is at the bound, and whether one
// is when only the crossed entries move, or at most 1x / 2x as many entries
// as crossed change (modelled entries only). Prints; asserts nothing beyond
// solve()'s own checks. About 45 minutes (10-minute solver limit).
TEST(ShiftFeasibility, DISABLED_Survey) {
  struct Row {
    GeneratorSpec spec;
    const char* what;
    int32_t rail;  // -1: every rail
  };
  GeneratorSpec fat = roft(96, 4, 3, 16);
  fat.kind = TopologyKind::kFatTree;
  const Row rows[] = {
      {roft(32, 4, 3, 8), "core", 0},         {roft(32, 4, 3, 8), "spine-core", -1},
      {roft(40, 8, 2, 32), "spine", 0},       {roft(40, 8, 2, 32), "leaf", -1},
      {roft(40, 8, 2, 32), "leaf-spine", -1}, {roft(24, 8, 3, 16), "core", -1},
      {roft(96, 4, 3, 32), "core", -1},       {fat, "core", -1},
  };
  for (const Row& row : rows) {
    const Fabric base = generate(row.spec);
    const Degrader dg(base);
    const std::string what = row.what;
    Degraded d = what == "core"         ? dg.switch_down(3, 1)
                 : what == "spine"      ? dg.switch_down(2, 1)
                 : what == "leaf"       ? dg.switch_down(1, 1)
                 : what == "leaf-spine" ? dg.link_down(Tier::kLeafSpine, 1)
                                        : dg.link_down(Tier::kSpineCore, 1);
    const ForwardingTables healthy = healthy_tables(base);
    const std::vector<uint8_t> crossed = crossed_entries(base, healthy, d);
    uint64_t n_crossed = 0;
    for (uint8_t x : crossed) n_crossed += x;
    FeasibilityCase c = make_case(base, std::move(d), row.rail);
    auto timed = [&](const Ask& ask) {
      auto t0 = std::chrono::steady_clock::now();
      Feasible f = solve(c, ask);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return std::string(to_string(f)) + " (" + std::to_string(static_cast<int>(s + 0.5)) + " s)";
    };
    std::cout << c.d.name << " (rail " << row.rail << "): the engine " << c.engine.worst_max << "/"
              << c.engine.worst_bound << "; crossed " << n_crossed << "\n";
    std::cout << "  some table at the bound: " << timed({.timeout_ms = 600'000}) << "\n";
    std::cout << "  only crossed entries move: "
              << timed({.before = &healthy, .max_changed = UINT32_MAX, .may_change = &crossed, .timeout_ms = 600'000})
              << "\n";
    for (uint64_t times : {1, 2}) {
      std::cout << "  at most " << times << " x crossed changed: "
                << timed({.before = &healthy, .max_changed = times * n_crossed, .timeout_ms = 600'000}) << "\n";
    }
    std::cout << std::flush;
  }
}

}  // namespace
}  // namespace railyard::routing::test
