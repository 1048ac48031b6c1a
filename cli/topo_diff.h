// `railyard topo diff`: did the cabling change between two topology files?
//
// Nodes are matched by node GUID and links by (node GUID, port) at both ends;
// each CA's host and rail (from its description and the rail naming) must also
// agree. LIDs, widths, speeds, port states and record names are ignored: they
// change between a generated plan and what ibnetdiscover reports while the
// cabling stays the same. Differences come out sorted so that two runs over
// the same files print the same list.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/policy.h"
#include "routing/fabric.h"

namespace railyard::cli {

struct TopologyDifference {
  // node_only_in_a/b, node_changed, port_guid_changed, link_only_in_a/b, ca_mapping_changed
  std::string kind;
  std::string text;     // one human-readable line
  nlohmann::ordered_json detail;
};

std::vector<TopologyDifference> diff_topologies(const routing::Fabric& a, const routing::Fabric& b,
                                                const policies::RailNaming& naming);

}  // namespace railyard::cli
