// Substitute planes for fat trees whose leaves each lost at most one uplink;
// the argument is in substitute_spines.h.
#include "routing/unicast_engine/substitute_spines.h"

#include <algorithm>
#include <tuple>

namespace railyard::routing::unicast {

SubstituteSpines::SubstituteSpines(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                                   const RoutingOptions& options) {
  leaf_id_.assign(g.num_switches(), kNo);
  active_ = build(fabric, g, rk, options);
  if (!active_) {
    std::fill(leaf_id_.begin(), leaf_id_.end(), kNo);
    return;
  }
  choose_extras();
}

// The setting of the header, read off the graph: two or three levels ranked
// from the CAs, links only leaf-spine and spine-core, pods (leaves joined
// through spines) with one spine per plane (spines joined through cores; on
// two levels every spine is its own plane), one cable per (leaf, spine) pair,
// at most one plane missing per leaf and at least one missing somewhere, and
// on three levels every spine with all its core links, slot k of a plane's
// spines reaching the same core; nothing drained.
bool SubstituteSpines::build(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                             const RoutingOptions& options) {
  if (rk.kind != RankingKind::kFromCas || (rk.levels != 2 && rk.levels != 3)) return false;
  if (!options.substitute_planes) return false;
  if (std::any_of(options.drained.begin(), options.drained.end(), [](uint8_t d) { return d != 0; })) return false;
  levels_ = rk.levels;
  const uint32_t n = g.num_switches();
  auto guid = [&](uint32_t s) { return fabric.node(g.node(s)).guid; };
  auto ring = [&](uint32_t s) -> uint64_t { return options.leaf_ring.empty() ? 0 : options.leaf_ring[s]; };
  auto key = [&](uint32_t s) -> uint64_t { return options.leaf_order_key.empty() ? 0 : options.leaf_order_key[s]; };
  std::vector<uint32_t> spines;
  for (uint32_t s = 0; s < n; ++s) {
    if (rk.rank[s] == 0) leaves_.push_back(s);
    if (rk.rank[s] == 1) spines.push_back(s);
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (rk.rank[s] + rk.rank[g.remote(e)] != 1 && rk.rank[s] + rk.rank[g.remote(e)] != 3) return false;
    }
  }
  // Leaves by ring, then leaf order (ties by GUID, so that the node order of
  // the fabric does not matter); spines by GUID.
  std::sort(leaves_.begin(), leaves_.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(ring(a), key(a), guid(a)) < std::make_tuple(ring(b), key(b), guid(b));
  });
  std::sort(spines.begin(), spines.end(), [&](uint32_t a, uint32_t b) { return guid(a) < guid(b); });
  const uint32_t nl = static_cast<uint32_t>(leaves_.size());
  for (uint32_t i = 0; i < nl; ++i) leaf_id_[leaves_[i]] = i;

  // Pods and planes as connected components (union-find over switch indices).
  std::vector<uint32_t> pod_root(n), plane_root(n);
  for (uint32_t s = 0; s < n; ++s) pod_root[s] = plane_root[s] = s;
  auto find = [](std::vector<uint32_t>& root, uint32_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (uint32_t s : spines) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      std::vector<uint32_t>& root = rk.rank[g.remote(e)] == 0 ? pod_root : plane_root;
      root[find(root, g.remote(e))] = find(root, s);
    }
  }
  std::vector<uint32_t> id_of_root(n, kNo);
  for (uint32_t s : spines) {
    uint32_t& id = id_of_root[find(plane_root, s)];
    if (id == kNo) id = planes_++;
  }
  if (planes_ < 3) return false;
  pod_.assign(nl, kNo);
  std::vector<uint32_t> pod_of_root(n, kNo);
  for (uint32_t a = 0; a < nl; ++a) {
    uint32_t& id = pod_of_root[find(pod_root, leaves_[a])];
    if (id == kNo) id = pods_++;
    pod_[a] = id;
  }
  spine_.assign(size_t(pods_) * planes_, kNo);
  for (uint32_t s : spines) {
    const uint32_t pod = pod_of_root[find(pod_root, s)], x = id_of_root[find(plane_root, s)];
    if (pod == kNo || spine_[size_t(pod) * planes_ + x] != kNo) return false;  // no leaf, or two spines of a plane
    spine_[size_t(pod) * planes_ + x] = s;
  }
  if (std::count(spine_.begin(), spine_.end(), kNo) != 0) return false;  // a pod without some plane

  // Leaf ports and nominal slots (port counted from the lowest up port of
  // any leaf, as the chains count them).
  uint32_t base = 255;
  for (uint32_t s : leaves_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) base = std::min<uint32_t>(base, g.port(e));
  }
  for (uint32_t s : leaves_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) slots_ = std::max<uint32_t>(slots_, g.port(e) - base + 1);
  }
  up_port_.assign(size_t(nl) * planes_, 0);
  down_port_.assign(size_t(nl) * planes_, 0);
  natural_.assign(size_t(nl) * slots_, kNo);
  dead_.assign(nl, kNo);
  bool any_missing = false;
  for (uint32_t a = 0; a < nl; ++a) {
    const uint32_t s = leaves_[a];
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      const uint32_t x = id_of_root[find(plane_root, g.remote(e))];
      if (up_port_[size_t(a) * planes_ + x] != 0) return false;  // a parallel cable
      up_port_[size_t(a) * planes_ + x] = g.port(e);
      down_port_[size_t(a) * planes_ + x] = g.port(g.rev(e));
      natural_[size_t(a) * slots_ + g.port(e) - base] = x;
    }
    for (uint32_t x = 0; x < planes_; ++x) {
      if (up_port_[size_t(a) * planes_ + x] != 0) continue;
      if (dead_[a] != kNo) return false;  // two planes missing
      dead_[a] = x;
      any_missing = true;
    }
  }
  if (!any_missing) return false;
  if (levels_ == 3 && !build_cores(g, rk)) return false;
  std::vector<uint64_t> rings(nl);
  for (uint32_t a = 0; a < nl; ++a) rings[a] = ring(leaves_[a]);
  build_rings(rings);
  return true;
}

