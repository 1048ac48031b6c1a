// Switch LIDs that up*/down* cannot reach: one designated turn switch.
//
// Under up*/down* a spine of a two-level tree cannot reach another spine (that
// is down then up), nor a core of a three-level tree another core of its
// plane. Management traffic (ibroute, perfquery, ibtracert by LID) needs those
// pairs, and so do the pairs a degraded tree leaves without a route to a
// leaf's LID (a spine or core that lost its link into the leaf; a leaf's LID
// follows the route of one of its CAs). After every lane has routed, each
// switch-LID entry that is still empty is filled with the same switch's
// entry for the LID of one designated switch T: the packet climbs and
// descends toward T as it would to T, and the first switch on the way that
// has an up*/down* route of its own to the destination takes over; T itself
// must reach the destination by up*/down*. Routed entries are never changed,
// so CA LIDs and every entry up*/down* already had (a leaf LID's too) keep
// their tables.
//
// Why the channel dependency graph stays acyclic (Dally & Seitz 1987). Let
// Anc(T) be T and every switch above it (reachable from T going only up). A
// down-then-up dependency (a turn) now appears only where a packet heading for
// T, on the way down, reaches a switch that climbs to the destination; every
// switch on the way down to T is in Anc(T), so every turn is at a switch of
// Anc(T). Any cycle needs a turn (up*/down* alone is acyclic), and between two
// turns it goes up, then down into a turn switch: every switch on that stretch
// is above a switch of Anc(T), hence in Anc(T). So the whole cycle runs over
// links inside Anc(T). T is chosen so that Anc(T) is a tree (every switch of it
// but T has exactly one lower neighbour in it; parallel links are fine), and a
// cycle is then a closed walk in a tree that never steps straight back (no
// route visits a switch twice), which does not exist. In a fat tree (2 or 3
// levels, ROFT, rail-only, healthy or with links missing) every leaf
// qualifies: its spines, and above each spine that spine's own core plane.
// Switch graphs in several pieces (rail-only: one per rail) get one turn
// switch per piece; no route crosses pieces. With no qualifying switch a
// piece's empty entries stay empty (the verifier counts them).
#include <algorithm>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

namespace {

// Whether the up-closure of c is a tree: no switch above c is reached from
// two different lower switches.
bool up_closure_is_tree(const SwitchGraph& g, const Ranking& rk, uint32_t c, std::vector<uint32_t>& parent,
                        std::vector<uint32_t>& seen, uint32_t stamp, std::vector<uint32_t>& queue) {
  queue.assign(1, c);
  seen[c] = stamp;
  parent[c] = kNone;
  for (size_t h = 0; h < queue.size(); ++h) {
    const uint32_t v = queue[h];
    for (uint32_t e = g.begin(v); e < g.end(v); ++e) {
      const uint32_t w = g.remote(e);
      if (!rk.up(v, w)) continue;
      if (seen[w] == stamp) {
        if (parent[w] != v) return false;
        continue;
      }
      seen[w] = stamp;
      parent[w] = v;
      queue.push_back(w);
    }
  }
  return true;
}

}  // namespace

