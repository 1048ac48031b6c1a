// After phase B: relieve the busiest links by moving single choices.
//
// Phases A and B decide switch by switch and destination by destination,
// greedily. Where a failure leaves less capacity than the flows that must
// cross it (a core down takes a link from every spine of its plane), the
// greedy choices come in lumps: a spine sends every flow it carries for a
// destination through one port, so the last lumps land on links already at
// the bound. This pass takes the busiest switch link and, destination by
// destination through it, moves single choices (switch, destination) of the
// switches whose flows cross it to another shortest next hop: the move that
// leaves the lower of the link and the busiest link it joins, which must
// stay below the link's load. It goes on while the busiest link is more than
// 1/64 above the all-to-all bound (the leaf cut bound, and the flows each CA
// receives on its own link) and can be lowered, within kMaxSteps table reads
// (2^19: the 1,024-CA fabrics tested reach their floor within 2^18, a core
// down on 2,048 CAs needs more; on 16k CAs, where a move costs the ~500
// switches upstream of one link, the pass does what the budget allows: one
// core down 1.027x, as with 2^20).
//
// Rail-aligned shifts: a leaf's move keeps off the up slots the extra flows
// of its shifts took (phase B's rule, choose_up) while the link is within
// 1.05x the bound, and records the slot it takes; above that the all-to-all
// target comes first.
//
// A move keeps the route minimal and up*/down*: the new next hop is in the
// same direction, and its own route (from the tables) is as long as the
// rest of the old one, all down if the switch was going down, without a
// drained link (switches whose route used one are left alone). The tables
// so stay deadlock-free on one VL. The pass reads only the tables, the loads
// and the extra slots, and walks a fixed order that does not depend on the
// node order (busiest link, ties by GUID and port; destinations by LID; moves
// by the load they leave, then the most flows, then GUID and port): an
// incremental route that starts from the same tables and loads makes the
// same moves (the memo keeps them, so that it can undo them first:
// RouteMemo::moves).
#include <algorithm>
#include <queue>
#include <tuple>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

namespace {
constexpr uint32_t kMaxHops = 64;
// The pass's work, in table entries read, at most: bounds it on large
// fabrics, where a move costs about the switches upstream of one link.
constexpr uint64_t kMaxSteps = uint64_t{1} << 19;
}  // namespace

// The entries of the path from switch x to the target switch t of `lid`, as
// the tables have it, into `out`; false if it does not arrive.
bool Engine::table_path(uint32_t x, uint32_t t, Lid lid, std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t h = 0; h < kMaxHops; ++h) {
    if (x == t) return true;
    const uint8_t p = tables_.get(x, lid);
    if (p == ForwardingTables::kNoPath) return false;
    const uint32_t e = entry_of_port(x, p);
    if (e == kNone) return false;
    out.push_back(e);
    x = remote(e);
  }
  return false;
}

