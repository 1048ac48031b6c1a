// Independent judges for SHARP trees, shared by sharp_trees_test and
// sharp_allocator_test. Nothing here calls the code under test: rails and
// hosts come from the CA descriptions the generator writes ("node001
// mlx5_3"), links and heights from the fabric's own arrays.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/generator.h"
#include "tests/routing/test_fabrics.h"
#include "routing/sharp_trees.h"

namespace railyard::routing::sharp_check {

inline Fabric generate(GeneratorSpec spec) { return test::generate(spec, /*lids=*/false); }
using test::roft;

inline bool usable(const Fabric& f, std::span<const uint8_t> drained, LinkId l) {
  return l.valid() && (drained.empty() || !drained[l.value()]) && f.link(l).state != PortState::kDown;
}

// "node001 mlx5_3" -> host "node001", rail 3.
inline std::string host_of(const Fabric& f, NodeId ca) {
  std::string d(f.desc(ca));
  return d.substr(0, d.find(' '));
}
inline int32_t rail_of(const Fabric& f, NodeId ca) {
  std::string d(f.desc(ca));
  return std::stoi(d.substr(d.rfind('_') + 1));
}

// Every CA of the named hosts, optionally only on `rails`.
inline std::vector<NodeId> cas_of(const Fabric& f, const std::vector<std::string>& hosts,
                                  const std::vector<int32_t>& rails = {}) {
  std::set<std::string> h(hosts.begin(), hosts.end());
  std::vector<NodeId> out;
  for (NodeId ca : f.cas()) {
    if (!h.count(host_of(f, ca))) continue;
    if (!rails.empty() && std::find(rails.begin(), rails.end(), rail_of(f, ca)) == rails.end()) continue;
    out.push_back(ca);
  }
  return out;
}

// The switch a CA is cabled to over a usable link, invalid if none.
inline NodeId leaf_of(const Fabric& f, std::span<const uint8_t> drained, NodeId ca) {
  const Node& nd = f.node(ca);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    PortId pid(nd.first_port.value() + p);
    if (!usable(f, drained, f.port(pid).link)) continue;
    NodeId r = f.remote_node(pid);
    if (r.valid() && f.is_switch(r)) return r;
  }
  return NodeId();
}

// The least height any switch can root a tree over `leaves` with, by BFS
// from each leaf over usable switch-switch links; UINT32_MAX if none.
inline uint32_t min_height(const Fabric& f, std::span<const uint8_t> drained, const std::set<NodeId>& leaves) {
  const size_t n = f.num_nodes();
  std::vector<std::vector<uint32_t>> adj(n);
  for (uint32_t l = 0; l < f.num_links(); ++l) {
    if (!usable(f, drained, LinkId(l))) continue;
    NodeId a = f.port(f.link(LinkId(l)).a).node, b = f.port(f.link(LinkId(l)).b).node;
    if (a == b || !f.is_switch(a) || !f.is_switch(b)) continue;
    adj[a.value()].push_back(b.value());
    adj[b.value()].push_back(a.value());
  }
  std::vector<uint32_t> ecc(n, 0);
  for (NodeId leaf : leaves) {
    std::vector<uint32_t> dist(n, UINT32_MAX);
    std::vector<uint32_t> q{leaf.value()};
    dist[leaf.value()] = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      for (uint32_t u : adj[q[i]]) {
        if (dist[u] == UINT32_MAX) {
          dist[u] = dist[q[i]] + 1;
          q.push_back(u);
        }
      }
    }
    for (size_t v = 0; v < n; ++v) ecc[v] = std::max(ecc[v], dist[v]);
  }
  uint32_t best = UINT32_MAX;
  for (NodeId s : f.switches()) best = std::min(best, ecc[s.value()]);
  return best;
}

// Leaves L1..L4 all hang off spine S; a longer way joins L1 and L2 through
// A - C - B. One CA per leaf: "h1 mlx5_0" on L1 ... "h4 mlx5_0" on L4.
inline Fabric detour_fabric() {
  FabricBuilder b;
  auto sw = [&](uint64_t g, const char* d) { return b.add_node(NodeType::kSwitch, 4, Guid{g}, Guid{g}, d); };
  NodeId l1 = sw(0x11, "L1"), l2 = sw(0x12, "L2"), s = sw(0x13, "S"), a = sw(0x14, "A"), bb = sw(0x15, "B"),
         c = sw(0x16, "C"), l3 = sw(0x17, "L3"), l4 = sw(0x18, "L4");
  auto cable = [&](NodeId x, uint8_t px, NodeId y, uint8_t py) {
    EXPECT_TRUE(b.connect(x, PortNum{px}, y, PortNum{py}).ok());
  };
  NodeId leaves[] = {l1, l2, l3, l4};
  for (uint8_t i = 0; i < 4; ++i) {
    std::string d = "h" + std::to_string(i + 1) + " mlx5_0";
    NodeId h = b.add_node(NodeType::kCa, 1, Guid{0x21u + i}, Guid{0x21u + i}, d);
    cable(h, 1, leaves[i], 1);
    cable(leaves[i], 2, s, static_cast<uint8_t>(i + 1));
  }
  cable(l1, 3, a, 1);
  cable(l2, 3, bb, 1);
  cable(a, 2, c, 1);
  cable(bb, 2, c, 2);
  auto f = b.build();
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  return std::move(f).value();
}

