// Adaptive-routing (AR) groups: for every switch and destination LID, the set
// of output ports a switch may choose from at run time, next to the static LFT.
//
// Guarantees
//  - Every member is a legal shortest next hop under the unicast engine's
//    rules (unicast_engine.h): same Ranking (ranking.h, same roots), up*/down*
//    only, down and drained links left out, a switch that can reach the target
//    going only down goes down, otherwise it climbs to a parent one step
//    closer. So any choice among members is minimal and the channel dependency
//    graph of all members together stays acyclic (Dally & Seitz 1987).
//  - The static LFT port is always a member (added when the engine had to use
//    a drained link), so AR never removes the static route.
//  - Identical port sets share one group id per switch; the AR LFT maps
//    LID -> group id.
// Limits: `max_groups_per_switch` counts adaptive groups (two or more ports).
// A one-port group is the static route itself (AR off for that LID) and does
// not count. Over the limit, the most used groups are kept (ties by port set)
// and the destinations of the others fall back to the singleton of their
// static port; those are counted as trimmed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/result.h"
#include "routing/unicast_engine.h"

namespace railyard::routing {

struct ArSwitchGroups {
  std::vector<std::vector<uint8_t>> groups;  // group id -> ascending port numbers
  uint32_t adaptive_groups = 0;              // groups with two or more ports
  uint32_t trimmed = 0;                      // destinations moved to a singleton by the limit
};

struct ArTables {
  static constexpr uint16_t kNoGroup = 0xFFFF;  // no route (the static LFT drops too)

  uint32_t num_lids = 0;  // max LID + 1
  uint32_t max_groups_per_switch = 0;
  std::vector<ArSwitchGroups> switches;  // per switch index (fabric.switches() order)
  std::vector<uint16_t> lft;             // [switch * num_lids + lid] -> group id
  std::vector<uint32_t> over_limit;      // switches that needed trimming
  uint64_t trimmed = 0;                  // sum of the switches' trimmed counts

  uint16_t group(uint32_t sw, Lid lid) const { return lft[static_cast<size_t>(sw) * num_lids + lid.value]; }
  void set_group(uint32_t sw, Lid lid, uint16_t g) { lft[static_cast<size_t>(sw) * num_lids + lid.value] = g; }
  // The member ports of switch sw toward lid; empty when kNoGroup.
  std::span<const uint8_t> ports(uint32_t sw, Lid lid) const {
    uint16_t g = group(sw, lid);
    if (g == kNoGroup) return {};
    return switches[sw].groups[g];
  }
};

// Errors only for unusable input: no LIDs, tables of another fabric, option
// arrays of the wrong size, a root that is not a switch, a limit of 0.
Result<ArTables> compute_ar_groups(const Fabric& fabric, const ForwardingTables& static_tables,
                                   const RoutingOptions& options, uint32_t max_groups_per_switch);

struct ArCheck {
  bool valid = true;         // every member one hop closer, no loop, no dead end
  bool acyclic = true;       // CDG over all members of all destinations
  uint64_t members = 0;      // (switch, LID, port) triples checked
  uint64_t channels = 0;     // directed switch-switch links in some group
  uint64_t dependencies = 0;
  std::vector<std::string> problems;  // first few, naming switch, LID and port
  std::string cycle;                  // "sw[port] -> ..." when not acyclic

  bool ok() const { return valid && acyclic; }
};

// Judges AR tables on their own (no ranking, no engine): distances to each
// destination are derived from the groups, and every member of every switch
// must lead to a node exactly one hop closer; then the channel dependency
// graph with every member in use must be acyclic.
ArCheck verify_ar_groups(const Fabric& fabric, const ArTables& tables);

}  // namespace railyard::routing
