// What schedulers read, rendered from controller/scheduler_topology.h (the
// tree) and controller/rail_health.h (which hosts have a broken rail):
//   - Slurm topology.conf (topology/tree): one SwitchName line per group;
//   - Slurm 25.05 topology.yaml: a tree topology and a block topology;
//   - Kubernetes: one Node per host with Topograph's topology labels and a
//     health label per rail, and a Kueue Topology naming those labels.
// Pure functions; the same model and health give byte-identical text (no
// times or versions in it), so a file is rewritten only when this changes.
#pragma once

#include <string>

#include "controller/rail_health.h"
#include "controller/scheduler_topology.h"

namespace railyard::api {

// Topograph's node labels, tier by tier (leaf = tier 0).
inline constexpr const char* kTopologyLabels[] = {"network.topology.nvidia.com/leaf",
                                                  "network.topology.nvidia.com/spine",
                                                  "network.topology.nvidia.com/core"};
// Per rail: "railyard.io/rail-<N>": healthy | degraded | isolated | drained | down.
inline constexpr const char* kRailLabelPrefix = "railyard.io/rail-";

std::string render_slurm_conf(const controller::SchedulerTopology& topo, const controller::RailHealthMap& health);
std::string render_slurm_yaml(const controller::SchedulerTopology& topo, const controller::RailHealthMap& health);
std::string render_kubernetes(const controller::SchedulerTopology& topo, const controller::RailHealthMap& health);

}  // namespace railyard::api
