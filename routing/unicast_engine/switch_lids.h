// Internal to the unicast engine: the switch LIDs up*/down* leaves
// unreachable, filled after the lanes have routed, through one designated
// turn switch (switch_turns.cpp) and, where it cannot reach, one entry at a
// time under a check of the channel dependency graph (switch_repair.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine/incremental.h"

namespace railyard::routing::unicast {

// What route_switch_turns did: the turn switches, one per component of the
// switch graph that needed one and had a qualifying switch (none when every
// switch LID was already reachable), and the entries filled.
struct SwitchTurns {
  std::vector<uint32_t> turn_switches;
  uint64_t entries = 0;
  // (switch, switch LID) entries still empty within one piece of the switch
  // graph: what repair_switch_lids is for.
  uint64_t left = 0;
};

// Fills the empty switch-LID entries of every switch with its entry toward a
// designated turn switch (switch_turns.cpp says why that stays deadlock-free);
// `drained` (per LinkId, may be empty): links the way there takes last.
// Runs once, after every lane; never changes an entry that is set. `memo`
// (may be null) receives what turn_columns needs.
SwitchTurns route_switch_turns(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                               std::span<const uint8_t> drained, ForwardingTables& tables, TurnsMemo* memo = nullptr);

// An incremental route's switch turns, before its flush: `written` are the
// columns it routed again (LID, column in a lane's batch), the tables hold
// the others with the fills of the route before. Brings the memo up to date
// with the written columns (`changed`: the links that changed, lower switch
// first) and, if the turn switches and every switch's way
// toward its own stayed, fills the written columns as route_switch_turns
// would (the others keep theirs) and says so in `out`. False: call
// refill_turns after the flush.
bool turn_columns(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                  std::span<const uint8_t> drained, std::span<const ChangedLink> changed,
                  std::span<const std::pair<Lid, uint8_t*>> written, TurnsMemo& memo, SwitchTurns& out);
// route_switch_turns for an incremental route whose turn_columns said false:
// from the memo it brought up to date, every fill made again (entries the
// route before filled, turns or repair, included), the other entries
// unread.
SwitchTurns refill_turns(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                         std::span<const uint8_t> drained, ForwardingTables& tables, TurnsMemo& memo);

// What repair_switch_lids did: entries filled, and (switch, switch LID)
// entries still empty within one piece of the switch graph.
struct SwitchRepair {
  uint64_t entries = 0;
  uint64_t left = 0;
  bool cyclic = false;  // the tables it was given already had a dependency cycle: nothing filled
};

// Fills switch-LID entries the turn switch left empty, each only where the
// dependency it adds closes no cycle (switch_repair.cpp). Never changes an
// entry that is set; `drained` (per LinkId, may be empty) is used last.
SwitchRepair repair_switch_lids(const Fabric& fabric, const SwitchGraph& graph, std::span<const uint8_t> drained,
                                ForwardingTables& tables);

}  // namespace railyard::routing::unicast
