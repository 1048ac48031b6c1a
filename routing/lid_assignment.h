// LID assignment for fabrics read without LIDs (ibsim's hand-written net
// files, generated topologies), so that they can be routed and dumped.
//
// Guarantees: deterministic (depends only on the fabric); every switch (on
// port 0) and every connected CA or router port that has no LID gets one;
// LIDs already present, and their LMC ranges, are kept and never reused; new
// LIDs have LMC 0 and are handed out lowest first, switches in node order,
// then CA ports in node and port order. A fabric that already has every LID
// comes back unchanged.
// Limits: unconnected CA ports get no LID (an SM never discovers them, so
// OpenSM gives them none either); the order is railyard's own and need not
// match the LIDs OpenSM would pick for the same fabric.
#pragma once

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

// Fails only when the unicast LID space (1..0xBFFF) runs out.
Result<Fabric> assign_lids(const Fabric& fabric);

}  // namespace railyard::routing
