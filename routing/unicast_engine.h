// Unicast routing engine: a forwarding table for every switch, covering every
// CA port LID (with its LMC range) and every switch LID.
//
// Guarantees
//  - Deadlock-free on one VL: every CA route is up*/down* under one Ranking
//    (ranking.h); so is every route to a switch LID that up*/down* can reach.
//    The others (a spine to another spine: down, then up) go toward one
//    designated turn switch T whose up-closure is a tree, and turn only inside
//    it (unicast_engine/switch_turns.cpp), so the channel dependency graph
//    stays acyclic with switch LIDs included.
//  - Minimal: among legal up*/down* routes, each switch takes a shortest one.
//    A switch that can reach the destination going only down always goes down
//    (so a packet that has started down never turns up again).
//  - Balanced by all-to-all flows, D-mod-K where the tree is whole
//    (unicast_engine/flow_walk.cpp). Each CA destination has digits, one per
//    rank, from positions in the tree as cabled (its slot on its leaf, its
//    leaf's slot on the spine, ...), so a failure moves no other
//    destination's digits. Phase A: every switch whose nominal path (the
//    digit's up slot at each rank, then down the destination's chain) is
//    whole takes it; on a healthy tree that is every switch and the tables
//    are D-mod-K's (each rail-aligned shift loads every link with at most one
//    flow; all-to-all at the leaf cut bound). Phase B, after every
//    destination's phase A so the loads of all nominal flows are known: the
//    switches whose nominal path is broken (a missing, dead or drained cable
//    anywhere on it) choose, source by source and from the bottom up, a path
//    within the leaf cut bound of all-to-all if one exists (in an order of
//    slots that keeps rail-aligned shifts apart), else the least loaded one.
//    The same method serves any number of missing or drained links at any
//    tier, dead switches, and fabrics that are not fat trees. Measured
//    quality and limits: docs/routing.md.
//    RoutingOptions::flow_balance off gives the earlier chains and
//    substitute planes (unicast_engine/substitute_spines.h), which keep
//    rail-aligned shifts at 2 when every leaf lost one uplink.
//  - Drains: drained links are used only by switches that have no legal route
//    without them ("tier 2"); those pairs are reported.
//  - Deterministic: same fabric and options give the same tables.
// Limits: needs LIDs on the fabric (see lid_assignment.h); routes per LID, not
// per source (an LFT cannot do better); unreachable pairs are reported, not
// errors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/ranking.h"
#include "routing/result.h"

namespace railyard::routing {

struct RoutingOptions {
  std::vector<NodeId> roots;           // up*/down* roots; empty = automatic
  std::vector<uint8_t> drained;        // per LinkId, nonzero = avoid unless no other route
  // Order in which leaf switches' destinations are taken, as a sort key per
  // switch index (lower first; ties by switch index). Empty = node order.
  // plan_routing (routing_plan.h) derives it from rails ("rail, then leaf, then port").
  std::vector<uint64_t> leaf_order_key;
  // Rail ("ring") of each leaf, per switch index: a rail-aligned shift sends
  // from a leaf to the next leaves of its rail in leaf order, the last leaf
  // to the first. Used to place substitute spines when leaves miss uplinks.
  // Empty = all leaves one ring. plan_routing (routing_plan.h) fills it
  // from the rail map.
  std::vector<uint32_t> leaf_ring;
  // Route switch LIDs that up*/down* cannot reach through a turn switch
  // (unicast_engine/switch_turns.cpp). Off: those entries stay empty, as
  // before; every other entry is the same either way.
  bool switch_turns = true;
  // Balance CA destinations by all-to-all flows (unicast_engine/flow_walk.cpp)
  // instead of chains and substitute planes.
  bool flow_balance = true;
  // Without flow balancing: substitute planes where every leaf misses <= 1
  // uplink.
  bool substitute_planes = true;
  // The host x rail grid of CA LIDs ([host * shift_rails + rail], an
  // invalid Lid where absent), hosts in natural name order: the
  // rail-aligned and cross-rail shifts that the pass over shifts
  // (unicast_engine/shift_repair.cpp) keeps within their bounds. Empty:
  // no such pass. plan_routing (routing_plan.h) fills it from the rail map.
  std::vector<Lid> shift_grid;
  uint32_t shift_rails = 0;
};

struct DestinationIssue {
  Lid lid;                // destination LID
  NodeId dest;            // the node owning it
  uint32_t sources = 0;   // CA ports affected
  NodeId example_source;  // one of them
};

struct RoutingReport {
  RankingKind ranking = RankingKind::kFromCas;
  uint32_t levels = 0;
  uint32_t roots = 0;
  uint32_t switches = 0;
  uint32_t ca_ports = 0;
  uint32_t lids_routed = 0;
  uint64_t unreachable_pairs = 0;  // (source CA port, destination CA LID) with no route
  uint64_t drained_pairs = 0;      // pairs routed through a drained link
  // Switch LIDs that up*/down* cannot reach from some switch (a spine from
  // another spine) go through a turn switch, one per piece of the switch
  // graph (none when nothing needed one); entries so filled.
  std::vector<NodeId> turn_switches;
  uint64_t switch_entries_turned = 0;
  // Entries the turn switch could not fill, filled where the channel
  // dependency graph stays acyclic (unicast_engine/switch_repair.cpp), and
  // the (switch, switch LID) entries still empty within a piece of the graph.
  uint64_t switch_entries_repaired = 0;
  uint64_t switch_entries_empty = 0;
  // (switch, CA LID) entries moved off the busiest links after the
  // balancing by flows (unicast_engine/hot_links.cpp).
  uint32_t hot_link_moves = 0;
  // The pass over shifts: entries it moved, and the load above the shifts'
  // bounds (summed over shifts and links) before and after it.
  uint32_t shift_moves = 0;
  uint64_t shift_excess_before = 0;
  uint64_t shift_excess_after = 0;
  // Phase B of the balancing by flows: the (switch, CA destination) choices
  // left to it (nominal path broken), and the lanes it ran in: 0 (nothing
  // left), 1, or 2 when the choices were many (unicast_engine/phase_b_lanes.cpp).
  uint64_t phase_b_waiting = 0;
  uint32_t phase_b_lanes = 0;
  std::vector<DestinationIssue> unreachable;    // per destination LID, CA destinations only
  std::vector<DestinationIssue> through_drained;
};

struct RoutingResult {
  ForwardingTables tables;
  RoutingReport report;
};

// The fabric must carry LIDs. Errors only for unusable input (no LIDs, option
// arrays of the wrong size); an unroutable pair is a report entry, not an error.
Result<RoutingResult> route_unicast(const Fabric& fabric, const RoutingOptions& options = {});

}  // namespace railyard::routing
