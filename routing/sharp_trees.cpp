// SHARP trees: rail grouping, shallowest-root search by bitset BFS, tree
// assembly. See sharp_trees.h for the guarantees and the degraded plan.
#include "routing/sharp_trees.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace railyard::routing {

namespace {


std::span<const uint8_t> checked_mask(const Fabric& f, std::span<const uint8_t> drained) {
  return drained.size() == f.num_links() ? drained : std::span<const uint8_t>();
}

std::string rail_text(int32_t rail) { return rail == kNoRail ? std::string("without rail") : std::to_string(rail); }

std::string job_rail(std::string_view job_id, int32_t rail) {
  return "job '" + std::string(job_id) + "' rail " + rail_text(rail);
}

}  // namespace

uint32_t SharpTree::num_cas() const {
  uint32_t n = 0;
  for (const auto& s : switches) n += static_cast<uint32_t>(s.cas.size());
  return n;
}

SharpTreeBuilder::SharpTreeBuilder(const Fabric& fabric, const RailMap& rails, std::span<const uint8_t> drained)
    : fabric_(&fabric), rails_(&rails), drained_(checked_mask(fabric, drained)), graph_(fabric, drained_) {
  if (!drained.empty() && drained.size() != fabric.num_links()) {
    status_ = Error{"drained mask has " + std::to_string(drained.size()) + " entries, the fabric " +
                    std::to_string(fabric.num_links()) + " links"};
    return;
  }
  if (rails.rail.size() != fabric.num_nodes() || rails.host.size() != fabric.num_nodes()) {
    status_ = Error{"rail map covers " + std::to_string(rails.rail.size()) + " nodes, the fabric " +
                    std::to_string(fabric.num_nodes())};
    return;
  }
  // Host name -> CAs, as a sorted name index and a CSR of CAs per host.
  const uint32_t hosts = static_cast<uint32_t>(rails.hosts.size());
  host_index_.reserve(hosts);
  for (uint32_t h = 0; h < hosts; ++h) host_index_.emplace_back(rails.hosts[h], h);
  std::sort(host_index_.begin(), host_index_.end());
  host_begin_.assign(hosts + 1, 0);
  for (NodeId ca : fabric.cas()) {
    uint32_t h = rails.host[ca.value()];
    if (h < hosts) ++host_begin_[h + 1];
  }
  for (uint32_t h = 0; h < hosts; ++h) host_begin_[h + 1] += host_begin_[h];
  host_cas_.resize(host_begin_[hosts]);
  std::vector<uint32_t> fill(host_begin_.begin(), host_begin_.end() - 1);
  for (NodeId ca : fabric.cas()) {
    uint32_t h = rails.host[ca.value()];
    if (h < hosts) host_cas_[fill[h]++] = ca;
  }
}

std::string SharpTreeBuilder::label(NodeId n) const {
  std::string_view d = fabric_->desc(n);
  return "'" + std::string(d.empty() ? fabric_->name(n) : d) + "'";
}

uint32_t SharpTreeBuilder::attach(NodeId ca) const {
  const Node& nd = fabric_->node(ca);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    uint32_t s = graph_.attach_switch(PortId(nd.first_port.value() + p));
    if (s != kNone) return s;
  }
  return kNone;
}

Result<ResolvedSharpJob> SharpTreeBuilder::resolve(const SharpJob& job) const {
  if (!status_) return status_.error();
  if (job.id.empty()) return Error{"SHARP job: the job id is empty"};
  const std::string who = "job '" + job.id + "'";
  ResolvedSharpJob out;
  out.id = job.id;
  out.cas.reserve(job.cas.size() + job.hosts.size() * 8);
  for (NodeId n : job.cas) {
    if (!n.valid() || n.value() >= fabric_->num_nodes()) {
      return Error{who + ": node index " + std::to_string(n.value()) + " is not in the fabric"};
    }
    if (fabric_->is_switch(n)) return Error{who + ": " + label(n) + " is a switch, not a CA"};
    out.cas.push_back(n);
  }
  for (const std::string& h : job.hosts) {
    auto it = std::lower_bound(host_index_.begin(), host_index_.end(), std::pair<std::string_view, uint32_t>(h, 0));
    if (it == host_index_.end() || it->first != h) return Error{who + ": unknown host '" + h + "'"};
    for (uint32_t i = host_begin_[it->second]; i < host_begin_[it->second + 1]; ++i) out.cas.push_back(host_cas_[i]);
  }
  std::sort(out.cas.begin(), out.cas.end());
  out.cas.erase(std::unique(out.cas.begin(), out.cas.end()), out.cas.end());
  if (out.cas.empty()) return Error{who + ": no CAs (give CAs or hosts)"};

  const auto& rail = rails_->rail;
  if (!job.rails.empty()) {
    std::vector<int32_t> want(job.rails);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    for (int32_t r : want) {
      if (r < 0 || static_cast<uint32_t>(r) >= rails_->num_rails) {
        return Error{who + ": rail " + std::to_string(r) + " is not a rail of this fabric (" +
                     std::to_string(rails_->num_rails) + " rails)"};
      }
    }
    std::vector<uint8_t> seen(want.size(), 0);
    std::erase_if(out.cas, [&](NodeId ca) {
      auto it = std::lower_bound(want.begin(), want.end(), rail[ca.value()]);
      if (it == want.end() || *it != rail[ca.value()]) return true;
      seen[static_cast<size_t>(it - want.begin())] = 1;
      return false;
    });
    for (size_t i = 0; i < want.size(); ++i) {
      if (!seen[i]) return Error{who + ": none of its CAs is on rail " + std::to_string(want[i])};
    }
  }
  for (NodeId ca : out.cas) out.rails.push_back(rail[ca.value()]);
  std::sort(out.rails.begin(), out.rails.end());
  out.rails.erase(std::unique(out.rails.begin(), out.rails.end()), out.rails.end());
  return out;
}

