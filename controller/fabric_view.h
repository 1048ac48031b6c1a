// FabricView: one immutable, routed picture of the fabric, swapped whole
// (readers hold a shared_ptr; a new snapshot, drain or link event makes a new
// view). Everything the API reads comes from one view, so a response never
// mixes two fabrics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policies/policy.h"
#include "routing/fabric.h"
#include "routing/rails.h"
#include "routing/result.h"
#include "routing/unicast_engine.h"

namespace railyard::controller {

struct FabricView {
  uint64_t version = 0;
  double built_at = 0;        // Unix time
  std::string origin;         // "offline <file>" or "plugin pass <n>"
  routing::Fabric fabric;     // links reported down have state kDown
  routing::RailMap rails;
  policies::Policy policy;    // base policy + the controller's drains
  routing::RoutingOptions options;
  routing::RoutingResult routing;
  double route_ms = 0;
};

// Routes `fabric` under `policy`: rails, plan, engine. An Error when the
// policy names nodes the fabric does not have or the engine refuses.
Result<std::shared_ptr<const FabricView>> build_view(routing::Fabric fabric, const policies::Policy& policy,
                                                     std::string origin, uint64_t version);

// `fabric` with the links named by `down` (canonical "0x<guid>[port]" of
// either end) set to state kDown; unknown names are skipped.
routing::Fabric with_links_down(const routing::Fabric& fabric, const std::vector<std::string>& down);

// Canonical names: "0x<node guid>[port]" for a port, and for a link the name
// of its lower end (by node GUID, then port), so either end names it.
std::string port_key(const routing::Fabric& fabric, PortId port);
std::string link_key(const routing::Fabric& fabric, LinkId link);
// "leaf g000 r0[33]": the node description and port, for people.
std::string port_label(const routing::Fabric& fabric, PortId port);

}  // namespace railyard::controller
