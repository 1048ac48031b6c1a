// Incremental reroute (routing/reroute.h): on many seeded changes of switch
// links (down, up, drained, undrained, several at once, in sequence), the
// incremental route must equal a full route of the changed fabric, tables
// and report, byte for byte; and it must be incremental (re-walk few
// columns), not a full route in disguise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "routing/reroute.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"
#include "routing/unicast_engine/incremental.h"
#include "tests/routing/degradations.h"
#include "tests/routing/reroute_steps.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing {
namespace {

using test::Degraded;
using test::Degrader;
using test::Tier;

using test::full;
using test::options_for;
using test::State;
using test::step;
using test::with_drain;
using test::with_state;

// Switch links up in `f`, in order.
std::vector<LinkId> up_links(const Degrader& d, const Fabric& f, Tier tier) {
  std::vector<LinkId> out;
  for (LinkId l : d.links(tier)) {
    if (f.link(l).state != PortState::kDown) out.push_back(l);
  }
  return out;
}

// Steps taken and, of those, incremental, over a test's random walks.
struct WalkCount {
  int steps = 0, incremental = 0, in_place = 0;
  int repaired = 0;  // steps whose route filled switch-LID entries under the dependency check
  int shifted = 0;   // steps whose route moved entries in the pass over shifts
  uint64_t columns = 0, recomputed = 0;
};

void random_walk(const Fabric& base, uint64_t seed, int steps, const std::string& label, WalkCount& count) {
  Degrader d(base);
  std::mt19937_64 rng(seed);
  // Start healthy or already degraded.
  Degraded start = seed % 3 == 0 ? d.healthy() : seed % 3 == 1 ? d.cut(3, Tier::kAny, seed) : d.drain(3, Tier::kAny, seed);
  State s = full(start.fabric, start.drained);
  std::vector<LinkId> down = start.down;
  for (int i = 0; i < steps; ++i) {
    const int kind = static_cast<int>(rng() % 5);
    const Tier tier = rng() % 2 ? Tier::kLeafSpine : d.links(Tier::kSpineCore).empty() ? Tier::kLeafSpine : Tier::kSpineCore;
    std::vector<LinkId> live = up_links(d, s.fabric, tier);
    std::string what = label + " seed " + std::to_string(seed) + " step " + std::to_string(i) + ": ";
    RerouteStats stats;
    // Every other step hands the route over (the memo updated in place, as
    // the plugin does), the others keep it shared (the memo copied).
    TrackedRouting* give = (seed + static_cast<uint64_t>(i)) % 2 == 0 ? &s.routed : nullptr;
    if ((kind == 0 || kind == 4) && !live.empty()) {  // one or three links down
      std::vector<LinkId> pick;
      for (int k = 0; k < (kind == 4 ? 3 : 1) && !live.empty(); ++k) {
        size_t j = rng() % live.size();
        pick.push_back(live[j]);
        live.erase(live.begin() + static_cast<ptrdiff_t>(j));
      }
      down.insert(down.end(), pick.begin(), pick.end());
      s = step(s, with_state(s.fabric, pick, PortState::kDown), s.drained, what + "links down", &stats, give);
    } else if (kind == 1 && !down.empty()) {  // one back up
      size_t j = rng() % down.size();
      LinkId l = down[j];
      down.erase(down.begin() + static_cast<ptrdiff_t>(j));
      s = step(s, with_state(s.fabric, {l}, PortState::kActive), s.drained, what + "link up", &stats, give);
    } else if (kind == 2 && !live.empty()) {  // drain
      LinkId l = live[rng() % live.size()];
      s = step(s, s.fabric, with_drain(s.fabric, s.drained, l, true), what + "drain", &stats, give);
    } else if (kind == 3 && !s.drained.empty()) {  // undrain one
      std::vector<LinkId> dr;
      for (uint32_t l = 0; l < s.drained.size(); ++l) {
        if (s.drained[l]) dr.push_back(LinkId(l));
      }
      if (dr.empty()) continue;
      s = step(s, s.fabric, with_drain(s.fabric, s.drained, dr[rng() % dr.size()], false), what + "undrain", &stats, give);
    } else {
      continue;
    }
    ++count.steps;
    count.incremental += stats.incremental ? 1 : 0;
    count.in_place += stats.memo_in_place ? 1 : 0;
    count.columns += stats.columns;
    count.recomputed += stats.columns_recomputed;
    count.repaired += s.routed.result.report.switch_entries_repaired != 0 ? 1 : 0;
    count.shifted += s.routed.result.report.shift_moves != 0 ? 1 : 0;
    if (::testing::Test::HasFailure()) return;
  }
}

// Walks of `steps` changes from `base`, seeds 1..seeds, each step equal to
// a full route (random_walk); every change is of switch links, so all are
// incremental, and they re-walk fewer columns than there are.
WalkCount walk_seeds(const Fabric& base, uint64_t seeds, int steps, const char* what) {
  WalkCount count;
  for (uint64_t seed = 1; seed <= seeds && !::testing::Test::HasFailure(); ++seed) {
    random_walk(base, seed, steps, what, count);
  }
  EXPECT_EQ(count.incremental, count.steps);
  EXPECT_LT(count.recomputed, count.columns);
  std::printf("%s: %d steps, %d incremental (%d in place), %llu of %llu columns re-walked\n", what, count.steps,
              count.incremental, count.in_place, static_cast<unsigned long long>(count.recomputed),
              static_cast<unsigned long long>(count.columns));
  return count;
}

TEST(Reroute, EqualsAFullRouteOnSeededChangesTwoLevels) {
  const WalkCount count = walk_seeds(test::generate(test::roft(32, 8, 2, 32)), 12, 8, "2L");
  EXPECT_GT(count.in_place, count.steps / 4) << "half the steps hand their route over";
}

TEST(Reroute, EqualsAFullRouteOnSeededChangesThreeLevels) {
  const WalkCount count = walk_seeds(test::generate(test::roft(64, 8, 3, 16)), 20, 8, "3L");
  EXPECT_GT(count.in_place, count.steps / 4) << "half the steps hand their route over";
  // The pass over shifts moves entries in many of them: undone and made
  // again by each reroute (RouteMemo::moves), still the full route.
  EXPECT_GT(count.shifted, count.steps / 4) << count.shifted << " of " << count.steps;
}

// Rails of 16 + 16 + 8 CAs: the leaf digits start after the ring's seam
// (flow_walk.cpp, set_leaf_offsets), the same before and after a change of
// switch links; every step still the full route.
// Switch LIDs among CA LIDs (OpenSM's numbering): the switch turns' fills
// written one entry at a time, in full and kept.
TEST(Reroute, EqualsAFullRouteWithLidsScattered) {
  GeneratorSpec spec = test::roft(64, 8, 3, 16);
  spec.remove_switch_links = 20;
  walk_seeds(test::with_lids_scattered(test::generate(spec), 5), 4, 8, "3L, LIDs scattered");
}

TEST(Reroute, EqualsAFullRouteOnRailsThatEndInAPartialLeaf) {
  walk_seeds(test::generate(test::roft(40, 8, 2, 32)), 8, 8, "2L partial");
}

// Every leaf missing an uplink: the turn switch leaves switch-LID entries
// empty and the repair fills them against the dependency graph of every
// route (unicast_engine/switch_repair.cpp), which depends on the whole
// tables. A reroute empties the repair's leaf-LID fills first and repairs
// again at the end: still the full route, byte for byte, at every step of
// walks that start from there, cut or drained further.
TEST(Reroute, EqualsAFullRouteWhereSwitchLidsAreRepaired) {
  GeneratorSpec spec = test::roft(64, 8, 3, 16);
  spec.remove_uplink_per_leaf = 1;
  const Fabric base = test::generate(spec);
  WalkCount count;
  for (uint64_t seed = 1; seed <= 6 && !HasFailure(); ++seed) random_walk(base, seed, 6, "3L uplinks", count);
  EXPECT_EQ(count.incremental, count.steps);
  EXPECT_GT(count.repaired, count.steps / 2) << "the repair ran in too few steps to test it";
  std::printf("3L uplinks: %d steps, %d incremental, %d with entries repaired\n", count.steps, count.incremental,
              count.repaired);
}

// A reroute keeps the fills of the switch-LID columns it keeps and, when it
// must fill everything again, first empties every entry the turn switch and
// the repair filled: the memo knows them as the entries of the rows that
// did not reach the column before the fills (TurnsMemo::reached). So those
// rows must be exactly the ones the route without switch turns leaves
// empty, and every fill one of them, on fabrics where both the turn switch
// and the repair fill, spine, core and leaf LIDs.
TEST(Reroute, TheMemoKnowsEverySwitchLidFill) {
  GeneratorSpec uplinks = test::roft(64, 8, 3, 16);
  uplinks.remove_uplink_per_leaf = 1;
  GeneratorSpec cut = test::roft(128, 8, 3, 16);
  cut.remove_switch_links = 187;
  cut.seed = 2;
  for (const GeneratorSpec& spec : {uplinks, cut}) {
    const Fabric f = test::generate(spec);
    RoutingOptions o = options_for(f, {});
    auto tracked = route_unicast_tracked(f, o);
    o.switch_turns = false;
    auto plain = route_unicast(f, o);
    ASSERT_TRUE(tracked.ok() && plain.ok());
    EXPECT_GT(tracked->result.report.switch_entries_repaired, 0u);
    const unicast::TurnsMemo& m = tracked->memo->turns;
    ASSERT_TRUE(m.valid);
    SwitchGraph g(f);
    size_t columns = 0, leaf_fills = 0, other_fills = 0, wrong = 0;
    for (uint32_t owner = 0; owner < g.num_switches(); ++owner) {
      const Port& p0 = f.port(f.node(g.node(owner)).first_port);
      for (uint32_t k = 0; p0.lid.valid() && k < (1u << p0.lmc); ++k) {
        const Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
        const uint32_t i = m.column_of.at(lid.value);
        ASSERT_NE(i, unicast::kNone) << "switch LID " << lid.value << " has no column";
        ++columns;
        for (uint32_t s = 0; s < g.num_switches(); ++s) {
          const bool reached = (m.reached[i * m.words + s / 64] >> (s % 64) & 1) != 0;
          const bool routed = plain->tables.get(s, lid) != ForwardingTables::kNoPath;
          const bool filled = tracked->result.tables.get(s, lid) != plain->tables.get(s, lid);
          wrong += reached != routed || (filled && reached);
          (g.num_cas(owner) != 0 ? leaf_fills : other_fills) += filled;
        }
      }
    }
    EXPECT_EQ(columns, m.lids.size());
    EXPECT_GT(leaf_fills, 0u);
    EXPECT_GT(other_fills, 0u);
    EXPECT_EQ(wrong, 0u) << "rows the memo has wrong, of " << columns << " switch LIDs";
  }
}

// A route that needed the repair leaves its fills in the columns the next
// route keeps; when that next fabric needs no repair (every leaf's missing
// uplink back up at once) those fills must go, and the turn switch's come
// back: still the full route, incremental, either way.
TEST(Reroute, EqualsAFullRouteWhenTheRepairIsNoLongerNeeded) {
  const Fabric healthy = test::generate(test::roft(64, 8, 3, 16));
  SwitchGraph g(healthy);
  FabricBuilder builder(healthy);
  uint32_t leaves = 0;
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    if (g.num_cas(s) == 0) continue;
    std::vector<LinkId> up;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) up.push_back(g.link(e));
    ASSERT_FALSE(up.empty());
    ASSERT_TRUE(builder.set_link_state(up[(leaves++ * 7) % up.size()], PortState::kDown).ok());
  }
  auto built = builder.build();
  ASSERT_TRUE(built.ok());
  const State missing = full(std::move(built).value(), {});
  ASSERT_GT(missing.routed.result.report.switch_entries_repaired, 0u) << "the repair did not run: nothing to test";
  RerouteStats stats;
  const State back = step(missing, healthy, {}, "every leaf's uplink back", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_EQ(back.routed.result.report.switch_entries_repaired, 0u);
  const State again = step(back, missing.fabric, {}, "every leaf's uplink down again", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
}

// Two spines of one pod lose the link in the same up slot, one after the
// other. After the second, in a column whose digits take that slot and
// whose leaves climb to the second spine, those leaves wait for phase B,
// and so does that spine; the first spine, whose nominal path is broken
// since the first change, may be fed by the same leaves and must wait too:
// no patch of the old column (Engine::patch_spine) may miss it.
TEST(Reroute, TwoSpinesOfAPodLosingTheSameUpSlot) {
  const Fabric base = test::generate(test::roft(64, 8, 3, 16));
  const SwitchGraph g(base);
  auto leafy = [&](uint32_t s) { return g.num_cas(s) != 0; };
  auto spine = [&](uint32_t s) {
    if (leafy(s)) return false;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (leafy(g.remote(e))) return true;
    }
    return false;
  };
  // The first spine, its first link up (to a switch that is no spine), and
  // a spine sharing a leaf with it, by the same port.
  uint32_t s1 = SwitchGraph::kNone;
  for (uint32_t s = 0; s < g.num_switches() && s1 == SwitchGraph::kNone; ++s) s1 = spine(s) ? s : s1;
  ASSERT_NE(s1, SwitchGraph::kNone);
  uint32_t up1 = SwitchGraph::kNone, leaf = SwitchGraph::kNone;
  for (uint32_t e = g.begin(s1); e < g.end(s1); ++e) {
    if (up1 == SwitchGraph::kNone && !leafy(g.remote(e)) && !spine(g.remote(e))) up1 = e;
    if (leafy(g.remote(e))) leaf = g.remote(e);
  }
  ASSERT_NE(up1, SwitchGraph::kNone);
  LinkId second;
  for (uint32_t e = g.begin(leaf); e < g.end(leaf) && !second.valid(); ++e) {
    const uint32_t s2 = g.remote(e);
    if (s2 == s1) continue;
    for (uint32_t f = g.begin(s2); f < g.end(s2); ++f) {
      if (g.port(f) == g.port(up1) && !leafy(g.remote(f)) && !spine(g.remote(f))) second = g.link(f);
    }
  }
  ASSERT_TRUE(second.valid()) << "no spine of the pod has a link up by port " << int(g.port(up1));
  Degrader d(base);
  const State healthy = full(base, {});
  const State one = step(healthy, d.apply({g.link(up1)}, {}, "one").fabric, {}, "a spine's link up");
  RerouteStats stats;
  step(one, d.apply({g.link(up1), second}, {}, "two").fabric, {}, "another spine's, same port", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_GT(stats.columns_patched, 0u);
}

// A spine or a core going down (every link of it) and coming back: what
// the engines work out from the cabling alone (the nominal slots, the
// leaves' digit offsets: EngineStatics) depends on which switches are
// alive, so the memo's may not be taken then; still the full route at
// every step, and the memo stays usable for the next change.
TEST(Reroute, ASwitchGoingDownAndComingBack) {
  const Fabric base = test::generate(test::roft(64, 8, 3, 16));
  Degrader d(base);
  for (int32_t level : {2, 3}) {
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      const Degraded down = d.switch_down(level, seed);
      ASSERT_FALSE(down.down.empty()) << down.name;
      State s = full(base, {});
      s = step(s, down.fabric, {}, down.name);
      s = step(s, base, {}, down.name + ", back");
      const Degraded other = d.link_down(Tier::kSpineCore, seed);
      RerouteStats stats;
      step(s, other.fabric, {}, down.name + ", back, then " + other.name, &stats);
      EXPECT_TRUE(stats.incremental) << stats.full_reason;
    }
  }
}

