// CutOracle: judges forwarding tables on a (possibly degraded) fabric against
// lower bounds the tests compute themselves, independently of the engine's
// report and of routing/congestion.cpp (whose walk and bound it does not use:
// only shift_flows() for the list of flows of a shift).
//
// What it computes
//  - Loads: flows are walked over the tables hop by hop and counted per
//    directed link (2 x LinkId + side: 0 from end a, 1 from end b), CA links
//    included. Only delivered flows load links; flows that loop or hit a dead
//    end are counted apart, split by whether up*/down* could have connected
//    the pair (lost_connectable: the engine's fault) or not.
//  - All-to-all among live CA ports: one in-tree per destination. Each switch
//    resolves its next hop once; fates (delivered / dropped / looped) and hop
//    counts are memoized, and flow counts are pushed down the tree in order
//    of decreasing distance: O(switches) per destination, not per pair.
//  - The cut bound. A set G of switches (with the CAs cabled to them) whose
//    CAs send F flows out of G over C usable links leaving G puts at least
//    ceil(F / C) flows on one of them. Groups: every single CA port (its own
//    link, C = 1), every leaf, and every "pod": a connected component of the
//    live switch graph restricted to switches below the top level (on two
//    levels these are the leaves again). Usable = not down and not drained;
//    a group whose every link out is drained falls back to counting drained
//    links (they are then the only way out, and the engine may use them).
//    All-to-all: F = |CA(G)| x (N - |CA(G)|), N = the live CA ports of G's
//    connected component (a CA behind a dead leaf or cable is out).
//    Permutations (shifts): F = flows leaving G, and again flows entering G,
//    over connectable pairs only. Bound = max over groups, at least 1.
//  - Permutations also get the spines' bound (spines_bound.h), which the
//    cuts miss where a spine lost up links its leaves cannot all avoid.
//  - Legal connectivity: leaves a and b can be connected by an up*/down*
//    route iff some switch is reachable going only up (to a strictly higher
//    level) from both, over live links (drained ones included: the engine
//    may use them when nothing else is left).
//  - Path stability (path_stability.h, on routes_crossing): table entries that changed, and
//    the entries whose healthy route crossed a link now down or drained.
// Levels are structural: BFS over every cabled link (down ones too) from the
// switches with CAs (level 1), so a degraded copy of a fabric keeps the
// levels of the healthy one. Multi-port CAs count per port; base LIDs only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "routing/congestion.h"
#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/rails.h"
#include "tests/routing/spines_bound.h"

namespace railyard::routing::test {

// Structural switch levels by NodeId value: CAs and routers 0, switches with a
// CA cabled 1, others 1 + their distance in switch hops from those; -1 for a
// switch no CA-bearing switch reaches. Link states are ignored.
inline std::vector<int32_t> switch_levels(const Fabric& f) {
  std::vector<int32_t> level(f.num_nodes(), 0);
  std::vector<NodeId> queue;
  for (NodeId s : f.switches()) {
    level[s.value()] = -1;
    const Node& nd = f.node(s);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      NodeId r = f.remote_node(f.port_id(s, PortNum{static_cast<uint8_t>(p)}));
      if (r.valid() && !f.is_switch(r)) {
        level[s.value()] = 1;
        queue.push_back(s);
        break;
      }
    }
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    NodeId s = queue[head];
    const Node& nd = f.node(s);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      NodeId r = f.remote_node(f.port_id(s, PortNum{static_cast<uint8_t>(p)}));
      if (r.valid() && f.is_switch(r) && level[r.value()] < 0) {
        level[r.value()] = level[s.value()] + 1;
        queue.push_back(r);
      }
    }
  }
  return level;
}

// Directed link: 2 x LinkId, +1 when leaving from the link's end b.
inline uint32_t directed_link(const Fabric& f, PortId from) {
  LinkId l = f.port(from).link;
  return 2 * l.value() + (f.link(l).a == from ? 0 : 1);
}

