// Internal to the unicast engine: after the pass over the busiest links, a
// pass over the rail-aligned and cross-rail shifts (shift_repair.cpp).
#pragma once

#include <span>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"
#include "routing/unicast_engine/incremental.h"

namespace railyard::routing::unicast {

// What the pass did (the route's report carries it).
// (All 0 where the pass did not run: no grid, or a fabric past its size.)
struct ShiftRepair {
  uint64_t excess_before = 0;  // sum over shifts and links of the load above the shift's bound
  uint64_t excess_after = 0;
  uint32_t moves = 0;
};

// Moves single (switch, CA LID) entries, each to another next hop of the
// same direction and length (minimal, up*/down*, no drained link), while a
// move lowers the load the shifts of options.shift_grid put above their
// bounds and keeps every link's all-to-all load under the pass's limit.
// Appends each move (its old port) to `moves`. `storage`: the loads'
// storage of an earlier route (RouteMemo::shift_loads), taken and given back.
// `records` and `guid_rank` are the engines' (EntryRecords, Engine::guid_ranks).
ShiftRepair repair_shifts(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                          const EntryRecords& records, std::span<const uint32_t> guid_rank,
                          const RoutingOptions& options, ForwardingTables& tables, std::vector<TableMove>& moves,
                          std::vector<uint16_t>* storage = nullptr);

}  // namespace railyard::routing::unicast
