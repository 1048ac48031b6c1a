#include "routing/switch_graph.h"

#include <algorithm>

namespace railyard::routing {

bool link_usable(const Fabric& f, std::span<const uint8_t> excluded, LinkId l) {
  if (!l.valid()) return false;
  if (!excluded.empty() && excluded[l.value()]) return false;
  return f.link(l).state != PortState::kDown;
}

SwitchGraph::SwitchGraph(const Fabric& fabric, std::span<const uint8_t> excluded)
    : fabric_(&fabric), excluded_(excluded), switches_(fabric.switches()) {
  const uint32_t n = static_cast<uint32_t>(switches_.size());
  sw_of_node_.assign(fabric.num_nodes(), kNone);
  for (uint32_t i = 0; i < n; ++i) sw_of_node_[switches_[i].value()] = i;

  begin_.assign(n + 1, 0);
  ca_count_.assign(n, 0);
  // Count, then fill: entries of a switch are in port order.
  for (uint32_t i = 0; i < n; ++i) {
    const Node& nd = fabric.node(switches_[i]);
    uint32_t count = 0;
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      const Port& port = fabric.port(PortId(nd.first_port.value() + p));
      if (!link_usable(fabric, excluded, port.link)) continue;
      NodeId r = fabric.port(port.remote).node;
      if (fabric.is_switch(r)) {
        if (r != switches_[i]) ++count;  // a cable looping back to the same switch carries nothing
      } else {
        ++ca_count_[i];
      }
    }
    begin_[i + 1] = begin_[i] + count;
  }
  const uint32_t m = begin_[n];
  remote_.resize(m);
  port_.resize(m);
  rev_.assign(m, kNone);
  link_.resize(m);
  std::vector<uint32_t> entry_of_port(fabric.num_ports(), kNone);
  for (uint32_t i = 0; i < n; ++i) {
    const Node& nd = fabric.node(switches_[i]);
    uint32_t e = begin_[i];
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid(nd.first_port.value() + p);
      const Port& port = fabric.port(pid);
      if (!link_usable(fabric, excluded, port.link)) continue;
      NodeId r = fabric.port(port.remote).node;
      if (!fabric.is_switch(r) || r == switches_[i]) continue;
      remote_[e] = sw_of_node_[r.value()];
      port_[e] = static_cast<uint8_t>(p);
      link_[e] = port.link;
      entry_of_port[pid.value()] = e;
      ++e;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t e = begin_[i]; e < begin_[i + 1]; ++e) {
      const Node& nd = fabric.node(switches_[i]);
      PortId pid(nd.first_port.value() + port_[e]);
      rev_[e] = entry_of_port[fabric.port(pid).remote.value()];
    }
  }
}

