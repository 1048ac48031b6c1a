// ShiftFeasibility: can ANY forwarding table meet a set of permutations'
// bounds on a (possibly degraded) fabric? An exact answer from a SAT solver
// (z3), to tell a target the engine misses from a target no table can meet.
//
// The model, built from the Fabric alone (none of the engine's code):
//  - A table is one output port per (switch, destination CA port), as an LFT
//    is. Only minimal legal routes: from switch s toward destination leaf D,
//    if s reaches D going only down it takes a port on such a shortest down
//    route, else a port up toward a switch with a shortest up*/down* route to
//    D (levels from cut_oracle.h's switch_levels). Links that are down are
//    not cabled; every live switch-switch link is usable (nothing drained).
//  - One Boolean per (switch, destination, candidate port), exactly one true
//    where a flow to that destination can arrive. The switches a flow from
//    leaf S to destination d crosses follow from those (Tseitin: crosses(s)
//    = OR over candidates t -> s of crosses(t) AND port(t, d, ->s)).
//  - Per permutation and directed switch-switch link, at most bound + slack
//    of its flows cross it, bound being CutOracle::flows_bound of that
//    permutation (CA links carry one flow each in a permutation anyway).
// Unsatisfiable = no LFT of minimal legal routes meets the bounds (a subset
// of the permutations being unsatisfiable is enough: the full set only adds
// constraints; on fat trees every legal route between two leaves is a
// minimal one anyway). Satisfiable = some LFT does (only when every
// permutation of the target was given).
#pragma once

#include <z3++.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "routing/congestion.h"
#include "routing/fabric.h"
#include "tests/routing/cut_oracle.h"

namespace railyard::routing::test {

enum class Feasible : uint8_t { kYes, kNo, kUnknown };

inline const char* to_string(Feasible f) {
  switch (f) {
    case Feasible::kYes: return "feasible";
    case Feasible::kNo: return "infeasible";
    case Feasible::kUnknown: break;
  }
  return "unknown (solver timeout)";
}

class ShiftFeasibility {
 public:
  explicit ShiftFeasibility(const Fabric& f) : f_(f), level_(switch_levels(f)) {
    const auto& sw = f.switches();
    sw_of_node_.assign(f.num_nodes(), kNone);
    for (uint32_t s = 0; s < sw.size(); ++s) sw_of_node_[sw[s].value()] = s;
    adj_.resize(sw.size());
    leaf_of_port_.assign(f.num_ports(), kNone);
    leaf_port_of_ca_.assign(f.num_ports(), 0);
    for (uint32_t s = 0; s < sw.size(); ++s) {
      const Node& nd = f.node(sw[s]);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        PortId pid = f.port_id(sw[s], PortNum{static_cast<uint8_t>(p)});
        const Port& port = f.port(pid);
        if (!port.link.valid() || !port.remote.valid() || f.link(port.link).state == PortState::kDown) continue;
        NodeId r = f.port(port.remote).node;
        if (f.is_switch(r)) {
          if (r != sw[s]) adj_[s].push_back({sw_of_node_[r.value()], directed_link(f, pid), static_cast<uint8_t>(p)});
        } else {
          leaf_of_port_[port.remote.value()] = s;
          leaf_port_of_ca_[port.remote.value()] = static_cast<uint8_t>(p);
        }
      }
    }
  }

