// Substitute spines for two-level trees whose leaves each lost at most one
// uplink; the argument is in substitute_spines.h.
#include "routing/unicast_engine/substitute_spines.h"

#include <algorithm>
#include <tuple>

namespace railyard::routing::unicast {

SubstituteSpines::SubstituteSpines(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                                   const RoutingOptions& options) {
  const uint32_t n = g.num_switches();
  leaf_id_.assign(n, kNo);
  if (!fits(g, rk, options)) {
    leaves_.clear();
    spines_.clear();
    return;
  }
  // Leaves by ring, then leaf order (ties by GUID, so that the node order of
  // the fabric does not matter); spines by GUID.
  auto guid = [&](uint32_t s) { return fabric.node(g.node(s)).guid; };
  auto ring = [&](uint32_t s) -> uint64_t { return options.leaf_ring.empty() ? 0 : options.leaf_ring[s]; };
  auto key = [&](uint32_t s) -> uint64_t { return options.leaf_order_key.empty() ? 0 : options.leaf_order_key[s]; };
  std::sort(leaves_.begin(), leaves_.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(ring(a), key(a), guid(a)) < std::make_tuple(ring(b), key(b), guid(b));
  });
  std::sort(spines_.begin(), spines_.end(), [&](uint32_t a, uint32_t b) { return guid(a) < guid(b); });
  const uint32_t nl = static_cast<uint32_t>(leaves_.size()), ns = static_cast<uint32_t>(spines_.size());
  std::vector<uint32_t> spine_id(n, kNo);
  for (uint32_t i = 0; i < ns; ++i) spine_id[spines_[i]] = i;
  for (uint32_t i = 0; i < nl; ++i) leaf_id_[leaves_[i]] = i;
  ring_begin_.resize(nl);
  ring_size_.resize(nl);
  for (uint32_t i = 0; i < nl;) {
    uint32_t j = i;
    while (j < nl && ring(leaves_[j]) == ring(leaves_[i])) ++j;
    for (uint32_t x = i; x < j; ++x) {
      ring_begin_[x] = i;
      ring_size_[x] = j - i;
    }
    i = j;
  }
  // Ports and nominal slots (port counted from the lowest up port of any
  // leaf, as the chains count them).
  uint32_t base = 255;
  for (uint32_t s : leaves_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) base = std::min<uint32_t>(base, g.port(e));
  }
  for (uint32_t s : leaves_) {
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) slots_ = std::max<uint32_t>(slots_, g.port(e) - base + 1);
  }
  up_port_.assign(size_t(nl) * ns, 0);
  down_port_.assign(size_t(ns) * nl, 0);
  natural_.assign(size_t(nl) * slots_, kNo);
  dead_.assign(nl, kNo);
  for (uint32_t a = 0; a < nl; ++a) {
    const uint32_t s = leaves_[a];
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      const uint32_t x = spine_id[g.remote(e)];
      up_port_[size_t(a) * ns + x] = g.port(e);
      down_port_[size_t(x) * nl + a] = g.port(g.rev(e));
      natural_[size_t(a) * slots_ + g.port(e) - base] = x;
    }
    for (uint32_t x = 0; x < ns; ++x) {
      if (up_port_[size_t(a) * ns + x] == 0) dead_[a] = x;
    }
  }
  choose_extras();
}

// The setting of the header: two levels ranked from the CAs, leaves only
// below spines, one cable per pair, at most one spine missing per leaf and
// at least one missing somewhere, nothing drained.
bool SubstituteSpines::fits(const SwitchGraph& g, const Ranking& rk, const RoutingOptions& options) {
  if (rk.kind != RankingKind::kFromCas || rk.levels != 2) return false;
  if (std::any_of(options.drained.begin(), options.drained.end(), [](uint8_t d) { return d != 0; })) return false;
  const uint32_t n = g.num_switches();
  for (uint32_t s = 0; s < n; ++s) {
    if (rk.rank[s] > 1) return false;
    (rk.rank[s] == 0 ? leaves_ : spines_).push_back(s);
  }
  const uint32_t ns = static_cast<uint32_t>(spines_.size());
  if (ns < 3) return false;
  bool any_missing = false;
  std::vector<uint32_t> seen(n, kNo);
  for (uint32_t s : leaves_) {
    uint32_t linked = 0;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      const uint32_t r = g.remote(e);
      if (rk.rank[r] != 1 || seen[r] == s) return false;  // a leaf-leaf link or a parallel cable
      seen[r] = s;
      ++linked;
    }
    if (linked + 1 < ns) return false;
    any_missing = any_missing || linked < ns;
  }
  active_ = any_missing;
  return any_missing;
}

