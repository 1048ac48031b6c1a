// Resolving the node and port references of a policy against a fabric.
//
// policies/ names nodes without knowing any fabric ("0x<GUID>", a record name
// such as "S-e41d2d0300001000", or a node description); this is where those
// names meet a snapshot. Lookups are O(log n) except the ambiguity check of
// find_node, which scans the nodes once.
#pragma once

#include <string_view>

#include "policies/policy.h"
#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

// The node `ref` names, or an invalid id. "0x<hex>" is tried as a node GUID,
// then as a port GUID (the node owning that port), then like any other text as
// a record name or node description. When several nodes share a description
// the lowest-numbered one is returned; use find_node to refuse that.
NodeId resolve_node(const Fabric& fabric, std::string_view ref);

// Like resolve_node, with reasons: "unknown node 'x'", or "node 'x' is
// ambiguous: 2 nodes have that description" when a name or description
// matches more than one node (names from a policy must say which one).
Result<NodeId> find_node(const Fabric& fabric, std::string_view ref);

// The port `ref` names: its node resolved by find_node, its number checked
// against the node ("port 40 is beyond 'leaf g000 r0''s 36 ports").
Result<PortId> resolve_port(const Fabric& fabric, const policies::PortRef& ref);

}  // namespace railyard::routing
