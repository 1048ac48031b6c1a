// plan_update_order against a replay checker written from the fabric alone
// (tests/routing/update_replay.h): the steps are written one by one into a
// copy of the old tables, and after each step every switch's walk to every
// LID the step changed is followed through the mixed tables on the changed
// fabric. No walk may loop; one that does not deliver must be one the old
// tables (on the changed fabric) or the new tables lose too. Each round is
// replayed in both orders (its steps are meant to be sent at once). At the
// end the tables must be the new ones. Changes: link down, switch down, drain, link back up, switch back
// up and cuts on healthy and degraded generated fat trees; hand-made tables
// where any whole-block order loops or black-holes; random spanning trees as
// tables on small random graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <cstdint>
#include <string>
#include <vector>

#include "routing/lid_assignment.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/update_order.h"
#include "tests/routing/degradations.h"
#include "tests/routing/test_fabrics.h"
#include "tests/routing/update_replay.h"

namespace railyard::routing {
namespace {

using test::replay;
using test::RoundOrder;

// Counts of `order` against the tables themselves.
void expect_counts(const ForwardingTables& before, const ForwardingTables& after, const UpdateOrder& order,
                   const std::string& name) {
  uint64_t entries = 0;
  for (uint32_t s = 0; s < before.num_switches(); ++s) {
    for (uint32_t l = 0; l < before.num_lids(); ++l) entries += before.row(s)[l] != after.row(s)[l];
  }
  EXPECT_EQ(order.entries_changed, entries) << name;
  EXPECT_EQ(order.blocks_changed, ForwardingTables::changed_blocks(before, after)) << name;
  uint64_t complete = 0, partial = 0;
  for (const UpdateStep& s : order.steps) (s.complete ? complete : partial) += 1;
  EXPECT_EQ(complete, order.blocks_changed) << name;  // each changed block ends once
  EXPECT_EQ(partial, order.partial_steps) << name;
  ASSERT_FALSE(order.round_begin.empty()) << name;
  EXPECT_EQ(order.round_begin.front(), 0u) << name;
  EXPECT_EQ(order.round_begin.back(), order.steps.size()) << name;
  EXPECT_TRUE(std::is_sorted(order.round_begin.begin(), order.round_begin.end())) << name;
}

bool same_steps(const UpdateOrder& a, const UpdateOrder& b) {
  if (a.steps.size() != b.steps.size() || a.round_begin != b.round_begin) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const UpdateStep &x = a.steps[i], &y = b.steps[i];
    if (x.switch_index != y.switch_index || x.block != y.block || x.new_lids != y.new_lids ||
        x.complete != y.complete) {
      return false;
    }
  }
  return a.entries_changed == b.entries_changed && a.blocks_changed == b.blocks_changed &&
         a.partial_steps == b.partial_steps && a.entries_cut == b.entries_cut;
}

// ---------------------------------------------------------------------------
// Generated fabrics: the engine's tables before and after a change.

Result<RoutingResult> route(const Fabric& f, const std::vector<uint8_t>& drained = {}) {
  auto options = plan_routing(f, {}, map_rails(f, {}));
  if (!options.ok()) return options.error();
  options->drained = drained;
  return route_unicast(f, *options);
}

struct Totals {
  uint32_t cases = 0;
  uint64_t changed_blocks = 0;
  uint64_t partial_steps = 0;
  uint32_t max_rounds = 0;
  uint32_t naive_unsafe = 0;  // cases where the steps in reverse are not safe
};

ForwardingTables tables(const Fabric& f, const std::vector<uint8_t>& drained = {}) {
  auto r = route(f, drained);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value().tables : ForwardingTables();
}

// `before` and `after` sent on `to`, the fabric as it is after the change.
void check_change(const Fabric& to, const ForwardingTables& before, const ForwardingTables& after,
                  const std::string& name, Totals& totals) {
  SCOPED_TRACE(name);
  auto order = plan_update_order(to, before, after);
  ASSERT_TRUE(order.ok()) << order.error().message;
  expect_counts(before, after, *order, name);
  if (order->partial_steps == 0) {
    EXPECT_EQ(order->steps.size(), order->blocks_changed);
  }
  EXPECT_EQ(replay(to, before, after, *order), "");
  EXPECT_EQ(replay(to, before, after, *order, RoundOrder::kReversed), "");
  // The same order from the hint of the changed LIDs.
  std::vector<Lid> changed_lids;
  for (uint32_t l = 0; l < before.num_lids(); ++l) {
    for (uint32_t s = 0; s < before.num_switches(); ++s) {
      if (before.row(s)[l] != after.row(s)[l]) {
        changed_lids.push_back(Lid{static_cast<uint16_t>(l)});
        break;
      }
    }
  }
  UpdateOrderOptions hint;
  hint.lids = changed_lids;
  auto hinted = plan_update_order(to, before, after, hint);
  ASSERT_TRUE(hinted.ok());
  EXPECT_TRUE(same_steps(*hinted, *order));
  // And from the changed (switch, block) pairs, given in reverse and twice.
  std::vector<SwitchBlock> changed_blocks;
  for (uint32_t s = before.num_switches(); s-- > 0;) {
    for (uint32_t b = (before.num_lids() + kLftBlockLids - 1) / kLftBlockLids; b-- > 0;) {
      for (uint32_t l = b * kLftBlockLids; l < std::min((b + 1) * kLftBlockLids, before.num_lids()); ++l) {
        if (before.row(s)[l] != after.row(s)[l]) {
          changed_blocks.push_back({s, b});
          changed_blocks.push_back({s, b});
          break;
        }
      }
    }
  }
  UpdateOrderOptions block_hint;
  block_hint.blocks = changed_blocks;
  auto by_blocks = plan_update_order(to, before, after, block_hint);
  ASSERT_TRUE(by_blocks.ok());
  EXPECT_TRUE(same_steps(*by_blocks, *order));
  // The checker is not a rubber stamp: every block at once, sent in the
  // reverse of the order, is often unsafe.
  UpdateOrder naive = *order;
  for (UpdateStep& s : naive.steps) s.new_lids = ~uint64_t{0}, s.complete = true;
  naive.round_begin = {0, static_cast<uint32_t>(naive.steps.size())};
  if (!replay(to, before, after, naive, RoundOrder::kReversed).empty()) ++totals.naive_unsafe;
  ++totals.cases;
  totals.changed_blocks += order->blocks_changed;
  totals.partial_steps += order->partial_steps;
  totals.max_rounds = std::max(totals.max_rounds, order->rounds());
}

// Every kind of change on one base fabric, and back, `seeds` seeds each.
void check_changes(const Fabric& base, uint32_t seeds, Totals& totals) {
  const test::Degrader deg(base);
  const ForwardingTables healthy = tables(base);
  auto both_ways = [&](const test::Degraded& d) {
    const ForwardingTables changed = tables(d.fabric, d.drained);
    // Link or switch down: sent on the changed fabric; back up: on the
    // base. A drain leaves the fabric as it is.
    check_change(d.fabric, healthy, changed, d.name, totals);
    check_change(base, changed, healthy, d.name + ", and back", totals);
  };
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    for (test::Tier tier : {test::Tier::kLeafSpine, test::Tier::kSpineCore}) {
      if (deg.links(tier).empty()) continue;
      both_ways(deg.link_down(tier, seed));
      both_ways(deg.drain(5, tier, seed));
    }
    for (int32_t level = 1; level <= 3; ++level) {
      if (!deg.switches_at(level).empty()) both_ways(deg.switch_down(level, seed));
    }
    const test::Degraded cut = deg.cut(10, test::Tier::kAny, seed);
    check_change(cut.fabric, healthy, tables(cut.fabric), cut.name, totals);
  }
}