void Engine::relieve_hot_links(std::vector<TableMove>& moves) {
  if (!flows_ || ca_ports_.empty()) return;
  const uint32_t n = g_.num_switches();
  const uint64_t bound = std::max<uint64_t>(capacity_, ca_ports_.size() - 1);
  const uint64_t enough = bound + bound / 64;
  // Above this (1.05x) a leaf's flows may also take an up slot an extra
  // flow of one of its rail-aligned shifts took: the all-to-all target
  // first, the shift after.
  const uint64_t too_hot = bound + bound / 20;
  // The links by load, busiest first, then by their switch's GUID and port
  // (not by index: the result must not depend on the node order); stale
  // keys (the load moved since) are dropped when they come up.
  using Key = std::tuple<uint64_t, uint32_t, uint8_t, uint32_t>;  // load, ~GUID rank, ~port, entry
  std::priority_queue<Key> by_load;
  auto note = [&](uint32_t e) {
    if (load_[e] > enough) {
      by_load.emplace(load_[e], UINT32_MAX - guid_rank_[owner(e)], static_cast<uint8_t>(255 - port(e)), e);
    }
  };
  auto busiest = [&]() -> uint32_t {
    while (!by_load.empty() && load_[std::get<3>(by_load.top())] != std::get<0>(by_load.top())) by_load.pop();
    return by_load.empty() ? kNone : std::get<3>(by_load.top());
  };
  for (uint32_t e = 0; e < load_.size(); ++e) {
    if (load_[e] > enough) note(e);
  }
  if (by_load.empty()) return;  // no link above the bound (most reroutes)

  // The target switch of every CA LID.
  std::vector<uint32_t> lid_target(tables_.num_lids(), kNone);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t i = ca_begin_[s]; i < ca_begin_[s + 1]; ++i) {
      const CaPort& p = ca_info_[i];
      for (uint32_t k = 0; k < (1u << p.lmc); ++k) {
        const uint32_t lid = p.lid.value + k;
        if (lid > 0 && lid < lid_target.size()) lid_target[lid] = s;
      }
    }
  }

  // For the destination at hand: the switches whose route goes through the
  // hot link's switch u (its in-tree, from u outward: `order`, `parent`),
  // the flows through each, those moved off already (`gone`), and the way on
  // from each switch a candidate leads to (walked once, until a move).
  std::vector<uint32_t> flow(n, 0), parent(n, kNone), seen(n, 0), order, old_path, new_path;
  std::vector<uint8_t> gone(n, 0);
  struct Way {
    uint32_t begin = 0, hops = 0;
    bool arrives = false, crosses_hot = false, drained = false, climbs = false;
  };
  std::vector<Way> way(n);
  std::vector<uint32_t> way_seen(n, 0), way_entries;
  uint32_t stamp = 0, way_stamp = 0;
  uint64_t steps = 0;
  auto has = [](const std::vector<uint32_t>& path, uint32_t e) {
    return std::find(path.begin(), path.end(), e) != path.end();
  };

  for (uint32_t hot = busiest(); hot != kNone && steps < kMaxSteps; hot = busiest()) {
    const uint32_t u = owner(hot);
    const auto row = tables_.row(u);
    bool moved = false, overtaken = false;
    for (uint32_t l = 1; l < row.size() && !overtaken && load_[hot] > enough && steps < kMaxSteps; ++l) {
      const uint32_t t = lid_target[l];
      if (row[l] != port(hot) || t == kNone) continue;
      const Lid lid{static_cast<uint16_t>(l)};
      // A switch takes flows from below, and from above only where it goes
      // down itself; its own CA ports send one flow each (but on the
      // destination's leaf).
      ++stamp;
      order.assign(1, u);
      seen[u] = stamp;
      for (size_t i = 0; i < order.size(); ++i) {
        const uint32_t y = order[i];
        gone[y] = 0;
        flow[y] = y == t ? 0 : ca_begin_[y + 1] - ca_begin_[y];
        const uint32_t out = entry_of_port(y, tables_.get(y, lid));
        auto take = [&](const Entry& x) {
          ++steps;
          if (seen[x.remote] != stamp && tables_.get(x.remote, lid) == x.rport) {
            seen[x.remote] = stamp;
            parent[x.remote] = y;
            order.push_back(x.remote);
          }
        };
        for (uint32_t j = down_begin_[y]; j < down_begin_[y + 1]; ++j) take(down_rec_[j]);
        if (out != kNone && !ent_[out].up) {
          for (uint32_t j = up_begin_[y]; j < up_begin_[y + 1]; ++j) take(up_rec_[j]);
        }
      }
      for (size_t i = order.size(); i-- > 1;) flow[parent[order[i]]] += flow[order[i]];
      ++way_stamp;
      auto way_from = [&](uint32_t r) -> const Way& {
        Way& w = way[r];
        if (way_seen[r] == way_stamp) return w;
        way_seen[r] = way_stamp;
        w = Way{};
        w.begin = static_cast<uint32_t>(way_entries.size());
        w.arrives = table_path(r, t, lid, new_path);
        w.hops = static_cast<uint32_t>(new_path.size());
        steps += w.hops + 1;
        for (uint32_t e : new_path) {
          way_entries.push_back(e);
          w.crosses_hot = w.crosses_hot || e == hot;
          w.drained = w.drained || ent_[e].drained;
          w.climbs = w.climbs || ent_[e].up;
        }
        return w;
      };
      // Moves of this destination, best first, while they lower the link.
      while (load_[hot] > enough && flow[u] > 0) {
        const uint64_t hot_load = load_[hot];
        uint32_t best_x = kNone, best_c = kNone, best_f = 0;
        uint64_t best_after = 0;
        bool best_free = false;
        for (uint32_t x : order) {
          const uint32_t f = flow[x];
          const uint32_t a = leaf_id_[x], bl = leaf_id_[t];
          // A leaf's flows into its own ring keep the leaf's permutation of
          // slots (each rail-aligned shift meets every up link once): moved
          // as a taken slot is, last (a leaf other than t goes up).
          const bool own_ring = rings_first() && x != t && same_ring(x, t);
          if (own_ring && hot_load <= too_hot) continue;
          if (gone[x] || f == 0 || !table_path(x, t, lid, old_path)) continue;
          // A leaf's extra flows stay off the up slots the extra flows of
          // its rail-aligned shifts took (phase B's rule, choose_up).
          uint64_t taken = 0;
          if (a != kNone && bl != kNone) {
            taken = extra(a, bl) | extra(a, ring_prev_[bl]) | extra(a, ring_next_[bl]) | extra(ring_prev_[a], bl) |
                    extra(ring_next_[a], bl);
          }
          steps += old_path.size();
          const Entry& first = ent_[old_path.front()];
          bool old_drained = false;
          for (uint32_t e : old_path) old_drained = old_drained || ent_[e].drained;
          if (old_drained) continue;  // tier 2: leave it to the phases that chose it
          const uint32_t b = first.up ? up_begin_[x] : down_begin_[x];
          const uint32_t end = first.up ? up_begin_[x + 1] : down_begin_[x + 1];
          for (uint32_t j = b; j < end; ++j) {
            const uint32_t c = first.up ? up_entries_[j] : down_entries_[j];
            if (c == old_path.front() || ent_[c].drained) continue;
            const bool free = !own_ring && (!first.up || !(taken >> (up_slot(x, c) % 64) & 1));
            if (!free && hot_load <= too_hot) continue;
            const Way& w = way_from(remote(c));
            if (!w.arrives || w.hops + 1 != old_path.size() || w.crosses_hot || w.drained || (!first.up && w.climbs)) {
              continue;
            }
            // Links only on the new path gain f flows; the busiest of them
            // must stay below the hot link's load.
            uint64_t peak = load_[c] + f;
            for (uint32_t k = w.begin; k < w.begin + w.hops; ++k) {
              if (!has(old_path, way_entries[k])) peak = std::max(peak, load_[way_entries[k]] + f);
            }
            if (peak >= hot_load) continue;
            // The higher of the two links the move sets against each other.
            const uint64_t after = std::max(peak, hot_load - f);
            if (best_x == kNone || (free && !best_free) || (free == best_free && after < best_after) ||
                (free == best_free && after == best_after && (f > best_f || (f == best_f && (guid_rank_[x] < guid_rank_[best_x] ||
                                                                          (x == best_x && port(c) < port(best_c))))))) {
              best_x = x;
              best_c = c;
              best_f = f;
              best_after = after;
              best_free = free;
            }
          }
        }
        if (best_x == kNone) break;
        // The flows leave the old path and take the new one.
        table_path(best_x, t, lid, old_path);
        table_path(remote(best_c), t, lid, new_path);
        new_path.insert(new_path.begin(), best_c);
        for (uint32_t e : old_path) load_[e] -= best_f;
        for (uint32_t e : new_path) load_[e] += best_f;
        for (uint32_t e : old_path) note(e);
        for (uint32_t e : new_path) note(e);
        if (leaf_id_[best_x] != kNone && leaf_id_[t] != kNone && ent_[best_c].up) {
          mark_extra(leaf_id_[best_x], leaf_id_[t], up_slot(best_x, best_c));
        }
        moves.push_back(TableMove{best_x, lid.value, tables_.get(best_x, lid)});
        tables_.set(best_x, lid, port(best_c));
        moved = true;
        // best_x and the switches sending through it no longer cross the
        // link; the switches between it and u carry its flows no more.
        for (uint32_t y : order) gone[y] = gone[y] || y == best_x || (y != u && gone[parent[y]]);
        for (uint32_t y = best_x; y != u;) {
          y = parent[y];
          flow[y] -= best_f;
        }
        ++way_stamp;  // routes through best_x moved
        way_entries.clear();
        const uint32_t top = busiest();
        overtaken = top != kNone && top != hot && load_[top] > load_[hot];
        if (overtaken) break;
      }
    }
    if (!moved) break;  // the busiest link cannot be lowered
  }
}

}  // namespace railyard::routing::unicast
