// Multicast spanning trees from the plugin's hop distances (OpenSM's
// mcast_build_stree hook of the routing engine).
//
// OpenSM builds a group's tree (osm_mcast_mgr.c, mcast_mgr_build_spanning_tree)
// from the min-hop rows hops[lid][port]: it roots the tree at the first
// multicast-capable switch (GUID order) whose farthest member is nearest
// (least hops to each member's switch, + 1 for a member behind a cable),
// and from there splits the members switch by switch over the first port
// whose count equals the least toward each member (osm_switch_recommend_mcast_path),
// setting the ports in and out in each switch's multicast table. That is the
// only place OpenSM reads the rows after a pass (hop_matrices.h); writing
// them costs 4 million allocations on the first pass of a 2,000-switch
// fabric. Here the same tree is built with the same choices, the counts
// answered from HopMatrices' distances, so the rows need not exist: the
// multicast tables come out as OpenSM's own builder would set them
// (tests/integration/plugin_sa_mcast_test.sh compares them, switch by
// switch, with OpenSM building both the rows and the trees).
//
// Differences, none visible in the tables: no osm_mtree_node_t tree is kept
// (mbox->root stays NULL; OpenSM only ever frees it), and a member whose
// port leads to a CA rather than a switch is skipped where OpenSM would
// dereference a NULL switch.
//
// Runs on OpenSM's thread with its lock held (osm_mcast_mgr_process), like
// the routing pass that built the distances.
#pragma once

#include <cstdint>

#include "sm_plugin/hop_matrices.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"

namespace railyard::sm_plugin {

struct McastTreeStats {
  uint32_t members = 0;    // distinct member ports
  uint32_t unrouted = 0;   // members no path reached (each logged)
  uint32_t switches = 0;   // switches in the tree
  uint8_t depth = 0;       // switches on the longest branch
  uint64_t root_guid = 0;  // host order; 0 = no tree (fewer than two members, or no root)
};

// Clears nothing: OpenSM has cleared the MLID's tables before calling.
// IB_SUCCESS also when some members could not be reached (logged, as OpenSM
// does); IB_ERROR when no root switch or no memory.
ib_api_status_t build_mcast_tree(osm_sm_t& sm, osm_mgrp_box_t& mbox, const HopMatrices& hops,
                                 const OsmLogger& log, McastTreeStats* stats);

}  // namespace railyard::sm_plugin
