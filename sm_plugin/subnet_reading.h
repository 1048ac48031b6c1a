// Step 1 of the fast path (fast_path.h): what it reads from OpenSM, as
// values (no pointer into OpenSM survives the lock), and the directed routes
// around links a trap found down.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/routing_pass.h"

namespace railyard::sm_plugin {

// What step 1 reads from OpenSM, as values (no pointer into OpenSM survives
// the lock).
struct SubnetReading {
  routing::Fabric fabric;
  routing::ForwardingTables before;  // p_sw->new_lft of every switch, rows in fabric order
  std::vector<uint64_t> guids;       // node GUID of each row's switch
  std::vector<std::vector<uint8_t>> routes;  // OpenSM's directed route to each row's switch
  uint64_t sm_node_guid = 0;         // the node of the SM's port, and the port
  uint8_t sm_port = 0;
  uint64_t pass = 0;                 // RoutingPass::passes() when read
};

struct ReadFailure {
  std::string why;
  bool retry = false;  // OpenSM is still sending its own blocks
};

// Under OpenSM's read lock: the subnet, OpenSM's tables (new_lft) and its
// directed routes; a failure with `retry` while OpenSM is still sending its
// own blocks. `reuse` (optional): tables of an earlier reading, whose
// storage `before` takes over (ForwardingTables::reset) instead of a new one.
std::variant<SubnetReading, ReadFailure> read_subnet(osm_opensm_t* osm, const RoutingPass& pass,
                                                     routing::ForwardingTables* reuse = nullptr);

// read_subnet, retried while OpenSM is still sending its own blocks;
// `attempt` says how many tries it took.
std::variant<SubnetReading, ReadFailure> read_settled(osm_opensm_t* osm, const RoutingPass& pass, int& attempt,
                                                      routing::ForwardingTables* reuse = nullptr);

// For the switches whose directed route from the SM crosses a link that is
// down in `now` (a trap's links, before OpenSM's sweep re-routes its SMPs):
// a shortest route over the links that are up, by node GUID. A CA SM leaves
// by its own port; a switch SM by any.
std::unordered_map<uint64_t, std::vector<uint8_t>> detours(const SubnetReading& r, const routing::Fabric& now);

}  // namespace railyard::sm_plugin