void SwitchGraph::derive(const SwitchGraph& like, const Fabric& fabric, std::span<const LinkId> changed) {
  fabric_ = &fabric;
  excluded_ = {};
  switches_ = fabric.switches();
  sw_of_node_.assign(like.sw_of_node_.begin(), like.sw_of_node_.end());
  ca_count_.assign(like.ca_count_.begin(), like.ca_count_.end());
  const uint32_t n = static_cast<uint32_t>(switches_.size());
  // Per switch, the ports whose entry goes (their link no longer usable) or
  // comes (usable now, not in like).
  std::vector<std::pair<uint32_t, uint8_t>> gone, come;  // (switch, port)
  std::vector<int32_t> delta(n, 0);
  auto in_like = [&](uint32_t s, uint8_t p) {
    for (uint32_t e = like.begin(s); e < like.end(s); ++e) {
      if (like.port(e) == p) return true;
    }
    return false;
  };
  for (LinkId l : changed) {
    const Link& link = fabric.link(l);
    for (PortId end : {link.a, link.b}) {
      const Port& port = fabric.port(end);
      const uint32_t s = sw_of_node_[port.node.value()];
      const NodeId far = fabric.port(port.remote).node;
      if (s == kNone || !fabric.is_switch(far) || far == port.node) continue;
      const uint8_t p = static_cast<uint8_t>(port.num.value);
      const bool usable = link_usable(fabric, {}, l), had = in_like(s, p);
      if (usable == had) continue;
      (usable ? come : gone).emplace_back(s, p);
      delta[s] += usable ? 1 : -1;
    }
  }
  std::sort(gone.begin(), gone.end());
  std::sort(come.begin(), come.end());
  begin_.assign(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) begin_[s + 1] = begin_[s] + (like.end(s) - like.begin(s)) + delta[s];
  const uint32_t m = begin_[n];
  // Every element of these is written below (an entry gone has no move,
  // one that came no origin).
  remote_.resize(m);
  port_.resize(m);
  link_.resize(m);
  rev_.resize(m);
  std::vector<uint32_t>& moved = moved_;    // like's entry -> this graph's
  std::vector<uint32_t>& origin = origin_;  // and back
  moved.resize(like.num_entries());
  origin.resize(m);
  size_t gi = 0, ci = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t e = begin_[s];
    const bool touched = (gi < gone.size() && gone[gi].first == s) || (ci < come.size() && come[ci].first == s);
    if (!touched) {  // the same entries, shifted
      const uint32_t o0 = like.begin(s), count = like.end(s) - o0;
      std::copy_n(like.remote_.begin() + o0, count, remote_.begin() + e);
      std::copy_n(like.port_.begin() + o0, count, port_.begin() + e);
      std::copy_n(like.link_.begin() + o0, count, link_.begin() + e);
      for (uint32_t k = 0; k < count; ++k) {
        moved[o0 + k] = e + k;
        origin[e + k] = o0 + k;
      }
      continue;
    }
    // Merged in port order: like's entries but those gone, and those come.
    const Node& nd = fabric.node(switches_[s]);
    uint32_t o = like.begin(s);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      if (gi < gone.size() && gone[gi] == std::pair<uint32_t, uint8_t>{s, static_cast<uint8_t>(p)}) {
        ++gi;
        moved[o++] = kNone;  // like's entry of this port
        continue;
      }
      if (ci < come.size() && come[ci] == std::pair<uint32_t, uint8_t>{s, static_cast<uint8_t>(p)}) {
        ++ci;
        const Port& port = fabric.port(PortId(nd.first_port.value() + p));
        remote_[e] = sw_of_node_[fabric.port(port.remote).node.value()];
        port_[e] = static_cast<uint8_t>(p);
        link_[e] = port.link;
        origin[e++] = kNone;
        continue;
      }
      if (o < like.end(s) && like.port_[o] == p) {
        remote_[e] = like.remote_[o];
        port_[e] = like.port_[o];
        link_[e] = like.link_[o];
        moved[o] = e;
        origin[e++] = o;
        ++o;
      }
    }
  }
  // The same cable seen from the far end: like's, moved; for an entry that
  // came, found among the far switch's own few.
  for (uint32_t e = 0; e < m; ++e) {
    const uint32_t o = origin[e];
    if (o != kNone) {  // (its far end's entry stays too: the same cable)
      rev_[e] = moved[like.rev_[o]];
      continue;
    }
    rev_[e] = kNone;
    for (uint32_t f = begin_[remote_[e]]; f < begin_[remote_[e] + 1]; ++f) {
      if (link_[f] == link_[e] && f != e) {
        rev_[e] = f;
        break;
      }
    }
  }
}

uint32_t SwitchGraph::attach_switch(PortId ca_port) const {
  const Port& p = fabric_->port(ca_port);
  if (!link_usable(*fabric_, excluded_, p.link)) return kNone;
  NodeId r = fabric_->port(p.remote).node;
  return fabric_->is_switch(r) ? sw_of_node_[r.value()] : kNone;
}

uint8_t SwitchGraph::attach_port(PortId ca_port) const {
  const Port& p = fabric_->port(ca_port);
  return p.remote.valid() ? fabric_->port(p.remote).num.value : 0;
}

std::vector<uint32_t> entries_by_port(const SwitchGraph& g) {
  std::vector<uint32_t> out(static_cast<size_t>(g.num_switches()) * 256, SwitchGraph::kNone);
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) out[static_cast<size_t>(s) * 256 + g.port(e)] = e;
  }
  return out;
}

std::vector<uint32_t> switch_pieces(const SwitchGraph& g) {
  const uint32_t n = g.num_switches();
  std::vector<uint32_t> piece(n, SwitchGraph::kNone), queue;
  for (uint32_t s0 = 0, pieces = 0; s0 < n; ++s0) {
    if (piece[s0] != SwitchGraph::kNone) continue;
    piece[s0] = pieces;
    queue.assign(1, s0);
    for (size_t h = 0; h < queue.size(); ++h) {
      for (uint32_t e = g.begin(queue[h]); e < g.end(queue[h]); ++e) {
        if (piece[g.remote(e)] == SwitchGraph::kNone) {
          piece[g.remote(e)] = pieces;
          queue.push_back(g.remote(e));
        }
      }
    }
    ++pieces;
  }
  return piece;
}

}  // namespace railyard::routing
