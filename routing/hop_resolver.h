// HopResolver: for one destination LID, where every switch's table sends a
// packet — the next switch (as a SwitchGraph entry), delivery, or a drop.
//
// Shared by the verifier and the congestion analyzer, which judge ANY set of
// tables (railyard's, OpenSM's dump, ibroute output): nothing here assumes
// the tables are sane. O(switches) per destination.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

class HopResolver {
 public:
  static constexpr uint32_t kDeliver = 0xFFFFFFFE;  // reaches the LID's owner
  static constexpr uint32_t kDrop = 0xFFFFFFFD;     // no path, dead port, wrong CA, ...

  HopResolver(const Fabric& fabric, const SwitchGraph& graph, const ForwardingTables& tables);

  // The next hop of switch s toward lid.
  uint32_t next(uint32_t s, Lid lid) const;
  // next() for every switch.
  void resolve(Lid lid, std::vector<uint32_t>& out) const;

  // The switch index a LID's owner is (switch LIDs) or hangs off (CA LIDs), or
  // SwitchGraph::kNone.
  uint32_t target_switch(Lid lid) const;

  const SwitchGraph& graph() const { return g_; }
  const ForwardingTables& tables() const { return t_; }

 private:
  static constexpr uint32_t kToCa = 0xFFFFFFFC;
  static constexpr uint32_t kNothing = 0xFFFFFFFB;
  const Fabric& f_;
  const SwitchGraph& g_;
  const ForwardingTables& t_;
  std::vector<uint32_t> port_entry_;  // by switch PortId: entry, kToCa or kNothing
};

}  // namespace railyard::routing