void report(const Totals& t, const char* what) {
  std::printf("%s: %u changes, %llu changed blocks, %llu partial steps, at most %u rounds; the steps in "
              "reverse were unsafe in %u\n",
              what, t.cases, static_cast<unsigned long long>(t.changed_blocks),
              static_cast<unsigned long long>(t.partial_steps), t.max_rounds, t.naive_unsafe);
}

TEST(UpdateOrder, TwoLevelRoftChanges) {
  Totals totals;
  check_changes(test::generate(test::roft(16, 4, 2, 16)), 4, totals);  // 64 CAs, 8 leaves, 8 spines
  report(totals, "2L r16 64CA");
  EXPECT_GT(totals.changed_blocks, 0u);
  EXPECT_GT(totals.naive_unsafe, 0u);
}

TEST(UpdateOrder, ThreeLevelRoftChanges) {
  Totals totals;
  check_changes(test::generate(test::roft(32, 4, 3, 8)), 2, totals);  // 128 CAs, 80 switches
  report(totals, "3L r8 128CA");
  EXPECT_GT(totals.changed_blocks, 0u);
  EXPECT_GT(totals.naive_unsafe, 0u);
}

TEST(UpdateOrder, DegradedFatTreeChanges) {
  GeneratorSpec spec = test::roft(32, 4, 3, 8);
  spec.kind = TopologyKind::kFatTree;
  spec.remove_switch_links = 6;
  spec.seed = 3;
  Totals totals;
  check_changes(test::generate(spec), 1, totals);
  report(totals, "3L r8 128CA fat tree, 6 links missing");
  EXPECT_GT(totals.changed_blocks, 0u);
}

