// Incremental reroute: the tables of a changed fabric from those of the
// fabric before, re-deciding only the destination columns the change can
// touch. The result is byte-identical to route_unicast on the changed fabric
// (tables and report); tests/routing/reroute_test.cpp checks that against a
// full route over many seeded changes.
//
// Why it can be exact (unicast_engine/incremental.cpp has the details): a CA
// destination's phase A (its nominal paths, unicast_engine.h) depends only on
// the fabric and the destination, and phase A does not read any load. A
// change of switch links (down, up, drained, undrained) can alter a column
// only where the modes toward its leaf change or where a changed link is a
// candidate next hop; the memo keeps the modes per leaf, the loads phase A
// left, and phase A's columns of the destinations phase B finished, so only
// those columns are re-walked. Phase B (the displaced flows, which see every
// load) and the switch LIDs are then done again in full, as a full route
// does them: they are a small part of the work.
//
// Falls back to a full route (RerouteStats::full_reason says why) when the
// change is more than switch links: nodes, ports, LIDs or CA cables differ,
// the ranking or the slots moved (a switch died or came back), or the options
// differ other than in the drained links.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "routing/fabric.h"
#include "routing/result.h"
#include "routing/unicast_engine.h"

namespace railyard::routing {

// What a route keeps for the next incremental one (opaque; a few bytes per
// switch and leaf, 8 per switch port, phase A's columns of the destinations
// phase B finished, and the storage of the engines' largest arrays, ~20 MB
// at 16k CAs, so that the next route does not map it afresh).
struct RouteMemo;

struct RerouteStats {
  bool incremental = false;  // false: a full route (full_reason says why)
  std::string full_reason;
  uint32_t changed_links = 0;      // switch links whose state or drain changed
  uint32_t targets = 0;            // leaves with CA destinations
  uint32_t targets_touched = 0;    // leaves with at least one column re-walked
  uint32_t targets_prepared = 0;   // leaves whose modes were worked out again (not the memo's)
  uint32_t columns = 0;            // CA destination LIDs
  uint32_t columns_recomputed = 0; // of those, re-walked (phase A)
  uint32_t columns_patched = 0;    // of those, the old column with one leaf waiting (no walk)
  // The route before's memo was updated in place rather than copied: the
  // caller gave up its last reference to it (see reroute_unicast).
  bool memo_in_place = false;
};

struct TrackedRouting {
  RoutingResult result;
  std::shared_ptr<const RouteMemo> memo;
  RerouteStats stats;
};

// A full route that also keeps the memo.
Result<TrackedRouting> route_unicast_tracked(const Fabric& fabric, const RoutingOptions& options);

// The route of `after` given the route of `before` (same nodes, ports and
// LIDs; switch links may differ in state, options in the drained links).
// Same result as route_unicast_tracked(after, after_options). Takes the
// route before by value: moved in, its tables become the new ones in place,
// and so does its memo when nothing else holds it (the memo is shared by
// copies of a TrackedRouting): a reroute then allocates neither.
Result<TrackedRouting> reroute_unicast(const Fabric& before, const RoutingOptions& before_options,
                                       TrackedRouting routed, const Fabric& after,
                                       const RoutingOptions& after_options);

}  // namespace railyard::routing