  // Is there a table under which every permutation of `by_k` loads each
  // directed switch-switch link with at most its bound + slack (slack may be
  // negative)? `oracle`
  // (on the same fabric) gives the bounds. With `fixed`, the table is that
  // one (its ports outside the minimal legal candidates make it infeasible):
  // the model then only checks it, a cross-check of the model against
  // CutOracle's own walk.
  // With `before` and `max_changed`, at most that many modelled entries may
  // differ from `before` (path stability; entries outside the model are not
  // counted, so an unsatisfiable answer holds for whole tables too). With
  // `may_change` too (one byte per switch x LID of `before`), the other
  // modelled entries keep their port in `before`.
  // With `a2a_cap`, all-to-all too: every directed switch-switch link carries
  // at most that many flows when every CA sends to every other (the flows of
  // a source leaf to one destination weigh the leaf's CAs).
  Feasible solve(const CutOracle& oracle, const std::vector<std::vector<Flow>>& by_k, int32_t slack,
                 unsigned timeout_ms, const ForwardingTables* fixed = nullptr,
                 const ForwardingTables* before = nullptr, uint64_t max_changed = 0,
                 const std::vector<uint8_t>* may_change = nullptr, uint64_t a2a_cap = 0) {
    z3::context ctx;
    z3::solver solver(ctx);
    z3::params params(ctx);
    params.set("timeout", timeout_ms);
    solver.set(params);
    Model m(ctx);
    m.fixed = fixed;
    for (const std::vector<Flow>& flows : by_k) {
      if (flows.empty()) continue;
      const int64_t bound = static_cast<int64_t>(oracle.flows_bound(flows));
      const uint64_t cap = static_cast<uint64_t>(std::max<int64_t>(bound + slack, 0));
      std::map<uint32_t, z3::expr_vector> load;  // directed link -> its flows' crossings
      for (const Flow& fl : flows) {
        uint32_t src = leaf_of_port_[fl.src.value()], dst = leaf_of_port_[fl.dst.value()];
        if (src == kNone || dst == kNone || src == dst) continue;
        const Paths& p = paths(solver, m, src, fl.dst, dst);
        for (const auto& [link, crosses] : p.uses) load.try_emplace(link, ctx).first->second.push_back(crosses);
      }
      for (auto& [link, v] : load) {
        if (v.size() > cap) solver.add(z3::atmost(v, static_cast<unsigned>(cap)));
      }
    }
    if (a2a_cap != 0) all_to_all_within(solver, m, a2a_cap);
    if (before) {
      z3::expr_vector changed(ctx);
      for (const auto& [key, vars] : m.port) {
        auto [sw, dst] = key;
        const Toward& t = m.toward.at(leaf_of_port_[dst]);
        uint8_t was = before->get(sw, f_.port(PortId(dst)).lid);
        z3::expr kept = ctx.bool_val(false);
        for (uint32_t i = 0; i < vars.size(); ++i) {
          if (adj_[sw][t.next[sw][i]].port == was) kept = vars[i];
        }
        changed.push_back(!kept);
        if (may_change && !(*may_change)[static_cast<size_t>(sw) * before->num_lids() + f_.port(PortId(dst)).lid.value])
          solver.add(kept);
      }
      if (max_changed < changed.size()) solver.add(z3::atmost(changed, static_cast<unsigned>(max_changed)));
    }
    switch (solver.check()) {
      case z3::sat: {
        // The table found: the chosen port of every entry a flow can reach.
        const uint32_t lids = f_.max_lid().value + 1u;
        solution_ = ForwardingTables(static_cast<uint32_t>(adj_.size()), lids);
        z3::model model = solver.get_model();
        for (uint32_t dst = 0; dst < leaf_of_port_.size(); ++dst) {
          if (leaf_of_port_[dst] != kNone && m.toward.count(leaf_of_port_[dst]))
            solution_.set(leaf_of_port_[dst], f_.port(PortId(dst)).lid, leaf_port_of_ca_[dst]);
        }
        for (const auto& [key, vars] : m.port) {
          auto [s, dst] = key;
          const Toward& t = m.toward.at(leaf_of_port_[dst]);
          for (uint32_t i = 0; i < vars.size(); ++i) {
            if (model.eval(vars[i], true).is_true()) solution_.set(s, f_.port(PortId(dst)).lid, adj_[s][t.next[s][i]].port);
          }
        }
        return Feasible::kYes;
      }
      case z3::unsat: return Feasible::kNo;
      default: return Feasible::kUnknown;
    }
  }

  // After a feasible solve(): the table found, on the entries the flows use
  // (the others kNoPath).
  const ForwardingTables& solution() const { return solution_; }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  static constexpr uint32_t kFar = std::numeric_limits<uint32_t>::max() / 2;