// Three levels: destination leaf B comes down from the core at up slot k of
// its spine in each plane, k = B's down slot there (D-mod-K's next digit);
// the spines of every other pod climb to that core through their slot k.
bool SubstituteSpines::build_cores(const SwitchGraph& g, const Ranking& rk) {
  uint32_t base_up = 255, base_down = 255;
  for (uint32_t s : spine_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      uint32_t& base = rk.rank[g.remote(e)] == 2 ? base_up : base_down;
      base = std::min<uint32_t>(base, g.port(e));
    }
  }
  for (uint32_t s : spine_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (rk.rank[g.remote(e)] == 2) spine_slots_ = std::max<uint32_t>(spine_slots_, g.port(e) - base_up + 1);
    }
  }
  if (spine_slots_ == 0) return false;
  const size_t cells = spine_.size() * spine_slots_;
  spine_up_.assign(cells, 0);
  core_down_.assign(cells, 0);
  core_.assign(size_t(planes_) * spine_slots_, kNo);
  for (uint32_t i = 0; i < spine_.size(); ++i) {
    const uint32_t s = spine_[i], x = i % planes_;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (rk.rank[g.remote(e)] != 2) continue;
      const uint32_t k = g.port(e) - base_up;
      uint32_t& core = core_[size_t(x) * spine_slots_ + k];
      if (core != kNo && core != g.remote(e)) return false;  // slot k of the plane reaches two cores
      core = g.remote(e);
      spine_up_[size_t(i) * spine_slots_ + k] = g.port(e);
      core_down_[size_t(i) * spine_slots_ + k] = g.port(g.rev(e));
    }
  }
  if (std::count(spine_up_.begin(), spine_up_.end(), 0) != 0) return false;  // a missing core link
  core_slot_.assign(down_port_.size(), 0);
  for (size_t i = 0; i < down_port_.size(); ++i) {
    if (down_port_[i] != 0) core_slot_[i] = (down_port_[i] - base_down) % spine_slots_;
  }
  return true;
}

