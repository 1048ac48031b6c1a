#include "routing/verifier.h"

#include <algorithm>
#include <limits>

#include "routing/channel_graph.h"
#include "routing/hop_resolver.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

namespace {


std::vector<uint32_t> bfs_from(const SwitchGraph& g, uint32_t src) {
  std::vector<uint32_t> d(g.num_switches(), kInf);
  std::vector<uint32_t> q{src};
  d[src] = 0;
  for (size_t h = 0; h < q.size(); ++h) {
    uint32_t x = q[h];
    for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
      uint32_t r = g.remote(e);
      if (d[r] == kInf) {
        d[r] = d[x] + 1;
        q.push_back(r);
      }
    }
  }
  return d;
}

enum : uint8_t { kUnknown = 0, kVisiting = 1, kDone = 2, kHole = 3, kLooped = 4 };

}  // namespace

std::string trace_path(const Fabric& f, const ForwardingTables& t, NodeId source, Lid lid) {
  std::string out;
  if (!source.valid() || source.value() >= f.num_nodes()) return "unknown source";
  SwitchGraph g(f);
  PortId cur = f.primary_port(source);
  uint32_t s = f.is_switch(source) ? g.switch_index(source) : kNone;
  out = std::string(f.desc(source));
  if (s == kNone) {
    const Port& p = f.port(cur);
    out += "[" + std::to_string(p.num.value) + "]";
    if (f.lid_owner(lid) == cur) return out + " -> delivered";
    if (!p.remote.valid()) return out + " -> not cabled";
    NodeId r = f.port(p.remote).node;
    if (!f.is_switch(r)) return out + " -> " + std::string(f.desc(r)) + " (not a switch)";
    s = g.switch_index(r);
    out += " -> " + std::string(f.desc(r));
  }
  for (uint32_t hop = 0; hop <= g.num_switches() + 1; ++hop) {
    if (lid.value >= t.num_lids()) return out + " (LID beyond the table)";
    uint8_t port = t.get(s, lid);
    const Node& nd = f.node(g.node(s));
    if (port == ForwardingTables::kNoPath) return out + " -> no path (blackhole)";
    out += "[" + std::to_string(port) + "]";
    if (port == 0) return out + (f.lid_owner(lid) == nd.first_port ? " -> delivered" : " -> port 0 of the wrong switch (blackhole)");
    if (port > nd.num_ports) return out + " -> port beyond the switch (blackhole)";
    const Port& p = f.port(PortId(nd.first_port.value() + port));
    if (!p.remote.valid() || f.link(p.link).state == PortState::kDown) return out + " -> dead port (blackhole)";
    NodeId r = f.port(p.remote).node;
    out += " -> " + std::string(f.desc(r));
    if (!f.is_switch(r)) return out + (f.lid_owner(lid) == p.remote ? " (delivered)" : " (wrong CA: blackhole)");
    s = g.switch_index(r);
  }
  return out + " ... (loop)";
}