  struct Adjacent {
    uint32_t sw;
    uint32_t link;  // directed_link from this switch
    uint8_t port;
  };
  // Minimal legal next hops toward one destination leaf, per switch.
  struct Toward {
    std::vector<uint32_t> dist;                  // up*/down* hops to the leaf
    std::vector<std::vector<uint32_t>> next;     // indices into adj_[s]
  };
  // What a flow from one leaf to one destination may cross.
  struct Paths {
    std::vector<std::pair<uint32_t, z3::expr>> uses;  // directed link, "the flow crosses it"
  };
  struct Model {
    explicit Model(z3::context& c) : ctx(c) {}
    z3::context& ctx;
    const ForwardingTables* fixed = nullptr;
    std::map<uint32_t, Toward> toward;                           // by destination leaf
    std::map<std::pair<uint32_t, uint32_t>, std::vector<z3::expr>> port;  // (switch, dst port) -> one per candidate
    std::map<std::pair<uint32_t, uint32_t>, Paths> paths;        // (source leaf, dst port)
  };

  const Toward& toward(Model& m, uint32_t leaf) const {
    auto it = m.toward.find(leaf);
    if (it != m.toward.end()) return it->second;
    const uint32_t n = static_cast<uint32_t>(adj_.size());
    Toward t;
    // Down distances: over links to a strictly lower level, from the leaf up.
    std::vector<uint32_t> down(n, kFar);
    down[leaf] = 0;
    std::vector<uint32_t> order(n);
    for (uint32_t s = 0; s < n; ++s) order[s] = s;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return lvl(a) < lvl(b); });
    for (uint32_t s : order) {
      for (const Adjacent& a : adj_[s]) {
        if (lvl(a.sw) < lvl(s) && down[a.sw] + 1 < down[s]) down[s] = down[a.sw] + 1;
      }
    }
    // Up*/down* distances: the down one, or one up and the rest from there.
    t.dist = down;
    for (auto it2 = order.rbegin(); it2 != order.rend(); ++it2) {
      uint32_t s = *it2;
      if (down[s] < kFar) continue;
      for (const Adjacent& a : adj_[s]) {
        if (lvl(a.sw) > lvl(s) && t.dist[a.sw] + 1 < t.dist[s]) t.dist[s] = t.dist[a.sw] + 1;
      }
    }
    t.next.resize(n);
    for (uint32_t s = 0; s < n; ++s) {
      if (s == leaf || t.dist[s] >= kFar) continue;
      for (uint32_t i = 0; i < adj_[s].size(); ++i) {
        const Adjacent& a = adj_[s][i];
        bool downward = down[s] < kFar;
        if (downward ? (lvl(a.sw) < lvl(s) && down[a.sw] + 1 == down[s])
                     : (lvl(a.sw) > lvl(s) && t.dist[a.sw] + 1 == t.dist[s]))
          t.next[s].push_back(i);
      }
    }
    return m.toward.emplace(leaf, std::move(t)).first->second;
  }

  // The candidate-port Booleans of (switch, destination), exactly one true.
  const std::vector<z3::expr>& port(z3::solver& solver, Model& m, uint32_t s, PortId dst, const Toward& t) const {
    auto key = std::make_pair(s, dst.value());
    auto it = m.port.find(key);
    if (it != m.port.end()) return it->second;
    std::vector<z3::expr> v;
    z3::expr_vector all(m.ctx);
    for (uint32_t i = 0; i < t.next[s].size(); ++i) {
      std::string name = "p" + std::to_string(s) + "_" + std::to_string(dst.value()) + "_" + std::to_string(i);
      v.push_back(m.ctx.bool_const(name.c_str()));
      all.push_back(v.back());
    }
    if (m.fixed) {
      uint8_t chosen = m.fixed->get(s, f_.port(dst).lid);
      for (uint32_t i = 0; i < t.next[s].size(); ++i) {
        solver.add(all[i] == m.ctx.bool_val(adj_[s][t.next[s][i]].port == chosen));
      }
    }
    if (all.size() == 1) {
      solver.add(all[0]);
    } else if (all.size() > 1) {
      solver.add(z3::mk_or(all));
      solver.add(z3::atmost(all, 1));
    }
    return m.port.emplace(key, std::move(v)).first->second;
  }

  const Paths& paths(z3::solver& solver, Model& m, uint32_t src, PortId dst, uint32_t dst_leaf) const {
    auto key = std::make_pair(src, dst.value());
    auto it = m.paths.find(key);
    if (it != m.paths.end()) return it->second;
    const Toward& t = toward(m, dst_leaf);
    Paths out;
    if (t.dist[src] < kFar) {
      // Switches by decreasing distance: every candidate hop is one closer.
      std::map<uint32_t, z3::expr_vector> into;  // switch -> the crossings that reach it
      std::vector<uint32_t> frontier = {src};
      std::map<uint32_t, z3::expr> reached;
      reached.emplace(src, m.ctx.bool_val(true));
      for (uint32_t d = t.dist[src]; d > 0; --d) {
        std::vector<uint32_t> next_frontier;
        for (uint32_t s : frontier) {
          z3::expr here = reached.at(s);
          const std::vector<z3::expr>& ports = port(solver, m, s, dst, t);
          for (uint32_t i = 0; i < t.next[s].size(); ++i) {
            const Adjacent& a = adj_[s][t.next[s][i]];
            std::string name = "u" + std::to_string(src) + "_" + std::to_string(dst.value()) + "_" +
                               std::to_string(a.link);
            z3::expr crosses = m.ctx.bool_const(name.c_str());
            solver.add(crosses == (here && ports[i]));
            out.uses.emplace_back(a.link, crosses);
            auto [slot, fresh] = into.try_emplace(a.sw, m.ctx);
            slot->second.push_back(crosses);
            if (fresh) next_frontier.push_back(a.sw);
          }
        }
        for (uint32_t s : next_frontier) {
          if (s == dst_leaf) continue;
          std::string name = "r" + std::to_string(src) + "_" + std::to_string(dst.value()) + "_" + std::to_string(s);
          z3::expr r = m.ctx.bool_const(name.c_str());
          solver.add(r == z3::mk_or(into.at(s)));
          reached.emplace(s, r);
        }
        std::erase(next_frontier, dst_leaf);
        frontier = std::move(next_frontier);
      }
    }
    return m.paths.emplace(key, std::move(out)).first->second;
  }

  // Every (source leaf, destination CA) route of all-to-all, each weighing
  // the leaf's CAs: at most `cap` on every directed switch-switch link.
  void all_to_all_within(z3::solver& solver, Model& m, uint64_t cap) const {
    std::vector<uint32_t> cas(adj_.size(), 0);
    std::vector<PortId> dsts;
    for (uint32_t p = 0; p < leaf_of_port_.size(); ++p) {
      if (leaf_of_port_[p] == kNone || !f_.port(PortId(p)).lid.valid()) continue;
      ++cas[leaf_of_port_[p]];
      dsts.push_back(PortId(p));
    }
    std::map<uint32_t, std::pair<z3::expr_vector, std::vector<int>>> load;  // directed link -> crossings, weights
    for (uint32_t src = 0; src < adj_.size(); ++src) {
      if (cas[src] == 0) continue;
      for (PortId d : dsts) {
        const uint32_t leaf = leaf_of_port_[d.value()];
        if (leaf == src) continue;
        for (const auto& [link, crosses] : paths(solver, m, src, d, leaf).uses) {
          auto& slot = load.try_emplace(link, z3::expr_vector(m.ctx), std::vector<int>()).first->second;
          slot.first.push_back(crosses);
          slot.second.push_back(static_cast<int>(cas[src]));
        }
      }
    }
    for (auto& [link, l] : load) {
      uint64_t most = 0;
      for (int w : l.second) most += static_cast<uint64_t>(w);
      if (most > cap) solver.add(z3::pble(l.first, l.second.data(), static_cast<int>(cap)));
    }
  }

  int32_t lvl(uint32_t s) const { return level_[f_.switches()[s].value()]; }

  const Fabric& f_;
  std::vector<int32_t> level_;
  std::vector<uint32_t> sw_of_node_;
  std::vector<std::vector<Adjacent>> adj_;
  std::vector<uint32_t> leaf_of_port_;     // CA port -> its switch (live link)
  std::vector<uint8_t> leaf_port_of_ca_;   // CA port -> that switch's port to it
  ForwardingTables solution_;
};

}  // namespace railyard::routing::test
