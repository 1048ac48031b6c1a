// The fabric as a scheduler sees it: a tree of groups of hosts, the one model
// behind Slurm's topology.conf and topology.yaml and the Kubernetes labels.
//
// In a rail-optimized fabric a server hangs off one leaf per rail, so no
// single switch is "its" leaf. Tier 0 groups hosts by the set of leaves their
// CAs use (one per rail): hosts of one tier-0 group (a *block*) reach each
// other, rail by rail, through one leaf. Tier k >= 1 (k up to the fabric's
// highest switch level) groups blocks whose leaves, rail by rail, are joined
// by switches up to level k: in a 2-level fabric tier 1 is the whole fabric
// (every leaf meets every spine of its rail plane); in a 3-level fabric tier 1
// are the pods (leaves that share spines) and tier 2 the whole fabric. Only
// cabling counts (not link states): a flapping cable does not move a host in
// the tree; health is reported beside it (rail_health.h).
//
// Names: a block is named after its lowest rail's leaf (its description, with
// characters other than letters, digits, '-', '_', '.' made '_'), tier 1
// groups "pod<N>", higher tiers "tier<k>-<N>", in fabric order; a tier with a
// single group is "fabric" and the last (tiers above it would add nothing). Every host with at least one cabled CA is in
// exactly one block; hosts with none are `unplaced`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/fabric_view.h"

namespace railyard::controller {

struct TopologyGroup {
  std::string name;
  std::vector<uint32_t> hosts;     // host indices (view.rails.hosts), in host order: every host below it
  std::vector<uint32_t> children;  // tier > 0: indices of its groups in the tier below
  std::vector<NodeId> leaves;      // tier 0: the leaves, by rail
  uint32_t parent = UINT32_MAX;    // its group in the tier above (none at the top)
};

struct SchedulerTopology {
  std::vector<std::string> hosts;                 // the view's host names
  std::vector<std::vector<TopologyGroup>> tiers;  // tiers[0] blocks ... tiers.back(): the top
  std::vector<uint32_t> host_block;               // per host: its block, or kUnplaced
  std::vector<uint32_t> unplaced;                 // hosts without a cabled CA
  static constexpr uint32_t kUnplaced = UINT32_MAX;
  // The group of tier `tier` above block `block`.
  uint32_t group_of(uint32_t block, size_t tier) const;
};

SchedulerTopology scheduler_topology(const FabricView& view);

// `name` made a Slurm/Kubernetes-safe token: letters, digits, '-', '_', '.'
// kept, anything else '_', at most 63 characters.
std::string scheduler_name(std::string_view name);

}  // namespace railyard::controller
