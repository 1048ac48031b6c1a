// The pass over shifts (routing/unicast_engine/shift_repair.cpp), judged by
// the tests' own CutOracle against the same route without it (an empty host
// grid turns it off): it lowers the load the rail-aligned and cross-rail
// shifts put above their bounds, keeps all-to-all within its limit, leaves
// the tables minimal and deadlock-free, and does nothing where every route
// is nominal.
#include <gtest/gtest.h>

#include <iostream>

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

// Over shifts: the busiest link's load above the shift's bound, summed, and
// the worst.
struct Excess {
  uint64_t sum = 0;
  int64_t worst = 0;
};

Excess excess(const CutOracle& oracle, const ForwardingTables& t, const std::vector<std::vector<Flow>>& shifts) {
  Excess out;
  for (const std::vector<Flow>& flows : shifts) {
    if (flows.empty()) continue;
    const FlowsLoad l = oracle.flows(t, flows);
    out.worst = std::max(out.worst, static_cast<int64_t>(l.max_load) - static_cast<int64_t>(l.bound));
    out.sum += l.max_load > l.bound ? l.max_load - l.bound : 0;
  }
  return out;
}

struct Routed {
  RoutingResult with, without;
};

Routed route_both(const Degraded& d, const RailMap& rails) {
  auto options = plan_routing(d.fabric, {}, rails);
  EXPECT_TRUE(options.ok());
  options->drained = d.drained;
  RoutingOptions off = *options;
  off.shift_grid.clear();
  off.shift_rails = 0;
  auto with = route_unicast(d.fabric, *options);
  auto without = route_unicast(d.fabric, off);
  EXPECT_TRUE(with.ok() && without.ok());
  return {std::move(with).value(), std::move(without).value()};
}

TEST(ShiftRepair, LowersTheShiftsExcessAndKeepsAllToAllWithinItsLimit) {
  struct Case {
    GeneratorSpec spec;
    bool fat_tree;
  };
  const Case cases[] = {{roft(128, 8, 3, 16), false}, {roft(64, 8, 2, 32), false}, {roft(96, 4, 3, 16), true}};
  uint32_t moved = 0, lowered = 0;
  for (const Case& c : cases) {
    GeneratorSpec spec = c.spec;
    if (c.fat_tree) spec.kind = TopologyKind::kFatTree;
    const Fabric base = generate(spec);
    const Degrader degrader(base);
    const RailMap rails = map_rails(base, policies::RailNaming());
    std::vector<std::vector<Flow>> shifts = CutOracle::shift_patterns(base, rails, false);
    if (rails.num_rails > 1) {
      for (auto& v : CutOracle::shift_patterns(base, rails, true)) shifts.push_back(std::move(v));
    }
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      for (const Degraded& d : {degrader.cut(5, Tier::kAny, seed), degrader.drain(5, Tier::kAny, seed)}) {
        const Routed r = route_both(d, rails);
        const CutOracle oracle(d.fabric, d.drained);
        const Excess before = excess(oracle, r.without.tables, shifts);
        const Excess after = excess(oracle, r.with.tables, shifts);
        std::cout << d.name << ": worst shift excess " << before.worst << " -> " << after.worst << ", summed "
                  << before.sum << " -> " << after.sum << ", " << r.with.report.shift_moves << " moves\n";
        EXPECT_LE(after.worst, before.worst) << d.name;
        EXPECT_LE(after.sum, before.sum) << d.name;
        moved += r.with.report.shift_moves > 0 ? 1 : 0;
        lowered += after.sum < before.sum ? 1 : 0;
        EXPECT_EQ(r.without.report.shift_moves, 0u);
        // The pass's own account agrees in direction.
        EXPECT_LE(r.with.report.shift_excess_after, r.with.report.shift_excess_before) << d.name;
        // All-to-all: no switch link above what the route without the pass
        // had, or 1/32 above a CA's own link (the pass's limit).
        const AllToAllLoad a = oracle.all_to_all(r.with.tables), b = oracle.all_to_all(r.without.tables);
        const uint64_t own = oracle.live_cas() - 1;
        EXPECT_LE(a.max_switch_load, std::max(b.max_switch_load, own + own / 32)) << d.name;
        EXPECT_EQ(a.lost_connectable, 0u) << d.name;
        // Still minimal and deadlock-free with switch LIDs.
        const VerifyReport v = verify_tables(d.fabric, r.with.tables);
        EXPECT_EQ(v.max_stretch, 0u) << d.name;
        EXPECT_EQ(v.looped, 0u) << d.name;
        EXPECT_TRUE(v.cdg_all.acyclic) << d.name << ": " << v.cdg_all.cycle;
      }
    }
  }
  // The pass is not idle on these fabrics, and lowers the excess on most.
  EXPECT_GE(moved, 8u);
  EXPECT_GE(lowered, 8u);
}

// Where every route is nominal (a CA or a leaf gone, nothing displaced) the
// pass does not run: the tables are the route's without it.
TEST(ShiftRepair, NothingDisplacedNothingMoved) {
  const Fabric base = generate(roft(40, 8, 2, 32));  // rails of 16 + 16 + 8: shifts above the bound when healthy
  const Degrader degrader(base);
  const RailMap rails = map_rails(base, policies::RailNaming());
  for (const Degraded& d : {degrader.healthy(), degrader.switch_down(1, 1)}) {
    const Routed r = route_both(d, rails);
    EXPECT_EQ(r.with.report.shift_moves, 0u) << d.name;
    EXPECT_TRUE(r.with.tables == r.without.tables) << d.name;
  }
}

}  // namespace
}  // namespace railyard::routing::test
