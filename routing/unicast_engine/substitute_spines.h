// Internal to the unicast engine: substitute spines for a two-level tree
// whose leaves each lost at most one uplink (routing/unicast_engine.h).
//
// What it guarantees: with every leaf missing at most one spine, each
// rail-aligned shift loads every directed link with at most 2 flows (the
// optimum then: a leaf without its link to spine b must bring destination b
// down another spine, next to that spine's own destination). The chains of
// the engine reach 3 here: a flow's spine is decided at the source leaf, and
// one substitute per destination, whatever it is, collides somewhere.
//
// The setting (checked, else the plan stays inactive and the chains route):
// leaves (rank 0) below spines (rank 1), one cable per (leaf, spine) pair,
// every leaf missing at most one spine and some leaf missing one, no drained
// link. Destination slot i of leaf B comes down the spine at B's up slot i
// (D-mod-K, its natural spine). A rail-aligned shift sends from leaf A to
// two leaves B, B+1 that follow each other in A's ring (rail, cyclic), each
// slot once, and B receives from two leaves A, A+1 that follow each other:
// every uplink of A and every down link into B has one natural flow.
// Two flows of A per (A, B) are extras, sent through a spine chosen per pair:
//  - B's dead slot (spine b_B has no cable to B), and
//  - A's dead slot (A has no cable to a_A; nothing if a_A = b_B).
// An extra never uses a_A or b_B. If the extras of A toward B and toward
// B's ring neighbours are pairwise different, each uplink of A carries at
// most one extra per shift; if the extras of A and of A's ring neighbours
// toward B are pairwise different, so does each down link into B. Hence at
// most 2 flows per link. Every extra has at most 9 such neighbours and 2
// spines it cannot use: a greedy pass (destination, then source, in ring
// order) always satisfies all of them with 12 spines or more; with fewer it
// takes the spine breaking the fewest (still a legal route). The extras of
// a dead slot rotate over the spines from source to source, which keeps
// all-to-all spread.
// Legal under up*/down*: leaf -> spine -> leaf climbs once, then goes down.
// Limits: two levels only; three-level trees keep the chains.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/fabric.h"
#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"

namespace railyard::routing::unicast {

class SubstituteSpines {
 public:
  SubstituteSpines(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                   const RoutingOptions& options);

  // Whether the plan routes the CA destinations of switch t.
  bool covers(uint32_t t) const { return active_ && leaf_id_[t] != kNo; }

  // Writes the column of destination slot `slot` of leaf t (covers(t)): every
  // other leaf's port toward the spine it sends through, every spine's port
  // down to t; the spine without a link to t stays unrouted.
  void route(uint32_t t, uint32_t slot, uint8_t* column) const;

 private:
  static constexpr uint32_t kNo = UINT32_MAX;
  bool fits(const SwitchGraph& g, const Ranking& rk, const RoutingOptions& options);
  void choose_extras();
  // Extra spine of source leaf a toward leaf b: kind 0 for a's dead slot,
  // 1 for b's; kNo when there is no such flow (or not chosen yet).
  uint32_t& extra(uint32_t a, uint32_t b, uint32_t kind) { return extra_[(size_t(a) * leaves_.size() + b) * 2 + kind]; }
  uint32_t extra(uint32_t a, uint32_t b, uint32_t kind) const {
    return extra_[(size_t(a) * leaves_.size() + b) * 2 + kind];
  }
  bool needs(uint32_t a, uint32_t b, uint32_t kind) const;

  bool active_ = false;
  uint32_t slots_ = 0;             // up slots of a leaf
  std::vector<uint32_t> leaf_id_;  // per switch: index into leaves_, or kNo
  std::vector<uint32_t> leaves_;   // switch indices, by ring, then leaf order
  std::vector<uint32_t> spines_;   // switch indices, by GUID
  std::vector<uint32_t> ring_begin_;        // per leaf: first leaf of its ring
  std::vector<uint32_t> ring_size_;         // per leaf: leaves in its ring
  std::vector<uint8_t> up_port_;            // leaf x spine: the leaf's port, 0 = no link
  std::vector<uint8_t> down_port_;          // spine x leaf: the spine's port, 0 = no link
  std::vector<uint32_t> natural_;           // leaf x slot: spine id, kNo = the dead slot
  std::vector<uint32_t> dead_;              // per leaf: its missing spine, kNo = none
  std::vector<uint32_t> extra_;             // (source leaf, destination leaf, kind): spine id
};

}  // namespace railyard::routing::unicast
