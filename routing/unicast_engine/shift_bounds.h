// Internal to the unicast engine: a lower bound on the busiest link of one
// shift (a permutation of CA flows), for the pass over shifts
// (shift_repair.cpp). The largest of
//  - the cuts: the flows leaving or entering a leaf, or a pod (a piece of
//    the switch graph below the top rank), over the links it may use;
//  - the spines': a leaf L sends at least C - b (u - m) of its C flows to
//    leaves not below a parent s through s when no link carries more than b
//    (u its up links, m of them to s), and those must climb over s's up
//    links: b is too low when, summed over s's leaves, they do not fit in b
//    x s's up links (a spine that lost its links to a core cannot take a
//    flow of every leaf of its pod); the same for flows entering.
// Links a group may use: those not drained, or its drained ones when it has
// nothing else (the engine then takes them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine/incremental.h"

namespace railyard::routing::unicast {

class ShiftBounds {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  // `ent`: per graph entry its direction and drain (EntryRecords::ent);
  // `leaf`: per switch, a CA is cabled to it.
  ShiftBounds(const SwitchGraph& graph, const Ranking& ranking, std::span<const Entry> ent,
              std::span<const uint8_t> leaf);

  // One shift's flows, counted (one per thread).
  struct Counts {
    std::vector<uint32_t> out_leaf, in_leaf, out_pod, in_pod, out_up, in_up;
    std::vector<uint64_t> need;
    std::vector<uint32_t> pairs, flows_of;  // the pairs of leaves (la * leaves + lt) with flows, their flows
  };
  Counts counts() const;
  // A flow from switch a to switch t (both leaves, a != t).
  void count(Counts& c, uint32_t a, uint32_t t) const {
    const uint32_t la = leaf_of_[a], lt = leaf_of_[t];
    ++c.out_leaf[la];
    ++c.in_leaf[lt];
    if (pod_of_[a] != pod_of_[t] && pod_of_[a] != kNone && pod_of_[t] != kNone) {
      ++c.out_pod[pod_of_[a]];
      ++c.in_pod[pod_of_[t]];
    }
  }
  // The bound of the flows counted, whose busiest link carries `most`: the
  // spines' bound is worked out only above the cuts' (below, it changes no
  // excess), from the flows `each_flow(visit)` calls visit(a, t) with
  // again. Clears the counts.
  template <class EachFlow>
  uint32_t bound(Counts& c, uint32_t most, EachFlow&& each_flow) const {
    uint32_t b = cuts(c);
    if (most > b) {
      c.pairs.clear();
      const uint32_t leaves = static_cast<uint32_t>(leaf_cap_.size());
      each_flow([&](uint32_t a, uint32_t t) {
        const uint32_t key = leaf_of_[a] * leaves + leaf_of_[t];
        if (c.flows_of[key]++ == 0) c.pairs.push_back(key);
      });
      b = spines(c, b, most);
    }
    clear(c);
    return b;
  }

 private:
  uint32_t cuts(const Counts& c) const;
  uint32_t spines(Counts& c, uint32_t b, uint32_t most) const;
  void clear(Counts& c) const;
  bool below(uint32_t parent, uint32_t leaf) const {
    return (below_[static_cast<size_t>(parent) * words_ + leaf / 64] >> (leaf % 64)) & 1;
  }

  // Per switch its leaf index and pod (kNone: none); per leaf its usable
  // links, up links and parents (parent index, links to it); per parent its
  // usable up links and the leaves below it (bits by leaf index).
  std::vector<uint32_t> leaf_of_, pod_of_, leaf_cap_, up_cap_, pod_cap_;
  std::vector<uint32_t> parent_begin_, parent_, parent_links_, parent_ups_;
  std::vector<uint64_t> below_;
  uint32_t words_ = 0;
};

}  // namespace railyard::routing::unicast