bool SubstituteSpines::needs(uint32_t a, uint32_t b, uint32_t kind) const {
  if (a == b) return false;
  if (kind == 0) return dead_[a] != kNo && dead_[a] != dead_[b];  // b has a slot on a's dead spine
  return dead_[b] != kNo;
}

// The extra spines of every (source, destination leaf): destinations in
// order, then sources in order, each taking the spine that breaks the fewest
// constraints of the header (always one cabled to both leaves). The scan
// starts at an offset that turns with the other leaf, so that over all
// sources a dead slot is spread over the spines (all-to-all). Sources outside
// the destination's ring (no rail-aligned shift between them) only keep
// their two extras apart.
void SubstituteSpines::choose_extras() {
  const uint32_t nl = static_cast<uint32_t>(leaves_.size()), ns = static_cast<uint32_t>(spines_.size());
  extra_.assign(size_t(nl) * nl * 2, kNo);
  auto neighbours = [&](uint32_t x) {
    const uint32_t p = x - ring_begin_[x], size = ring_size_[x];
    return std::pair<uint32_t, uint32_t>{ring_begin_[x] + (p + size - 1) % size, ring_begin_[x] + (p + 1) % size};
  };
  std::vector<uint32_t> avoid;
  for (uint32_t b = 0; b < nl; ++b) {
    const auto [b_prev, b_next] = neighbours(b);
    for (uint32_t a = 0; a < nl; ++a) {
      const bool same_ring = ring_begin_[a] == ring_begin_[b];
      const auto [a_prev, a_next] = neighbours(a);
      for (uint32_t kind = 0; kind < 2; ++kind) {
        if (!needs(a, b, kind)) continue;
        avoid.clear();
        avoid.push_back(extra(a, b, 1 - kind));
        if (same_ring) {
          for (uint32_t k = 0; k < 2; ++k) {
            // a's uplinks: the shifts that reach b and a neighbour of b.
            avoid.push_back(extra(a, b_prev, k));
            avoid.push_back(extra(a, b_next, k));
            // b's down links: the shifts that reach b from a and a neighbour of a.
            avoid.push_back(extra(a_prev, b, k));
            avoid.push_back(extra(a_next, b, k));
          }
        }
        uint32_t best = kNo, best_conflicts = UINT32_MAX;
        const uint32_t start = kind == 0 ? dead_[a] + 1 + b : dead_[b] + 1 + a;
        for (uint32_t j = 0; j < ns && best_conflicts > 0; ++j) {
          const uint32_t c = (start + j) % ns;
          if (c == dead_[a] || c == dead_[b]) continue;  // no cable
          const auto conflicts = static_cast<uint32_t>(std::count(avoid.begin(), avoid.end(), c));
          if (conflicts < best_conflicts) {
            best = c;
            best_conflicts = conflicts;
          }
        }
        extra(a, b, kind) = best;
      }
    }
  }
}

void SubstituteSpines::route(uint32_t t, uint32_t slot, uint8_t* column) const {
  const uint32_t nl = static_cast<uint32_t>(leaves_.size()), ns = static_cast<uint32_t>(spines_.size());
  const uint32_t b = leaf_id_[t];
  for (uint32_t x = 0; x < ns; ++x) {
    const uint8_t p = down_port_[size_t(x) * nl + b];
    if (p != 0) column[spines_[x]] = p;
  }
  const uint32_t spine = natural_[size_t(b) * slots_ + slot % slots_];
  for (uint32_t a = 0; a < nl; ++a) {
    if (a == b) continue;
    const uint32_t x = spine == kNo ? extra(a, b, 1) : spine == dead_[a] ? extra(a, b, 0) : spine;
    column[leaves_[a]] = up_port_[size_t(a) * ns + x];
  }
}

}  // namespace railyard::routing::unicast
