// SpinesBound: CutOracle's lower bound on the busiest link of a permutation
// beyond the cuts (cut_oracle.h), for the shifts of issue 10.
//
// The cuts miss it where a spine lost up links that the leaves below it
// cannot all avoid. If no link carries more than b flows, a leaf L with C
// flows toward leaves not below its parent s (below = reachable from s
// going only down) sends at least C - b x (L's links not to s) of them
// through s, and each of those must leave s over one of its up links (from
// s, going down reaches only leaves below it, and up*/down* cannot climb
// again); summed over s's leaves they must fit in b x s's up links. Flows
// entering L from sources not below s likewise come down through s. The
// bound is raised until every spine fits. (A spine whose every up link went to a core
// that died: each leaf below it sends all its flows out of the pod over
// its other links, at least 2 on one when the leaf sends as many flows
// as it has links; the cuts say 1.)
//
// Levels are CutOracle's structural ones (1 leaf, 2 spine, 3 core); links
// are used as the groups use them (not drained, or the drained ones when
// nothing else is left). Written apart from the engine's own (routing/
// unicast_engine/shift_bounds.h); z3 checks it where it raises the cuts'
// (shift_feasibility_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace railyard::routing::test {

class SpinesBound {
 public:
  struct Link {
    uint32_t from = 0, to = 0;  // switch indices; each live switch link once from each side
    bool drained = false;
  };
  SpinesBound() = default;
  SpinesBound(std::span<const int32_t> level, std::span<const Link> links) {
    const uint32_t num_sw = static_cast<uint32_t>(level.size());
    words_ = (num_sw + 63) / 64;
    std::vector<std::vector<std::pair<uint32_t, bool>>> nbr(num_sw);
    for (const Link& l : links) nbr[l.from].push_back({l.to, l.drained});
    auto usable = [&](uint32_t s, auto&& keep) {
      uint64_t clean = 0, all = 0;
      for (auto [t, drained] : nbr[s]) {
        if (!keep(t)) continue;
        ++all;
        clean += drained ? 0 : 1;
      }
      return clean ? clean : all;
    };
    leaf_links_.assign(num_sw, 0);
    spine_ups_.assign(num_sw, 0);
    edges_of_.assign(num_sw + 1, 0);
    for (uint32_t s = 0; s < num_sw; ++s) {
      edges_of_[s] = static_cast<uint32_t>(edges_.size());
      if (level[s] == 2) spine_ups_[s] = usable(s, [&](uint32_t t) { return level[t] > 2; });
      if (level[s] != 1) continue;
      leaf_links_[s] = usable(s, [](uint32_t) { return true; });
      std::vector<uint32_t> spines;
      for (auto [t, drained] : nbr[s]) {
        if (level[t] == 2 && std::find(spines.begin(), spines.end(), t) == spines.end()) spines.push_back(t);
      }
      std::sort(spines.begin(), spines.end());
      for (uint32_t t : spines) {
        const uint64_t count = usable(s, [&](uint32_t x) { return x == t; });
        edges_.push_back({s, t, std::min<uint64_t>(count, leaf_links_[s])});
      }
    }
    edges_of_[num_sw] = static_cast<uint32_t>(edges_.size());
    below_.assign(static_cast<size_t>(num_sw) * words_, 0);
    std::vector<uint32_t> stack;
    std::vector<uint32_t> seen(num_sw, UINT32_MAX);
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (level[s] != 2) continue;
      uint64_t* bits = &below_[static_cast<size_t>(s) * words_];
      stack.assign(1, s);
      seen[s] = s;
      while (!stack.empty()) {
        uint32_t x = stack.back();
        stack.pop_back();
        bits[x / 64] |= uint64_t{1} << (x % 64);
        for (auto [t, drained] : nbr[x]) {
          if (level[t] < level[x] && seen[t] != s) {
            seen[t] = s;
            stack.push_back(t);
          }
        }
      }
    }
    num_sw_ = num_sw;
  }

  // The bound of a permutation raised from `bound` until every spine fits.
  // `pairs`: (source leaf << 32 | destination leaf) of each of its flows
  // between two leaves that up*/down* connects; `flows`: all its flows (no
  // link carries more, whatever the spines).
  uint64_t raise(std::vector<uint64_t> pairs, uint64_t bound, uint64_t flows) const {
    if (edges_.empty()) return bound;
    std::vector<uint64_t> out(edges_.size(), 0), in(edges_.size(), 0);
    bool any = false;
    // A permutation sends a leaf's flows to a few leaves: pairs first.
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size();) {
      size_t j = i;
      while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
      const uint32_t sa = static_cast<uint32_t>(pairs[i] >> 32), sb = static_cast<uint32_t>(pairs[i]);
      const uint64_t n = j - i;
      for (uint32_t k = edges_of_[sa]; k < edges_of_[sa + 1]; ++k) {
        if (!below(edges_[k].spine, sb)) any = true, out[k] += n;
      }
      for (uint32_t k = edges_of_[sb]; k < edges_of_[sb + 1]; ++k) {
        if (!below(edges_[k].spine, sa)) any = true, in[k] += n;
      }
      i = j;
    }
    if (!any) return bound;
    std::vector<uint64_t> need_out(num_sw_), need_in(num_sw_);
    for (uint64_t b = std::max<uint64_t>(bound, 1);; ++b) {
      if (b >= flows) return b;
      std::fill(need_out.begin(), need_out.end(), 0);
      std::fill(need_in.begin(), need_in.end(), 0);
      for (uint32_t i = 0; i < edges_.size(); ++i) {
        const Edge& e = edges_[i];
        const uint64_t elsewhere = b * (leaf_links_[e.leaf] - e.links);
        if (out[i] > elsewhere) need_out[e.spine] += out[i] - elsewhere;
        if (in[i] > elsewhere) need_in[e.spine] += in[i] - elsewhere;
      }
      bool fits = true;
      for (uint32_t s = 0; s < num_sw_ && fits; ++s) fits = need_out[s] <= b * spine_ups_[s] && need_in[s] <= b * spine_ups_[s];
      if (fits) return b;
    }
  }

 private:
  bool below(uint32_t spine, uint32_t leaf) const {
    return (below_[static_cast<size_t>(spine) * words_ + leaf / 64] >> (leaf % 64)) & 1;
  }
  struct Edge {
    uint32_t leaf = 0, spine = 0;
    uint64_t links = 0;  // usable links between them
  };
  std::vector<Edge> edges_;           // per leaf its parents: by leaf, then spine
  std::vector<uint32_t> edges_of_;    // per switch: its first edge
  std::vector<uint64_t> leaf_links_;  // per leaf: its usable switch links
  std::vector<uint64_t> spine_ups_;   // per spine: its usable up links
  std::vector<uint64_t> below_;       // per spine: the switches below it, bits (words_ wide)
  uint32_t words_ = 0, num_sw_ = 0;
};

}  // namespace railyard::routing::test
