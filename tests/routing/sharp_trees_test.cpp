// Property tests of SHARP tree building on generated fabrics (2- and 3-level
// ROFTs, healthy, with links removed, with links drained): every tree is a
// tree over healthy links reaching each job CA once, one per rail, and its
// height equals the minimum found here by BFS from the leaves; the degraded
// plan and tie-breaks on a crafted load; bad input as errors with messages.
#include <gtest/gtest.h>

#include <random>

#include "routing/rails.h"
#include "routing/sharp_trees.h"
#include "routing/switch_graph.h"
#include "tests/routing/sharp_check.h"

namespace railyard::routing {
namespace sharp_trees_test {  // not anonymous: unity builds compile several test files as one

using namespace sharp_check;
using sharp_check::generate;  // over test::generate, which another file of a unity batch may bring in

constexpr uint32_t kAmple = 1000;  // capacity that never binds

std::vector<std::string> hosts(uint32_t first, uint32_t last) {  // 1-based, inclusive
  std::vector<std::string> out;
  for (uint32_t i = first; i <= last; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "node%03u", i);
    out.emplace_back(buf);
  }
  return out;
}

std::vector<std::string> random_hosts(std::mt19937_64& rng, uint32_t servers) {
  std::vector<std::string> all = hosts(1, servers), out;
  std::uniform_int_distribution<uint32_t> count(1, servers);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count(rng));
  return all;
}

std::vector<SharpTree> plan(const Fabric& f, const SharpJob& job, std::span<const uint8_t> drained = {},
                            uint32_t capacity = kAmple) {
  auto trees = plan_sharp_trees(f, map_rails(f, {}), job, drained, capacity);
  EXPECT_TRUE(trees.ok()) << (trees.ok() ? "" : trees.error().message);
  return trees.ok() ? std::move(trees).value() : std::vector<SharpTree>{};
}

std::string plan_error(const Fabric& f, const SharpJob& job, std::span<const uint8_t> drained = {}) {
  auto trees = plan_sharp_trees(f, map_rails(f, {}), job, drained, kAmple);
  EXPECT_FALSE(trees.ok());
  return trees.ok() ? std::string() : trees.error().message;
}

// Every tree minimal: its height is the least any switch achieves over the
// same leaves, computed here from the fabric alone.
void expect_minimal(const Fabric& f, std::span<const uint8_t> drained, const std::vector<SharpTree>& trees) {
  for (const SharpTree& t : trees) {
    uint32_t best = min_height(f, drained, leaves_of(f, drained, t));
    EXPECT_EQ(t.height, best) << "rail " << t.rail;
    EXPECT_EQ(t.min_height, best) << "rail " << t.rail;
    EXPECT_FALSE(t.degraded);
  }
}

TEST(SharpTrees, TwoLevelRoftOneTreePerRailOfHeightOne) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpJob job{"all", {}, hosts(1, 16), {}};
  auto trees = plan(f, job);
  ASSERT_EQ(trees.size(), 8u);
  expect_trees(f, {}, cas_of(f, job.hosts), trees);
  expect_minimal(f, {}, trees);
  std::set<NodeId> roots;
  for (int32_t r = 0; r < 8; ++r) {
    const SharpTree& t = trees[static_cast<size_t>(r)];
    EXPECT_EQ(t.rail, r);
    // Both leaves of a rail hang off every spine.
    EXPECT_EQ(t.height, 1u);
    EXPECT_EQ(f.desc(t.root).substr(0, 6), "spine ");
    EXPECT_EQ(t.switches.size(), 3u);
    EXPECT_EQ(t.max_fan_in, 8u);  // 8 CAs per leaf
    roots.insert(t.root);
  }
  // Least-loaded first: each rail's tree takes a spine no earlier rail used.
  EXPECT_EQ(roots.size(), 8u);
}

TEST(SharpTrees, OneLeafJobIsRootedAtItsLeaf) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpJob job{"group0", {}, hosts(1, 8), {}};
  auto trees = plan(f, job);
  ASSERT_EQ(trees.size(), 8u);
  expect_trees(f, {}, cas_of(f, job.hosts), trees);
  for (const SharpTree& t : trees) {
    EXPECT_EQ(t.height, 0u);
    EXPECT_EQ(t.switches.size(), 1u);
    EXPECT_EQ(f.desc(t.root), "leaf g000 r" + std::to_string(t.rail));
  }
}