// Rings (runs of one leaf_ring value in leaf order) and, on three levels,
// the first and last leaf of every pod that lies contiguous in its ring.
void SubstituteSpines::build_rings(const std::vector<uint64_t>& ring) {
  const uint32_t nl = static_cast<uint32_t>(leaves_.size());
  ring_begin_.resize(nl);
  ring_size_.resize(nl);
  for (uint32_t i = 0; i < nl;) {
    uint32_t j = i;
    while (j < nl && ring[j] == ring[i]) ++j;
    for (uint32_t x = i; x < j; ++x) {
      ring_begin_[x] = i;
      ring_size_[x] = j - i;
    }
    i = j;
  }
  pod_last_.assign(nl, kNo);
  pod_first_.assign(nl, kNo);
  pod_size_.assign(pods_, 0);
  for (uint32_t a = 0; a < nl; ++a) ++pod_size_[pod_[a]];
  if (levels_ != 3) return;
  for (uint32_t a = 0; a < nl; ++a) {
    const uint32_t d = pod_size_[pod_[a]];
    if (ring_size_[a] <= d || pod_[ring_step(a, -1)] == pod_[a]) continue;
    const uint32_t last = ring_step(a, static_cast<int32_t>(d) - 1);
    bool contiguous = true;
    for (int32_t j = 1; j < static_cast<int32_t>(d); ++j) contiguous = contiguous && pod_[ring_step(a, j)] == pod_[a];
    if (!contiguous) continue;
    pod_last_[a] = last;
    pod_first_[last] = a;
  }
}

uint32_t SubstituteSpines::ring_step(uint32_t x, int32_t steps) const {
  const int64_t size = ring_size_[x];
  const int64_t p = (static_cast<int64_t>(x - ring_begin_[x]) + steps % size + size) % size;
  return ring_begin_[x] + static_cast<uint32_t>(p);
}

bool SubstituteSpines::needs(uint32_t a, uint32_t b, uint32_t kind) const {
  if (a == b) return false;
  if (kind == 0) return dead_[a] != kNo && dead_[a] != dead_[b];  // b has a slot on a's dead plane
  return dead_[b] != kNo;
}

