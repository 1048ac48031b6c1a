// RoutingPass: what OpenSM's ucast_build_fwd_tables callback does, as named,
// timed stages:
//
//   policy refresh -> snapshot (osm_subn_t -> Fabric) -> plan (rails, policy)
//   -> route (routing::route_unicast) -> write (new_lft)
//
// Returns OpenSM's codes: 0 = tables written; -1 = refused (no switches, no
// LIDs, a subnet the model rejects, an internal error), so OpenSM tries the next
// engine of `routing_engine` and then minhop. Every refusal is logged with its
// reason. Runs under OpenSM's exclusive lock; nothing here blocks on anything
// but the CPU and one stat() of the policy file.
#pragma once

#include <cstdint>

#include "policies/policy.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"
#include "sm_plugin/plugin_config.h"
#include "sm_plugin/policy_source.h"

namespace railyard::sm_plugin {

class RoutingPass {
 public:
  RoutingPass(osm_opensm_t* osm, const PluginConfig& config, const OsmLogger& logger)
      : osm_(osm), logger_(logger), policy_(config.policy_file) {}

  // The callback body. May throw only std::bad_alloc and the like; the C
  // boundary in plugin.cpp catches everything.
  int run();

  // The build_lid_matrices callback body: 0 = matrices written; 1 = not
  // written (logged), OpenSM builds them itself.
  int build_hop_matrices();

  uint64_t passes() const { return passes_; }

 private:
  osm_opensm_t* osm_;
  const OsmLogger& logger_;
  PolicySource policy_;
  // The last policy that planned on a live fabric: used when the current one
  // names nodes the fabric does not have (e.g. a drained switch that was removed).
  policies::Policy last_planned_;
  bool have_last_planned_ = false;
  uint64_t passes_ = 0;
  double hops_ms_ = -1;  // this pass's hop matrices; < 0 = built by OpenSM
};

}  // namespace railyard::sm_plugin