// ---------------------------------------------------------------------------
// Hand-made: four switches in a ring (port 1 to the next, clockwise; port 2
// to the previous), CA h<i> on port 3 of s<i>. All LIDs are in block 0.

Fabric ring4() {
  FabricBuilder b;
  std::vector<NodeId> sw;
  for (int i = 0; i < 4; ++i) {
    sw.push_back(b.add_node(NodeType::kSwitch, 4, Guid{uint64_t(0x10 + i)}, {}, "s" + std::to_string(i)));
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(b.connect(sw[i], PortNum{1}, sw[(i + 1) % 4], PortNum{2}).ok());
  for (int i = 0; i < 4; ++i) {
    NodeId ca = b.add_node(NodeType::kCa, 1, Guid{uint64_t(0x20 + i)}, {}, "h" + std::to_string(i) + " mlx5_0");
    EXPECT_TRUE(b.connect(ca, PortNum{1}, sw[i], PortNum{3}).ok());
  }
  return std::move(assign_lids(*b.build())).value();
}

Lid ca_lid(const Fabric& f, int i) {
  return f.port(f.primary_port(f.find_name("h" + std::to_string(i) + " mlx5_0"))).lid;
}
Lid sw_lid(const Fabric& f, int i) { return f.port(f.node(f.find_name("s" + std::to_string(i))).first_port).lid; }

// Shortest way round (two hops: clockwise). Loop-free.
ForwardingTables ring_tables(const Fabric& f) {
  ForwardingTables t(4, f.max_lid().value + 1u);
  for (uint32_t s = 0; s < 4; ++s) {
    for (uint32_t d = 0; d < 4; ++d) {
      const uint32_t cw = (d + 4 - s) % 4;
      const uint8_t toward = cw == 0 ? 0 : (cw <= 2 ? 1 : 2);
      t.set(s, ca_lid(f, static_cast<int>(d)), cw == 0 ? 3 : toward);
      t.set(s, sw_lid(f, static_cast<int>(d)), toward);
    }
  }
  return t;
}

UpdateOrder whole_blocks(std::vector<uint32_t> switches) {
  UpdateOrder o;
  for (uint32_t s : switches) o.steps.push_back({s, 0, ~uint64_t{0}, true});
  for (uint32_t r = 0; r <= switches.size(); ++r) o.round_begin.push_back(r);
  return o;
}

// For h3: s1 went s1 -> s0 -> s3 and now s0 goes s0 -> s1 -> s2 -> s3 (s0
// after s1). For h2: s0 went s0 -> s1 -> s2 and now s1 goes s1 -> s0 -> s3
// -> s2 (s1 after s0). Block 0 of s0 and of s1 wait for each other.
TEST(UpdateOrder, OppositeDependenciesInOneBlockSendAPartialBlock) {
  const Fabric f = ring4();
  ForwardingTables before = ring_tables(f), after = ring_tables(f);
  const Lid h3 = ca_lid(f, 3), h2 = ca_lid(f, 2);
  before.set(1, h3, 2);
  before.set(0, h3, 2);
  after.set(0, h3, 1);
  after.set(1, h3, 1);
  after.set(1, h2, 2);
  after.set(0, h2, 2);
  after.set(3, h2, 2);
  ASSERT_EQ(before.get(0, h2), 1);
  ASSERT_EQ(before.get(1, h2), 1);
  ASSERT_EQ(before.get(3, h2), 2);
  // Either whole block first loops.
  EXPECT_NE(replay(f, before, after, whole_blocks({0, 1})).find("is loop"), std::string::npos);
  EXPECT_NE(replay(f, before, after, whole_blocks({1, 0})).find("is loop"), std::string::npos);

  auto order = plan_update_order(f, before, after);
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_EQ(order->blocks_changed, 2u);
  EXPECT_EQ(order->entries_changed, 4u);
  // Whole blocks cannot do (above); each block has two changed entries, so
  // it is split at most once.
  EXPECT_GE(order->partial_steps, 1u);
  EXPECT_LE(order->partial_steps, 2u);
  EXPECT_EQ(order->steps.size(), 2u + order->partial_steps);
  expect_counts(before, after, *order, "ring");
  EXPECT_EQ(replay(f, before, after, *order), "");
  EXPECT_EQ(replay(f, before, after, *order, RoundOrder::kReversed), "");
  // A partial step goes first and leaves one of its two entries old.
  ASSERT_FALSE(order->steps.empty());
  EXPECT_FALSE(order->steps[0].complete);
  const uint64_t both = (uint64_t{1} << h2.value) | (uint64_t{1} << h3.value);
  EXPECT_EQ(__builtin_popcountll(order->steps[0].new_lids & both), 1);
}

// s0 reached h2 through s1 and now goes round the other way; s1 drops h2
// (kNoPath). s1 must wait for s0, though neither's new path needs the other.
TEST(UpdateOrder, AnEntryThatDropsWaitsForTheTrafficItCarried) {
  const Fabric f = ring4();
  const ForwardingTables before = ring_tables(f);
  ForwardingTables after = before;
  const Lid h2 = ca_lid(f, 2);
  ASSERT_EQ(before.get(0, h2), 1);
  after.set(0, h2, 2);
  after.set(1, h2, ForwardingTables::kNoPath);
  EXPECT_NE(replay(f, before, after, whole_blocks({1, 0})).find("is lost (old delivered, new delivered)"),
            std::string::npos);

  auto order = plan_update_order(f, before, after);
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_EQ(order->entries_cut, 1u);
  ASSERT_EQ(order->steps.size(), 2u);
  EXPECT_EQ(order->rounds(), 2u);
  EXPECT_EQ(order->steps[0].switch_index, 0u);
  EXPECT_EQ(order->steps[1].switch_index, 1u);
  EXPECT_EQ(replay(f, before, after, *order), "");
}

// A link down: s1-s2 dies. s1 now reaches h2 and s2 the other way round.
TEST(UpdateOrder, LinkDownOnTheRing) {
  const Fabric healthy = ring4();
  FabricBuilder b(healthy);
  const LinkId cut = healthy.port(healthy.port_id(healthy.find_name("s1"), PortNum{1})).link;
  ASSERT_TRUE(b.set_link_state(cut, PortState::kDown).ok());
  const Fabric f = std::move(b.build()).value();
  const ForwardingTables before = ring_tables(f);
  ForwardingTables after = before;
  for (Lid l : {ca_lid(f, 2), sw_lid(f, 2)}) {
    after.set(0, l, 2);
    after.set(1, l, 2);  // s1 -> s0 -> s3 -> s2
  }
  for (Lid l : {ca_lid(f, 1), sw_lid(f, 1)}) after.set(2, l, 1);  // s2 -> s3 -> s0 -> s1
  for (Lid l : {ca_lid(f, 3), sw_lid(f, 3)}) after.set(1, l, 2);  // s1 -> s0 -> s3
  auto order = plan_update_order(f, before, after);
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_EQ(order->partial_steps, 0u);
  expect_counts(before, after, *order, "ring link down");
  EXPECT_EQ(replay(f, before, after, *order), "");
  EXPECT_EQ(replay(f, before, after, *order, RoundOrder::kReversed), "");
}

// ---------------------------------------------------------------------------
// Random: small random switch graphs (a ring with chords, a CA on each
// switch, every LID in block 0, so the LIDs of a block constrain each other
// in every way), old and new tables as random spanning trees toward each
// destination (any spanning tree is loop-free), the new ones on the fabric
// with a random link down and with some switches dropping a LID (kNoPath;
// the switches behind them lose it too).

struct RandomCase {
  Fabric before;  // every link up
  Fabric after;   // one link down, maybe
  ForwardingTables old_tables, new_tables;
};

// Each switch's port toward the destination of `lid` on a random spanning
// tree of the live links, grown from the destination; kNoPath where the
// destination cannot be reached.
void random_tree(const Fabric& f, Lid lid, std::mt19937_64& rng, ForwardingTables& t) {
  const uint32_t n = static_cast<uint32_t>(f.switches().size());
  const PortId owner = f.lid_owner(lid);
  const NodeId owner_node = f.port(owner).node;
  NodeId root = owner_node;
  uint8_t root_port = 0;
  if (!f.is_switch(owner_node)) {
    const Port& ca = f.port(owner);
    if (!ca.remote.valid() || f.link(ca.link).state == PortState::kDown) return;
    root = f.port(ca.remote).node;
    root_port = f.port(ca.remote).num.value;
  }
  auto index = [&](NodeId s) { return static_cast<uint32_t>(s.value()); };  // switches are nodes 0..n-1
  std::vector<uint8_t> in(n, 0);
  in[index(root)] = 1;
  t.set(index(root), lid, root_port);
  for (;;) {
    // Live switch links from the tree to a switch outside it: (outside, its port toward the tree).
    std::vector<std::pair<uint32_t, uint8_t>> frontier;
    for (uint32_t s = 0; s < n; ++s) {
      if (in[s]) continue;
      const Node& nd = f.node(f.switches()[s]);
      for (uint8_t p = 1; p <= nd.num_ports; ++p) {
        const Port& port = f.port(f.port_id(f.switches()[s], PortNum{p}));
        if (!port.remote.valid() || f.link(port.link).state == PortState::kDown) continue;
        const NodeId r = f.port(port.remote).node;
        if (f.is_switch(r) && in[index(r)]) frontier.push_back({s, p});
      }
    }
    if (frontier.empty()) return;
    const auto [s, p] = frontier[rng() % frontier.size()];
    in[s] = 1;
    t.set(s, lid, p);
  }
}

RandomCase random_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t n = 5 + static_cast<uint32_t>(rng() % 5);
  FabricBuilder b;
  std::vector<NodeId> sw;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string name = "s" + std::to_string(i);
    sw.push_back(b.add_node(NodeType::kSwitch, static_cast<uint8_t>(n + 1), Guid{0x100 + i}, {}, name));
  }
  std::vector<uint8_t> next_port(n, 2);  // port 1: the CA
  auto cable = [&](uint32_t i, uint32_t j) {
    EXPECT_TRUE(b.connect(sw[i], PortNum{next_port[i]++}, sw[j], PortNum{next_port[j]++}).ok());
  };
  std::vector<std::vector<uint8_t>> linked(n, std::vector<uint8_t>(n, 0));
  for (uint32_t i = 0; i < n; ++i) {
    cable(i, (i + 1) % n);
    linked[i][(i + 1) % n] = linked[(i + 1) % n][i] = 1;
  }
  for (uint32_t c = 0; c < n; ++c) {
    const uint32_t i = static_cast<uint32_t>(rng() % n), j = static_cast<uint32_t>(rng() % n);
    if (i == j || linked[i][j]) continue;
    linked[i][j] = linked[j][i] = 1;
    cable(i, j);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const NodeId ca = b.add_node(NodeType::kCa, 1, Guid{0x200 + i}, {}, "h" + std::to_string(i));
    EXPECT_TRUE(b.connect(ca, PortNum{1}, sw[i], PortNum{1}).ok());
  }
  RandomCase rc;
  rc.before = std::move(assign_lids(*b.build())).value();
  // One switch link down in two cases of three.
  FabricBuilder changed(rc.before);
  if (rng() % 3 != 0) {
    std::vector<LinkId> switch_links;
    for (uint32_t l = 0; l < rc.before.num_links(); ++l) {
      const Link& link = rc.before.link(LinkId(l));
      if (rc.before.is_switch(rc.before.port(link.a).node) && rc.before.is_switch(rc.before.port(link.b).node)) {
        switch_links.push_back(LinkId(l));
      }
    }
    EXPECT_TRUE(changed.set_link_state(switch_links[rng() % switch_links.size()], PortState::kDown).ok());
  }
  rc.after = std::move(changed.build()).value();
  const uint32_t lids = rc.before.max_lid().value + 1u;
  rc.old_tables = ForwardingTables(n, lids);
  rc.new_tables = ForwardingTables(n, lids);
  for (uint16_t l = 1; l < lids; ++l) {
    random_tree(rc.before, Lid{l}, rng, rc.old_tables);
    random_tree(rc.after, Lid{l}, rng, rc.new_tables);
    // Now and then a switch drops the LID: loop-free still.
    if (rng() % 4 == 0) rc.new_tables.set(static_cast<uint32_t>(rng() % n), Lid{l}, ForwardingTables::kNoPath);
  }
  return rc;
}

