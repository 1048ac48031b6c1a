#include "routing/lid_assignment.h"

#include <cassert>
#include <vector>

namespace railyard::routing {

Result<Fabric> assign_lids(const Fabric& fabric) {
  // The ports that need a LID, in the promised order.
  std::vector<PortId> wanted;
  for (NodeId sw : fabric.switches()) {
    PortId p = fabric.node(sw).first_port;
    if (!fabric.port(p).lid.valid()) wanted.push_back(p);
  }
  for (NodeId ca : fabric.cas()) {
    const Node& nd = fabric.node(ca);
    for (uint32_t n = 1; n <= nd.num_ports; ++n) {
      PortId p(nd.first_port.value() + n);
      if (fabric.port(p).remote.valid() && !fabric.port(p).lid.valid()) wanted.push_back(p);
    }
  }
  if (wanted.empty()) return fabric;

  FabricBuilder builder(fabric);
  uint32_t next = 1;
  for (PortId p : wanted) {
    // lid_owner() covers the existing LIDs with their LMC ranges.
    while (next <= Lid::kMaxUnicast && fabric.lid_owner(Lid{static_cast<uint16_t>(next)}).valid()) ++next;
    if (next > Lid::kMaxUnicast) {
      return Error{"the unicast LID space (1..0xBFFF) is exhausted: " + std::to_string(wanted.size()) +
                   " ports need a LID"};
    }
    const Port& port = fabric.port(p);
    Status st = builder.set_port(port.node, port.num, Guid{}, Lid{static_cast<uint16_t>(next)}, 0);
    // set_port only refuses ports beyond the node's count or non-unicast LIDs.
    assert(st.ok());
    (void)st;
    ++next;
  }
  return builder.build();
}

}  // namespace railyard::routing
