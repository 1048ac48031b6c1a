#include "routing/unicast_engine/shift_bounds.h"

namespace railyard::routing::unicast {

ShiftBounds::ShiftBounds(const SwitchGraph& g, const Ranking& ranking, std::span<const Entry> ent,
                         std::span<const uint8_t> leaf) {
  auto usable = [&](uint32_t s, bool up_only) {
    uint32_t clean = 0, all = 0;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (up_only && !ent[e].up) continue;
      ++all;
      clean += ent[e].drained ? 0 : 1;
    }
    return clean ? clean : all;
  };
  const uint32_t n = g.num_switches();
  leaf_of_.assign(n, kNone);
  std::vector<uint32_t> leaves;
  for (uint32_t s = 0; s < n; ++s) {
    if (!leaf[s]) continue;
    leaf_of_[s] = static_cast<uint32_t>(leaves.size());
    leaves.push_back(s);
  }
  const uint32_t nl = static_cast<uint32_t>(leaves.size());
  leaf_cap_.resize(nl);
  up_cap_.resize(nl);
  for (uint32_t i = 0; i < nl; ++i) {
    leaf_cap_[i] = usable(leaves[i], false);
    up_cap_[i] = usable(leaves[i], true);
  }
  // Pods: pieces of the switch graph below the top rank (three ranks or more).
  pod_of_.assign(n, kNone);
  pod_cap_.clear();
  if (ranking.levels >= 3) {
    uint32_t top = 0;
    for (uint32_t s = 0; s < n; ++s) top = std::max(top, ranking.rank[s]);
    std::vector<uint32_t> queue;
    for (uint32_t s0 = 0; s0 < n; ++s0) {
      if (pod_of_[s0] != kNone || ranking.rank[s0] == top) continue;
      const uint32_t pod = static_cast<uint32_t>(pod_cap_.size());
      pod_cap_.push_back(0);
      queue.assign(1, s0);
      pod_of_[s0] = pod;
      for (size_t i = 0; i < queue.size(); ++i) {
        for (uint32_t e = g.begin(queue[i]); e < g.end(queue[i]); ++e) {
          const uint32_t r = g.remote(e);
          if (ranking.rank[r] == top || pod_of_[r] != kNone) continue;
          pod_of_[r] = pod;
          queue.push_back(r);
        }
      }
      uint32_t clean = 0, all = 0;
      for (uint32_t x : queue) {
        for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
          if (pod_of_[g.remote(e)] == pod) continue;
          ++all;
          clean += ent[e].drained ? 0 : 1;
        }
      }
      pod_cap_[pod] = clean ? clean : all;
    }
  }
  // Every leaf's parents, and the leaves below each (going down only).
  std::vector<uint32_t> index_of(n, kNone), parents;
  parent_begin_.assign(nl + 1, 0);
  parent_.clear();
  parent_links_.clear();
  for (uint32_t i = 0; i < nl; ++i) {
    const uint32_t s = leaves[i];
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (!ent[e].up) continue;
      const uint32_t q = g.remote(e);
      if (index_of[q] == kNone) {
        index_of[q] = static_cast<uint32_t>(parents.size());
        parents.push_back(q);
      }
      const uint32_t j = index_of[q];
      auto it = std::find(parent_.begin() + parent_begin_[i], parent_.end(), j);
      if (it == parent_.end()) {
        parent_.push_back(j);
        parent_links_.push_back(0);
        it = parent_.end() - 1;
      }
      parent_links_[static_cast<size_t>(it - parent_.begin())] += 1;
    }
    parent_begin_[i + 1] = static_cast<uint32_t>(parent_.size());
  }
  words_ = (nl + 63) / 64;
  below_.assign(parents.size() * words_, 0);
  parent_ups_.resize(parents.size());
  std::vector<uint32_t> seen(n, kNone), stack;
  for (uint32_t j = 0; j < parents.size(); ++j) {
    parent_ups_[j] = usable(parents[j], true);
    stack.assign(1, parents[j]);
    seen[parents[j]] = j;
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      if (leaf_of_[x] != kNone) below_[static_cast<size_t>(j) * words_ + leaf_of_[x] / 64] |= uint64_t{1} << (leaf_of_[x] % 64);
      for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
        if (ent[e].up || seen[g.remote(e)] == j) continue;
        seen[g.remote(e)] = j;
        stack.push_back(g.remote(e));
      }
    }
  }
}

