#include "routing/congestion.h"

#include <algorithm>
#include <random>

#include "routing/hop_resolver.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

namespace {


std::string describe_channel(const Fabric& f, const SwitchGraph& g, uint32_t e) {
  uint32_t s = g.remote(g.rev(e));
  return std::string(f.desc(g.node(s))) + "[" + std::to_string(g.port(e)) + "] -> " +
         std::string(f.desc(g.node(g.remote(e))));
}

class LoadCounter {
 public:
  LoadCounter(const Fabric& f, const ForwardingTables& t) : f_(f), g_(f), hr_(f, g_, t) {
    load_.assign(g_.num_entries(), 0);
    ca_in_.assign(f.num_ports(), 0);
    ca_out_.assign(f.num_ports(), 0);
    uplinks_.assign(g_.num_switches(), 0);
    for (uint32_t s = 0; s < g_.num_switches(); ++s) uplinks_[s] = g_.end(s) - g_.begin(s);
    leaf_out_.assign(g_.num_switches(), 0);
    leaf_in_.assign(g_.num_switches(), 0);
  }

  const SwitchGraph& graph() const { return g_; }
  const HopResolver& resolver() const { return hr_; }

  PatternLoad run(const std::string& name, const std::vector<Flow>& flows) {
    PatternLoad out;
    out.name = name;
    out.instances = 1;
    out.flows = flows.size();
    for (const Flow& fl : flows) {
      if (!walk(fl.src, fl.dst)) ++out.unrouted;
      uint32_t a = g_.attach_switch(fl.src), b = g_.attach_switch(fl.dst);
      if (a != b && a != kNone && b != kNone) {
        ++leaf_out_[a];
        ++leaf_in_[b];
        bound_touched_.push_back(a);
        bound_touched_.push_back(b);
      }
    }
    uint64_t mx = 0, sum = 0;
    for (uint32_t e : touched_) {
      if (load_[e] > mx) out.worst_link = describe_channel(f_, g_, e);
      mx = std::max<uint64_t>(mx, load_[e]);
      sum += load_[e];
      load_[e] = 0;
    }
    for (uint32_t p : ca_touched_) {
      if (std::max(ca_in_[p], ca_out_[p]) > mx) out.worst_link = std::string(f_.desc(f_.port(PortId(p)).node)) + " (CA link)";
      mx = std::max<uint64_t>(mx, std::max(ca_in_[p], ca_out_[p]));
      ca_in_[p] = ca_out_[p] = 0;
    }
    uint64_t bound = 0;
    for (uint32_t s : bound_touched_) {
      if (uplinks_[s]) {
        bound = std::max<uint64_t>(bound, (leaf_out_[s] + uplinks_[s] - 1) / uplinks_[s]);
        bound = std::max<uint64_t>(bound, (leaf_in_[s] + uplinks_[s] - 1) / uplinks_[s]);
      }
    }
    for (uint32_t s : bound_touched_) leaf_out_[s] = leaf_in_[s] = 0;
    if (!flows.empty()) bound = std::max<uint64_t>(bound, 1);
    touched_.clear();
    ca_touched_.clear();
    bound_touched_.clear();
    out.max_load = mx;
    out.mean_max_load = static_cast<double>(mx);
    out.mean_link_load = g_.num_entries() ? static_cast<double>(sum) / g_.num_entries() : 0.0;
    out.lower_bound = bound;
    return out;
  }

 private:
  bool walk(PortId src, PortId dst) {
    uint32_t s = g_.attach_switch(src);
    if (s == kNone) return false;
    if (ca_in_[src.value()]++ == 0 && ca_out_[src.value()] == 0) ca_touched_.push_back(src.value());
    Lid lid = f_.port(dst).lid;
    for (uint32_t hop = 0; hop <= g_.num_switches(); ++hop) {
      uint32_t e = hr_.next(s, lid);
      if (e == HopResolver::kDeliver) {
        if (ca_out_[dst.value()]++ == 0 && ca_in_[dst.value()] == 0) ca_touched_.push_back(dst.value());
        return true;
      }
      if (e == HopResolver::kDrop) return false;
      if (load_[e]++ == 0) touched_.push_back(e);
      s = g_.remote(e);
    }
    return false;
  }

