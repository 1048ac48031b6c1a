#include "controller/scheduler_topology.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace railyard::controller {

namespace {

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

}  // namespace

std::string scheduler_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    out += ok ? c : '_';
    if (out.size() == 63) break;
  }
  if (out.empty()) out = "_";
  return out;
}

uint32_t SchedulerTopology::group_of(uint32_t block, size_t tier) const {
  uint32_t g = block;
  for (size_t t = 0; t < tier && t + 1 < tiers.size(); ++t) g = tiers[t][g].parent;
  return g;
}

SchedulerTopology scheduler_topology(const FabricView& v) {
  const routing::Fabric& f = v.fabric;
  SchedulerTopology out;
  out.hosts = v.rails.hosts;
  out.host_block.assign(out.hosts.size(), SchedulerTopology::kUnplaced);

  // Each host's leaves, by rail.
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> rail_leaf(out.hosts.size());
  for (NodeId ca : f.cas()) {
    const uint32_t h = v.rails.host[ca.value()];
    const NodeId leaf = v.rails.leaf[ca.value()];
    if (h == routing::kNoHost || h >= rail_leaf.size() || !leaf.valid()) continue;
    rail_leaf[h].emplace_back(v.rails.rail[ca.value()], leaf.value());
  }
  std::vector<TopologyGroup> blocks;
  std::map<std::vector<uint32_t>, uint32_t> block_of_key;
  std::set<std::string> used;
  auto unique = [&](std::string n) {
    std::string candidate = n;
    if (used.contains(candidate) && n.size() > 56) n.resize(56);  // Slurm: names of at most 64 characters
    for (int i = 2; used.contains(candidate); ++i) candidate = n + "_" + std::to_string(i);
    used.insert(candidate);
    return candidate;
  };
  for (uint32_t h = 0; h < rail_leaf.size(); ++h) {
    if (rail_leaf[h].empty()) {
      out.unplaced.push_back(h);
      continue;
    }
    std::sort(rail_leaf[h].begin(), rail_leaf[h].end());
    std::vector<uint32_t> key;
    for (auto [rail, leaf] : rail_leaf[h]) key.push_back(leaf);
    auto [it, fresh] = block_of_key.try_emplace(key, static_cast<uint32_t>(blocks.size()));
    if (fresh) {
      TopologyGroup b;
      b.name = unique(scheduler_name(f.desc(NodeId(key.front()))));
      for (uint32_t l : key) b.leaves.push_back(NodeId(l));
      blocks.push_back(std::move(b));
    }
    blocks[it->second].hosts.push_back(h);
    out.host_block[h] = it->second;
  }
  out.tiers.push_back(std::move(blocks));

  // Tier k: blocks whose leaves, rail by rail, are joined by switches of
  // level <= k.
  const int32_t top = v.rails.max_level;
  UnionFind uf(f.num_nodes());
  auto level_of = [&](NodeId n) { return n.value() < v.rails.level.size() ? v.rails.level[n.value()] : routing::kNoLevel; };
  for (int32_t k = 1; k <= top; ++k) {
    for (uint32_t i = 0; i < f.num_links(); ++i) {
      const routing::Link& l = f.link(LinkId(i));
      const NodeId a = f.port(l.a).node, b = f.port(l.b).node;
      if (!f.is_switch(a) || !f.is_switch(b)) continue;
      const int32_t la = level_of(a), lb = level_of(b);
      if (la < 0 || lb < 0 || la > k || lb > k) continue;
      uf.join(a.value(), b.value());
    }
    if (out.tiers.back().size() <= 1) break;
    const std::vector<TopologyGroup>& below = out.tiers.back();
    std::vector<TopologyGroup> groups;
    std::map<std::vector<uint32_t>, uint32_t> group_of_key;
    for (uint32_t g = 0; g < below.size(); ++g) {
      // Every block of a lower group has the same key here (components only
      // grow with k): the first one speaks for the group.
      uint32_t block = g;
      for (size_t t = out.tiers.size() - 1; t > 0; --t) block = out.tiers[t][block].children.front();
      std::vector<uint32_t> key;
      for (NodeId leaf : out.tiers[0][block].leaves) key.push_back(uf.find(leaf.value()));
      auto [it, fresh] = group_of_key.try_emplace(key, static_cast<uint32_t>(groups.size()));
      if (fresh) groups.emplace_back();
      TopologyGroup& grp = groups[it->second];
      grp.children.push_back(g);
      out.tiers.back()[g].parent = it->second;
      grp.hosts.insert(grp.hosts.end(), below[g].hosts.begin(), below[g].hosts.end());
    }
    for (size_t i = 0; i < groups.size(); ++i) {
      std::sort(groups[i].hosts.begin(), groups[i].hosts.end());
      groups[i].name = groups.size() == 1 ? unique("fabric")
                       : k == 1           ? unique("pod" + std::to_string(i))
                                          : unique("tier" + std::to_string(k) + "-" + std::to_string(i));
    }
    out.tiers.push_back(std::move(groups));
  }
  return out;
}

}  // namespace railyard::controller
