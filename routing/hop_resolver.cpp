#include "routing/hop_resolver.h"

namespace railyard::routing {

HopResolver::HopResolver(const Fabric& fabric, const SwitchGraph& graph, const ForwardingTables& tables)
    : f_(fabric), g_(graph), t_(tables) {
  port_entry_.assign(fabric.num_ports(), kNothing);
  for (uint32_t s = 0; s < g_.num_switches(); ++s) {
    const Node& nd = f_.node(g_.node(s));
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) port_entry_[nd.first_port.value() + g_.port(e)] = e;
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid(nd.first_port.value() + p);
      const Port& port = f_.port(pid);
      if (port_entry_[pid.value()] != kNothing || !port.remote.valid()) continue;
      if (f_.link(port.link).state == PortState::kDown) continue;
      if (!f_.is_switch(f_.port(port.remote).node)) port_entry_[pid.value()] = kToCa;
    }
  }
}

uint32_t HopResolver::next(uint32_t s, Lid lid) const {
  if (s >= t_.num_switches() || lid.value >= t_.num_lids()) return kDrop;
  uint8_t p = t_.get(s, lid);
  const Node& nd = f_.node(g_.node(s));
  PortId owner = f_.lid_owner(lid);
  if (p == 0) return (owner.valid() && owner == nd.first_port) ? kDeliver : kDrop;
  if (p > nd.num_ports) return kDrop;
  uint32_t pid = nd.first_port.value() + p;
  uint32_t pe = port_entry_[pid];
  if (pe == kNothing) return kDrop;
  if (pe == kToCa) return (owner.valid() && f_.port(PortId(pid)).remote == owner) ? kDeliver : kDrop;
  return pe;
}

void HopResolver::resolve(Lid lid, std::vector<uint32_t>& out) const {
  out.resize(g_.num_switches());
  for (uint32_t s = 0; s < g_.num_switches(); ++s) out[s] = next(s, lid);
}

uint32_t HopResolver::target_switch(Lid lid) const {
  PortId owner = f_.lid_owner(lid);
  if (!owner.valid()) return SwitchGraph::kNone;
  NodeId n = f_.port(owner).node;
  if (f_.is_switch(n)) return g_.switch_index(n);
  return g_.attach_switch(owner);
}

}  // namespace railyard::routing
