// From operator intent to engine options: resolves a policy's drains and roots
// against a fabric and derives the destination order "rail, then leaf, then
// port" from the rail map.
#pragma once

#include "policies/policy.h"
#include "routing/rails.h"
#include "routing/result.h"
#include "routing/unicast_engine.h"

namespace railyard::routing {

// Errors name the policy entry that does not resolve ("drains.links[1]:
// unknown node 'leaf g9'"). A drained switch drains all its links.
Result<RoutingOptions> plan_routing(const Fabric& fabric, const policies::Policy& policy, const RailMap& rails);

// The leaf order key alone: leaves by (rail, first host in natural order,
// GUID); switches without CAs last.
std::vector<uint64_t> leaf_order(const Fabric& fabric, const RailMap& rails);

}  // namespace railyard::routing