// A leaf cut off from every other switch (all its up links down) is a
// source no target reaches: each target's modes say so, and the report
// counts its CAs as unreachable. When another leaf then loses an up link,
// every target is patched from the memo's modes, which must still count
// them (load_modes takes the all-tier-1 summary only for a row that is).
TEST(Reroute, ALeafCutOffStaysCountedWhenAnotherLinkFails) {
  const Fabric base = test::generate(test::roft(32, 8, 2, 32));
  Degrader d(base);
  const std::vector<LinkId> ups = d.links(Tier::kLeafSpine);
  ASSERT_FALSE(ups.empty());
  // Every up link of the first leaf, and one of another.
  const NodeId cut = base.port(base.link(ups[0]).a).node;
  std::vector<LinkId> cut_links;
  LinkId other;
  for (LinkId l : ups) {
    const Link& link = base.link(l);
    if (base.port(link.a).node == cut || base.port(link.b).node == cut) {
      cut_links.push_back(l);
    } else if (!other.valid()) {
      other = l;
    }
  }
  ASSERT_TRUE(other.valid());
  State s = full(with_state(base, cut_links, PortState::kDown), {});
  ASSERT_GT(s.routed.result.report.unreachable_pairs, 0u);
  RerouteStats stats;
  s = step(s, with_state(s.fabric, {other}, PortState::kDown), {}, "a leaf cut off, then another leaf's up link",
           &stats, &s.routed);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_GT(s.routed.result.report.unreachable_pairs, 0u);
}