SwitchTurns route_switch_turns(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                               ForwardingTables& tables) {
  const uint32_t n = g.num_switches();
  SwitchTurns out;
  // Switch LIDs, their owners, and each switch's base LID (0 = none): the
  // LIDs of switches without CAs (spines, cores: `lids`, which also choose
  // T) and those of leaves (`leaf_lids`, only filled: a leaf's LID follows
  // the route of one of its CAs, engine.cpp, and keeps it).
  std::vector<uint16_t> lids, leaf_lids, base(n, 0);
  std::vector<uint32_t> lid_owner, leaf_owner;
  for (uint32_t s = 0; s < n; ++s) {
    const Port& p0 = fabric.port(fabric.node(g.node(s)).first_port);
    if (!p0.lid.valid()) continue;
    base[s] = p0.lid.value;
    const bool leaf = g.num_cas(s) != 0;
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
      const Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
      if (!lid.valid() || lid.value >= tables.num_lids()) continue;
      (leaf ? leaf_lids : lids).push_back(lid.value);
      (leaf ? leaf_owner : lid_owner).push_back(s);
    }
  }
  // In LID order: rows are read at these LIDs, scattered over each row
  // (OpenSM gives LIDs in the order it discovers ports).
  auto sort_by_lid = [](std::vector<uint16_t>& l, std::vector<uint32_t>& owner) {
    std::vector<uint32_t> order(l.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return l[a] < l[b]; });
    std::vector<uint16_t> sorted_lids(l.size());
    std::vector<uint32_t> sorted_owner(l.size());
    for (size_t i = 0; i < order.size(); ++i) {
      sorted_lids[i] = l[order[i]];
      sorted_owner[i] = owner[order[i]];
    }
    l = std::move(sorted_lids);
    owner = std::move(sorted_owner);
  };
  sort_by_lid(lids, lid_owner);
  sort_by_lid(leaf_lids, leaf_owner);
  std::vector<std::pair<uint16_t, uint32_t>> bases;  // (base LID, switch), by LID
  for (uint32_t c = 0; c < n; ++c) {
    if (base[c] != 0) bases.emplace_back(base[c], c);
  }
  std::sort(bases.begin(), bases.end());
  // One pass over the rows: per switch, the spine and core LIDs it reaches
  // plus the switches reaching its LID; whether any entry is missing at all.
  std::vector<uint64_t> score(n, 0);
  bool missing = false;
  for (uint32_t s = 0; s < n; ++s) {
    auto row = tables.row(s);
    for (size_t i = 0; i < lids.size(); ++i) {
      if (row[lids[i]] != ForwardingTables::kNoPath) {
        ++score[s];
      } else if (lid_owner[i] != s) {
        missing = true;
      }
    }
    for (const auto& [lid, c] : bases) score[c] += row[lid] != ForwardingTables::kNoPath;
    for (size_t i = 0; i < leaf_lids.size() && !missing; ++i) {
      missing = row[leaf_lids[i]] == ForwardingTables::kNoPath && leaf_owner[i] != s;
    }
  }
  if (!missing) return out;

  // Components of the switch graph (a rail-only fabric has one per rail):
  // no route crosses from one to another, so each gets its own turn switch.
  const std::vector<uint32_t> component = switch_pieces(g);
  const uint32_t components = n == 0 ? 0 : *std::max_element(component.begin(), component.end()) + 1;

  // The turn switch of each component: among switches with a LID whose
  // up-closure is a tree, the one that reaches the most spine and core LIDs
  // plus is reached from the most switches (then lowest rank, then lowest
  // GUID, so the choice does not depend on node order).
  std::vector<uint32_t> turn(components, kNone), parent(n, kNone), seen(n, 0), queue;
  uint32_t stamp = 0;
  for (uint32_t c = 0; c < n; ++c) {
    if (base[c] == 0) continue;
    const uint32_t best = turn[component[c]];
    if (best != kNone) {
      if (score[c] < score[best]) continue;
      if (score[c] == score[best]) {
        if (rk.rank[c] > rk.rank[best]) continue;
        if (rk.rank[c] == rk.rank[best] && fabric.node(g.node(c)).guid > fabric.node(g.node(best)).guid) continue;
      }
    }
    if (!up_closure_is_tree(g, rk, c, parent, seen, ++stamp, queue)) continue;
    turn[component[c]] = c;
  }

  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t t = turn[component[s]];
    if (t != kNone && s != t) out.turn_switches.push_back(t);
    auto row = tables.row(s);
    // t's own row is never filled (its entry for its LID is port 0).
    const uint8_t toward_turn = t == kNone || s == t ? ForwardingTables::kNoPath : row[base[t]];
    const std::span<const uint8_t> turn_row = t == kNone ? std::span<const uint8_t>{} : tables.row(t);
    // The empty entries of one kind of switch LID; the fills are kept for
    // the next incremental route.
    auto fill = [&](const std::vector<uint16_t>& at, const std::vector<uint32_t>& owner) {
      for (size_t i = 0; i < at.size(); ++i) {
        uint8_t& entry = row[at[i]];
        if (entry != ForwardingTables::kNoPath || owner[i] == s || component[owner[i]] != component[s]) continue;
        // Only through a turn switch that reaches the destination by
        // up*/down* (its row is never filled), in this piece of the fabric.
        if (toward_turn == ForwardingTables::kNoPath || turn_row[at[i]] == ForwardingTables::kNoPath) {
          ++out.left;
          continue;
        }
        entry = toward_turn;
        ++out.entries;
        out.fills.push_back({s, at[i], ForwardingTables::kNoPath});
      }
    };
    fill(lids, lid_owner);
    fill(leaf_lids, leaf_owner);
  }
  std::sort(out.turn_switches.begin(), out.turn_switches.end());
  out.turn_switches.erase(std::unique(out.turn_switches.begin(), out.turn_switches.end()), out.turn_switches.end());
  return out;
}

}  // namespace railyard::routing::unicast
