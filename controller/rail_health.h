// Per host, per rail health: what a scheduler or a job launcher needs to know
// about each CA of a server (GET /hosts, GET /hosts/{host}/rails, the Slurm
// and Kubernetes outputs, the drain sync to Slurm). Pure: a function of one
// view and the links' states.
//
// A rail (a CA of a host) is
//   down      its link is down (cut, unplugged, reported down by monitoring);
//   drained   its link is drained (an operator drain of the link or port);
//   isolated  its leaf has uplinks and none of them is healthy (up, not drained);
//   degraded  its leaf lost some, not all, of its uplinks;
//   healthy   otherwise.
// Down, drained and isolated rails are *broken*: traffic on that rail cannot
// leave the host's leaf (or the host at all). Degraded rails still carry
// traffic, with less bandwidth above the leaf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/controller.h"

namespace railyard::controller {

enum class RailHealth : uint8_t { kHealthy, kDegraded, kIsolated, kDrained, kDown };
std::string_view to_string(RailHealth health);  // "healthy", "degraded", "isolated", "drained", "down"
bool broken(RailHealth health);                 // down, drained, isolated

struct RailState {
  int32_t rail = -1;
  NodeId ca;
  NodeId leaf;              // invalid when the CA is not cabled
  uint32_t leaf_port = 0;   // the leaf's port to the CA (0: not cabled)
  uint32_t uplinks_healthy = 0;  // the leaf's uplinks that are up and not drained
  uint32_t uplinks_total = 0;
  RailHealth health = RailHealth::kHealthy;
};

struct HostRails {
  std::string host;
  std::vector<RailState> rails;  // by rail
  uint32_t healthy = 0;          // rails in state healthy
  // The broken rails, by rail; empty when none is.
  std::vector<const RailState*> broken_rails() const;
};

// "rail 1 isolated, rail 2 drained": a host's broken rails, for people, the
// Slurm exclusion comment and drain reasons; empty when none is broken.
std::string broken_rails_text(const HostRails& host);

struct RailHealthMap {
  std::vector<HostRails> hosts;         // in the view's host order
  std::vector<RailState> without_host;  // CAs whose description names no host
  // The host named `name`, or nullptr.
  const HostRails* find(std::string_view name) const;
};

RailHealthMap rail_health(const FabricView& view, const std::vector<LinkStatus>& links);

}  // namespace railyard::controller