// Multi-source BFS with one bit per leaf: after round d, bit i of v's bitset
// is set iff leaf i is within d hops of v (through allowed switches only).
// The first round in which some allowed switch holds every bit gives the
// smallest height and all the roots that achieve it.
SharpTreeBuilder::RootSearch SharpTreeBuilder::search_roots(std::span<const uint32_t> leaves,
                                                            std::span<const uint32_t> load, uint32_t capacity,
                                                            bool constrained) {
  const uint32_t n = graph_.num_switches();
  const size_t num_leaves = leaves.size();
  const size_t w = (num_leaves + 63) / 64;
  const uint64_t last = num_leaves % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (num_leaves % 64)) - 1;
  auto allowed = [&](uint32_t v) { return !constrained || load[v] < capacity; };
  reach_.assign(static_cast<size_t>(n) * w, 0);
  next_.assign(static_cast<size_t>(n) * w, 0);
  for (size_t i = 0; i < num_leaves; ++i) reach_[leaves[i] * w + i / 64] |= uint64_t{1} << (i % 64);

  RootSearch out;
  for (uint32_t d = 0; d <= n; ++d) {
    for (uint32_t v = 0; v < n; ++v) {
      if (!allowed(v)) continue;
      const uint64_t* r = &reach_[v * w];
      bool full = r[w - 1] == last;
      for (size_t k = 0; full && k + 1 < w; ++k) full = r[k] == ~uint64_t{0};
      if (full) out.roots.push_back(v);
    }
    if (!out.roots.empty()) {
      out.height = d;
      out.found = true;
      return out;
    }
    bool changed = false;
    for (uint32_t v = 0; v < n; ++v) {
      uint64_t* nx = &next_[v * w];
      const uint64_t* r = &reach_[v * w];
      std::copy(r, r + w, nx);
      if (!allowed(v)) continue;
      for (uint32_t e = graph_.begin(v); e < graph_.end(v); ++e) {
        uint32_t u = graph_.remote(e);
        if (!allowed(u)) continue;
        const uint64_t* ru = &reach_[u * w];
        for (size_t k = 0; k < w; ++k) nx[k] |= ru[k];
      }
      for (size_t k = 0; k < w && !changed; ++k) changed = nx[k] != r[k];
    }
    reach_.swap(next_);
    if (!changed) break;
  }
  return out;
}

Error SharpTreeBuilder::refusal(std::string_view job_id, int32_t rail, size_t num_leaves,
                                const RootSearch& shallowest, std::span<const uint32_t> load,
                                uint32_t capacity) const {
  std::string names;
  uint32_t listed = 0, full_roots = 0;
  for (uint32_t v : shallowest.roots) {
    if (load[v] < capacity) continue;
    ++full_roots;
    if (listed++ < 4) names += (names.empty() ? "" : ", ") + label(graph_.node(v));
  }
  if (full_roots > 4) names += ", ...";
  uint32_t full = 0;
  for (uint32_t v = 0; v < graph_.num_switches(); ++v) full += load[v] >= capacity;
  std::string msg = job_rail(job_id, rail) + ": SHARP tree capacity exhausted: no switch with a free slot reaches all " +
                    std::to_string(num_leaves) + " leaf switches over switches with free slots; ";
  if (full_roots > 0) {
    msg += std::to_string(full_roots) + " of the " + std::to_string(shallowest.roots.size()) +
           " shallowest roots (height " + std::to_string(shallowest.height) + ") are full (" + names + "); ";
  } else {
    msg += "the shallowest roots (height " + std::to_string(shallowest.height) + ") are cut off by full switches; ";
  }
  return Error{msg + std::to_string(full) + " switches hold " + std::to_string(capacity) + " of " +
               std::to_string(capacity) + " trees"};
}

