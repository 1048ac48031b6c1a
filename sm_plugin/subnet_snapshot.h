// SubnetSnapshot: OpenSM's subnet (osm_subn_t) as a routing::Fabric, plus the
// switch objects the tables are written back to.
//
// What is taken, and from where (OpenSM 3.3.23):
//  - switches from subn.sw_guid_tbl, then CAs and routers from
//    subn.node_guid_tbl; each group in ascending node GUID, so the fabric does
//    not depend on OpenSM's map order;
//  - node and system GUIDs, node descriptions (NodeDescription, up to 64 bytes,
//    cut at the first NUL) and record names "S-/H-/R-<guid>" as ibnetdiscover
//    writes them, so policy references work alike online and offline;
//  - for each addressable port (switch port 0, CA/router ports): port GUID and
//    LID range from subn.port_guid_tbl (osm_port_get_lid_range_ho), the LMC
//    being the range's width;
//  - every physical port's state; links from osm_physp_get_remote, once per
//    cable, with active width and speed. A link with an end in state DOWN is
//    kept with state kDown (routing avoids it; rails still see the cabling).
// Must be called with OpenSM's lock held (routing callbacks run under it).
#pragma once

#include <vector>

#include "routing/fabric.h"
#include "routing/result.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

struct SubnetSnapshot {
  routing::Fabric fabric;
  // Parallel to fabric.switches(): the OpenSM switch of table row i.
  std::vector<osm_switch_t*> switches;
  uint32_t down_links = 0;  // links with an end in state DOWN
};

// Errors: a subnet OpenSM holds but railyard's model refuses (duplicate GUIDs,
// overlapping LID ranges, a port number beyond the node's ports), named.
Result<SubnetSnapshot> take_snapshot(osm_subn_t& subn);

}  // namespace railyard::sm_plugin
