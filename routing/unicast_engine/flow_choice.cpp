// Phase B of the balancing by flows (flow_walk.cpp has phase A): the
// switches whose nominal path is broken choose a path, destination by
// destination in phase A's order, from the bottom up: the first free slot
// whose path stays within the leaf cut bound of all-to-all, in an order that
// keeps rail-aligned shifts apart, else the least loaded path. With rails
// (two leaf rings or more), the flows between leaves of one ring go first
// and keep their leaf's D-mod-K slot: the flows between rings take up the
// excess.
#include <algorithm>
#include <functional>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

// The cost of the path from y on with `add` more flows arriving at y: the
// path it has, or for a switch still to choose, its best candidate.
// With `fit` (not kExact) only whether some path stays within `fit` matters:
// the answer is a cost whose busiest link is at most fit if one does (a
// switch still to choose stops at its first such candidate), else above
// fit; the answer to "within fit?" is the exact one's, at a fraction of the
// candidates.
PathCost Engine::path_cost(uint32_t y, uint32_t add, uint32_t depth, uint64_t fit) {
  PathCost c;
  while (y != target_) {
    if (is_down(st_[y].mode)) {  // down to the target: one chain
      const PathCost d = down_chain(y, add);
      c.max = std::max(c.max, d.max);
      c.sum += d.sum;
      return c;
    }
    if (routed(y)) {
      const uint32_t e = down_pick(y);
      if (e == kNone) return c;
      c.add(with(e, add));
      y = remote(e);
      continue;
    }
    // Still to choose: it will send its own pending flows too.
    const uint32_t extra = add + flow_[y];
    auto [cf, count] = candidates(y);
    if (count == 0 || depth == 0) return c;
    if (fit != kExact && c.max > fit) return c;  // above fit whatever comes below
    if (fit != kExact) {
      // The first candidate within fit. Within one pass over a destination
      // loads only grow, and so do y's flows: a candidate above fit stays
      // above it for as many flows or more, and the next question about y
      // starts where this one stopped (fit_from_).
      FitFrom& from = fit_from_[y];
      uint32_t i = from.epoch == fit_epoch_ && from.depth == depth && from.fit == fit && extra >= from.extra ? from.index : 0;
      for (; i < count; ++i) {
        const uint32_t e = cand_[cf + i];
        if (with(e, extra) > fit) continue;  // its first link is already above
        PathCost p = path_cost(remote(e), extra, depth - 1, fit);
        p.add(with(e, extra));
        if (p.max <= fit) break;
      }
      from = {fit_epoch_, depth, extra, i, fit};
      if (i == count) return {UINT64_MAX, c.sum};  // no candidate within fit
      return {std::max(c.max, fit), c.sum};  // within fit (its cost beyond that is not asked)
    }
    PathCost best;
    bool any = false;
    for (uint32_t i = cf; i < cf + count; ++i) {
      const uint32_t e = cand_[i];
      PathCost p = path_cost(remote(e), extra, depth - 1, fit);
      p.add(with(e, extra));
      if (!any || p < best) best = p;
      any = true;
    }
    c.max = std::max(c.max, best.max);
    c.sum += best.sum;
    return c;
  }
  return c;
}

// The cost of the way down from a down-going switch to the target with
// `add` more flows: its links' loads plus add. A chain is a link or two
// (three levels): walked afresh each time, which costs less than keeping it.
PathCost Engine::down_chain(uint32_t y, uint32_t add) {
  PathCost c;
  while (y != target_) {
    const uint32_t e = down_pick(y);
    if (e == kNone) break;
    c.add(with(e, add));
    y = remote(e);
  }
  return c;
}

// The order in which x tries its up slots other than the nominal one, as
// a rank (lower first). Between ring neighbours the extra flow of a
// rail-aligned shift must stay off the slots the shift's other flows use:
// toward the next leaf of the ring a shift of k < (CAs per leaf) sends the
// lowest k digits, so the extra flow takes the highest slot free; toward the
// previous leaf (shifts of -k) the highest k digits, so the lowest. Else
// from the digit down, so the extras of consecutive digits differ.
uint32_t Engine::slot_rank(uint32_t x, uint32_t slot, uint32_t a, uint32_t b) const {
  const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
  if (a != kNone && b != kNone && b == ring_next_[a]) return k - 1 - slot;
  if (a != kNone && b != kNone && b == ring_prev_[a]) return slot;
  // Else from the digit down, so the extras of consecutive digits differ,
  // but the two slots ring neighbours want (the highest, the lowest) last.
  if (k < 3) return slot;
  if (slot == k - 1) return k - 2;
  if (slot == 0) return k - 1;
  // The middle slots 1..k-2 from middle_from down, cyclically.
  return (middle_from(x, k) + (k - 2) - slot) % (k - 2);
}

