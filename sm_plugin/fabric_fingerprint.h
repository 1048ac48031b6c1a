// fabric_fingerprint: a 64-bit digest of what the `fabric` event carries
// (nodes, GUIDs, descriptions, port LIDs and states, links), so the routing
// pass sends a snapshot only when the fabric changed, without serializing it
// under OpenSM's lock. O(size), no allocation; equal fabrics give equal
// digests, and a changed node, LID, port state or link changes the digest
// (barring a 64-bit collision).
#pragma once

#include <cstdint>

#include "routing/fabric.h"

namespace railyard::sm_plugin {

uint64_t fabric_fingerprint(const routing::Fabric& fabric);

}  // namespace railyard::sm_plugin