Result<SharpTree> SharpTreeBuilder::build_tree(std::string_view job_id, int32_t rail, std::span<const NodeId> cas,
                                               std::span<const uint32_t> load, uint32_t capacity) {
  if (!status_) return status_.error();
  const uint32_t n = graph_.num_switches();
  if (load.size() != n) {
    return Error{"load has " + std::to_string(load.size()) + " entries, the fabric " + std::to_string(n) +
                 " switches"};
  }
  if (cas.empty()) return Error{job_rail(job_id, rail) + ": no CAs"};

  // CAs by leaf, sorted (leaf, CA).
  std::vector<std::pair<uint32_t, NodeId>> at;
  at.reserve(cas.size());
  for (NodeId ca : cas) {
    uint32_t s = attach(ca);
    if (s == kNone) {
      return Error{job_rail(job_id, rail) + ": CA " + label(ca) + " has no healthy, non-drained link to a switch"};
    }
    at.emplace_back(s, ca);
  }
  std::sort(at.begin(), at.end());
  std::vector<uint32_t> leaves;
  for (const auto& [s, ca] : at) {
    if (leaves.empty() || leaves.back() != s) leaves.push_back(s);
  }
  for (uint32_t s : leaves) {
    if (load[s] >= capacity) {
      return Error{job_rail(job_id, rail) + ": SHARP tree capacity exhausted on leaf switch " + label(graph_.node(s)) +
                   " (" + std::to_string(load[s]) + " of " + std::to_string(capacity) + " trees in use)"};
    }
  }

  RootSearch shallowest = search_roots(leaves, load, capacity, false);
  if (!shallowest.found) {
    // reach_ holds what leaf 0 could reach: name one leaf it cannot.
    const size_t w = (leaves.size() + 63) / 64;
    size_t i = 1;
    while (i < leaves.size() && (reach_[leaves[0] * w + i / 64] >> (i % 64) & 1)) ++i;
    assert(i < leaves.size());  // some leaf was unreachable, or the search would have found a root
    return Error{job_rail(job_id, rail) + ": its " + std::to_string(leaves.size()) +
                 " leaf switches are not connected over healthy, non-drained links (" +
                 label(graph_.node(leaves[0])) + " cannot reach " + label(graph_.node(leaves[i])) + ")"};
  }
  bool any_full = false;
  for (uint32_t v = 0; v < n && !any_full; ++v) any_full = load[v] >= capacity;
  RootSearch chosen = any_full ? search_roots(leaves, load, capacity, true) : shallowest;
  if (!chosen.found) return refusal(job_id, rail, leaves.size(), shallowest, load, capacity);

  auto guid = [&](uint32_t v) { return fabric_->node(graph_.node(v)).guid; };
  auto allowed = [&](uint32_t v) { return load[v] < capacity; };
  uint32_t root = chosen.roots.front();
  for (uint32_t v : chosen.roots) {
    if (load[v] < load[root] || (load[v] == load[root] && guid(v) < guid(root))) root = v;
  }

  // BFS from the root through allowed switches, no deeper than the height.
  dist_.resize(n, kNone);
  tree_slot_.resize(n, kNone);
  touched_.clear();
  queue_.clear();
  dist_[root] = 0;
  touched_.push_back(root);
  queue_.push_back(root);
  for (size_t q = 0; q < queue_.size(); ++q) {
    uint32_t v = queue_[q];
    if (dist_[v] == chosen.height) continue;
    for (uint32_t e = graph_.begin(v); e < graph_.end(v); ++e) {
      uint32_t u = graph_.remote(e);
      if (dist_[u] != kNone || !allowed(u)) continue;
      dist_[u] = dist_[v] + 1;
      touched_.push_back(u);
      queue_.push_back(u);
    }
  }

  // Each leaf climbs one hop closer at a time until it meets the tree.
  struct Slot {
    uint32_t sw;
    uint32_t parent;  // slot, kNone at the root
    LinkId uplink;
  };
  std::vector<Slot> slots;
  slots.push_back({root, kNone, LinkId()});
  tree_slot_[root] = 0;
  for (uint32_t leaf : leaves) {
    assert(dist_[leaf] <= chosen.height);  // the root's bitset held this leaf at `height`
    uint32_t v = leaf;
    if (tree_slot_[v] != kNone) continue;
    tree_slot_[v] = static_cast<uint32_t>(slots.size());
    slots.push_back({v, kNone, LinkId()});
    while (true) {
      uint32_t best = kNone, best_e = kNone;
      for (uint32_t e = graph_.begin(v); e < graph_.end(v); ++e) {
        uint32_t u = graph_.remote(e);
        if (dist_[u] == kNone || dist_[u] + 1 != dist_[v]) continue;
        if (best != kNone) {
          bool ub = tree_slot_[u] != kNone, bb = tree_slot_[best] != kNone;
          if (u == best || ub < bb) continue;
          if (ub == bb && (load[u] > load[best] || (load[u] == load[best] && guid(u) > guid(best)))) continue;
        }
        best = u;
        best_e = e;
      }
      assert(best != kNone);  // BFS reached v from some allowed neighbour one hop closer
      Slot& s = slots[tree_slot_[v]];
      s.uplink = graph_.link(best_e);
      if (tree_slot_[best] != kNone) {
        s.parent = tree_slot_[best];
        break;
      }
      tree_slot_[best] = static_cast<uint32_t>(slots.size());
      s.parent = tree_slot_[best];
      slots.push_back({best, kNone, LinkId()});
      v = best;
    }
  }

  // Order root first, then by depth and GUID; fill children and CAs.
  std::vector<uint32_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    uint32_t da = dist_[slots[a].sw], db = dist_[slots[b].sw];
    return da != db ? da < db : guid(slots[a].sw) < guid(slots[b].sw);
  });
  std::vector<uint32_t> pos(slots.size());
  for (uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  SharpTree tree;
  tree.rail = rail;
  tree.root = graph_.node(root);
  tree.min_height = shallowest.height;
  tree.degraded = chosen.height > shallowest.height;
  tree.switches.resize(slots.size());
  for (uint32_t i = 0; i < slots.size(); ++i) {
    SharpTreeSwitch& out = tree.switches[pos[i]];
    out.node = graph_.node(slots[i].sw);
    out.depth = dist_[slots[i].sw];
    if (slots[i].parent != kNone) {
      out.parent = graph_.node(slots[slots[i].parent].sw);
      out.uplink = slots[i].uplink;
      tree.switches[pos[slots[i].parent]].children.push_back(out.node);
    }
  }
  for (const auto& [s, ca] : at) tree.switches[pos[tree_slot_[s]]].cas.push_back(ca);
  for (auto& s : tree.switches) {
    std::sort(s.children.begin(), s.children.end(),
              [&](NodeId a, NodeId b) { return fabric_->node(a).guid < fabric_->node(b).guid; });
    tree.max_fan_in = std::max(tree.max_fan_in, s.fan_in());
    if (!s.cas.empty()) tree.height = std::max(tree.height, s.depth);
  }
  assert(tree.height == chosen.height);  // the root's eccentricity over the leaves

  for (uint32_t v : touched_) dist_[v] = kNone;
  for (const Slot& s : slots) tree_slot_[s.sw] = kNone;
  return tree;
}