struct AllToAllLoad {
  uint64_t live_cas = 0;        // live CA ports (cabled to a switch by a live link)
  uint64_t dead_cas = 0;        // CA ports with a LID and no live link to a switch
  uint64_t pairs = 0;           // ordered pairs of live CA ports
  uint64_t delivered = 0;
  uint64_t looped = 0;
  uint64_t blackholed = 0;
  uint64_t connectable = 0;        // pairs an up*/down* route could connect
  uint64_t lost_connectable = 0;   // of those, not delivered
  uint64_t max_load = 0;           // busiest directed link, CA links included
  uint64_t max_switch_load = 0;    // busiest directed switch-switch link
  uint32_t worst_link = UINT32_MAX;  // its directed id (directed_link)
  uint64_t bound = 0;
  double ratio() const { return bound ? static_cast<double>(max_load) / static_cast<double>(bound) : 0.0; }
};

struct FlowsLoad {
  uint64_t flows = 0;
  uint64_t delivered = 0;
  uint64_t lost = 0;              // looped or dropped, any reason
  uint64_t lost_connectable = 0;  // lost although up*/down* connects the pair
  uint64_t dead = 0;              // an end is not a live CA port
  uint64_t max_load = 0;
  uint64_t bound = 0;
};

struct ShiftSweep {
  uint32_t shifts = 0;        // shifts evaluated
  int32_t worst_k = -1;       // the shift with the largest max - bound
  uint64_t worst_max = 0;
  uint64_t worst_bound = 0;
  int64_t worst_excess = 0;   // worst_max - worst_bound (may be negative: never above)
  uint64_t max_load = 0;      // largest max over the shifts
  uint64_t lost_connectable = 0;
  uint64_t lost = 0;
};