// Where slot_rank's middle slots (1..k-2) start for x (k >= 3): the one
// below the destination's digit at x's rank, or the highest of them.
uint32_t Engine::middle_from(uint32_t x, uint32_t k) const {
  const uint32_t d = digit_slot_[rk_.rank[x]];  // below k
  return d >= 2 ? d - 1 : k - 2;
}

// The up entry of x for f flows: its nominal one if that path stays within
// the leaf cut bound; else, in slot_rank order, the first slot
// that is free (not taken by an extra flow that shares a rail-aligned shift
// with this one) and whose path stays within the bound; else the least
// loaded path (busiest link, then sum), free ones first, ties by slot_rank.
uint32_t Engine::choose_up(uint32_t x, uint32_t f) {
  const uint32_t nom = nominal_up(x);
  auto cost = [&](uint32_t e) {
    PathCost p = f == 0 ? PathCost{} : path_cost(remote(e), f, 4, kExact);
    p.add(with(e, f));
    return p;
  };
  // Whether the path through e stays within the bound.
  auto fits = [&](uint32_t e) {
    if (with(e, f) > capacity_) return false;
    const PathCost p = f == 0 ? PathCost{} : path_cost(remote(e), f, 4, capacity_);
    return p.max <= capacity_;
  };
  const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
  // Slots taken by the extra flows (off their digit) of the leaf pairs that
  // share a rail-aligned shift with this one: (x, t's ring neighbours) share
  // x's up links, (x's ring neighbours, t) the links into t.
  const uint32_t a = leaf_id_[x], b = leaf_id_[target_];
  uint64_t taken = 0;
  if (a != kNone && b != kNone) {
    taken = extra(a, b) | extra(a, ring_prev_[b]) | extra(a, ring_next_[b]) | extra(ring_prev_[a], b) |
            extra(ring_next_[a], b);
  }
  auto is_free = [&](uint32_t e) { return e == nom || !(taken >> (up_slot(x, e) % 64) & 1); };
  auto record = [&](uint32_t e) {
    if (a != kNone && b != kNone && e != nom) mark_extra(a, b, up_slot(x, e));
    return e;
  };
  // Above the leaves, the flows of one ring (the pass that routes them
  // first): the nominal slot, else, among the slots whose path stays within
  // the all-to-all bound (if none does: as the other flows choose, below),
  // the one that took the fewest such flows off their own slot, then the one
  // whose own destinations are farthest from this one's (digits apart): the
  // destinations of one rank's slot follow each other in the ring, a
  // rail-aligned shift sends a window of them through the switch, and the
  // farthest meet in the fewest windows.
  if (same_ring_pass_ && a == kNone && rk_.rank[x] > 0) {
    if (nom != kNone) return nom;
    const uint32_t d = digit_slot_[rk_.rank[x]];
    uint32_t best = kNone, far = 0;
    bool best_fits = false;
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t e = up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + j];
      if (e == kNone || !cand_ok(x, e)) continue;
      const uint32_t apart = j > d ? j - d : d - j;
      const bool ok = fits(e);  // within the all-to-all bound first
      if (best == kNone || ok > best_fits ||
          (ok == best_fits && (ring_extra_[e] < ring_extra_[best] || (ring_extra_[e] == ring_extra_[best] && apart > far)))) {
        best = e;
        far = apart;
        best_fits = ok;
      }
    }
    if (best_fits) {
      if (ring_extra_[best] == 0 && f != 0) ring_extra_touched_.push_back(best);
      ring_extra_[best] += f;
      return best;
    }
  }
  // First fit, the nominal slot first (when free of this destination's
  // constraints it is the D-mod-K one), then in slot_rank order: most
  // choices end here.
  if (nom != kNone && fits(nom)) return nom;
  const bool next = a != kNone && b != kNone && b == ring_next_[a];
  const bool prev = a != kNone && b != kNone && b == ring_prev_[a];
  // Toward the previous leaf (or with fewer than 3 slots) from the lowest;
  // toward the next from the highest; else the middle slots from
  // middle_from down, cyclically, then the highest, then the lowest.
  const bool middle_first = !next && !prev && k >= 3;
  uint32_t middle = middle_first ? middle_from(x, k) : 0;
  for (uint32_t i = 0; i < k; ++i) {
    uint32_t slot = next ? k - 1 - i : i;
    if (middle_first && i < k - 2) {
      slot = middle;
      middle = middle == 1 ? k - 2 : middle - 1;
    } else if (middle_first) {
      slot = i == k - 2 ? k - 1 : 0;
    }
    const uint32_t e = up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + slot];
    if (e == kNone || e == nom || !cand_ok(x, e) || !is_free(e)) continue;
    if (fits(e)) return record(e);
  }
  // None within the bound: among the paths no busier than the least loaded
  // one (or the bound), a free one, then the least loaded.
  auto [cf, count] = candidates(x);
  if (count == 0) return kNone;
  uint64_t least = UINT64_MAX;
  cost_.clear();
  for (uint32_t c = cf; c < cf + count; ++c) {
    cost_.push_back(cost(cand_[c]));
    least = std::min(least, cost_.back().max);
  }
  // A slot that keeps this pair's extra flows apart (tier below) may be up
  // to 1/64 busier: the all-to-all targets leave that much (and the pass
  // over the busiest links evens out after), while extra flows of one pair
  // on one slot meet in every shift between the two leaves.
  const uint64_t near = std::max(least, capacity_);
  const uint64_t near_apart = near + near / 64;
  uint32_t choice = kNone, best_rank = 0, best_tier = 0;
  PathCost best;
  for (uint32_t c = cf; c < cf + count; ++c) {
    const uint32_t e = cand_[c];
    const PathCost& p = cost_[c - cf];
    // Free, else taken only by a neighbouring pair's extra flows, else by this pair's.
    const uint32_t tier = is_free(e) ? 2 : a != kNone && b != kNone && (extra(a, b) >> (up_slot(x, e) % 64) & 1) ? 0 : 1;
    if (p.max > (tier > 0 ? near_apart : near)) continue;
    const uint32_t rank = e == nom ? 0 : 1 + slot_rank(x, up_slot(x, e), a, b);
    const bool better = choice == kNone || (tier != best_tier ? tier > best_tier : (p < best || (p == best && rank < best_rank)));
    if (better) {
      choice = e;
      best_rank = rank;
      best_tier = tier;
      best = p;
    }
  }
  return choice == kNone ? kNone : record(choice);
}