Result<std::vector<SharpTree>> SharpTreeBuilder::build_job(const ResolvedSharpJob& job, std::span<uint32_t> load,
                                                           uint32_t capacity) {
  if (!status_) return status_.error();
  std::vector<NodeId> by_rail(job.cas);
  const auto& rail = rails_->rail;
  std::stable_sort(by_rail.begin(), by_rail.end(),
                   [&](NodeId a, NodeId b) { return rail[a.value()] < rail[b.value()]; });
  std::vector<SharpTree> trees;
  auto undo = [&] {
    for (const SharpTree& t : trees) {
      for (const auto& s : t.switches) --load[graph_.switch_index(s.node)];
    }
  };
  size_t i = 0;
  while (i < by_rail.size()) {
    int32_t r = rail[by_rail[i].value()];
    size_t j = i;
    while (j < by_rail.size() && rail[by_rail[j].value()] == r) ++j;
    auto tree = build_tree(job.id, r, std::span<const NodeId>(by_rail).subspan(i, j - i), load, capacity);
    if (!tree) {
      undo();
      return tree.error();
    }
    for (const auto& s : tree->switches) ++load[graph_.switch_index(s.node)];
    trees.push_back(std::move(tree).value());
    i = j;
  }
  return trees;
}

Result<std::vector<SharpTree>> plan_sharp_trees(const Fabric& fabric, const RailMap& rails, const SharpJob& job,
                                                std::span<const uint8_t> drained, uint32_t trees_per_switch) {
  SharpTreeBuilder builder(fabric, rails, drained);
  auto resolved = builder.resolve(job);
  if (!resolved) return resolved.error();
  std::vector<uint32_t> load(builder.num_switches(), 0);
  return builder.build_job(*resolved, load, trees_per_switch);
}

}  // namespace railyard::routing