  const Fabric& f_;
  SwitchGraph g_;
  HopResolver hr_;
  std::vector<uint32_t> load_;
  std::vector<uint32_t> ca_in_, ca_out_;
  std::vector<uint32_t> touched_, ca_touched_, bound_touched_;
  std::vector<uint32_t> uplinks_;
  std::vector<uint64_t> leaf_out_, leaf_in_;
};

std::vector<Flow> grid_shift(const HostGrid& g, uint32_t k, bool cross) {
  std::vector<Flow> flows;
  if (g.hosts == 0 || g.rails == 0) return flows;
  flows.reserve(static_cast<size_t>(g.hosts) * g.rails);
  for (uint32_t i = 0; i < g.hosts; ++i) {
    uint32_t j = (i + k) % g.hosts;
    for (uint32_t r = 0; r < g.rails; ++r) {
      uint32_t r2 = cross ? (r + 1) % g.rails : r;
      PortId a = g.port[static_cast<size_t>(i) * g.rails + r];
      PortId b = g.port[static_cast<size_t>(j) * g.rails + r2];
      if (a.valid() && b.valid() && a != b) flows.push_back({a, b});
    }
  }
  return flows;
}

void merge(PatternLoad& acc, const PatternLoad& one, int32_t instance) {
  if (one.max_load > acc.max_load || acc.worst_instance < 0) {
    if (one.max_load >= acc.max_load) {
      acc.max_load = one.max_load;
      acc.worst_instance = instance;
      acc.worst_link = one.worst_link;
    }
  }
  acc.flows += one.flows;
  acc.unrouted += one.unrouted;
  acc.lower_bound = std::max(acc.lower_bound, one.lower_bound);
  acc.mean_max_load += static_cast<double>(one.max_load);
  acc.mean_link_load += one.mean_link_load;
  ++acc.instances;
}

void finish(PatternLoad& acc) {
  if (acc.instances) {
    acc.mean_max_load /= acc.instances;
    acc.mean_link_load /= acc.instances;
  }
}

PatternLoad shifts(LoadCounter& lc, const HostGrid& grid, bool cross, uint32_t max_shifts) {
  PatternLoad acc;
  acc.name = cross ? "cross-rail shifts" : "rail-aligned shifts";
  if (grid.hosts < 2) return acc;
  uint32_t total = grid.hosts - 1;
  uint32_t count = (max_shifts == 0 || max_shifts >= total) ? total : max_shifts;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t k = 1 + static_cast<uint32_t>(static_cast<uint64_t>(i) * total / count);
    merge(acc, lc.run(acc.name, grid_shift(grid, k, cross)), static_cast<int32_t>(k));
  }
  finish(acc);
  return acc;
}

// The CA ports every all-to-all flow starts from, and how many hang off each
// switch.
struct AllToAllSources {
  std::vector<uint32_t> per_switch;
  std::vector<PortId> ports;
};

AllToAllSources all_to_all_sources(const Fabric& f, const SwitchGraph& g) {
  AllToAllSources s;
  s.per_switch.assign(g.num_switches(), 0);
  for (NodeId ca : f.cas()) {
    const Node& nd = f.node(ca);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid(nd.first_port.value() + p);
      if (!f.port(pid).lid.valid()) continue;
      uint32_t sw = g.attach_switch(pid);
      if (sw == kNone) continue;
      s.ports.push_back(pid);
      ++s.per_switch[sw];
    }
  }
  return s;
}

// All-to-all flows per switch-graph entry (directed channel), from one
// in-tree per destination; *flows and *unrouted count the flows.
std::vector<uint64_t> all_to_all_entry_loads(const Fabric& f, const SwitchGraph& g, const HopResolver& hr,
                                             const AllToAllSources& src, uint64_t* flows, uint64_t* unrouted) {
  std::vector<uint64_t> load(g.num_entries(), 0);
  std::vector<uint32_t> next;
  for (PortId dst : src.ports) {
    Lid lid = f.port(dst).lid;
    uint32_t t = g.attach_switch(dst);
    hr.resolve(lid, next);
    for (uint32_t s0 = 0; s0 < g.num_switches(); ++s0) {
      uint64_t k = src.per_switch[s0] - (s0 == t ? 1 : 0);
      if (!k) continue;
      *flows += k;
      uint32_t s = s0;
      bool arrived = false;
      for (uint32_t hop = 0; hop <= g.num_switches(); ++hop) {
        uint32_t e = next[s];
        if (e == HopResolver::kDeliver) { arrived = true; break; }
        if (e == HopResolver::kDrop) break;
        load[e] += k;
        s = g.remote(e);
      }
      if (!arrived) *unrouted += k;
    }
  }
  return load;
}

