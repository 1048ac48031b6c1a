// ChannelDependencyGraph: which directed switch-to-switch channel a route may
// wait on after which (Dally & Seitz 1987). Acyclic <=> the routes cannot
// deadlock on one VL. Shared by the unicast verifier and the AR verifier.
//
// Channels are SwitchGraph entries; the dependencies of channel e1 (s -> r)
// are one bit per entry of r, so the graph is O(links x radix) bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

struct CreditLoopCheck {
  bool acyclic = true;
  uint64_t channels = 0;      // directed switch-switch links in use
  uint64_t dependencies = 0;  // distinct channel -> channel dependencies
  std::string cycle;          // "sw[port] -> sw[port] -> ..." when not acyclic
};

class ChannelDependencyGraph {
 public:
  explicit ChannelDependencyGraph(const SwitchGraph& g);
  // Channel e is used by some route.
  void use(uint32_t e) { used_[e] = 1; }
  // A route goes over e1 and then e2 (e2 must leave the switch e1 enters).
  void add(uint32_t e1, uint32_t e2) {
    used_[e1] = used_[e2] = 1;
    uint64_t bit = offset_[e1] + (e2 - g_.begin(g_.remote(e1)));
    bits_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  // Counts, and the first cycle found by an iterative DFS.
  CreditLoopCheck check(const Fabric& f) const;

 private:
  std::string describe(const Fabric& f, uint32_t e) const;
  const SwitchGraph& g_;
  std::vector<uint64_t> offset_;
  std::vector<uint64_t> bits_;
  std::vector<uint8_t> used_;
};

}  // namespace railyard::routing