// Routes x for the current destination with its flows (own CAs and those
// sent to it) and sends them on.
void Engine::route_flows_of(uint32_t x) {
  const uint32_t f = flow_[x] + (ca_begin_[x + 1] - ca_begin_[x]);
  flow_[x] = 0;
  const uint32_t e = choose_up(x, f);
  if (e == kNone) return;
  put(x, port(e));
  if (f == 0) return;
  load_[e] += f * share_[e];
  push_flows(remote(e), f);
}

// Takes over what another lane's phase A left: its loads, and its
// destinations with switches still to route (after this lane's: lanes hold
// the leaves in order).
void Engine::absorb(Engine& other) {
  for (size_t e = 0; e < load_.size(); ++e) load_[e] += other.load_[e];
  // Both lists in leaf order, merged so (a leaf's destinations stay
  // together and in their order), each with its waiting switches.
  std::vector<Deferred> merged;
  std::vector<uint32_t> broken;
  merged.reserve(deferred_.size() + other.deferred_.size());
  broken.reserve(broken_.size() + other.broken_.size());
  size_t i = 0, j = 0;
  auto take = [&](const Engine& from, size_t k) {
    Deferred d = from.deferred_[k];
    const uint32_t last =
        k + 1 < from.deferred_.size() ? from.deferred_[k + 1].first_broken : static_cast<uint32_t>(from.broken_.size());
    broken.insert(broken.end(), from.broken_.begin() + d.first_broken, from.broken_.begin() + last);
    d.first_broken = static_cast<uint32_t>(broken.size() - (last - d.first_broken));
    merged.push_back(d);
  };
  while (i < deferred_.size() || j < other.deferred_.size()) {
    const bool mine = j == other.deferred_.size() ||
                      (i < deferred_.size() && leaf_pos_[deferred_[i].t] <= leaf_pos_[other.deferred_[j].t]);
    if (mine) {
      take(*this, i++);
    } else {
      take(other, j++);
    }
  }
  deferred_ = std::move(merged);
  broken_ = std::move(broken);
  leaf_copies_.insert(leaf_copies_.end(), other.leaf_copies_.begin(), other.leaf_copies_.end());
  other.deferred_.clear();
}

