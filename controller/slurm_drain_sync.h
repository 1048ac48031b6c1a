// Drain sync to Slurm (opt-in, railyardd.yaml `slurm.drain_sync`): a host with
// a broken rail (down, drained or isolated: rail_health.h) is set DRAIN in
// Slurm with the reason "railyard: rail N <why>[, rail M <why>]", and resumed
// once every rail is healthy or degraded again. Only nodes whose reason
// starts with "railyard:" are ours: a node drained (or down) for any other
// reason is never touched, neither drained over nor resumed.
//
// This file is the pure part: reading `scontrol show node --oneliner` and
// deciding what to ask; cli/railyardd/slurm_sync.cpp runs scontrol.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controller/rail_health.h"

namespace railyard::controller {

inline constexpr std::string_view kSlurmReasonPrefix = "railyard:";

struct SlurmNode {
  std::string name;
  std::string state;   // "IDLE+DRAIN", "UNKNOWN", ...
  std::string reason;  // without the trailing " [user@time]"; empty when none
  bool drain = false;  // DRAIN, DRAINING or DRAINED set (state contains "DRAIN")
  bool ours() const { return reason.rfind(kSlurmReasonPrefix, 0) == 0; }
};

// Lines of `scontrol show node --oneliner` ("NodeName=x ... State=... Reason=...");
// lines without NodeName= are skipped.
std::vector<SlurmNode> parse_scontrol_nodes(std::string_view text);

struct SlurmAction {
  enum class Kind : uint8_t { kDrain, kResume };
  Kind kind = Kind::kDrain;
  std::string node;
  std::string reason;  // kDrain
};

// What brings Slurm in line with the fabric: drain hosts with a broken rail
// (again when our reason changed), resume our drains of hosts now healthy.
// Hosts Slurm does not know and nodes railyard does not know are left alone.
std::vector<SlurmAction> plan_drain_sync(const RailHealthMap& health, const std::vector<SlurmNode>& nodes);

// "railyard: rail 1 down, rail 3 drained" for a host with broken rails.
std::string slurm_drain_reason(const HostRails& host);

}  // namespace railyard::controller