PatternLoad all_to_all(const Fabric& f, LoadCounter& lc) {
  const SwitchGraph& g = lc.graph();
  PatternLoad out;
  out.name = "all-to-all";
  out.instances = 1;
  const AllToAllSources src = all_to_all_sources(f, g);
  const std::vector<uint32_t>& src_count = src.per_switch;
  const uint64_t n = src.ports.size();
  const std::vector<uint64_t> load = all_to_all_entry_loads(f, g, lc.resolver(), src, &out.flows, &out.unrouted);
  uint64_t sum = 0;
  uint32_t worst = kNone;
  for (uint32_t e = 0; e < load.size(); ++e) {
    if (worst == kNone || load[e] > load[worst]) worst = e;
    sum += load[e];
  }
  if (worst != kNone) {
    out.max_load = load[worst];
    out.worst_link = describe_channel(f, g, worst);
  }
  // Every CA link carries n - 1 flows each way.
  if (n > 1) out.max_load = std::max(out.max_load, n - 1);
  out.mean_max_load = static_cast<double>(out.max_load);
  out.mean_link_load = g.num_entries() ? static_cast<double>(sum) / g.num_entries() : 0.0;
  uint64_t bound = n > 1 ? n - 1 : 0;
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    uint64_t links = g.end(s) - g.begin(s);
    if (!src_count[s] || !links) continue;
    uint64_t cross = uint64_t{src_count[s]} * (n - src_count[s]);
    bound = std::max(bound, (cross + links - 1) / links);
  }
  out.lower_bound = bound;
  return out;
}

}  // namespace

std::vector<LinkLoad> all_to_all_link_loads(const Fabric& fabric, const ForwardingTables& tables) {
  const SwitchGraph g(fabric);
  const HopResolver hr(fabric, g, tables);
  uint64_t flows = 0, unrouted = 0;
  const std::vector<uint64_t> load = all_to_all_entry_loads(fabric, g, hr, all_to_all_sources(fabric, g), &flows, &unrouted);
  std::vector<LinkLoad> out(fabric.num_links());
  for (uint32_t e = 0; e < g.num_entries(); ++e) {
    const LinkId l = g.link(e);
    const PortId from = fabric.port_id(g.node(g.remote(g.rev(e))), PortNum{g.port(e)});
    (fabric.link(l).a == from ? out[l.value()].a_to_b : out[l.value()].b_to_a) += load[e];
  }
  return out;
}

std::vector<Flow> shift_flows(const Fabric& fabric, const RailMap& rails, uint32_t k, bool cross_rail) {
  return grid_shift(host_grid(fabric, rails), k, cross_rail);
}

PatternLoad evaluate_flows(const Fabric& fabric, const ForwardingTables& tables, const std::string& name,
                           const std::vector<Flow>& flows) {
  LoadCounter lc(fabric, tables);
  return lc.run(name, flows);
}

CongestionReport analyze_congestion(const Fabric& fabric, const ForwardingTables& tables, const RailMap& rails,
                                    const CongestionOptions& options) {
  CongestionReport rep;
  LoadCounter lc(fabric, tables);
  HostGrid grid = host_grid(fabric, rails);
  rep.patterns.push_back(shifts(lc, grid, false, options.max_shifts));
  if (grid.rails > 1) rep.patterns.push_back(shifts(lc, grid, true, options.max_shifts));

  // Random permutations of all CA ports.
  std::vector<PortId> ports;
  for (NodeId ca : fabric.cas()) {
    PortId p = fabric.primary_port(ca);
    if (fabric.port(p).lid.valid()) ports.push_back(p);
  }
  if (ports.size() > 1 && options.random_permutations) {
    PatternLoad acc;
    acc.name = "random permutations";
    std::mt19937_64 rng(options.seed);
    for (uint32_t i = 0; i < options.random_permutations; ++i) {
      std::vector<PortId> perm = ports;
      for (size_t j = perm.size() - 1; j > 0; --j) std::swap(perm[j], perm[rng() % (j + 1)]);
      std::vector<Flow> flows;
      flows.reserve(ports.size());
      for (size_t j = 0; j < ports.size(); ++j) {
        if (ports[j] != perm[j]) flows.push_back({ports[j], perm[j]});
      }
      merge(acc, lc.run(acc.name, flows), static_cast<int32_t>(i));
    }
    finish(acc);
    rep.patterns.push_back(acc);
  }
  if (options.all_to_all) rep.patterns.push_back(all_to_all(fabric, lc));
  return rep;
}

}  // namespace railyard::routing
