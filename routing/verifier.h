// Verifier: judges any set of forwarding tables against a fabric.
//
//  - Reachability of every (source CA port, destination LID) pair, by one walk
//    per destination over all switches (not per pair): blackholes (no entry,
//    dead port, wrong CA) and forwarding loops, each with an example path.
//  - Hop stretch: switch hops of the route minus the shortest possible over
//    the cabled, non-down links.
//  - Credit loops: the channel dependency graph (directed link -> next
//    directed link, Dally & Seitz 1987) over all CA-to-CA routes, and again
//    with routes to and from switch LIDs added; a cycle means the tables can
//    deadlock on one VL and is printed.
//  - Balance: per switch, CA destinations per up port (up = toward switches
//    farther from the CAs), max minus min.
// Cost: O(LIDs x switches) time, O(links x radix) bits for the CDG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/channel_graph.h"
#include "routing/fabric.h"
#include "routing/lft.h"

namespace railyard::routing {

struct VerifyOptions {
  bool check_switch_lids = true;  // also walk and CDG-check switch destinations
  uint32_t max_examples = 5;
};

struct PathProblem {
  enum class Kind : uint8_t { kBlackhole, kLoop };
  Kind kind = Kind::kBlackhole;
  NodeId source;
  Lid lid;
  NodeId dest;
  std::string path;  // "node[port] -> node[port] -> ..."
};


struct VerifyReport {
  uint32_t switches = 0;
  uint32_t ca_ports = 0;
  uint32_t lids = 0;
  // CA port -> CA LID pairs (a port's own LIDs excluded).
  uint64_t pairs = 0;
  uint64_t reachable = 0;
  uint64_t blackholed = 0;
  uint64_t looped = 0;
  // Switch-LID walks: switches x switch LIDs.
  uint64_t switch_pairs = 0;
  uint64_t switch_pairs_reachable = 0;
  std::vector<PathProblem> examples;
  // Stretch over reachable CA pairs.
  uint32_t max_stretch = 0;
  double mean_stretch = 0;
  std::vector<uint64_t> stretch_histogram;  // [k] = pairs with stretch k
  double mean_hops = 0;                     // switch-to-switch hops per CA pair
  CreditLoopCheck cdg_ca;   // CA-to-CA routes
  CreditLoopCheck cdg_all;  // plus switch LIDs as sources and destinations
  // Balance.
  uint32_t worst_up_spread = 0;
  NodeId worst_up_spread_switch;
  double mean_up_spread = 0;

  bool all_reachable() const { return reachable == pairs; }
};

VerifyReport verify_tables(const Fabric& fabric, const ForwardingTables& tables, const VerifyOptions& options = {});

// The hop-by-hop path from a CA port (or switch) to a LID over the tables,
// e.g. "node001 mlx5_0[1] -> leaf g000 r0[33] -> spine s00[2] -> ... -> delivered".
std::string trace_path(const Fabric& fabric, const ForwardingTables& tables, NodeId source, Lid lid);

}  // namespace railyard::routing
