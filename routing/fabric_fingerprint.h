// fabric_fingerprint: a 64-bit digest (FNV-1a, routing/lft_digest.h) of a
// fabric as `fabric_changes` carries it (nodes, GUIDs, descriptions, port LIDs
// and states, links, in the fabric's order): the plugin's routing pass sends
// the fabric only when it changed, without serializing it under OpenSM's
// lock, and railyardd checks that its copy built from changes is the
// plugin's fabric. O(size), no allocation; equal fabrics give equal digests,
// and a changed node, LID, port state or link changes the digest (barring a
// 64-bit collision).
#pragma once

#include <cstdint>

#include "routing/fabric.h"

namespace railyard::routing {

uint64_t fabric_fingerprint(const routing::Fabric& fabric);

}  // namespace railyard::routing
