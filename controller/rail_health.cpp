#include "controller/rail_health.h"

#include <algorithm>

namespace railyard::controller {

std::string_view to_string(RailHealth h) {
  switch (h) {
    case RailHealth::kHealthy: return "healthy";
    case RailHealth::kDegraded: return "degraded";
    case RailHealth::kIsolated: return "isolated";
    case RailHealth::kDrained: return "drained";
    case RailHealth::kDown: return "down";
  }
  return "healthy";
}

bool broken(RailHealth h) {
  return h == RailHealth::kDown || h == RailHealth::kDrained || h == RailHealth::kIsolated;
}

std::vector<const RailState*> HostRails::broken_rails() const {
  std::vector<const RailState*> out;
  for (const RailState& r : rails) {
    if (broken(r.health)) out.push_back(&r);
  }
  return out;
}

std::string broken_rails_text(const HostRails& host) {
  std::string out;
  for (const RailState* r : host.broken_rails()) {
    if (!out.empty()) out += ", ";
    out += "rail " + std::to_string(r->rail) + " " + std::string(to_string(r->health));
  }
  return out;
}

const HostRails* RailHealthMap::find(std::string_view name) const {
  for (const HostRails& h : hosts) {
    if (h.host == name) return &h;
  }
  return nullptr;
}

RailHealthMap rail_health(const FabricView& v, const std::vector<LinkStatus>& links) {
  const routing::Fabric& f = v.fabric;
  auto level_of = [&](NodeId n) { return n.value() < v.rails.level.size() ? v.rails.level[n.value()] : routing::kNoLevel; };
  std::vector<uint8_t> drained(f.num_links(), 0);
  for (const LinkStatus& l : links) {
    if (l.link.valid() && l.link.value() < drained.size() && !l.drains.empty()) drained[l.link.value()] = 1;
  }
  // Per leaf: healthy uplinks (to a higher level, up, not drained) / all.
  std::vector<uint32_t> up_ok(f.num_nodes(), 0), up_all(f.num_nodes(), 0);
  for (NodeId s : f.switches()) {
    const routing::Node& nd = f.node(s);
    for (uint8_t p = 1; p <= nd.num_ports; ++p) {
      const routing::Port& port = f.port(f.port_id(s, PortNum{p}));
      if (!port.remote.valid()) continue;
      const NodeId r = f.port(port.remote).node;
      if (!f.is_switch(r) || level_of(r) <= level_of(s)) continue;
      ++up_all[s.value()];
      if (f.link(port.link).state != routing::PortState::kDown && !drained[port.link.value()]) ++up_ok[s.value()];
    }
  }
  RailHealthMap out;
  out.hosts.resize(v.rails.hosts.size());
  for (size_t h = 0; h < v.rails.hosts.size(); ++h) out.hosts[h].host = v.rails.hosts[h];
  for (NodeId ca : f.cas()) {
    const routing::Port& port = f.port(f.primary_port(ca));
    RailState r;
    r.rail = v.rails.rail[ca.value()];
    r.ca = ca;
    r.leaf = v.rails.leaf[ca.value()];
    const bool cabled = port.remote.valid();
    r.leaf_port = cabled ? f.port(port.remote).num.value : 0;
    if (r.leaf.valid()) {
      r.uplinks_healthy = up_ok[r.leaf.value()];
      r.uplinks_total = up_all[r.leaf.value()];
    }
    if (!cabled || f.link(port.link).state == routing::PortState::kDown) {
      r.health = RailHealth::kDown;
    } else if (drained[port.link.value()]) {
      r.health = RailHealth::kDrained;
    } else if (r.uplinks_total > 0 && r.uplinks_healthy == 0) {
      r.health = RailHealth::kIsolated;
    } else if (r.uplinks_healthy < r.uplinks_total) {
      r.health = RailHealth::kDegraded;
    }
    const uint32_t h = v.rails.host[ca.value()];
    if (h == routing::kNoHost || h >= out.hosts.size()) {
      out.without_host.push_back(r);
      continue;
    }
    out.hosts[h].healthy += r.health == RailHealth::kHealthy;
    out.hosts[h].rails.push_back(r);
  }
  for (HostRails& h : out.hosts) {
    std::stable_sort(h.rails.begin(), h.rails.end(), [](const RailState& a, const RailState& b) { return a.rail < b.rail; });
  }
  return out;
}

}  // namespace railyard::controller