// Phase B: every destination's waiting switches, in phase A's order.
// Phase B of one destination: its waiting switches broken_[first, last),
// in three passes over every destination: the ring neighbours of its leaf
// that can send their flows all the way; the other leaves of its ring and
// where their flows go; the rest.
void Engine::route_deferred_of(const Deferred& d, uint32_t first, uint32_t last, Pass pass) {
  const std::vector<uint32_t>& list = broken_;
  const uint32_t b = leaf_id_[d.t];
  auto neighbour = [&](uint32_t x) {
    const uint32_t a = leaf_id_[x];
    return a != kNone && b != kNone && (ring_next_[a] == b || ring_prev_[a] == b);
  };
  if (pass == Pass::kSameRing && !rings_first()) return;
  // Most destinations have none waiting for this pass (or none left after
  // the passes before): nothing to set up.
  bool any = false;
  for (uint32_t j = first; j < last && !any; ++j) {
    const bool waits = d.column[list[j]] == ForwardingTables::kNoPath;
    any = pass == Pass::kNeighbours ? neighbour(list[j]) : waits && (pass == Pass::kAll || same_ring(list[j], d.t));
  }
  if (!any) return;
  if (target_ != d.t || modes_of_ != d.modes) {
    // The modes toward the target as phase A had them.
    st_ = d.modes;
    modes_of_ = d.modes;
    target_ = d.t;
    ++target_stamp_;  // candidate lists start afresh
    cand_.clear();
  }
  column_ = d.column;
  ++stamp_;  // a new destination: marks start afresh
  ++fit_epoch_;
  if (d.digits_pool != nullptr) {
    replay_digits(*d.digits_pool, d.digits_at);
  } else {
    set_digits(d.t, d.slot);
  }
  if (pass == Pass::kNeighbours) {
    for (uint32_t j = first; j < last; ++j) {
      const uint32_t x = list[j];
      if (!neighbour(x)) continue;
      auto [cf, count] = candidates(x);
      bool all_routed = true;
      for (uint32_t c = cf; c < cf + count && all_routed; ++c) {
        const uint32_t r = remote(cand_[c]);
        all_routed = r == d.t || routed(r) || is_down(st_[r].mode);
      }
      if (all_routed) route_flows_of(x);
    }
    return;
  }
  if (pass == Pass::kSameRing) {
    same_ring_pass_ = true;
    // The leaves of the destination's ring, then (the list is bottom-up
    // after the leaves) every waiting switch their flows reached: a
    // rail-aligned shift's flows choose before the others fill the links.
    for (uint32_t j = first; j < last; ++j) {
      if (same_ring(list[j], d.t) && !routed(list[j])) route_flows_of(list[j]);
    }
    for (uint32_t j = first; j < last; ++j) {
      const uint32_t x = list[j];
      if (leaf_id_[x] == kNone && flow_[x] != 0 && !routed(x)) route_flows_of(x);
    }
    same_ring_pass_ = false;
    return;
  }
  // Leaves only (the common case): nothing comes through a leaf, so their
  // order is the list's, the neighbours first.
  bool leaves_only = true;
  for (uint32_t j = first; j < last && leaves_only; ++j) leaves_only = rk_.rank[list[j]] == 0;
  if (leaves_only) {
    for (uint32_t j = first; j < last; ++j) {
      if (neighbour(list[j]) && !routed(list[j])) route_flows_of(list[j]);
    }
    for (uint32_t j = first; j < last; ++j) {
      if (!routed(list[j])) route_flows_of(list[j]);
    }
    return;
  }
  // A switch chooses as soon as every switch that may send it flows has, so
  // the next sources see where those flows went: pod by pod, the leaves,
  // then the spines (ranked from the CAs a leaf sends only to the spines of
  // its pod).
  if (!pod_.empty()) {
    // Sorted (neighbours first, pod, rank, then the list's order, so equal
    // ones keep it) by counting: few buckets, many switches.
    const uint32_t per_side = pods_ * ranks_;
    sort_starts_.assign(2 * per_side + 1, 0);
    sort_keys_.clear();
    for (uint32_t j = first; j < last; ++j) {
      const uint32_t x = list[j];
      const uint32_t key = routed(x) ? kNone : (neighbour(x) ? 0 : per_side) + pod_[x] * ranks_ + rk_.rank[x];
      sort_keys_.push_back(key);
      if (key != kNone) ++sort_starts_[key + 1];
    }
    for (uint32_t k = 1; k < sort_starts_.size(); ++k) sort_starts_[k] += sort_starts_[k - 1];
    sorted_.resize(sort_starts_.back());
    for (uint32_t j = first; j < last; ++j) {
      const uint32_t key = sort_keys_[j - first];
      if (key != kNone) sorted_[sort_starts_[key]++] = list[j];
    }
    for (uint32_t x : sorted_) route_flows_of(x);
    return;
  }
  // Any other ranking: in the order of a stack over the switches that may
  // send each one flows.
  for (uint32_t j = first; j < last; ++j) {
    mark_stamp_[list[j]] = stamp_;
    best_[list[j]] = 0;  // switches below still to choose
  }
  for (uint32_t j = first; j < last; ++j) {
    auto [cf, count] = candidates(list[j]);
    for (uint32_t c = cf; c < cf + count; ++c) {
      const uint32_t r = remote(cand_[c]);
      if (mark_stamp_[r] == stamp_) ++best_[r];
    }
  }
  queue_.clear();
  for (uint32_t j = last; j-- > first;) {
    if (best_[list[j]] == 0) queue_.push_back(list[j]);
  }
  while (!queue_.empty()) {
    const uint32_t x = queue_.back();
    queue_.pop_back();
    auto [cf, count] = candidates(x);
    for (uint32_t c = cf; c < cf + count; ++c) {
      const uint32_t r = remote(cand_[c]);
      if (mark_stamp_[r] == stamp_ && --best_[r] == 0) queue_.push_back(r);
    }
    if (!routed(x)) route_flows_of(x);
  }
}