ShiftBounds::Counts ShiftBounds::counts() const {
  Counts c;
  c.out_leaf.assign(leaf_cap_.size(), 0);
  c.in_leaf.assign(leaf_cap_.size(), 0);
  c.out_pod.assign(pod_cap_.size(), 0);
  c.in_pod.assign(pod_cap_.size(), 0);
  c.out_up.assign(parent_.size(), 0);
  c.in_up.assign(parent_.size(), 0);
  c.need.assign(2 * parent_ups_.size(), 0);
  c.flows_of.assign(leaf_cap_.size() * leaf_cap_.size(), 0);
  return c;
}

uint32_t ShiftBounds::cuts(const Counts& c) const {
  auto over = [](uint32_t flows, uint32_t cap) -> uint32_t { return cap ? (flows + cap - 1) / cap : 0; };
  uint32_t b = 1;
  for (size_t i = 0; i < c.out_leaf.size(); ++i) {
    b = std::max({b, over(c.out_leaf[i], leaf_cap_[i]), over(c.in_leaf[i], leaf_cap_[i])});
  }
  for (size_t i = 0; i < c.out_pod.size(); ++i) {
    b = std::max({b, over(c.out_pod[i], pod_cap_[i]), over(c.in_pod[i], pod_cap_[i])});
  }
  return b;
}

// Raises b (at most to `most`, and 8 above the cuts') while some parent
// cannot take what its leaves must send it. A shift sends a leaf's flows
// to a few leaves: the pairs of leaves were counted first.
uint32_t ShiftBounds::spines(Counts& c, uint32_t b, uint32_t most) const {
  const uint32_t leaves = static_cast<uint32_t>(leaf_cap_.size());
  for (uint32_t key : c.pairs) {
    const uint32_t la = key / leaves, lt = key % leaves;
    const uint32_t flows = c.flows_of[key];
    c.flows_of[key] = 0;
    for (uint32_t k = parent_begin_[la]; k < parent_begin_[la + 1]; ++k) c.out_up[k] += below(parent_[k], lt) ? 0 : flows;
    for (uint32_t k = parent_begin_[lt]; k < parent_begin_[lt + 1]; ++k) c.in_up[k] += below(parent_[k], la) ? 0 : flows;
  }
  const uint32_t parents = static_cast<uint32_t>(parent_ups_.size());
  for (const uint32_t b0 = b; b < most && b < b0 + 8; ++b) {
    std::fill(c.need.begin(), c.need.end(), 0);
    for (uint32_t i = 0; i < c.out_leaf.size(); ++i) {
      for (uint32_t j = parent_begin_[i]; j < parent_begin_[i + 1]; ++j) {
        const uint64_t elsewhere = uint64_t{b} * (up_cap_[i] - std::min(up_cap_[i], parent_links_[j]));
        c.need[parent_[j]] += c.out_up[j] > elsewhere ? c.out_up[j] - elsewhere : 0;
        c.need[parents + parent_[j]] += c.in_up[j] > elsewhere ? c.in_up[j] - elsewhere : 0;
      }
    }
    bool fits = true;
    for (uint32_t q = 0; q < parents && fits; ++q) {
      fits = c.need[q] <= uint64_t{b} * parent_ups_[q] && c.need[parents + q] <= uint64_t{b} * parent_ups_[q];
    }
    if (fits) break;
  }
  std::fill(c.out_up.begin(), c.out_up.end(), 0);
  std::fill(c.in_up.begin(), c.in_up.end(), 0);
  return b;
}

void ShiftBounds::clear(Counts& c) const {
  std::fill(c.out_leaf.begin(), c.out_leaf.end(), 0);
  std::fill(c.in_leaf.begin(), c.in_leaf.end(), 0);
  std::fill(c.out_pod.begin(), c.out_pod.end(), 0);
  std::fill(c.in_pod.begin(), c.in_pod.end(), 0);
}

}  // namespace railyard::routing::unicast