class CutOracle {
 public:
  // `drained`: one byte per LinkId (nonzero = drained), or empty.
  explicit CutOracle(const Fabric& f, std::span<const uint8_t> drained = {}) : f_(f) {
    const uint32_t num_sw = static_cast<uint32_t>(f.switches().size());
    drained_.assign(f.num_links(), 0);
    for (size_t l = 0; l < drained.size() && l < drained_.size(); ++l) drained_[l] = drained[l] ? 1 : 0;
    level_of_node_ = switch_levels(f);
    sw_of_node_.assign(f.num_nodes(), kNone);
    level_.resize(num_sw);
    for (uint32_t s = 0; s < num_sw; ++s) {
      sw_of_node_[f.switches()[s].value()] = s;
      level_[s] = level_of_node_[f.switches()[s].value()];
      top_level_ = std::max(top_level_, level_[s]);
    }
    // Hops: per switch port, where a packet goes.
    hop_begin_.assign(num_sw + 1, 0);
    for (uint32_t s = 0; s < num_sw; ++s) hop_begin_[s + 1] = hop_begin_[s] + f.node(f.switches()[s]).num_ports + 1u;
    hops_.assign(hop_begin_[num_sw], Hop{});
    ca_of_port_.assign(f.num_ports(), kNone);
    for (uint32_t s = 0; s < num_sw; ++s) {
      NodeId n = f.switches()[s];
      const Node& nd = f.node(n);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        PortId pid = f.port_id(n, PortNum{static_cast<uint8_t>(p)});
        const Port& port = f.port(pid);
        if (!port.link.valid() || !port.remote.valid() || f.link(port.link).state == PortState::kDown) continue;
        NodeId r = f.port(port.remote).node;
        Hop& h = hops_[hop_begin_[s] + p];
        h.channel = directed_link(f, pid);
        if (f.is_switch(r)) {
          if (r == n) continue;  // a cable looping back carries nothing
          h.next = sw_of_node_[r.value()];
          adj_.push_back({s, h.next, port.link});
        } else {
          h.next = kToCa;
          h.ca_port = port.remote;
          if (f.port(port.remote).lid.valid() && ca_of_port_[port.remote.value()] == kNone) {
            ca_of_port_[port.remote.value()] = static_cast<uint32_t>(cas_.size());
            cas_.push_back({port.remote, f.port(port.remote).lid, s, h.channel, directed_link(f, port.remote)});
          }
        }
      }
    }
    std::sort(cas_.begin(), cas_.end(), [](const LiveCa& a, const LiveCa& b) { return a.port < b.port; });
    for (uint32_t i = 0; i < cas_.size(); ++i) ca_of_port_[cas_[i].port.value()] = i;
    for (NodeId ca : f.cas()) {
      const Node& nd = f.node(ca);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        PortId pid = f.port_id(ca, PortNum{static_cast<uint8_t>(p)});
        if (f.port(pid).lid.valid() && ca_of_port_[pid.value()] == kNone) ++dead_cas_;
      }
    }
    cas_at_.assign(num_sw, 0);
    for (const LiveCa& c : cas_) ++cas_at_[c.sw];
    build_components();
    build_groups();
    build_updown();
    std::vector<SpinesBound::Link> links;
    links.reserve(adj_.size());
    for (const Adjacent& a : adj_) links.push_back({a.from, a.to, drained_[a.link.value()] != 0});
    spines_ = SpinesBound(level_, links);
  }

  const Fabric& fabric() const { return f_; }
  int32_t top_level() const { return top_level_; }
  int32_t level(uint32_t sw) const { return level_[sw]; }
  uint64_t live_cas() const { return cas_.size(); }
  uint64_t dead_cas() const { return dead_cas_; }
  bool is_live_ca(PortId p) const { return ca_of_port_[p.value()] != kNone; }
  // Can an up*/down* route join the switches a and b (both with CAs)?
  bool connectable(uint32_t a, uint32_t b) const {
    if (a == b) return true;
    const uint64_t* x = &up_bits_[static_cast<size_t>(a) * words_];
    const uint64_t* y = &up_bits_[static_cast<size_t>(b) * words_];
    for (uint32_t w = 0; w < words_; ++w) {
      if (x[w] & y[w]) return true;
    }
    return false;
  }

  // The all-to-all cut bound (see the header comment).
  uint64_t all_to_all_bound() const {
    uint64_t bound = 0;
    for (const Group& g : groups_) {
      if (!g.cas) continue;
      uint64_t n = component_cas_[g.component];
      uint64_t flows = g.cas * (n - g.cas);
      if (!flows) continue;
      uint64_t cap = g.usable ? g.usable : g.live;
      if (cap) bound = std::max(bound, (flows + cap - 1) / cap);
    }
    for (const LiveCa& c : cas_) bound = std::max<uint64_t>(bound, component_cas_[sw_component_[c.sw]] - 1);
    return std::max<uint64_t>(bound, 1);
  }

  // The permutation cut bound of a set of flows (only flows between live CA
  // ports that up*/down* can connect count).
  uint64_t cuts_bound(const std::vector<Flow>& flows) const {
    std::vector<uint64_t> out(groups_.size(), 0), in(groups_.size(), 0);
    uint64_t bound = 0;
    for (const Flow& fl : flows) {
      uint32_t a = ca_of_port_[fl.src.value()], b = ca_of_port_[fl.dst.value()];
      if (a == kNone || b == kNone || a == b) continue;
      uint32_t sa = cas_[a].sw, sb = cas_[b].sw;
      if (!connectable(sa, sb)) continue;
      bound = 1;
      for (int kind = 0; kind < 2; ++kind) {
        uint32_t ga = group_of_[kind][sa], gb = group_of_[kind][sb];
        if (ga == gb) continue;
        if (ga != kNone) ++out[ga];
        if (gb != kNone) ++in[gb];
      }
    }
    for (uint32_t g = 0; g < groups_.size(); ++g) {
      uint64_t cap = groups_[g].usable ? groups_[g].usable : groups_[g].live;
      if (!cap) continue;
      bound = std::max(bound, (out[g] + cap - 1) / cap);
      bound = std::max(bound, (in[g] + cap - 1) / cap);
    }
    return bound;
  }

  // The permutation bound: the cuts', raised by the spines' (header).
  uint64_t flows_bound(const std::vector<Flow>& flows) const {
    const uint64_t bound = cuts_bound(flows);
    std::vector<uint64_t> pairs;  // (leaf, leaf) of every connectable flow between two leaves
    pairs.reserve(flows.size());
    for (const Flow& fl : flows) {
      uint32_t a = ca_of_port_[fl.src.value()], b = ca_of_port_[fl.dst.value()];
      if (a == kNone || b == kNone || a == b) continue;
      uint32_t sa = cas_[a].sw, sb = cas_[b].sw;
      if (sa != sb && connectable(sa, sb)) pairs.push_back(uint64_t{sa} << 32 | sb);
    }
    return spines_.raise(std::move(pairs), bound, flows.size());
  }

  AllToAllLoad all_to_all(const ForwardingTables& t) const {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    AllToAllLoad out;
    out.live_cas = cas_.size();
    out.dead_cas = dead_cas_;
    std::vector<uint64_t> load(2 * f_.num_links(), 0);
    std::vector<uint64_t> delivered_dests(num_sw, 0);  // destinations each switch delivers to
    std::vector<uint8_t> own_delivered(cas_.size(), 0);
    InTree tree(num_sw);
    std::vector<uint64_t> count(num_sw);
    const uint32_t* cas_at = cas_at_.data();
    uint64_t* loads = load.data();
    uint64_t* counts = count.data();
    uint64_t* delivered_by = delivered_dests.data();
    for (uint32_t d = 0; d < cas_.size(); ++d) {
      const LiveCa& dst = cas_[d];
      resolve(t, dst, tree);
      const uint8_t* fate = tree.fate.data();
      const uint32_t* next = tree.next.data();
      const uint32_t* channel = tree.channel.data();
      for (uint32_t s = 0; s < num_sw; ++s) {
        uint64_t srcs = cas_at[s] - (s == dst.sw ? 1 : 0);
        if (fate[s] == kDelivered) {
          counts[s] = srcs;
          ++delivered_by[s];
          continue;
        }
        counts[s] = 0;
        if (!srcs) continue;
        (fate[s] == kLooped ? out.looped : out.blackholed) += srcs;
        if (connectable(s, dst.sw)) out.lost_connectable += srcs;
      }
      own_delivered[d] = fate[dst.sw] == kDelivered;
      // Push counts down the tree, farthest switches first.
      for (uint32_t s : tree.order) {
        if (!counts[s]) continue;
        loads[channel[s]] += counts[s];
        if (next[s] != kToCa) counts[next[s]] += counts[s];
      }
    }
    // Connectable and delivered pairs, per pair of switches.
    for (uint32_t a = 0; a < num_sw; ++a) {
      if (!cas_at_[a]) continue;
      for (uint32_t b = 0; b < num_sw; ++b) {
        if (!cas_at_[b] || !connectable(a, b)) continue;
        out.connectable += uint64_t{cas_at_[a]} * cas_at_[b] - (a == b ? cas_at_[a] : 0);
      }
    }
    out.pairs = cas_.size() * (cas_.size() ? cas_.size() - 1 : 0);
    out.delivered = out.pairs - out.looped - out.blackholed;
    // A CA's own link toward its switch carries one flow per destination its
    // switch delivers to, except itself.
    for (uint32_t c = 0; c < cas_.size(); ++c) load[cas_[c].up_channel] += delivered_dests[cas_[c].sw] - own_delivered[c];
    for (uint32_t e = 0; e < load.size(); ++e) {
      if (load[e] > out.max_load) {
        out.max_load = load[e];
        out.worst_link = e;
      }
    }
    for (const Adjacent& a : adj_) {
      out.max_switch_load = std::max(out.max_switch_load, load[2 * a.link.value()]);
      out.max_switch_load = std::max(out.max_switch_load, load[2 * a.link.value() + 1]);
    }
    out.bound = all_to_all_bound();
    return out;
  }

  // Walks explicit flows (e.g. one shift) and bounds them.
  FlowsLoad flows(const ForwardingTables& t, const std::vector<Flow>& flows) const {
    FlowsLoad out;
    out.flows = flows.size();
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    const uint32_t rows = std::min(num_sw, t.num_switches());
    const size_t stride = t.num_lids();
    const uint8_t* table = rows ? t.row(0).data() : nullptr;
    const uint32_t* begin = hop_begin_.data();
    const Hop* hops = hops_.data();
    std::vector<uint32_t> load(2 * f_.num_links(), 0);
    std::vector<uint32_t> path(num_sw + 2);
    uint32_t* loads = load.data();
    uint32_t* steps = path.data();
    for (const Flow& fl : flows) {
      uint32_t a = ca_of_port_[fl.src.value()], b = ca_of_port_[fl.dst.value()];
      if (a == kNone || b == kNone) {
        ++out.dead;
        continue;
      }
      const LiveCa& src = cas_[a];
      const LiveCa& dst = cas_[b];
      uint32_t n = 0;
      steps[n++] = src.up_channel;
      bool arrived = false;
      uint32_t s = src.sw;
      // At most one visit per switch: a longer walk is a loop.
      for (uint32_t hop = 0; hop < num_sw && dst.lid.value < stride && s < rows; ++hop) {
        uint8_t p = table[s * stride + dst.lid.value];
        if (p == 0 || p == ForwardingTables::kNoPath || p >= begin[s + 1] - begin[s]) break;
        const Hop& h = hops[begin[s] + p];
        if (h.next == kNone) break;
        steps[n++] = h.channel;
        if (h.next == kToCa) {
          arrived = h.ca_port == dst.port;
          break;
        }
        s = h.next;
      }
      if (!arrived) {
        ++out.lost;
        if (connectable(src.sw, dst.sw)) ++out.lost_connectable;
        continue;
      }
      ++out.delivered;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t l = ++loads[steps[i]];
        if (l > out.max_load) out.max_load = l;
      }
    }
    out.bound = flows_bound(flows);
    return out;
  }


  // The flows of shifts k = first, first + stride, ... < hosts, indexed by k
  // (others empty): rail-aligned (k from 1) or cross-rail (k from 0: host i
  // rail r -> host i rail r + 1 is a flow too). They depend on the rail map
  // only, so one list serves every degraded copy of a fabric.
  static std::vector<std::vector<Flow>> shift_patterns(const Fabric& f, const RailMap& rails, bool cross_rail,
                                                       uint32_t stride = 1) {
    const uint32_t hosts = static_cast<uint32_t>(rails.hosts.size());
    std::vector<std::vector<Flow>> out(hosts);
    if (stride == 0) stride = 1;
    for (uint32_t k = cross_rail ? 0 : 1; k < hosts; k += stride) out[k] = shift_flows(f, rails, k, cross_rail);
    return out;
  }

  // Each non-empty pattern judged against its own bound; the worst is the
  // largest max - bound (ties: the larger max, then the smaller k).
  ShiftSweep shifts(const ForwardingTables& t, const std::vector<std::vector<Flow>>& by_k) const {
    ShiftSweep out;
    bool first = true;
    for (uint32_t k = 0; k < by_k.size(); ++k) {
      if (by_k[k].empty()) continue;
      FlowsLoad l = flows(t, by_k[k]);
      ++out.shifts;
      out.lost += l.lost;
      out.lost_connectable += l.lost_connectable;
      out.max_load = std::max(out.max_load, l.max_load);
      int64_t excess = static_cast<int64_t>(l.max_load) - static_cast<int64_t>(l.bound);
      if (first || excess > out.worst_excess || (excess == out.worst_excess && l.max_load > out.worst_max)) {
        first = false;
        out.worst_k = static_cast<int32_t>(k);
        out.worst_max = l.max_load;
        out.worst_bound = l.bound;
        out.worst_excess = excess;
      }
    }
    return out;
  }

  ShiftSweep shifts(const ForwardingTables& t, const RailMap& rails, bool cross_rail, uint32_t stride = 1) const {
    return shifts(t, shift_patterns(f_, rails, cross_rail, stride));
  }

  // Per destination CA LID: the switches (indices) whose route, over `t` on
  // this fabric, delivers to it while crossing one of `failed` (per LinkId,
  // nonzero = failed; the destination's own CA link counts). Calls
  // visit(lid, switch) for each.
  template <class Visit>
  void routes_crossing(const ForwardingTables& t, std::span<const uint8_t> failed, Visit&& visit) const {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    InTree tree(num_sw);
    std::vector<uint8_t> crosses(num_sw);
    for (const LiveCa& dst : cas_) {
      resolve(t, dst, tree);
      // tree.order is farthest first; go nearest first so a switch's next hop is settled.
      for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
        uint32_t s = *it;
        bool c = failed[tree.channel[s] / 2] != 0;
        if (tree.next[s] != kToCa) c = c || crosses[tree.next[s]];
        crosses[s] = c;
      }
      for (uint32_t s : tree.order) {
        if (crosses[s]) visit(dst.lid, s);
      }
    }
  }

  // Each live CA port with its LID.
  template <class Visit>
  void for_each_live_ca(Visit&& visit) const {
    for (const LiveCa& c : cas_) visit(c.port, c.lid, c.sw);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kToCa = UINT32_MAX - 1;
  static constexpr uint8_t kUnknown = 0, kOnStack = 1, kDelivered = 2, kDropped = 3, kLooped = 4;

  struct Hop {
    uint32_t next = kNone;  // switch index, kToCa, or kNone (dead or uncabled)
    uint32_t channel = 0;   // directed link taken
    PortId ca_port;         // kToCa: the CA port reached
  };
  struct LiveCa {
    PortId port;
    Lid lid;
    uint32_t sw = 0;
    uint32_t down_channel = 0;  // switch -> CA
    uint32_t up_channel = 0;    // CA -> switch
  };
  struct Adjacent {
    uint32_t from = 0, to = 0;
    LinkId link;
  };
  struct Group {
    uint64_t cas = 0;
    uint64_t usable = 0;  // links leaving the group, not down, not drained
    uint64_t live = 0;    // not down
    uint32_t component = 0;
  };
  // One destination's in-tree.
  struct InTree {
    explicit InTree(uint32_t n) : next(n), channel(n), fate(n), depth(n) {}
    std::vector<uint32_t> next;     // next switch, or kToCa (delivery)
    std::vector<uint32_t> channel;  // directed link to it
    std::vector<uint8_t> fate;
    std::vector<uint32_t> depth;    // hops to the destination, delivered switches
    std::vector<uint32_t> order;    // delivered switches, farthest first
    std::vector<uint32_t> stack, bucket_start;
  };

  // Raw pointers below: these loops run switches x destinations times, and
  // the tests run them in unoptimized sanitizer builds.
  void resolve(const ForwardingTables& t, const LiveCa& dst, InTree& tree) const {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    const uint32_t rows = std::min(num_sw, t.num_switches());
    const size_t stride = t.num_lids();
    const uint8_t* column = dst.lid.value < t.num_lids() && rows ? t.row(0).data() + dst.lid.value : nullptr;
    const uint32_t* begin = hop_begin_.data();
    const Hop* hops = hops_.data();
    uint32_t* next = tree.next.data();
    uint32_t* channel = tree.channel.data();
    uint8_t* fate = tree.fate.data();
    uint32_t* depth = tree.depth.data();
    for (uint32_t s = 0; s < num_sw; ++s) {
      uint8_t p = column && s < rows ? column[s * stride] : ForwardingTables::kNoPath;
      const Hop* h = p == 0 || p == ForwardingTables::kNoPath || p >= begin[s + 1] - begin[s] ? nullptr : &hops[begin[s] + p];
      if (!h || h->next == kNone || (h->next == kToCa && h->ca_port != dst.port)) {
        next[s] = kNone;
        fate[s] = kDropped;
        continue;
      }
      next[s] = h->next;
      channel[s] = h->channel;
      fate[s] = kUnknown;
      if (h->next == kToCa) {
        fate[s] = kDelivered;
        depth[s] = 1;
      }
    }
    for (uint32_t s0 = 0; s0 < num_sw; ++s0) {
      if (fate[s0] != kUnknown) continue;
      tree.stack.clear();
      uint32_t s = s0;
      uint8_t end_fate;
      uint32_t d = 0;
      for (;;) {
        if (fate[s] == kOnStack) {
          end_fate = kLooped;
          break;
        }
        if (fate[s] != kUnknown) {
          end_fate = fate[s];
          d = depth[s];
          break;
        }
        fate[s] = kOnStack;
        tree.stack.push_back(s);
        s = next[s];
      }
      for (auto it = tree.stack.rbegin(); it != tree.stack.rend(); ++it) {
        fate[*it] = end_fate;
        if (end_fate == kDelivered) depth[*it] = ++d;
      }
    }
    // Counting sort of the delivered switches by decreasing depth.
    uint32_t max_depth = 0;
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (fate[s] == kDelivered) max_depth = std::max(max_depth, depth[s]);
    }
    tree.bucket_start.assign(max_depth + 2, 0);
    uint32_t* start = tree.bucket_start.data();
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (fate[s] == kDelivered) ++start[max_depth - depth[s] + 1];
    }
    for (uint32_t i = 1; i < max_depth + 2; ++i) start[i] += start[i - 1];
    tree.order.resize(start[max_depth + 1]);
    uint32_t* order = tree.order.data();
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (fate[s] == kDelivered) order[start[max_depth - depth[s]]++] = s;
    }
  }

  // Connected components of the live switch graph (drained links included).
  void build_components() {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    sw_component_ = components(num_sw, [](const Adjacent&) { return true; });
    uint32_t n = 0;
    for (uint32_t c : sw_component_) n = std::max(n, c + 1);
    component_cas_.assign(n, 0);
    for (const LiveCa& c : cas_) ++component_cas_[sw_component_[c.sw]];
  }

  template <class Keep>
  std::vector<uint32_t> components(uint32_t num_sw, Keep&& keep) const {
    std::vector<uint32_t> parent(num_sw);
    for (uint32_t i = 0; i < num_sw; ++i) parent[i] = i;
    auto find = [&](uint32_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (const Adjacent& a : adj_) {
      if (keep(a)) parent[find(a.from)] = find(a.to);
    }
    std::vector<uint32_t> id(num_sw, kNone), out(num_sw);
    uint32_t next = 0;
    for (uint32_t i = 0; i < num_sw; ++i) {
      uint32_t r = find(i);
      if (id[r] == kNone) id[r] = next++;
      out[i] = id[r];
    }
    return out;
  }

  // Leaves (kind 0) and pods (kind 1), with their CAs and links out.
  void build_groups() {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    group_of_[0].assign(num_sw, kNone);
    group_of_[1].assign(num_sw, kNone);
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (level_[s] != 1) continue;
      group_of_[0][s] = static_cast<uint32_t>(groups_.size());
      groups_.push_back(Group{});
    }
    std::vector<uint32_t> pod = components(
        num_sw, [&](const Adjacent& a) { return level_[a.from] < top_level_ && level_[a.to] < top_level_; });
    std::vector<uint32_t> pod_group(num_sw, kNone);
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (level_[s] < 1 || level_[s] >= top_level_) continue;
      if (pod_group[pod[s]] == kNone) {
        pod_group[pod[s]] = static_cast<uint32_t>(groups_.size());
        groups_.push_back(Group{});
      }
      group_of_[1][s] = pod_group[pod[s]];
    }
    for (int kind = 0; kind < 2; ++kind) {
      for (uint32_t s = 0; s < num_sw; ++s) {
        uint32_t g = group_of_[kind][s];
        if (g == kNone) continue;
        groups_[g].cas += cas_at_[s];
        groups_[g].component = sw_component_[s];
      }
      // adj_ lists each live link once per side: count the side leaving the group.
      for (const Adjacent& a : adj_) {
        uint32_t g = group_of_[kind][a.from];
        if (g == kNone || group_of_[kind][a.to] == g) continue;
        ++groups_[g].live;
        if (!drained_[a.link.value()]) ++groups_[g].usable;
      }
    }
  }

  // Up-closure of every switch with CAs, as bits over switches.
  void build_updown() {
    const uint32_t num_sw = static_cast<uint32_t>(level_.size());
    words_ = (num_sw + 63) / 64;
    up_bits_.assign(static_cast<size_t>(num_sw) * words_, 0);
    std::vector<std::vector<uint32_t>> ups(num_sw);
    for (const Adjacent& a : adj_) {
      if (level_[a.to] > level_[a.from]) ups[a.from].push_back(a.to);
    }
    std::vector<uint32_t> queue;
    std::vector<uint32_t> seen(num_sw, kNone);
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (!cas_at_[s]) continue;
      uint64_t* bits = &up_bits_[static_cast<size_t>(s) * words_];
      queue.assign(1, s);
      seen[s] = s;
      for (size_t head = 0; head < queue.size(); ++head) {
        uint32_t x = queue[head];
        bits[x / 64] |= uint64_t{1} << (x % 64);
        for (uint32_t y : ups[x]) {
          if (seen[y] != s) {
            seen[y] = s;
            queue.push_back(y);
          }
        }
      }
    }
  }

  const Fabric& f_;
  std::vector<uint8_t> drained_;
  std::vector<int32_t> level_of_node_;
  std::vector<uint32_t> sw_of_node_;
  std::vector<int32_t> level_;  // per switch index
  int32_t top_level_ = 0;
  std::vector<uint32_t> hop_begin_;
  std::vector<Hop> hops_;
  std::vector<uint32_t> ca_of_port_;
  std::vector<LiveCa> cas_;  // by PortId
  uint64_t dead_cas_ = 0;
  std::vector<uint32_t> cas_at_;
  std::vector<Adjacent> adj_;  // each live switch-switch link once from each side
  std::vector<uint32_t> sw_component_;
  std::vector<uint64_t> component_cas_;
  std::vector<Group> groups_;
  std::vector<uint32_t> group_of_[2];
  uint32_t words_ = 0;
  std::vector<uint64_t> up_bits_;
  SpinesBound spines_;
};

}  // namespace railyard::routing::test