TEST(UpdateOrder, RandomTreesOnRandomGraphs) {
  uint64_t blocks = 0, partial = 0, cut = 0, unsafe_in_reverse = 0;
  const uint64_t cases = 400;
  for (uint64_t seed = 1; seed <= cases; ++seed) {
    const RandomCase rc = random_case(seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto order = plan_update_order(rc.after, rc.old_tables, rc.new_tables);
    ASSERT_TRUE(order.ok()) << order.error().message;
    expect_counts(rc.old_tables, rc.new_tables, *order, "seed " + std::to_string(seed));
    ASSERT_EQ(replay(rc.after, rc.old_tables, rc.new_tables, *order), "");
    ASSERT_EQ(replay(rc.after, rc.old_tables, rc.new_tables, *order, RoundOrder::kReversed), "");
    UpdateOrder naive = *order;
    for (UpdateStep& s : naive.steps) s.new_lids = ~uint64_t{0}, s.complete = true;
    naive.round_begin = {0, static_cast<uint32_t>(naive.steps.size())};
    unsafe_in_reverse += !replay(rc.after, rc.old_tables, rc.new_tables, naive, RoundOrder::kReversed).empty();
    blocks += order->blocks_changed;
    partial += order->partial_steps;
    cut += order->entries_cut;
  }
  std::printf("random graphs: %llu cases, %llu changed blocks, %llu partial steps, %llu cut entries; whole blocks "
              "in reverse unsafe in %llu\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(blocks),
              static_cast<unsigned long long>(partial), static_cast<unsigned long long>(cut),
              static_cast<unsigned long long>(unsafe_in_reverse));
  // Random trees put opposite dependencies and cut entries in one block
  // often: both paths of the planner run.
  EXPECT_GT(partial, 0u);
  EXPECT_GT(cut, 0u);
  EXPECT_GT(unsafe_in_reverse, 0u);
}

TEST(UpdateOrder, NothingChangedIsAnEmptyOrder) {
  const Fabric f = ring4();
  auto order = plan_update_order(f, ring_tables(f), ring_tables(f));
  ASSERT_TRUE(order.ok());
  EXPECT_TRUE(order->steps.empty());
  EXPECT_EQ(order->rounds(), 0u);
  EXPECT_EQ(order->blocks_changed, 0u);
}

TEST(UpdateOrder, StepEntriesMixOldAndNewAndPadPastTheTable) {
  ForwardingTables before(1, 70), after(1, 70);
  for (uint16_t l = 0; l < 70; ++l) {
    before.set(0, Lid{l}, 1);
    after.set(0, Lid{l}, 2);
  }
  std::array<uint8_t, kLftBlockLids> out{};
  step_entries(before, after, UpdateStep{0, 1, 0b101, false}, out);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(out[5], 1);
  EXPECT_EQ(out[6], ForwardingTables::kNoPath);  // LID 70 is past the table
  EXPECT_EQ(out[63], ForwardingTables::kNoPath);
}

TEST(UpdateOrder, RefusesTablesOfDifferentSizes) {
  const Fabric f = ring4();
  const ForwardingTables t = ring_tables(f);
  auto wider = plan_update_order(f, t, ForwardingTables(4, t.num_lids() + 1));
  ASSERT_FALSE(wider.ok());
  EXPECT_NE(wider.error().message.find("tables of different sizes: before 4 switches x"), std::string::npos)
      << wider.error().message;
  auto fewer = plan_update_order(f, ForwardingTables(3, t.num_lids()), ForwardingTables(3, t.num_lids()));
  ASSERT_FALSE(fewer.ok());
  EXPECT_EQ(fewer.error().message, "update order: the tables have 3 switches, the fabric 4");
  const Lid beyond{static_cast<uint16_t>(t.num_lids())};
  UpdateOrderOptions hint;
  hint.lids = std::span<const Lid>(&beyond, 1);
  auto bad_hint = plan_update_order(f, t, t, hint);
  ASSERT_FALSE(bad_hint.ok());
  EXPECT_NE(bad_hint.error().message.find("is beyond the tables"), std::string::npos) << bad_hint.error().message;
  const SwitchBlock no_such_switch{4, 0};
  UpdateOrderOptions block_hint;
  block_hint.blocks = std::span<const SwitchBlock>(&no_such_switch, 1);
  auto bad_blocks = plan_update_order(f, t, t, block_hint);
  ASSERT_FALSE(bad_blocks.ok());
  EXPECT_EQ(bad_blocks.error().message,
            "update order: block 0 of switch 4 is beyond the tables (4 switches x 1 blocks)");
}

TEST(UpdateOrder, RefusesNewTablesThatLoop) {
  const Fabric f = ring4();
  const ForwardingTables before = ring_tables(f);
  ForwardingTables after = before;
  const Lid h2 = ca_lid(f, 2);
  after.set(1, h2, 2);  // s1 -> s0, and s0 -> s1 as before
  auto order = plan_update_order(f, before, after);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.error().message.find("the new tables loop for LID " + std::to_string(h2.value)), std::string::npos)
      << order.error().message;
}

}  // namespace
}  // namespace railyard::routing
