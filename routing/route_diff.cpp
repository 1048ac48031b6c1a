#include "routing/route_diff.h"

#include <algorithm>

#include "routing/switch_graph.h"

namespace railyard::routing {

std::string_view to_string(RouteEnd end) {
  switch (end) {
    case RouteEnd::kDelivered: return "delivered";
    case RouteEnd::kNoPath: return "no path";
    case RouteEnd::kDeadPort: return "dead port";
    case RouteEnd::kWrongNode: return "wrong node";
    case RouteEnd::kLoop: return "loop";
    case RouteEnd::kNotCabled: return "not cabled";
    case RouteEnd::kBadLid: return "unknown LID";
  }
  return "?";
}

namespace {

// The switch index of fabric node n in the tables, or kNone.
uint32_t table_index(const Fabric& f, NodeId n) {
  auto sw = f.switches();
  auto it = std::lower_bound(sw.begin(), sw.end(), n);
  return (it != sw.end() && *it == n) ? static_cast<uint32_t>(it - sw.begin()) : SwitchGraph::kNone;
}

}  // namespace

RouteWalk walk_route(const Fabric& f, const ForwardingTables& t, PortId source, Lid dst) {
  RouteWalk w;
  if (!source.valid() || source.value() >= f.num_ports()) {
    w.end = RouteEnd::kNotCabled;
    return w;
  }
  if (!dst.valid() || dst.value >= t.num_lids() || !f.lid_owner(dst).valid()) {
    w.end = RouteEnd::kBadLid;
    return w;
  }
  const PortId target = f.lid_owner(dst);
  const Port& sp = f.port(source);
  w.hops.push_back({sp.node, 0, sp.num.value});
  if (source == target) {
    w.hops.back().out_port = 0;
    w.end = RouteEnd::kDelivered;
    return w;
  }
  NodeId cur = sp.node;
  uint8_t in_port = 0;
  if (!f.is_switch(cur)) {
    if (!sp.remote.valid() || f.link(sp.link).state == PortState::kDown) {
      w.end = RouteEnd::kNotCabled;
      return w;
    }
    cur = f.port(sp.remote).node;
    in_port = f.port(sp.remote).num.value;
    if (!f.is_switch(cur)) {
      w.hops.push_back({cur, in_port, 0});
      w.end = sp.remote == target ? RouteEnd::kDelivered : RouteEnd::kWrongNode;
      return w;
    }
  } else {
    w.hops.clear();
  }
  const size_t limit = f.switches().size() + 2;
  for (size_t step = 0; step < limit; ++step) {
    const uint32_t s = table_index(f, cur);
    const uint8_t out = s == SwitchGraph::kNone ? ForwardingTables::kNoPath : t.get(s, dst);
    w.hops.push_back({cur, in_port, out});
    if (out == ForwardingTables::kNoPath) {
      w.end = RouteEnd::kNoPath;
      return w;
    }
    const Node& nd = f.node(cur);
    if (out == 0) {
      w.end = target == nd.first_port ? RouteEnd::kDelivered : RouteEnd::kWrongNode;
      return w;
    }
    if (out > nd.num_ports) {
      w.end = RouteEnd::kDeadPort;
      return w;
    }
    const Port& p = f.port(PortId(nd.first_port.value() + out));
    if (!p.remote.valid() || f.link(p.link).state == PortState::kDown) {
      w.end = RouteEnd::kDeadPort;
      return w;
    }
    cur = f.port(p.remote).node;
    in_port = f.port(p.remote).num.value;
    if (!f.is_switch(cur)) {
      w.hops.push_back({cur, in_port, 0});
      w.end = p.remote == target ? RouteEnd::kDelivered : RouteEnd::kWrongNode;
      return w;
    }
  }
  w.end = RouteEnd::kLoop;
  return w;
}

RouteDiff diff_routes(const Fabric& f, const ForwardingTables& before, const ForwardingTables& after) {
  RouteDiff d;
  d.blocks_changed = ForwardingTables::changed_blocks(before, after);
  const uint32_t n = std::min(before.num_switches(), after.num_switches());
  const uint32_t lids = std::min(before.num_lids(), after.num_lids());
  // Destinations whose column changed somewhere: only their pairs can have
  // changed paths (an incremental route changes a few columns of many).
  std::vector<uint8_t> column_changed(lids, 0);
  for (uint32_t s = 0; s < n; ++s) {
    auto a = before.row(s);
    auto b = after.row(s);
    uint64_t changed = 0;
    for (uint32_t l = 0; l < lids; ++l) {
      const bool differs = a[l] != b[l];
      changed += differs;
      column_changed[l] |= static_cast<uint8_t>(differs);
    }
    d.entries_changed += changed;
    d.switches_touched += changed != 0;
  }
  if (d.entries_changed == 0) return d;

  // Per switch: the next switch along each port (kNone for CAs / dead
  // ports), from a flat array (port_base[s] + port), and how many CA ports
  // hang off it.
  SwitchGraph g(f);
  std::vector<uint32_t> cas_below(n, 0);
  for (uint32_t s = 0; s < n && s < g.num_switches(); ++s) cas_below[s] = g.num_cas(s);
  std::vector<uint32_t> port_base(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) port_base[s + 1] = port_base[s] + f.node(f.switches()[s]).num_ports + 1u;
  std::vector<uint32_t> next_of(port_base[n], kNone);
  for (uint32_t s = 0; s < n; ++s) {
    const Node& nd = f.node(f.switches()[s]);
    for (uint32_t port = 1; port <= nd.num_ports; ++port) {
      const Port& p = f.port(PortId(nd.first_port.value() + port));
      if (p.remote.valid()) next_of[port_base[s] + port] = table_index(f, f.port(p.remote).node);
    }
  }
  auto next_switch = [&](uint32_t s, uint8_t port) -> uint32_t {
    if (port == 0 || port == ForwardingTables::kNoPath) return kNone;
    if (port >= port_base[s + 1] - port_base[s]) return kNone;
    return next_of[port_base[s] + port];
  };

  // 0 = unknown, 1 = visiting, 2 = clean, 3 = tainted.
  std::vector<uint8_t> state(n);
  std::vector<uint32_t> stack;
  for (NodeId ca : f.cas()) {
    const Node& nd = f.node(ca);
    for (uint8_t pn = 1; pn <= nd.num_ports; ++pn) {
      const Port& dp = f.port(PortId(nd.first_port.value() + pn));
      if (!dp.lid.valid() || dp.lid.value >= lids || !column_changed[dp.lid.value]) continue;
      const Lid dst = dp.lid;
      std::fill(state.begin(), state.end(), 0);
      uint64_t tainted_sources = 0;
      for (uint32_t s0 = 0; s0 < n; ++s0) {
        if (state[s0] != 0) continue;
        stack.assign(1, s0);
        while (!stack.empty()) {
          const uint32_t s = stack.back();
          if (state[s] == 0) {
            if (before.get(s, dst) != after.get(s, dst)) {
              state[s] = 3;
              stack.pop_back();
              continue;
            }
            const uint32_t nx = next_switch(s, before.get(s, dst));
            if (nx == SwitchGraph::kNone || nx >= n) {
              state[s] = 2;
              stack.pop_back();
              continue;
            }
            state[s] = 1;
            if (state[nx] == 0) {
              stack.push_back(nx);
              continue;
            }
          }
          // Children resolved (or a loop: visiting counts as clean).
          const uint32_t nx = next_switch(s, before.get(s, dst));
          state[s] = (nx < n && state[nx] == 3) ? 3 : 2;
          stack.pop_back();
        }
      }
      for (uint32_t s = 0; s < n; ++s) {
        if (state[s] == 3) tainted_sources += cas_below[s];
      }
      // The destination is no source of its own pairs.
      if (dp.remote.valid()) {
        const uint32_t leaf = table_index(f, f.port(dp.remote).node);
        if (leaf < n && state[leaf] == 3 && tainted_sources > 0) --tainted_sources;
      }
      d.pairs_rerouted += tainted_sources;
    }
  }
  return d;
}

}  // namespace railyard::routing