// Checks that `trees` are trees over healthy links that reach every CA of
// `want` exactly once, rail-aligned, with correct height and fan-in. Adds the
// slots they take to `usage` (per NodeId) when given.
inline void expect_trees(const Fabric& f, std::span<const uint8_t> drained, const std::vector<NodeId>& want,
                         const std::vector<SharpTree>& trees, std::vector<uint32_t>* usage = nullptr) {
  std::map<NodeId, int> seen;
  for (const SharpTree& t : trees) {
    SCOPED_TRACE("rail " + std::to_string(t.rail));
    ASSERT_FALSE(t.switches.empty());
    EXPECT_EQ(t.switches[0].node, t.root);
    EXPECT_FALSE(t.switches[0].parent.valid());
    EXPECT_EQ(t.switches[0].depth, 0u);
    std::map<NodeId, size_t> at;
    for (size_t i = 0; i < t.switches.size(); ++i) {
      EXPECT_TRUE(f.is_switch(t.switches[i].node));
      EXPECT_TRUE(at.emplace(t.switches[i].node, i).second) << "switch twice: " << f.desc(t.switches[i].node);
    }
    std::map<NodeId, std::set<NodeId>> kids;
    uint32_t height = 0, fan_in = 0;
    for (const auto& s : t.switches) {
      if (usage) ++(*usage)[s.node.value()];
      fan_in = std::max<uint32_t>(fan_in, static_cast<uint32_t>(s.children.size() + s.cas.size()));
      if (!s.cas.empty()) height = std::max(height, s.depth);
      // A switch with no children and no CAs would hold a slot for nothing.
      EXPECT_FALSE(s.children.empty() && s.cas.empty()) << f.desc(s.node);
      for (NodeId ca : s.cas) {
        ++seen[ca];
        EXPECT_EQ(rail_of(f, ca), t.rail) << f.desc(ca);
        EXPECT_EQ(leaf_of(f, drained, ca), s.node) << f.desc(ca) << " is not on a usable cable to " << f.desc(s.node);
      }
      if (s.node == t.root) continue;
      ASSERT_TRUE(at.count(s.parent)) << f.desc(s.node) << "'s parent is not in the tree";
      kids[s.parent].insert(s.node);
      EXPECT_EQ(s.depth, t.switches[at[s.parent]].depth + 1) << f.desc(s.node);
      ASSERT_TRUE(s.uplink.valid());
      EXPECT_TRUE(usable(f, drained, s.uplink)) << f.desc(s.node) << " climbs a down or drained link";
      NodeId a = f.port(f.link(s.uplink).a).node, b = f.port(f.link(s.uplink).b).node;
      EXPECT_TRUE((a == s.node && b == s.parent) || (b == s.node && a == s.parent)) << f.desc(s.node);
      // No cycle: the parent chain reaches the root within the tree's size.
      NodeId v = s.node;
      size_t steps = 0;
      while (v != t.root && steps++ <= t.switches.size()) v = t.switches[at[v]].parent;
      EXPECT_EQ(v, t.root) << f.desc(s.node);
    }
    for (const auto& s : t.switches) {
      std::set<NodeId> listed(s.children.begin(), s.children.end());
      EXPECT_EQ(listed.size(), s.children.size());
      EXPECT_EQ(listed, kids[s.node]) << f.desc(s.node);
    }
    EXPECT_EQ(t.height, height);
    EXPECT_EQ(t.max_fan_in, fan_in);
    EXPECT_LE(t.min_height, t.height);
    EXPECT_EQ(t.degraded, t.height > t.min_height);
  }
  for (const auto& [ca, count] : seen) EXPECT_EQ(count, 1) << f.desc(ca);
  std::set<NodeId> got, expected(want.begin(), want.end());
  for (const auto& [ca, count] : seen) got.insert(ca);
  EXPECT_EQ(got, expected);
  std::set<int32_t> rails;
  for (const SharpTree& t : trees) EXPECT_TRUE(rails.insert(t.rail).second) << "two trees for rail " << t.rail;
}

// The leaf switches of a tree's CAs, found from the fabric.
inline std::set<NodeId> leaves_of(const Fabric& f, std::span<const uint8_t> drained, const SharpTree& t) {
  std::set<NodeId> out;
  for (const auto& s : t.switches) {
    for (NodeId ca : s.cas) out.insert(leaf_of(f, drained, ca));
  }
  return out;
}

}  // namespace railyard::routing::sharp_check