void Engine::route_deferred(const std::function<void()>& sync) {
  // First the extra flows of the destination leaf's ring neighbours, for
  // every destination: they need particular slots (slot_rank), which the
  // others, taken after, then leave alone. A neighbour goes first only if
  // every switch it may send to is routed (its flows go all the way).
  // Split in two lanes, the destinations come in rounds (round_begin_),
  // sync() between them (phase_b_lanes.cpp).
  const size_t rounds = round_begin_.empty() ? 1 : round_begin_.size() - 1;
  for (const Pass pass : {Pass::kNeighbours, Pass::kSameRing, Pass::kAll}) {
    for (size_t r = 0; r < rounds; ++r) {
      const size_t begin = round_begin_.empty() ? 0 : round_begin_[r];
      const size_t end = round_begin_.empty() ? deferred_.size() : round_begin_[r + 1];
      for (size_t i = begin; i < end; ++i) {
        const Deferred& d = deferred_[i];
        const uint32_t first = d.first_broken;
        const uint32_t last =
            i + 1 < deferred_.size() ? deferred_[i + 1].first_broken : static_cast<uint32_t>(broken_.size());
        if (first != last) route_deferred_of(d, first, last, pass);
      }
      if (sync) sync();
    }
  }
}

// Leaf LIDs copy a CA column: copy it again, now whole.
void Engine::copy_leaf_columns() {
  const uint32_t n = g_.num_switches();
  for (const auto& [dst, src] : leaf_copies_) {
    for (uint32_t s = 0; s < n; ++s) {
      if (dst[s] == ForwardingTables::kNoPath) dst[s] = src[s];
    }
  }
}

}  // namespace railyard::routing::unicast
