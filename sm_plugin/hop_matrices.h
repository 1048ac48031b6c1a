// Hop matrices: OpenSM's min-hop tables (p_sw->hops), computed the fast way.
//
// OpenSM keeps, for every switch, the hop count to every switch LID through
// each of its ports (hops[lid][port], hops[lid][0] = the least). Multicast
// trees and SA use them; with build_lid_matrices NULL OpenSM fills them itself
// by Bellman-Ford-style rounds over all switch pairs through function calls,
// which measured ~8 s of the routing stage (OpenSM's lock held) at 640
// switches / 8,192 CAs.
//
// Same values as osm_ucast_mgr_build_lid_matrices (OpenSM 3.3.23), by one
// breadth-first search per destination switch over the switch graph instead
// (O(switches x links) plus one copy per matrix row):
//  - a switch's own base LID: 0 hops at port 0;
//  - port p of switch s cabled to switch r (r != s), weight w = p's hop_wf,
//    which is 1 (set here, as OpenSM does); with a hop_weights_file the
//    plugin declines and OpenSM builds the matrices:
//    * healthy link (osm_link_is_healthy): hops[lid(t)][p] = w + D(r, t) for
//      every switch t that r reaches;
//    * unhealthy link: only hops[lid(r)][p] = w (OpenSM's hop 0/1 step does
//      not look at health; its propagation step skips unhealthy links);
//  - D(r, t) = least hops from r to t: 0 for t itself, w for a direct cable
//    to t of any health, else through healthy links only.
// Only switch LIDs get rows (as in OpenSM: CA LIDs are resolved through the
// switch they hang off). Runs under OpenSM's lock, after OpenSM has cleared
// the matrices (osm_switch_prepare_path_rebuild).
#pragma once

#include <cstdint>

#include "routing/result.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

struct HopStats {
  uint32_t switches = 0;
  uint64_t entries = 0;  // (switch, LID, port) hop counts written
};

// Errors when a hop_weights_file is configured or OpenSM refuses a write (a
// LID beyond max_lid_ho): the caller then lets OpenSM build the matrices.
Result<HopStats> build_hop_matrices(osm_subn_t& subn);

}  // namespace railyard::sm_plugin
