// RouteWalk and RouteDiff: what a controller asks of a set of forwarding tables.
//
// walk_route() follows the tables hop by hop from a CA port to a destination
// LID and returns the path as data (the verifier's trace_path() is the
// one-line text form for reports). diff_routes() says how much a new set of
// tables changes: entries, 64-entry blocks (what OpenSM pushes), switches
// touched, and CA pairs whose path changes — counted per destination over the
// in-tree of the old tables (a pair's path changes iff some switch on it has
// a changed entry), O(destinations x switches), never per pair.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"

namespace railyard::routing {

struct RouteHop {
  NodeId node;
  uint8_t in_port = 0;   // 0 at the source
  uint8_t out_port = 0;  // 0 at the destination
};

enum class RouteEnd : uint8_t { kDelivered, kNoPath, kDeadPort, kWrongNode, kLoop, kNotCabled, kBadLid };
std::string_view to_string(RouteEnd end);

struct RouteWalk {
  std::vector<RouteHop> hops;  // source CA, switches..., destination (when delivered)
  RouteEnd end = RouteEnd::kNoPath;
};

// `source` is a CA port (or a switch's port 0). Tables are indexed by
// switch in fabric.switches() order, as route_unicast() produces them.
RouteWalk walk_route(const Fabric& fabric, const ForwardingTables& tables, PortId source, Lid destination);

struct RouteDiff {
  uint64_t entries_changed = 0;
  uint64_t blocks_changed = 0;
  uint32_t switches_touched = 0;
  uint64_t pairs_rerouted = 0;  // (source CA port, destination CA LID) whose path changed
};

// Both tables must be of `fabric` (same switch order).
RouteDiff diff_routes(const Fabric& fabric, const ForwardingTables& before, const ForwardingTables& after);

}  // namespace railyard::routing