TEST(SharpTrees, ThreeLevelRoftHeightsAreMinimal) {
  // 64x8: each rail's 8 leaves fill one pod (height 1); 128x4: each rail
  // spans two pods (height 2 through a core).
  struct Case {
    GeneratorSpec spec;
    uint32_t full_job_height;
  };
  for (const Case& c : {Case{roft(64, 8, 3, 16), 1}, Case{roft(128, 4, 3, 16), 2}}) {
    SCOPED_TRACE(std::to_string(c.spec.servers) + "x" + std::to_string(c.spec.rails));
    Fabric f = generate(c.spec);
    SharpJob all{"all", {}, hosts(1, c.spec.servers), {}};
    auto trees = plan(f, all);
    ASSERT_EQ(trees.size(), c.spec.rails);
    expect_trees(f, {}, cas_of(f, all.hosts), trees);
    expect_minimal(f, {}, trees);
    for (const SharpTree& t : trees) EXPECT_EQ(t.height, c.full_job_height);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 20; ++i) {
      SharpJob job{"j" + std::to_string(i), {}, random_hosts(rng, c.spec.servers), {}};
      auto t = plan(f, job);
      expect_trees(f, {}, cas_of(f, job.hosts), t);
      expect_minimal(f, {}, t);
    }
  }
}

TEST(SharpTrees, DegradedFabricsGiveMinimalTreesOverRemainingLinks) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    GeneratorSpec spec = roft(128, 4, 3, 16);
    spec.seed = seed;
    spec.remove_uplink_per_leaf = seed == 3 ? 1 : 0;
    spec.remove_switch_links = 50;
    Fabric f = generate(spec);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 20; ++i) {
      SharpJob job{"j" + std::to_string(i), {}, random_hosts(rng, spec.servers), {}};
      auto t = plan(f, job);
      expect_trees(f, {}, cas_of(f, job.hosts), t);
      expect_minimal(f, {}, t);
    }
  }
}

TEST(SharpTrees, DrainedLinksAreNeverUsed) {
  for (auto spec : {roft(16, 8, 2, 16), roft(128, 4, 3, 16)}) {
    Fabric f = generate(spec);
    std::vector<uint8_t> drained(f.num_links(), 0);
    uint32_t k = 0;
    for (uint32_t l = 0; l < f.num_links(); ++l) {
      const Link& link = f.link(LinkId(l));
      bool switch_link = f.is_switch(f.port(link.a).node) && f.is_switch(f.port(link.b).node);
      if (switch_link && ++k % 3 == 0) drained[l] = 1;
    }
    std::mt19937_64 rng(11);
    for (int i = 0; i < 10; ++i) {
      SharpJob job{"j" + std::to_string(i), {}, random_hosts(rng, spec.servers), {}};
      auto t = plan(f, job, drained);
      expect_trees(f, drained, cas_of(f, job.hosts), t);  // checks every uplink is usable
      expect_minimal(f, drained, t);
    }
  }
}

TEST(SharpTrees, RailSubset) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpJob job{"sub", {}, hosts(1, 16), {3, 1, 3}};
  auto trees = plan(f, job);
  ASSERT_EQ(trees.size(), 2u);
  EXPECT_EQ(trees[0].rail, 1);
  EXPECT_EQ(trees[1].rail, 3);
  expect_trees(f, {}, cas_of(f, job.hosts, {1, 3}), trees);
}

TEST(SharpTrees, CasAndHostsAddUpOnce) {
  Fabric f = generate(roft(16, 8, 2, 16));
  std::vector<NodeId> cas = cas_of(f, {"node001", "node009"}, {0});
  SharpJob job{"mixed", cas, {"node009"}, {}};
  job.cas.push_back(cas[0]);  // listed twice
  auto trees = plan(f, job);
  std::vector<NodeId> want = cas_of(f, {"node009"});
  want.push_back(cas[0]);  // node001's rail-0 CA; node009's CAs on every rail
  expect_trees(f, {}, want, trees);
  EXPECT_EQ(trees.size(), 8u);
}

TEST(SharpTrees, RootTiesGoToTheLeastLoadedThenLowestGuid) {
  Fabric f = generate(roft(16, 8, 2, 16));
  RailMap rails = map_rails(f, {});
  SharpTreeBuilder b(f, rails, {});
  std::vector<NodeId> cas = cas_of(f, {"node001", "node009"}, {0});
  std::vector<uint32_t> load(b.num_switches(), 0);
  auto first = b.build_tree("j", 0, cas, load, 4);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(f.desc(first->root), "spine s00");
  load[b.graph().switch_index(f.find_name("spine s00"))] = 2;
  load[b.graph().switch_index(f.find_name("spine s01"))] = 1;
  load[b.graph().switch_index(f.find_name("spine s02"))] = 1;
  auto second = b.build_tree("j", 0, cas, load, 4);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(f.desc(second->root), "spine s03");
  EXPECT_FALSE(second->degraded);
}