// The extra planes of every (source, destination leaf): destinations in
// order, then sources in order, each taking the plane that breaks the fewest
// constraints of the header (always one cabled to both leaves). The scan
// starts at an offset that turns with the other leaf, so that over all
// sources a dead slot is spread over the planes (all-to-all). Sources outside
// the destination's ring (no rail-aligned shift between them) only keep
// their two extras apart.
void SubstituteSpines::choose_extras() {
  const uint32_t nl = static_cast<uint32_t>(leaves_.size());
  extra_.assign(size_t(nl) * nl * 2, kNo);
  std::vector<uint32_t> avoid;
  // The extras that must differ from extra (a, b, kind) (kNo: none yet).
  auto collect = [&](uint32_t a, uint32_t b, uint32_t kind) {
    avoid.clear();
    avoid.push_back(extra(a, b, 1 - kind));
    if (ring_begin_[a] != ring_begin_[b]) return;
    const uint32_t b_prev = ring_step(b, -1), b_next = ring_step(b, 1);
    const uint32_t a_prev = ring_step(a, -1), a_next = ring_step(a, 1);
    const auto d = static_cast<int32_t>(pod_size_[pod_[a]]);
    for (uint32_t k = 0; k < 2; ++k) {
      // a's uplinks: the shifts that reach b and a neighbour of b.
      avoid.push_back(extra(a, b_prev, k));
      avoid.push_back(extra(a, b_next, k));
      // b's down links: the shifts that reach b from a and a neighbour of a.
      avoid.push_back(extra(a_prev, b, k));
      avoid.push_back(extra(a_next, b, k));
      // Three levels: the link from the plane's spine in a's pod up to the
      // core of b's slot, which the pod's other end uses toward b +- d in
      // the same shift.
      if (pod_[b] == pod_[a]) continue;
      if (pod_last_[a] != kNo && pod_[ring_step(b, d)] != pod_[a]) {
        avoid.push_back(extra(pod_last_[a], ring_step(b, d), k));
      }
      if (pod_first_[a] != kNo && pod_[ring_step(b, -d)] != pod_[a]) {
        avoid.push_back(extra(pod_first_[a], ring_step(b, -d), k));
      }
    }
  };
  // The plane meeting the most constraints, scanning from an offset that
  // turns with the other leaf.
  auto pick = [&](uint32_t a, uint32_t b, uint32_t kind, uint32_t turn) {
    collect(a, b, kind);
    uint32_t best = kNo, best_conflicts = UINT32_MAX;
    const uint32_t start = (kind == 0 ? dead_[a] + 1 + b : dead_[b] + 1 + a) + turn;
    for (uint32_t j = 0; j < planes_ && best_conflicts > 0; ++j) {
      const uint32_t c = (start + j) % planes_;
      if (c == dead_[a] || c == dead_[b]) continue;  // no cable
      const auto conflicts = static_cast<uint32_t>(std::count(avoid.begin(), avoid.end(), c));
      if (conflicts < best_conflicts) {
        best = c;
        best_conflicts = conflicts;
      }
    }
    extra(a, b, kind) = best;
    return best_conflicts;
  };
  // Greedy pass, then a few repair passes over the extras still in conflict
  // (min-conflicts; the relation is symmetric, so a repair sees both sides).
  uint32_t left = 0;
  for (uint32_t b = 0; b < nl; ++b) {
    for (uint32_t a = 0; a < nl; ++a) {
      for (uint32_t kind = 0; kind < 2; ++kind) {
        if (needs(a, b, kind)) left += pick(a, b, kind, 0) > 0;
      }
    }
  }
  for (uint32_t pass = 0; pass < kRepairPasses && left > 0; ++pass) {
    left = 0;
    for (uint32_t b = 0; b < nl; ++b) {
      for (uint32_t a = 0; a < nl; ++a) {
        for (uint32_t kind = 0; kind < 2; ++kind) {
          if (!needs(a, b, kind)) continue;
          collect(a, b, kind);
          if (std::count(avoid.begin(), avoid.end(), extra(a, b, kind)) == 0) continue;
          left += pick(a, b, kind, pass + 1) > 0;
        }
      }
    }
  }
}

void SubstituteSpines::route(uint32_t t, uint32_t slot, uint8_t* column) const {
  const uint32_t nl = static_cast<uint32_t>(leaves_.size());
  const uint32_t b = leaf_id_[t], pb = pod_[b];
  for (uint32_t x = 0; x < planes_; ++x) {
    const uint8_t down = down_port_[size_t(b) * planes_ + x];
    if (down == 0) continue;  // the dead plane: its spines cannot reach t
    column[spine_[size_t(pb) * planes_ + x]] = down;
    if (levels_ != 3) continue;
    const uint32_t k = core_slot_[size_t(b) * planes_ + x];
    column[core_[size_t(x) * spine_slots_ + k]] = core_down_[(size_t(pb) * planes_ + x) * spine_slots_ + k];
    for (uint32_t p = 0; p < pods_; ++p) {
      if (p != pb) column[spine_[size_t(p) * planes_ + x]] = spine_up_[(size_t(p) * planes_ + x) * spine_slots_ + k];
    }
  }
  const uint32_t plane = natural_[size_t(b) * slots_ + slot % slots_];
  for (uint32_t a = 0; a < nl; ++a) {
    if (a == b) continue;
    const uint32_t x = plane == kNo ? extra(a, b, 1) : plane == dead_[a] ? extra(a, b, 0) : plane;
    column[leaves_[a]] = up_port_[size_t(a) * planes_ + x];
  }
}

}  // namespace railyard::routing::unicast
