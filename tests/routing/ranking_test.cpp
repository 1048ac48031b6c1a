// rerank (routing/ranking.h): on seeded walks of switch-link changes (one or
// several links down, links back up, every link of a switch down) over 2-
// and 3-level ROFTs, a plain fat tree and a rail-only fabric, a ranking kept
// from the one before equals rank_switches of the new graph in every field;
// and it is kept for most single links, so it is not a full ranking in
// disguise.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing {
namespace {

void expect_same(const Ranking& a, const Ranking& b, const std::string& what) {
  EXPECT_EQ(a.rank, b.rank) << what;
  EXPECT_EQ(a.roots, b.roots) << what;
  EXPECT_TRUE(a == b) << what << ": the kind, order, levels or all_from_cas differ";
}

Fabric with_states(const Fabric& f, const std::vector<LinkId>& links, PortState state) {
  FabricBuilder b(f);
  for (LinkId l : links) EXPECT_TRUE(b.set_link_state(l, state).ok());
  return std::move(b.build()).value();
}

struct Count {
  int steps = 0, kept = 0, single = 0, single_kept = 0;  // single: one link down, every switch reached
};

void walk(const Fabric& base, uint64_t seed, int steps, Count& count) {
  std::mt19937_64 rng(seed);
  std::vector<LinkId> switch_links;
  for (uint32_t l = 0; l < base.num_links(); ++l) {
    const Link& link = base.link(LinkId(l));
    if (base.is_switch(base.port(link.a).node) && base.is_switch(base.port(link.b).node)) {
      switch_links.push_back(LinkId(l));
    }
  }
  Fabric f = base;
  for (int i = 0; i < steps; ++i) {
    const std::string what = "seed " + std::to_string(seed) + " step " + std::to_string(i);
    std::vector<LinkId> live, down;
    for (LinkId l : switch_links) (f.link(l).state == PortState::kDown ? down : live).push_back(l);
    const int kind = static_cast<int>(rng() % 6);
    std::vector<LinkId> pick;
    PortState to = PortState::kDown;
    if (kind <= 2 && !live.empty()) {  // one link down
      pick.push_back(live[rng() % live.size()]);
    } else if (kind == 3 && live.size() > 3) {  // three at once
      for (int k = 0; k < 3; ++k) pick.push_back(live[(rng() % live.size())]);
    } else if (kind == 4 && !down.empty()) {  // one back up
      pick.push_back(down[rng() % down.size()]);
      to = PortState::kActive;
    } else if (kind == 5) {  // every link of a switch down
      const NodeId sw = f.switches()[rng() % f.switches().size()];
      for (LinkId l : live) {
        const Link& link = f.link(l);
        if (f.port(link.a).node == sw || f.port(link.b).node == sw) pick.push_back(l);
      }
    }
    if (pick.empty()) continue;
    const SwitchGraph before_graph(f);
    const Ranking before = rank_switches(before_graph);
    Fabric next = with_states(f, pick, to);
    const SwitchGraph graph(next);
    std::vector<RankedLinkChange> changes;
    for (LinkId l : pick) {
      const Link& link = next.link(l);
      changes.push_back({graph.switch_index(next.port(link.a).node), graph.switch_index(next.port(link.b).node),
                         to != PortState::kDown});
    }
    const Ranking fresh = rank_switches(graph);
    const std::optional<Ranking> kept = rerank(before, graph, changes);
    ++count.steps;
    // One link down, every switch reached before (a switch cut off from
    // every leaf is ranked from its own centre: ranked afresh).
    const bool single = pick.size() == 1 && to == PortState::kDown && before.all_from_cas;
    count.single += single;
    if (kept) {
      ++count.kept;
      count.single_kept += single;
      expect_same(*kept, fresh, what);
    }
    if (::testing::Test::HasFailure()) return;
    f = std::move(next);
  }
}

Count walk_seeds(const GeneratorSpec& spec, uint64_t seeds, int steps) {
  const Fabric base = test::generate(spec);
  Count count;
  for (uint64_t seed = 1; seed <= seeds && !::testing::Test::HasFailure(); ++seed) walk(base, seed, steps, count);
  return count;
}

TEST(Rerank, AKeptRankingEqualsOneRankedAfreshOnSeededChanges) {
  GeneratorSpec fat = test::roft(64, 1, 3, 16);
  fat.kind = TopologyKind::kFatTree;
  GeneratorSpec rail_only = test::roft(32, 8, 2, 16);
  rail_only.kind = TopologyKind::kRailOnly;
  for (const GeneratorSpec& spec : {test::roft(32, 8, 2, 32), test::roft(64, 8, 3, 16), fat, rail_only}) {
    const Count c = walk_seeds(spec, 8, 40);
    SCOPED_TRACE(std::to_string(spec.levels) + " levels, kind " + std::to_string(static_cast<int>(spec.kind)));
    EXPECT_GT(c.steps, 200);
    EXPECT_LT(c.kept, c.steps) << "some change must move a rank or a root's component";
    EXPECT_GT(c.single_kept * 10, c.single * 8) << c.single_kept << " of " << c.single << " single links kept";
  }
}

// A link between two switches of one rank, or across two ranks, is not a
// tree's: ranked afresh.
TEST(Rerank, ALinkThatIsNotBetweenNeighbouringRanksIsRankedAfresh) {
  const Fabric f = test::generate(test::roft(64, 8, 3, 16));
  const SwitchGraph graph(f);
  const Ranking r = rank_switches(graph);
  ASSERT_TRUE(r.all_from_cas);
  std::vector<uint32_t> by_rank[3];
  for (uint32_t s = 0; s < graph.num_switches(); ++s) by_rank[r.rank[s]].push_back(s);
  ASSERT_GE(by_rank[0].size(), 2u);
  ASSERT_FALSE(by_rank[2].empty());
  const RankedLinkChange same_rank{by_rank[0][0], by_rank[0][1], true}, two_ranks{by_rank[0][0], by_rank[2][0], true};
  EXPECT_FALSE(rerank(r, graph, std::span(&same_rank, 1)).has_value());
  EXPECT_FALSE(rerank(r, graph, std::span(&two_ranks, 1)).has_value());
  Ranking roots_given = r;
  roots_given.kind = RankingKind::kRoots;
  EXPECT_FALSE(rerank(roots_given, graph, {}).has_value());
}

}  // namespace
}  // namespace railyard::routing