TEST(SharpTrees, FullShallowRootGivesDeeperDegradedTree) {
  Fabric f = detour_fabric();
  RailMap rails = map_rails(f, {});
  SharpTreeBuilder b(f, rails, {});
  std::vector<NodeId> cas{f.find_name("h1 mlx5_0"), f.find_name("h2 mlx5_0")};
  std::vector<uint32_t> load(b.num_switches(), 0);
  auto healthy = b.build_tree("j", 0, cas, load, 1);
  ASSERT_TRUE(healthy.ok());
  EXPECT_EQ(f.desc(healthy->root), "S");
  EXPECT_EQ(healthy->height, 1u);
  load[b.graph().switch_index(f.find_name("S"))] = 1;
  auto t = b.build_tree("j", 0, cas, load, 1);
  ASSERT_TRUE(t.ok()) << t.error().message;
  expect_trees(f, {}, cas, {*t});
  EXPECT_EQ(f.desc(t->root), "C");
  EXPECT_EQ(t->height, 2u);
  EXPECT_EQ(t->min_height, 1u);
  EXPECT_TRUE(t->degraded);
  for (const auto& s : t->switches) EXPECT_NE(f.desc(s.node), "S");
  // With C full too, nothing joins the leaves.
  load[b.graph().switch_index(f.find_name("C"))] = 1;
  auto none = b.build_tree("j", 0, cas, load, 1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "job 'j' rail 0: SHARP tree capacity exhausted: no switch with a free slot reaches all 2 leaf switches "
            "over switches with free slots; 1 of the 1 shallowest roots (height 1) are full ('S'); 2 switches hold "
            "1 of 1 trees");
}

TEST(SharpTrees, CutOffCaAndSplitLeavesAreRefused) {
  Fabric f = generate(roft(16, 8, 2, 16));
  std::vector<uint8_t> drained(f.num_links(), 0);
  NodeId ca = f.find_name("node001 mlx5_0");
  drained[f.port(f.primary_port(ca)).link.value()] = 1;
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001"}, {0}}, drained),
            "job 'j' rail 0: CA 'node001 mlx5_0' has no healthy, non-drained link to a switch");

  std::fill(drained.begin(), drained.end(), 0);
  const Node& leaf = f.node(f.find_name("leaf g000 r0"));
  for (uint32_t p = 1; p <= leaf.num_ports; ++p) {
    PortId pid(leaf.first_port.value() + p);
    if (f.remote_node(pid).valid() && f.is_switch(f.remote_node(pid))) drained[f.port(pid).link.value()] = 1;
  }
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001", "node009"}, {0}}, drained),
            "job 'j' rail 0: its 2 leaf switches are not connected over healthy, non-drained links "
            "('leaf g000 r0' cannot reach 'leaf g001 r0')");
}

TEST(SharpTrees, BadInputIsAnError) {
  Fabric f = generate(roft(16, 8, 2, 16));
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001", "nosuch"}, {}}), "job 'j': unknown host 'nosuch'");
  EXPECT_EQ(plan_error(f, {"j", {}, {}, {}}), "job 'j': no CAs (give CAs or hosts)");
  EXPECT_EQ(plan_error(f, {"", {}, {"node001"}, {}}), "SHARP job: the job id is empty");
  EXPECT_EQ(plan_error(f, {"j", {f.find_name("spine s00")}, {}, {}}), "job 'j': 'spine s00' is a switch, not a CA");
  EXPECT_EQ(plan_error(f, {"j", {NodeId(100000)}, {}, {}}), "job 'j': node index 100000 is not in the fabric");
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001"}, {8}}), "job 'j': rail 8 is not a rail of this fabric (8 rails)");
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001"}, {-1}}), "job 'j': rail -1 is not a rail of this fabric (8 rails)");
  EXPECT_EQ(plan_error(f, {"j", cas_of(f, {"node001"}, {0}), {}, {2}}), "job 'j': none of its CAs is on rail 2");
  std::vector<uint8_t> short_mask(3, 0);
  EXPECT_EQ(plan_error(f, {"j", {}, {"node001"}, {}}, short_mask),
            "drained mask has 3 entries, the fabric " + std::to_string(f.num_links()) + " links");
}

TEST(SharpTrees, Deterministic) {
  Fabric f = generate(roft(128, 4, 3, 16));
  SharpJob job{"j", {}, hosts(1, 100), {}};
  auto a = plan(f, job), b = plan(f, job);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].switches.size(), b[i].switches.size());
    EXPECT_EQ(a[i].root, b[i].root);
    for (size_t s = 0; s < a[i].switches.size(); ++s) {
      EXPECT_EQ(a[i].switches[s].node, b[i].switches[s].node);
      EXPECT_EQ(a[i].switches[s].parent, b[i].switches[s].parent);
      EXPECT_EQ(a[i].switches[s].uplink, b[i].switches[s].uplink);
      EXPECT_EQ(a[i].switches[s].cas, b[i].switches[s].cas);
    }
  }
}

}  // namespace sharp_trees_test
}  // namespace railyard::routing
