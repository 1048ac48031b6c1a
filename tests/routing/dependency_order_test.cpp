// DependencyOrder (routing/unicast_engine/dependency_order.h) against a
// brute-force oracle: on the channels of generated fabrics, random
// dependencies are offered one by one; each must be taken exactly when the
// oracle (a search over every dependency taken so far) finds no path from its
// second channel back to its first, and the graph must stay acyclic.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "routing/switch_graph.h"
#include "routing/unicast_engine/dependency_order.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing {
namespace {

using unicast::DependencyOrder;

// Channels reachable from `from` over `edges` (adjacency lists).
bool reaches(const std::vector<std::vector<uint32_t>>& edges, uint32_t from, uint32_t to) {
  std::vector<uint8_t> seen(edges.size(), 0);
  std::vector<uint32_t> stack{from};
  seen[from] = 1;
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    if (v == to) return true;
    for (uint32_t w : edges[v]) {
      if (!seen[w]) {
        seen[w] = 1;
        stack.push_back(w);
      }
    }
  }
  return false;
}

bool acyclic(const std::vector<std::vector<uint32_t>>& edges) {
  // Kahn's algorithm, written again here.
  std::vector<uint32_t> indegree(edges.size(), 0), ready;
  for (const auto& out : edges) {
    for (uint32_t w : out) ++indegree[w];
  }
  for (uint32_t v = 0; v < edges.size(); ++v) {
    if (indegree[v] == 0) ready.push_back(v);
  }
  size_t placed = 0;
  while (!ready.empty()) {
    const uint32_t v = ready.back();
    ready.pop_back();
    ++placed;
    for (uint32_t w : edges[v]) {
      if (--indegree[w] == 0) ready.push_back(w);
    }
  }
  return placed == edges.size();
}

// A random dependency: a channel, and a channel leaving the switch it enters.
std::pair<uint32_t, uint32_t> random_dependency(const SwitchGraph& g, std::mt19937_64& rng) {
  const uint32_t e1 = static_cast<uint32_t>(rng() % g.num_entries());
  const uint32_t r = g.remote(e1);
  const uint32_t e2 = g.begin(r) + static_cast<uint32_t>(rng() % (g.end(r) - g.begin(r)));
  return {e1, e2};
}

void check_against_oracle(const Fabric& f, uint64_t seed, uint32_t preset, uint32_t offered, const std::string& what) {
  SCOPED_TRACE(what + ", seed " + std::to_string(seed));
  SwitchGraph g(f);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> edges(g.num_entries());
  std::set<std::pair<uint32_t, uint32_t>> present;
  DependencyOrder order(g);
  // Dependencies set before sort(): only those that keep the oracle acyclic.
  for (uint32_t i = 0; i < preset; ++i) {
    const auto [e1, e2] = random_dependency(g, rng);
    if (e1 == e2 || present.count({e1, e2}) || reaches(edges, e2, e1)) continue;
    edges[e1].push_back(e2);
    present.insert({e1, e2});
    order.set(e1, e2);
  }
  ASSERT_TRUE(order.sort());
  uint32_t taken = 0, refused = 0;
  for (uint32_t i = 0; i < offered; ++i) {
    const auto [e1, e2] = random_dependency(g, rng);
    const bool expected = present.count({e1, e2}) != 0 || (e1 != e2 && !reaches(edges, e2, e1));
    const bool got = order.add(e1, e2);
    ASSERT_EQ(got, expected) << "dependency " << i << ": " << e1 << " -> " << e2;
    EXPECT_EQ(order.contains(e1, e2), expected);
    if (got && !present.count({e1, e2})) {
      edges[e1].push_back(e2);
      present.insert({e1, e2});
    }
    (got ? taken : refused) += 1;
  }
  EXPECT_TRUE(acyclic(edges));
  // Both outcomes were exercised, and the order had to move (searches).
  EXPECT_GT(taken, offered / 20);
  EXPECT_GT(refused, offered / 20);
  EXPECT_GT(order.searches(), 0u);
}

TEST(DependencyOrder, TakesExactlyTheDependenciesThatCloseNoCycle) {
  const Fabric two = test::generate(test::roft(16, 4, 2, 16));
  const Fabric three = test::generate(test::roft(32, 4, 3, 8));
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    check_against_oracle(two, seed, 200, 3000, "2-level");
    check_against_oracle(three, seed, seed % 2 ? 0u : 400u, 3000, "3-level");
  }
}

TEST(DependencyOrder, SortRefusesACyclicStart) {
  const Fabric f = test::generate(test::roft(16, 4, 2, 16));
  SwitchGraph g(f);
  // A leaf's channel up to a spine and the spine's back down to it: a
  // two-channel cycle.
  uint32_t up = 0;
  while (g.num_cas(g.remote(g.rev(up))) == 0) ++up;  // a channel leaving a leaf
  const uint32_t down = g.rev(up);
  DependencyOrder order(g);
  order.set(up, down);
  order.set(down, up);
  EXPECT_FALSE(order.sort());
  EXPECT_FALSE(order.add(up, down));  // nothing is added to a graph that is not ordered
}

}  // namespace
}  // namespace railyard::routing
