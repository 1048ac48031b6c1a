// One reroute step checked against a full route (reroute_test.cpp): a
// fabric state with its tracked route, and step(), which reroutes it to
// another state incrementally and compares tables, report and memo with a
// full tracked route of that state.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/rails.h"
#include "routing/reroute.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/unicast_engine/incremental.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {

inline void expect_same_report(const RoutingReport& a, const RoutingReport& b, const std::string& what) {
  EXPECT_EQ(a.lids_routed, b.lids_routed) << what;
  EXPECT_EQ(a.unreachable_pairs, b.unreachable_pairs) << what;
  EXPECT_EQ(a.drained_pairs, b.drained_pairs) << what;
  EXPECT_EQ(a.switch_entries_turned, b.switch_entries_turned) << what;
  EXPECT_EQ(a.switch_entries_repaired, b.switch_entries_repaired) << what;
  EXPECT_EQ(a.switch_entries_empty, b.switch_entries_empty) << what;
  EXPECT_EQ(a.turn_switches, b.turn_switches) << what;
  ASSERT_EQ(a.unreachable.size(), b.unreachable.size()) << what;
  for (size_t i = 0; i < a.unreachable.size(); ++i) {
    EXPECT_EQ(a.unreachable[i].lid, b.unreachable[i].lid) << what;
    EXPECT_EQ(a.unreachable[i].sources, b.unreachable[i].sources) << what;
  }
  ASSERT_EQ(a.through_drained.size(), b.through_drained.size()) << what;
  for (size_t i = 0; i < a.through_drained.size(); ++i) {
    EXPECT_EQ(a.through_drained[i].lid, b.through_drained[i].lid) << what;
    EXPECT_EQ(a.through_drained[i].sources, b.through_drained[i].sources) << what;
  }
}

// Where the tables differ: the first (switch, LID) and how many entries.
inline std::string first_difference(const ForwardingTables& a, const ForwardingTables& b) {
  uint64_t count = 0;
  std::string first;
  for (uint32_t s = 0; s < a.num_switches(); ++s) {
    for (uint32_t l = 0; l < a.num_lids(); ++l) {
      const Lid lid{static_cast<uint16_t>(l)};
      if (a.get(s, lid) == b.get(s, lid)) continue;
      if (count++ == 0) {
        first = "switch " + std::to_string(s) + " LID " + std::to_string(l) + ": " + std::to_string(a.get(s, lid)) +
                " vs " + std::to_string(b.get(s, lid));
      }
    }
  }
  return std::to_string(count) + " entries differ, first " + first;
}

// A fabric state: the fabric, its drains and its tracked route.
struct State {
  Fabric fabric;
  std::vector<uint8_t> drained;
  RoutingOptions options;
  TrackedRouting routed;
};

inline State full(Fabric f, std::vector<uint8_t> drained) {
  State s{std::move(f), std::move(drained), {}, {}};
  s.options = options_for(s.fabric, s.drained);
  auto r = route_unicast_tracked(s.fabric, s.options);
  EXPECT_TRUE(r.ok());
  s.routed = std::move(r).value();
  return s;
}

// Reroutes `from` to (fabric, drained) incrementally and checks it against a
// full route; returns the new state. With `given` (from's own route, moved
// in), the reroute owns the memo and must update it in place; else it gets
// a copy that shares the memo with `from`, and must leave it alone.
inline State step(const State& from, Fabric f, std::vector<uint8_t> drained, const std::string& what,
           RerouteStats* stats_out = nullptr, TrackedRouting* given = nullptr) {
  State to{std::move(f), std::move(drained), {}, {}};
  to.options = options_for(to.fabric, to.drained);
  const bool gave = given != nullptr;
  TrackedRouting routed = gave ? std::move(*given) : TrackedRouting(from.routed);  // moved, or a copy
  auto inc = reroute_unicast(from.fabric, from.options, std::move(routed), to.fabric, to.options);
  EXPECT_TRUE(inc.ok()) << what;
  if (inc.ok() && inc->stats.incremental) {
    EXPECT_EQ(inc->stats.memo_in_place, gave) << what << (gave ? ": a memo given up was copied"
                                                               : ": a memo still shared was written in place");
  }
  auto oracle = route_unicast_tracked(to.fabric, to.options);
  EXPECT_TRUE(oracle.ok()) << what;
  if (!inc.ok() || !oracle.ok()) return to;
  to.routed = std::move(inc).value();
  EXPECT_TRUE(to.routed.result.tables == oracle->result.tables)
      << what << ": " << first_difference(to.routed.result.tables, oracle->result.tables) << " ("
      << (to.routed.stats.incremental ? "incremental" : "full: " + to.routed.stats.full_reason) << ", "
      << to.routed.stats.columns_recomputed << " of " << to.routed.stats.columns << " columns)";
  expect_same_report(to.routed.result.report, oracle->result.report, what);
  // The memo the next reroute starts from: every target's modes and their
  // summary as a full route works them out.
  if (to.routed.memo != nullptr && oracle->memo != nullptr) {
    const RouteMemo &got = *to.routed.memo, &want = *oracle->memo;
    EXPECT_TRUE(got.modes_at == want.modes_at && got.modes == want.modes) << what << ": the memo's modes differ";
    EXPECT_TRUE(got.reach == want.reach) << what << ": the memo's reach summaries differ";
  }
  if (stats_out != nullptr) *stats_out = to.routed.stats;
  return to;
}

inline Fabric with_state(const Fabric& base, const std::vector<LinkId>& links, PortState state) {
  FabricBuilder b(base);
  for (LinkId l : links) EXPECT_TRUE(b.set_link_state(l, state).ok());
  auto built = b.build();
  EXPECT_TRUE(built.ok());
  return std::move(built).value();
}

inline std::vector<uint8_t> with_drain(const Fabric& f, std::vector<uint8_t> drained, LinkId l, bool on) {
  if (drained.empty()) drained.assign(f.num_links(), 0);
  drained[l.value()] = on ? 1 : 0;
  return drained;
}

}  // namespace railyard::routing::test