// On a fabric degraded enough that phase B runs in two lanes
// (unicast_engine/phase_b_lanes.cpp), a reroute rebuilds the same list of
// waiting choices, so the same cut and rounds: the full route's tables.
// Links down, a drain, a link back up, handed over and shared in turn.
TEST(Reroute, EqualsAFullRouteWhenPhaseBRunsInTwoLanes) {
  const Fabric base = test::generate(test::roft(256, 8, 3, 32));
  Degrader d(base);
  const Degraded cut = d.cut(10, Tier::kAny, 1);
  State s = full(cut.fabric, cut.drained);
  ASSERT_EQ(s.routed.result.report.phase_b_lanes, 2u) << s.routed.result.report.phase_b_waiting << " choices";
  std::vector<LinkId> live = up_links(d, s.fabric, Tier::kSpineCore);
  std::vector<LinkId> leaf = up_links(d, s.fabric, Tier::kLeafSpine);
  ASSERT_GE(live.size(), 8u);
  ASSERT_GE(leaf.size(), 8u);
  RerouteStats stats;
  s = step(s, with_state(s.fabric, {live[3]}, PortState::kDown), s.drained, cut.name + ", a spine-core link down", &stats,
           &s.routed);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_EQ(s.routed.result.report.phase_b_lanes, 2u);
  s = step(s, s.fabric, with_drain(s.fabric, s.drained, leaf[5], true), cut.name + ", a leaf-spine link drained", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  s = step(s, with_state(s.fabric, {leaf[1], live[7]}, PortState::kDown), s.drained, cut.name + ", two links down",
           &stats, &s.routed);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  s = step(s, with_state(s.fabric, {live[3]}, PortState::kActive), s.drained, cut.name + ", a link back up", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_EQ(s.routed.result.report.phase_b_lanes, 2u);
}

// One link down, or drained, on a healthy tree re-walks a small share of the
// columns (those whose nominal path crossed it, a few more at its ends), and
// so does the link back up (or undrained), equal to a full route each, and
// works out the modes again toward a small share of the leaves. A
// drain brings tier 2 (routes through drained links) into the modes of the
// targets it cuts, and that must not spill into the modes of the others (a
// stale tier-2 flag once made every column of half the leaves re-walked).
void expect_few_columns_after_one_link(bool drain) {
  const Fabric base = test::generate(test::roft(64, 8, 3, 16));
  Degrader d(base);
  const State healthy = full(base, {});
  for (Tier tier : {Tier::kLeafSpine, Tier::kSpineCore}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      Degraded one = d.link_down(tier, seed);
      ASSERT_EQ(one.down.size(), 1u);
      RerouteStats stats, back;
      if (drain) {
        const State drained = step(healthy, base, with_drain(base, {}, one.down[0], true), one.name + " (drained)", &stats);
        step(drained, base, {}, one.name + " (undrained)", &back);
      } else {
        const State cut = step(healthy, one.fabric, {}, one.name, &stats);
        step(cut, base, {}, one.name + " (back up)", &back);
      }
      EXPECT_TRUE(back.incremental) << one.name << " back: " << back.full_reason;
      EXPECT_LT(back.columns_recomputed * 4, back.columns) << one.name << (drain ? " undrained" : " back up");
      EXPECT_TRUE(stats.incremental) << one.name << ": " << stats.full_reason;
      EXPECT_EQ(stats.changed_links, 1u) << one.name;
      EXPECT_GT(stats.columns_recomputed, 0u) << one.name;
      EXPECT_LT(stats.columns_recomputed * 4, stats.columns) << one.name << (drain ? " drained" : " down");
      // The modes toward most leaves cannot move, drained or not: taken
      // from the memo, not worked out again.
      EXPECT_LT(stats.targets_prepared * 4, stats.targets) << one.name << (drain ? " drained" : " down");
      // Every spine of this fabric has two cables to each core above it:
      // with one of them gone, no distance toward any leaf moves.
      if (tier == Tier::kSpineCore) {
        EXPECT_EQ(stats.targets_prepared, 0u) << one.name;
      }
      // A leaf that loses an up link: most columns are the old ones with the
      // leaf waiting for phase B (Engine::patch_leaf), not walked again.
      if (tier == Tier::kLeafSpine) {
        EXPECT_GT(stats.columns_patched * 4, stats.columns_recomputed * 3) << one.name;
        // Back: those columns are the old ones with the leaf on its nominal
        // path again, no longer waiting (Engine::patch_leaf_back).
        EXPECT_GT(back.columns_patched * 4, back.columns_recomputed * 3) << one.name << " back";
      }
      // A spine-core link: toward the spine's pod, a column whose digits do
      // not take the link keeps every entry but the core's (patch_down);
      // toward the others, one that takes it has the spine's leaves wait,
      // or only the spine's entry move (patch_spine).
      if (tier == Tier::kSpineCore) {
        EXPECT_GT(stats.columns_patched * 4, stats.columns_recomputed * 3) << one.name;
        // Back: the spine and those leaves on their nominal paths again
        // (Engine::patch_spine_back), or the core's entry back (patch_down).
        EXPECT_GT(back.columns_patched * 4, back.columns_recomputed * 3) << one.name << " back";
      }
    }
  }
}

TEST(Reroute, OneLinkDownReWalksFewColumns) { expect_few_columns_after_one_link(false); }

TEST(Reroute, OneLinkDrainedReWalksFewColumns) { expect_few_columns_after_one_link(true); }

// Two leaves, two spines, every leaf joined to every spine by two parallel
// cables (ports 3-4 to S0, 5-6 to S1), two CAs a leaf. A drained cable of a
// leaf toward a spine's LID leaves it its parallel one: the leaf's entry
// must move off the drained cable if it was on it, so the spine's column is
// not kept whole (Engine::one_way_up counts cables, not parents).
Fabric parallel_cables() {
  FabricBuilder b;
  NodeId sw[4];
  const char* names[] = {"L0", "L1", "S0", "S1"};
  for (uint16_t i = 0; i < 4; ++i) {
    sw[i] = b.add_node(NodeType::kSwitch, i < 2 ? 6 : 4, Guid{0x11u + i}, Guid{0x11u + i}, names[i]);
    EXPECT_TRUE(b.set_port(sw[i], PortNum{0}, Guid{0x100u + i}, Lid{static_cast<uint16_t>(i + 1)}).ok());
  }
  for (uint8_t leaf = 0; leaf < 2; ++leaf) {
    for (uint8_t k = 0; k < 4; ++k) {  // leaf port 3 + k to spine k / 2, its port 1 + leaf * 2 + k % 2
      EXPECT_TRUE(b.connect(sw[leaf], PortNum{static_cast<uint8_t>(3 + k)}, sw[2 + k / 2],
                            PortNum{static_cast<uint8_t>(1 + leaf * 2 + k % 2)})
                      .ok());
    }
  }
  for (uint16_t i = 0; i < 4; ++i) {
    NodeId ca = b.add_node(NodeType::kCa, 1, Guid{0x21u + i}, Guid{0x21u + i}, "c" + std::to_string(i) + " mlx5_0");
    EXPECT_TRUE(b.set_port(ca, PortNum{1}, Guid{0x121u + i}, Lid{static_cast<uint16_t>(5 + i)}).ok());
    EXPECT_TRUE(b.connect(ca, PortNum{1}, sw[i / 2], PortNum{static_cast<uint8_t>(1 + i % 2)}).ok());
  }
  return std::move(b.build()).value();
}

TEST(Reroute, ADrainedParallelCableMovesTheLeafOffIt) {
  const Fabric base = parallel_cables();
  const State healthy = full(base, {});
  const NodeId l0 = base.find_name("L0");
  for (uint8_t port = 3; port <= 6; ++port) {
    const LinkId l = base.port(base.port_id(l0, PortNum{port})).link;
    const std::string what = "L0 port " + std::to_string(port);
    RerouteStats drained, undrained;
    const State d = step(healthy, base, with_drain(base, {}, l, true), what + " drained", &drained);
    step(d, base, {}, what + " undrained", &undrained);
    EXPECT_TRUE(drained.incremental && undrained.incremental) << what;
  }
}

// A link that comes back up while drained: tier 1 does not see it, but
// tier 2 (routes through drained links) now reaches over it the switches that
// had no route to the spine at its top at all (a leaf reaches a spine only
// through their own cable). The modes toward that spine must not be taken
// from the memo.
TEST(Reroute, ADrainedLinkComingBackUpIsUsedByTier2) {
  const Fabric base = test::generate(test::roft(32, 8, 2, 32));
  Degrader d(base);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Degraded one = d.link_down(Tier::kLeafSpine, seed);
    ASSERT_EQ(one.down.size(), 1u);
    const State down_and_drained = full(one.fabric, with_drain(one.fabric, {}, one.down[0], true));
    RerouteStats stats;
    const State up = step(down_and_drained, base, down_and_drained.drained, one.name + " back up, drained", &stats);
    EXPECT_TRUE(stats.incremental) << one.name << ": " << stats.full_reason;
    // The leaf's entry for the spine's LID: the drained cable's port now.
    const Link& link = base.link(one.down[0]);
    const SwitchGraph graph(base);
    int checked = 0;
    for (auto [near, far] : {std::pair{link.a, link.b}, std::pair{link.b, link.a}}) {
      const NodeId x = base.port(near).node, v = base.port(far).node;
      const Port& v0 = base.port(base.node(v).first_port);
      const uint32_t sx = graph.switch_index(x);
      if (graph.switch_index(v) == SwitchGraph::kNone || !v0.lid.valid()) continue;
      bool leaf = false;  // x has a CA cabled
      for (uint32_t p = 1; p <= base.node(x).num_ports; ++p) {
        const NodeId n = base.remote_node(PortId(base.node(x).first_port.value() + p));
        leaf = leaf || (n.valid() && !base.is_switch(n));
      }
      if (!leaf) continue;
      ++checked;
      EXPECT_EQ(up.routed.result.tables.get(sx, v0.lid), base.port(near).num.value) << one.name;
    }
    EXPECT_EQ(checked, 1) << one.name;
  }
}

