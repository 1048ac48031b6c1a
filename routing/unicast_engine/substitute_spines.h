// Internal to the unicast engine: substitute planes for fat trees whose
// leaves each lost at most one uplink (routing/unicast_engine.h).
//
// What it guarantees: with every leaf missing at most one uplink, each
// rail-aligned shift loads every directed link with at most 2 flows (the
// optimum then: a leaf without its link to spine b must bring destination b
// down another spine, next to that spine's own destination). The chains of
// the engine reach 3 (two levels) and 4 (three): a flow's spine is decided at
// the source leaf, and one substitute per destination, whatever it is,
// collides somewhere.
//
// The setting (checked, else the plan stays inactive and the chains route):
// two or three levels ranked from the CAs; pods of leaves, each with one
// spine per plane (two levels: one pod, every spine its own plane; three
// levels: the spines of a plane joined through its cores, slot k of every
// spine of the plane reaching the same core); one cable per (leaf, spine);
// every leaf missing at most one plane and some leaf missing one; every
// spine-core link present; nothing drained. A leaf's choice of plane fixes
// the whole path: up to the plane's spine in its pod, (three levels) up to
// the core that the destination's leaf hangs off at slot k = its port on
// the spine (D-mod-K's second digit, the same for every plane), down.
//
// Leaf links. Destination slot i of leaf B comes down plane i (D-mod-K). A
// rail-aligned shift sends from leaf A to two leaves B, B+1 that follow each
// other in A's ring (rail, cyclic), each slot once, and B receives from two
// leaves A, A+1 that follow each other: every uplink of A and every down
// link into B has one natural flow. Two flows of A per (A, B) are extras,
// sent through a plane chosen per pair:
//  - B's dead slot (B has no cable to plane b_B), and
//  - A's dead slot (A has no cable to a_A; nothing if a_A = b_B).
// An extra never uses a_A or b_B. If the extras of A toward B and toward
// B's ring neighbours are pairwise different, each uplink of A carries at
// most one extra per shift; if the extras of A and of A's ring neighbours
// toward B are pairwise different, so does each down link into B.
// Core links (three levels). The down link from a core into spine x of B's
// pod carries only flows for the one leaf at its slot, a subset of that
// spine's down link into the leaf: at most 2. The uplink from spine x of
// pod P to slot k carries at most one natural flow (the natural flows of x
// go to leaves at distinct slots) and the extras toward leaves at slot k;
// two such extras in one shift can only come from the first and the last
// leaf of P, toward B and B + d (d leaves per pod): those are kept apart too.
// Hence at most 2 per link. Each extra has at most 13 such neighbours and 2
// planes it cannot use: a greedy pass (destination, then source, in ring
// order) settles them with 16 planes or more; below that, min-conflicts
// repair passes usually do (8 planes: every fabric tried); what is left
// takes the plane breaking the fewest (still a legal route). The extras of
// a dead slot rotate over the planes from source to source, which keeps
// all-to-all spread.
// Legal under up*/down*: every path climbs to its top switch, then goes down.
// Limits: leaves missing two or more uplinks, or a missing spine-core link,
// leave the whole fabric to the chains.
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
  static constexpr uint32_t kRepairPasses = 32;
  bool build(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk, const RoutingOptions& options);
  bool build_cores(const SwitchGraph& g, const Ranking& rk);
  void build_rings(const std::vector<uint64_t>& ring_of_leaf);
  void choose_extras();
  // The leaf `steps` after leaf x in x's ring, cyclically.
  uint32_t ring_step(uint32_t x, int32_t steps) const;
  // Extra plane of source leaf a toward leaf b: kind 0 for a's dead slot,
  // 1 for b's; kNo when there is no such flow (or not chosen yet).
  uint32_t& extra(uint32_t a, uint32_t b, uint32_t kind) { return extra_[(size_t(a) * leaves_.size() + b) * 2 + kind]; }
  uint32_t extra(uint32_t a, uint32_t b, uint32_t kind) const {
    return extra_[(size_t(a) * leaves_.size() + b) * 2 + kind];
  }
  bool needs(uint32_t a, uint32_t b, uint32_t kind) const;

  // Leaves are indexed by their position in leaves_, planes 0..planes_-1.
  bool active_ = false;
  uint32_t levels_ = 0;
  uint32_t slots_ = 0;             // nominal up slots of a leaf
  uint32_t planes_ = 0, pods_ = 0;
  std::vector<uint32_t> leaf_id_;  // per switch: index into leaves_, or kNo
  std::vector<uint32_t> leaves_;   // switch indices, by ring, then leaf order
  std::vector<uint32_t> pod_;      // per leaf
  std::vector<uint32_t> pod_size_;              // per pod: leaves
  std::vector<uint32_t> spine_;                 // pod x plane: switch index
  std::vector<uint32_t> ring_begin_, ring_size_;  // per leaf: its ring in leaves_
  std::vector<uint32_t> pod_first_, pod_last_;  // per leaf: the pod's other end, when the leaf is one (3 levels)
  std::vector<uint8_t> up_port_;    // leaf x plane: the leaf's port to its pod's spine, 0 = no link
  std::vector<uint8_t> down_port_;  // leaf x plane: that spine's port down to the leaf
  std::vector<uint32_t> natural_;   // leaf x slot: plane, kNo = the dead slot
  std::vector<uint32_t> dead_;      // per leaf: its missing plane, kNo = none
  std::vector<uint32_t> extra_;     // (source leaf, destination leaf, kind): plane
  // Three levels.
  uint32_t spine_slots_ = 0;         // up slots of a spine
  std::vector<uint32_t> core_;       // plane x slot: the core
  std::vector<uint8_t> spine_up_;    // (pod x plane) x slot: the spine's port up
  std::vector<uint8_t> core_down_;   // (pod x plane) x slot: the core's port back down
  std::vector<uint32_t> core_slot_;  // leaf x plane: the slot its destinations come down
};

}  // namespace railyard::routing::unicast
