#include "routing/routing_plan.h"

#include <algorithm>
#include <numeric>

#include "routing/natural_order.h"
#include "routing/node_lookup.h"

namespace railyard::routing {

std::vector<uint64_t> leaf_order(const Fabric& fabric, const RailMap& rails) {
  // Rank hosts in natural name order.
  std::vector<uint32_t> order(rails.hosts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return natural_less(rails.hosts[a], rails.hosts[b]); });
  std::vector<uint32_t> host_rank(rails.hosts.size());
  for (uint32_t i = 0; i < order.size(); ++i) host_rank[order[i]] = i;

  auto switches = fabric.switches();
  std::vector<uint32_t> first_host(fabric.num_nodes(), UINT32_MAX);
  for (NodeId ca : fabric.cas()) {
    NodeId leaf = ca.value() < rails.leaf.size() ? rails.leaf[ca.value()] : NodeId();
    uint32_t h = ca.value() < rails.host.size() ? rails.host[ca.value()] : kNoHost;
    if (!leaf.valid() || h == kNoHost) continue;
    first_host[leaf.value()] = std::min(first_host[leaf.value()], host_rank[h]);
  }
  // Rank switches by (rail, first host, GUID); the key is the rank itself.
  std::vector<uint32_t> idx(switches.size());
  std::iota(idx.begin(), idx.end(), 0u);
  auto rail_of = [&](NodeId n) -> uint64_t {
    int32_t r = n.value() < rails.rail.size() ? rails.rail[n.value()] : kNoRail;
    return r < 0 ? UINT32_MAX : static_cast<uint64_t>(r);
  };
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    NodeId na = switches[a], nb = switches[b];
    uint64_t ra = rail_of(na), rb = rail_of(nb);
    if (ra != rb) return ra < rb;
    uint32_t ha = first_host[na.value()], hb = first_host[nb.value()];
    if (ha != hb) return ha < hb;
    return fabric.node(na).guid < fabric.node(nb).guid;
  });
  std::vector<uint64_t> key(switches.size());
  for (uint32_t i = 0; i < idx.size(); ++i) key[idx[i]] = i;
  return key;
}

Result<RoutingOptions> plan_routing(const Fabric& fabric, const policies::Policy& policy, const RailMap& rails) {
  RoutingOptions out;
  out.leaf_order_key = leaf_order(fabric, rails);
  // A leaf's ring is its rail; switches without one (spines, rail-less leaves) share one more.
  for (NodeId s : fabric.switches()) {
    int32_t r = s.value() < rails.rail.size() ? rails.rail[s.value()] : kNoRail;
    out.leaf_ring.push_back(r < 0 ? UINT32_MAX : static_cast<uint32_t>(r));
  }
  const HostGrid grid = host_grid(fabric, rails);
  out.shift_rails = grid.rails;
  out.shift_grid.reserve(grid.port.size());
  for (PortId p : grid.port) out.shift_grid.push_back(p.valid() ? fabric.port(p).lid : Lid{});
  const auto& d = policy.drains;
  if (!d.empty()) {
    out.drained.assign(fabric.num_links(), 0);
    auto drain_port = [&](const policies::PortRef& ref, const char* what, size_t i) -> Status {
      auto port = resolve_port(fabric, ref);
      if (!port) return Error{std::string("drains.") + what + "[" + std::to_string(i) + "]: " + port.error().message};
      LinkId l = fabric.port(*port).link;
      if (l.valid()) out.drained[l.value()] = 1;  // an uncabled port drains nothing
      return {};
    };
    for (size_t i = 0; i < d.links.size(); ++i) {
      if (auto st = drain_port(d.links[i], "links", i); !st) return st.error();
    }
    for (size_t i = 0; i < d.ports.size(); ++i) {
      if (auto st = drain_port(d.ports[i], "ports", i); !st) return st.error();
    }
    for (size_t i = 0; i < d.switches.size(); ++i) {
      auto n = find_node(fabric, d.switches[i]);
      if (!n) return Error{"drains.switches[" + std::to_string(i) + "]: " + n.error().message};
      if (!fabric.is_switch(*n)) {
        return Error{"drains.switches[" + std::to_string(i) + "]: '" + d.switches[i] + "' is not a switch"};
      }
      const Node& nd = fabric.node(*n);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        LinkId l = fabric.port(PortId(nd.first_port.value() + p)).link;
        if (l.valid()) out.drained[l.value()] = 1;
      }
    }
  }
  for (size_t i = 0; i < policy.roots.size(); ++i) {
    auto n = find_node(fabric, policy.roots[i]);
    if (!n) return Error{"roots[" + std::to_string(i) + "]: " + n.error().message};
    if (!fabric.is_switch(*n)) return Error{"roots[" + std::to_string(i) + "]: '" + policy.roots[i] + "' is not a switch"};
    out.roots.push_back(*n);
  }
  return out;
}

}  // namespace railyard::routing