// Changes beyond switch links are routed in full, and say so.
TEST(Reroute, ASwitchDownOrACaLinkIsRoutedInFull) {
  const Fabric base = test::generate(test::roft(32, 8, 2, 32));
  Degrader d(base);
  const State healthy = full(base, {});
  RerouteStats stats;
  Degraded leaf = d.switch_down(1, 3);  // a leaf: its CA links go too
  step(healthy, leaf.fabric, {}, leaf.name, &stats);
  EXPECT_FALSE(stats.incremental);
  EXPECT_NE(stats.full_reason.find("CA link"), std::string::npos) << stats.full_reason;
}

// A core switch down moves the nominal slots: route_lanes routes in full,
// into the memo it was handed (in place). That memo must then serve the
// next incremental reroute as well as a fresh one would.
TEST(Reroute, AFullRouteIntoAHandedOverMemoKeepsItUsable) {
  const Fabric base = test::generate(test::roft(64, 8, 3, 16));
  Degrader d(base);
  State healthy = full(base, {});
  RerouteStats stats;
  const Degraded core = d.switch_down(2, 5);
  State down = step(healthy, core.fabric, {}, core.name, &stats, &healthy.routed);
  EXPECT_FALSE(stats.incremental) << "a switch down moves the slots";
  EXPECT_TRUE(stats.memo_in_place) << "the memo handed over is reused for the full route";
  std::vector<LinkId> live = up_links(d, down.fabric, Tier::kLeafSpine);
  ASSERT_FALSE(live.empty());
  step(down, with_state(down.fabric, {live[live.size() / 2]}, PortState::kDown), {}, core.name + ", then a link",
       &stats, &down.routed);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;
  EXPECT_TRUE(stats.memo_in_place);
}

