// Congestion analysis: how many flows of a traffic pattern share the busiest
// directed link, for any set of forwarding tables.
//
// Patterns (hosts in name order per rail, from rails.h):
//  - rail-aligned shifts: host i rail r -> host i+k rail r, all rails at once,
//    for every k (what NCCL sends with PXN);
//  - cross-rail shifts: host i rail r -> host i+k rail r+1;
//  - seeded random permutations of all CA ports;
//  - all-to-all (the edge forwarding index), from one in-tree per destination.
// Flows are walked over the tables (a few hops each), loads counted per
// directed channel, CA links included. The lower bound printed beside the
// maximum is the leaf cut bound: for each leaf, ceil(flows that must leave
// it / its up links), and likewise entering it; at least 1 when any flow
// crosses a switch (ROUTING_NOTES.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/rails.h"

namespace railyard::routing {

struct Flow {
  PortId src;  // CA port
  PortId dst;  // CA port; its base LID is the destination
};

struct PatternLoad {
  std::string name;
  uint32_t instances = 0;     // permutations evaluated (e.g. shifts)
  uint64_t flows = 0;
  uint64_t unrouted = 0;      // flows that did not arrive
  uint64_t max_load = 0;      // worst over instances: most flows on one directed link
  double mean_max_load = 0;   // mean over instances of their max
  double mean_link_load = 0;  // mean flows per used switch-switch channel (over instances)
  uint64_t lower_bound = 0;   // worst over instances of the leaf cut bound
  int32_t worst_instance = -1;  // e.g. the shift k with the highest max
  std::string worst_link;       // "switch[port] -> switch" of the busiest switch link
};

struct CongestionOptions {
  uint32_t max_shifts = 0;          // 0 = every k; else evenly spaced sample
  uint32_t random_permutations = 4;
  uint64_t seed = 1;
  bool all_to_all = true;
};

struct CongestionReport {
  std::vector<PatternLoad> patterns;
};

CongestionReport analyze_congestion(const Fabric& fabric, const ForwardingTables& tables, const RailMap& rails,
                                    const CongestionOptions& options = {});

// One pattern of explicit flows.
PatternLoad evaluate_flows(const Fabric& fabric, const ForwardingTables& tables, const std::string& name,
                           const std::vector<Flow>& flows);

// Per link (indexed by LinkId) the all-to-all flows crossing it in each
// direction (a -> b is from the link's port a), switch-switch links only (a CA
// link carries n - 1 each way, the same for all). The predicted load the
// console and `railyard verify --html` colour links by; its maximum is the
// all-to-all pattern's max_load when that is on a switch link.
struct LinkLoad {
  uint64_t a_to_b = 0;
  uint64_t b_to_a = 0;
  uint64_t max() const { return a_to_b > b_to_a ? a_to_b : b_to_a; }
};
std::vector<LinkLoad> all_to_all_link_loads(const Fabric& fabric, const ForwardingTables& tables);

// Rail-aligned shift k over all rails (cross_rail: to rail r+1).
std::vector<Flow> shift_flows(const Fabric& fabric, const RailMap& rails, uint32_t k, bool cross_rail);

}  // namespace railyard::routing