VerifyReport verify_tables(const Fabric& f, const ForwardingTables& t, const VerifyOptions& opt) {
  VerifyReport rep;
  SwitchGraph g(f);
  HopResolver hr(f, g, t);
  const uint32_t n = g.num_switches();
  rep.switches = n;

  // Sources: CA ports with a LID, counted per switch they hang off.
  std::vector<uint32_t> src_count(n, 0);
  std::vector<PortId> src_example(n);
  uint32_t detached = 0;
  for (NodeId ca : f.cas()) {
    const Node& nd = f.node(ca);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid(nd.first_port.value() + p);
      if (!f.port(pid).lid.valid()) continue;
      ++rep.ca_ports;
      uint32_t s = f.port(pid).remote.valid() ? g.attach_switch(pid) : kNone;
      if (s == kNone) {
        ++detached;
        continue;
      }
      if (src_count[s]++ == 0) src_example[s] = pid;
    }
  }

  // Levels for balance: distance from the switches with CAs.
  std::vector<uint32_t> level(n, kInf);
  {
    std::vector<uint32_t> q;
    for (uint32_t s = 0; s < n; ++s) {
      if (src_count[s]) {
        level[s] = 0;
        q.push_back(s);
      }
    }
    for (size_t h = 0; h < q.size(); ++h) {
      uint32_t x = q[h];
      for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
        if (level[g.remote(e)] == kInf) {
          level[g.remote(e)] = level[x] + 1;
          q.push_back(g.remote(e));
        }
      }
    }
  }
  std::vector<uint32_t> up_count(g.num_entries(), 0);

  // Destinations grouped by target switch so shortest distances are reused.
  std::vector<std::pair<uint32_t, Lid>> dests;
  for (uint32_t l = 1; l < f.max_lid().value + 1u; ++l) {
    Lid lid{static_cast<uint16_t>(l)};
    if (!f.lid_owner(lid).valid()) continue;
    dests.emplace_back(hr.target_switch(lid), lid);
  }
  std::stable_sort(dests.begin(), dests.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  rep.lids = static_cast<uint32_t>(dests.size());

  ChannelDependencyGraph cdg_ca(g), cdg_all(g);
  std::vector<uint32_t> next, hops(n), shortest;
  std::vector<uint8_t> state(n);
  std::vector<uint32_t> used(n, 0);
  std::vector<uint32_t> walk;
  uint32_t stamp = 0;
  uint32_t cached_target = kInf;
  uint64_t hop_sum = 0, stretch_sum = 0;

  for (auto [target, lid] : dests) {
    PortId owner = f.lid_owner(lid);
    NodeId dest_node = f.port(owner).node;
    bool ca_dest = !f.is_switch(dest_node);
    if (!ca_dest && !opt.check_switch_lids) continue;
    hr.resolve(lid, next);

    // Resolve every switch: hops to delivery, or blackhole/loop.
    std::fill(state.begin(), state.end(), kUnknown);
    for (uint32_t s0 = 0; s0 < n; ++s0) {
      if (state[s0] != kUnknown) continue;
      walk.clear();
      uint32_t s = s0;
      uint8_t end_state;
      uint32_t end_hops = 0;
      for (;;) {
        if (state[s] == kVisiting) { end_state = kLooped; break; }
        if (state[s] != kUnknown) { end_state = state[s]; end_hops = hops[s]; break; }
        uint32_t nx = next[s];
        if (nx == HopResolver::kDeliver) { state[s] = kDone; hops[s] = 0; end_state = kDone; end_hops = 0; break; }
        if (nx == HopResolver::kDrop) { state[s] = kHole; end_state = kHole; break; }
        state[s] = kVisiting;
        walk.push_back(s);
        s = g.remote(nx);
      }
      for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
        state[*it] = end_state;
        if (end_state == kDone) hops[*it] = ++end_hops;
      }
    }

    if (!ca_dest) {
      for (uint32_t s = 0; s < n; ++s) {
        ++rep.switch_pairs;
        if (state[s] == kDone) ++rep.switch_pairs_reachable;
      }
    } else {
      if (target != cached_target && target != kNone) {
        shortest = bfs_from(g, target);
        cached_target = target;
      }
      uint32_t self = (target != kNone) ? 1 : 0;  // the destination port itself is not a source
      uint32_t detached_sources = detached - (target == kNone ? 1 : 0);
      rep.pairs += detached_sources;
      rep.blackholed += detached_sources;
      for (uint32_t s = 0; s < n; ++s) {
        uint32_t k = src_count[s];
        if (!k) continue;
        if (s == target && self) --k;
        if (!k) continue;
        rep.pairs += k;
        if (target != kNone && state[s] == kDone) {
          rep.reachable += k;
          uint32_t st = (shortest[s] == kInf || hops[s] < shortest[s]) ? 0 : hops[s] - shortest[s];
          if (rep.stretch_histogram.size() <= st) rep.stretch_histogram.resize(st + 1, 0);
          rep.stretch_histogram[st] += k;
          rep.max_stretch = std::max(rep.max_stretch, st);
          stretch_sum += uint64_t{st} * k;
          hop_sum += uint64_t{hops[s]} * k;
        } else {
          bool loop = target != kNone && state[s] == kLooped;
          (loop ? rep.looped : rep.blackholed) += k;
          if (rep.examples.size() < opt.max_examples) {
            NodeId src = f.port(src_example[s]).node;
            rep.examples.push_back({loop ? PathProblem::Kind::kLoop : PathProblem::Kind::kBlackhole, src, lid,
                                    dest_node, trace_path(f, t, src, lid)});
          }
        }
      }
      // CDG over the routes CA sources actually take.
      ++stamp;
      for (uint32_t s0 = 0; s0 < n; ++s0) {
        if (!src_count[s0]) continue;
        for (uint32_t s = s0; used[s] != stamp;) {
          used[s] = stamp;
          uint32_t e1 = next[s];
          if (e1 >= g.num_entries()) break;
          uint32_t r = g.remote(e1);
          uint32_t e2 = next[r];
          if (e2 < g.num_entries()) cdg_ca.add(e1, e2); else cdg_ca.use(e1);
          s = r;
        }
      }
      // Balance: CA destinations per up port.
      for (uint32_t s = 0; s < n; ++s) {
        uint32_t e = next[s];
        if (e < g.num_entries() && level[g.remote(e)] != kInf && level[s] != kInf && level[g.remote(e)] > level[s]) {
          ++up_count[e];
        }
      }
    }
    // All routes from every switch.
    for (uint32_t s = 0; s < n; ++s) {
      uint32_t e1 = next[s];
      if (e1 >= g.num_entries()) continue;
      uint32_t e2 = next[g.remote(e1)];
      if (e2 < g.num_entries()) cdg_all.add(e1, e2); else cdg_all.use(e1);
    }
  }
  if (rep.reachable) {
    rep.mean_stretch = static_cast<double>(stretch_sum) / static_cast<double>(rep.reachable);
    rep.mean_hops = static_cast<double>(hop_sum) / static_cast<double>(rep.reachable);
  }
  rep.cdg_ca = cdg_ca.check(f);
  rep.cdg_all = opt.check_switch_lids ? cdg_all.check(f) : rep.cdg_ca;

  uint64_t spread_sum = 0;
  uint32_t spread_switches = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t lo = kInf, hi = 0;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (level[s] == kInf || level[g.remote(e)] == kInf || level[g.remote(e)] <= level[s]) continue;
      lo = std::min(lo, up_count[e]);
      hi = std::max(hi, up_count[e]);
    }
    if (lo == kInf) continue;
    uint32_t spread = hi - lo;
    spread_sum += spread;
    ++spread_switches;
    if (spread > rep.worst_up_spread || !rep.worst_up_spread_switch.valid()) {
      if (spread >= rep.worst_up_spread) {
        rep.worst_up_spread = spread;
        rep.worst_up_spread_switch = g.node(s);
      }
    }
  }
  if (spread_switches) rep.mean_up_spread = static_cast<double>(spread_sum) / spread_switches;
  return rep;
}

}  // namespace railyard::routing