// A fabric read again (the same cables, built anew) is compared cable by
// cable and rerouted incrementally; one built from the route's fabric with
// only link states set is known to have the same cables without comparing
// (Fabric::same_cabling); a LID moved is a full route.
TEST(Reroute, TheCablesAreComparedUnlessKnownTheSame) {
  const GeneratorSpec spec = test::roft(32, 8, 2, 32);
  const Fabric base = test::generate(spec);
  const State healthy = full(base, {});
  const LinkId link = test::first_switch_link(base);
  ASSERT_TRUE(link.valid());

  const Fabric derived = with_state(base, {link}, PortState::kDown);
  EXPECT_TRUE(base.same_cabling(derived));
  RerouteStats stats;
  step(healthy, derived, {}, "built from the route's fabric", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;

  const Fabric again = with_state(test::generate(spec), {link}, PortState::kDown);
  EXPECT_FALSE(base.same_cabling(again));
  step(healthy, again, {}, "the same cables, built anew", &stats);
  EXPECT_TRUE(stats.incremental) << stats.full_reason;

  FabricBuilder b(derived);
  const NodeId sw = base.switches()[0];
  const Port& p0 = base.port(base.node(sw).first_port);
  ASSERT_TRUE(b.set_port(sw, PortNum{0}, p0.guid, Lid{static_cast<uint16_t>(base.max_lid().value + 1)}).ok());
  const Fabric moved = std::move(b.build()).value();
  EXPECT_FALSE(base.same_cabling(moved));
  step(healthy, moved, {}, "a switch LID moved", &stats);
  EXPECT_FALSE(stats.incremental);
  EXPECT_NE(stats.full_reason.find("LID"), std::string::npos) << stats.full_reason;
}

TEST(Reroute, WithoutAMemoIsAFullRoute) {
  const Fabric base = test::generate(test::roft(32, 8, 2, 32));
  const State healthy = full(base, {});
  TrackedRouting no_memo = healthy.routed;
  no_memo.memo.reset();
  auto r = reroute_unicast(base, healthy.options, no_memo, base, healthy.options);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().stats.incremental);
  EXPECT_TRUE(r.value().result.tables == healthy.routed.result.tables);
}

}  // namespace
}  // namespace railyard::routing
