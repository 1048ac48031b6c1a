// CA destinations balanced by all-to-all flows, in two phases.
//
// Phase A (per destination, as its leaf comes): every switch whose nominal
// path is whole takes it. The nominal path climbs through the destination's
// D-mod-K digit at each rank (read off the nominal chain from the
// destination's leaf: its slot on the leaf, then the leaf's slot on the
// spine, ...) and comes down the chain. On a healthy tree every switch is
// nominal and the tables are D-mod-K's; on a degraded one the nominal flows
// are a subset of the healthy tree's, so none of their links carries more
// than it would there.
//
// Phase B (after every destination's phase A, so the loads of all nominal
// flows are known; flow_choice.cpp): the switches whose nominal path is
// broken (a missing, dead or drained cable anywhere on it) choose, from the
// bottom up, each carrying the flows of its own CAs and of the switches
// below that sent theirs through it. The displaced flows are so spread
// source by source over the paths that remain, seeing the load of every
// nominal flow, not only of the destinations taken before.
//
// This file: setup, digits, the nominal ways up and down, and phase A.
#include <algorithm>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

// The lane's own arrays for balancing by flows.
void Engine::setup_flows(const RoutingOptions& options) {
  flows_ = options.flow_balance;
  if (!flows_) return;
  const uint32_t n = g_.num_switches();
  const uint32_t m = g_.num_entries();
  load_.assign(m, 0);
  share_.assign(m, 1);
  flow_.assign(n, 0);
  fit_from_.assign(n, FitFrom{});
  valid_.assign(n, 0);
  digit_.assign(slots_up_.size() + 1, 0);
  digit_slot_.assign(slots_up_.size(), 0);
  down_stamp_.assign(n, 0);
  fed_.assign(n, 0);
  leaf_waits_.assign(n, 0);
  down_nom_.assign(n, kNone);
  nom_.assign(n, kNone);
  ring_extra_.resize(m);  // all zero as given back (give_back), or empty
  // All zero when given back (give_back): one per (leaf, leaf).
  size_t leaves = 0;
  for (uint32_t s = 0; s < n; ++s) leaves += rk_.rank[s] == 0 && ca_begin_[s] != ca_begin_[s + 1];
  if (extras_.size() != leaves * leaves) extras_.assign(leaves * leaves, 0);
  set_leaf_offsets(options);
}

// A leaf's ring (its rail; one ring for all without leaf rings).
uint64_t Engine::ring_of(const RoutingOptions& options, uint32_t s) {
  return options.leaf_ring.empty() ? 0 : options.leaf_ring[s];
}

// Leaves in ring order: by ring, then leaf order, ties by GUID (not by node
// order, so the tables do not depend on it).
void Engine::sort_into_rings(const RoutingOptions& options, std::vector<uint32_t>& leaves) const {
  auto key = [&](uint32_t s) -> uint64_t { return options.leaf_order_key.empty() ? 0 : options.leaf_order_key[s]; };
  std::sort(leaves.begin(), leaves.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(ring_of(options, a), key(a), guid_rank_[a]) <
           std::make_tuple(ring_of(options, b), key(b), guid_rank_[b]);
  });
}

// Per leaf, the CA port positions of the leaves before it in its ring
// (leaf_offset_): a leaf spans up to its highest CA port, rounded up to a
// quarter of its up slots, so that a CA going away (it leaves the subnet
// with its cable) moves no digit, while leaves that are not full still use
// every slot evenly (for full leaves the offset is a multiple of the slots
// and the digit is the slot itself). The leaves are those as cabled, a dead
// one included, so that a leaf going down moves no other leaf's digits.
//
// Where a ring's spans do not add up to a multiple of the up slots K (its
// last leaf is not full), the digits cannot run on evenly all the way round:
// at one pair of neighbours (the seam) they jump by the remainder R. A shift
// then loads one link twice when a leaf D takes flows from the tail of the
// seam's first leaf and the head of its second, R ports apart, which needs D
// to span more than R. So the ring's offsets start right after a seam that no
// other leaf of the ring spans more than R across (with leaves of K, K and
// R: between the two full ones), the first such in ring order; if there is
// none (three full leaves or more beside a partial one: no digits of one per
// destination keep every shift at its bound), at the ring's first leaf.
void Engine::set_leaf_offsets(const RoutingOptions& options) {
  const uint32_t n = g_.num_switches();
  if (statics_ != nullptr) {
    leaf_offset_ = statics_->leaf_offset;
    return;
  }
  leaf_offset_.assign(n, 0);
  if (slots_up_.empty()) return;
  const uint32_t k = slots_up_[0];
  const uint32_t grain = std::max<uint32_t>(1, k / 4);
  std::vector<uint32_t> leaves, span;
  std::vector<uint32_t> top(n, 0);  // highest CA port, as a slot + 1
  for (uint32_t s = 0; s < n; ++s) {
    const Node& node = fabric_.node(g_.node(s));
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const NodeId far = fabric_.remote_node(PortId(node.first_port.value() + p));
      if (far.valid() && !fabric_.is_switch(far) && p >= base_down_[0]) top[s] = std::max(top[s], p - base_down_[0] + 1);
    }
    const bool dead = g_.begin(s) == g_.end(s) && g_.num_cas(s) == 0;
    if (top[s] != 0 && (rk_.rank[s] == 0 || dead)) leaves.push_back(s);
  }
  sort_into_rings(options, leaves);
  for (uint32_t s : leaves) span.push_back((top[s] + grain - 1) / grain * grain);
  uint32_t offset = 0;
  for (size_t i = 0; i < leaves.size();) {
    size_t j = i;
    uint32_t total = 0;
    while (j < leaves.size() && ring_of(options, leaves[j]) == ring_of(options, leaves[i])) total += span[j++];
    const uint32_t seam = k == 0 ? 0 : total % k;
    // The seam before leaf q is safe when no leaf but q and the one before
    // it spans more than the jump.
    uint32_t wide = 0;
    for (size_t d = i; d < j; ++d) wide += span[d] > seam ? 1 : 0;
    size_t first = i;
    for (size_t q = i; q < j && seam != 0; ++q) {
      const size_t before = q == i ? j - 1 : q - 1;
      const uint32_t own = (span[q] > seam ? 1 : 0) + (before != q && span[before] > seam ? 1 : 0);
      if (wide == own) {
        first = q;
        break;
      }
    }
    for (size_t a = 0; a < j - i; ++a) {
      const size_t x = i + (first - i + a) % (j - i);
      leaf_offset_[leaves[x]] = offset;
      offset += span[x];
    }
    i = j;
  }
}

// The digits of a destination (per rank, its nominal up slot: D-mod-K's
// digits, from positions in the tree as cabled, so that a failure moves no
// other destination's digits). At the leaves: its slot on its leaf plus
// the CA ports of the leaves before it (so leaves that are not full still
// use every slot evenly; for full leaves that is the slot itself). Above:
// the slot at which its leaf hangs off the nominal parent, and so on up
// (the next usable parent when the nominal one is not).
void Engine::set_digits(uint32_t t, uint32_t slot) {
  digits_of_ = {t, slot, stamp_};
  digits_rec_.clear();
  std::fill(digit_.begin(), digit_.end(), 0);
  const uint32_t r0 = rk_.rank[t];
  digit_[r0] = slot + leaf_offset_[t];
  bool exact = true;  // the chain so far went through nominal slots only
  for (uint32_t x = t;;) {
    const uint32_t r = rk_.rank[x];
    const uint32_t k = slots_up_[r];
    if (k == 0) break;
    const uint32_t want = digit_[r] % k;
    const UpHop* hop = nullptr;
    for (uint32_t i = 0; i < k && hop == nullptr; ++i) {
      watch_hit_ = watch_hit_ || (x == watch_lower_ && (want + i) % k == watch_slot_);
      const UpHop& h = up_hop_[static_cast<size_t>(x) * slot_stride_ + (want + i) % k];
      if (hop_ok(x, h)) {
        hop = &h;
        exact = exact && i == 0;
      }
    }
    if (hop == nullptr) break;
    const uint32_t p = hop->parent;
    if (exact) {  // the way the healthy tree comes down from p
      down_stamp_[p] = stamp_;
      down_nom_[p] = hop->back;
      digits_rec_.push_back(p);
      digits_rec_.push_back(hop->back);
    }
    digit_[rk_.rank[p]] = hop->down_slot;
    x = p;
  }
  for (size_t r = 0; r < slots_up_.size(); ++r) digit_slot_[r] = slots_up_[r] == 0 ? 0 : digit_[r] % slots_up_[r];
  // The other planes: the way the healthy tree would come down if the
  // destination had the digit of another up slot of its leaf, for flows
  // sent there in phase B.
  const uint32_t k0 = slots_up_[r0];
  for (uint32_t i = 0; i < k0; ++i) {
    const UpHop* h = &up_hop_[static_cast<size_t>(t) * slot_stride_ + i];
    watch_hit_ = watch_hit_ || (t == watch_lower_ && i == watch_slot_);
    for (uint32_t x = t; hop_ok(x, *h);) {
      const uint32_t p = h->parent;
      if (down_stamp_[p] == stamp_) break;  // the chain, or a plane already done
      down_stamp_[p] = stamp_;
      down_nom_[p] = h->back;
      digits_rec_.push_back(p);
      digits_rec_.push_back(h->back);
      x = p;
      const uint32_t k = slots_up_[rk_.rank[x]];
      if (k == 0) break;
      h = &up_hop_[static_cast<size_t>(x) * slot_stride_ + digit_slot_[rk_.rank[x]]];
      watch_hit_ = watch_hit_ || (x == watch_lower_ && digit_slot_[rk_.rank[x]] == watch_slot_);
    }
  }
}

// The entry a switch already routed forwards through.
uint32_t Engine::next_entry(uint32_t s) const {
  return entry_of_port(s, column_[s]);
}

// The nominal down entry of a switch that goes down toward the destination
// (the way the healthy tree's D-mod-K comes down: the destination's chain of
// nominal slots, set_digits), or kNone.
uint32_t Engine::nominal_down(uint32_t y) const { return down_stamp_[y] == stamp_ ? down_nom_[y] : kNone; }

// The down entry of a switch that goes down toward the destination: the one
// it has, else its nominal one, else one of its candidates by the
// destination's digit (D-mod-K over what is there, offset per switch). Not by
// load: a column's phase A then depends on the fabric and the destination
// only, never on the columns routed before it, which is what lets an
// incremental reroute re-decide only the columns a change touches.
uint32_t Engine::down_pick(uint32_t y) {
  if (routed(y)) return next_entry(y);
  uint32_t best = nominal_down(y);
  if (best == kNone) {
    auto [cf, count] = candidates(y);
    if (count > 0) best = cand_[cf + (digit_[rk_.rank[y]] + seq_[y]) % count];
  }
  if (best != kNone) put(y, port(best));
  return best;
}

uint32_t Engine::nominal_up(uint32_t x) const {
  const uint32_t r = rk_.rank[x];
  const uint32_t k = slots_up_[r];
  if (k == 0) return kNone;
  const uint32_t e = up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + digit_slot_[r]];
  return e != kNone && cand_ok(x, e) ? e : kNone;
}

// Sends `add` flows from y along the path y already has (down-going
// switches without one pick it now).
void Engine::push_flows(uint32_t y, uint32_t add) {
  while (y != target_) {
    const uint32_t e = routed(y) || is_down(st_[y].mode) ? down_pick(y) : kNone;
    if (e == kNone) {  // a switch still to choose (phase B): it takes them along
      flow_[y] += add;
      return;
    }
    load_[e] += add * share_[e];
    y = remote(e);
  }
}

// The nominal up entry of x (nom_) and whether its nominal path is whole
// (valid_): the switches above must be marked first (top-down).
void Engine::mark_nominal(uint32_t x) {
  const uint32_t e = nominal_up(x);
  nom_[x] = e;
  valid_[x] = e != kNone && (is_down(st_[remote(e)].mode) ? nominal_down(remote(e)) != kNone : valid_[remote(e)]);
}

// Phase A of one destination: nominal switches route and send their flows;
// the others wait for phase B (listed bottom-up in broken_).
void Engine::route_destination_flows(uint32_t t, uint32_t slot) {
  set_digits(t, slot);
  if (rk_.kind == RankingKind::kFromCas) {
    route_leaves(t, slot);
    return;
  }
  // Whole nominal paths, from the top down (up_list_ is top-down).
  for (uint32_t x : up_list_) mark_nominal(x);
  Deferred d{column_, lid_, t, slot, static_cast<uint32_t>(broken_.size())};
  for (auto it = up_list_.rbegin(); it != up_list_.rend(); ++it) {
    const uint32_t x = *it;
    if (!valid_[x]) {
      defer_or_route(x);
      continue;
    }
    const uint32_t e = nom_[x];
    const uint32_t f = flow_[x] + (ca_begin_[x + 1] - ca_begin_[x]);
    flow_[x] = 0;
    put(x, port(e));
    if (f == 0) continue;
    load_[e] += f;
    const uint32_t y = remote(e);
    if (is_down(st_[y].mode)) {
      push_flows(y, f);
    } else {
      flow_[y] += f;
    }
  }
  if (broken_.size() > d.first_broken) defer(d);
  for (uint32_t y : down_list_) {
    if (!routed(y)) down_pick(y);
  }
}

// Records a destination with switches left for phase B, with a copy of the
// modes toward its leaf (one per target and lane), so that phase B need not
// work them out again.
// set_digits' result, as it left it for a destination (defer).
void Engine::replay_digits(const std::vector<uint32_t>& pool, uint32_t at) {
  const uint32_t* p = pool.data() + at;
  std::copy(p, p + digit_.size(), digit_.begin());
  p += digit_.size();
  std::copy(p, p + digit_slot_.size(), digit_slot_.begin());
  p += digit_slot_.size();
  const uint32_t pairs = *p++;
  for (uint32_t i = 0; i < pairs; ++i, p += 2) {
    down_stamp_[p[0]] = stamp_;
    down_nom_[p[0]] = p[1];
  }
}

void Engine::defer(Deferred d) {
  if (digits_of_.t == d.t && digits_of_.slot == d.slot && digits_of_.stamp == stamp_) {
    d.digits_pool = &digits_pool_;
    d.digits_at = static_cast<uint32_t>(digits_pool_.size());
    digits_pool_.insert(digits_pool_.end(), digit_.begin(), digit_.end());
    digits_pool_.insert(digits_pool_.end(), digit_slot_.begin(), digit_slot_.end());
    digits_pool_.push_back(static_cast<uint32_t>(digits_rec_.size() / 2));
    digits_pool_.insert(digits_pool_.end(), digits_rec_.begin(), digits_rec_.end());
  }
  // A row of the memo before (load_modes) stays as it is until phase B is
  // done: the target's modes are the memo's, so nothing writes that row.
  if (st_ != own_st_.data()) {
    d.modes = st_;
    deferred_.push_back(d);
    return;
  }
  if (modes_stamp_ != target_stamp_ || modes_used_ == 0) {
    modes_stamp_ = target_stamp_;
    if (modes_used_ == modes_.size()) modes_.emplace_back();  // else one of an earlier route's, refilled
    modes_[modes_used_++].assign(own_st_.begin(), own_st_.end());
  }
  d.modes = modes_[modes_used_ - 1].data();
  deferred_.push_back(d);
}

// A switch whose nominal path is broken: if it has flows to send or may get
// some in phase B, it waits; else it takes any shortest way.
void Engine::defer_or_route(uint32_t x) {
  if (ca_begin_[x] != ca_begin_[x + 1] || fed(x)) {
    wait(x);
    return;
  }
  const uint32_t e = nominal_up(x);
  auto [cf, count] = candidates(x);
  if (e != kNone || count > 0) put(x, port(e != kNone ? e : cand_[cf]));
}

// x waits for phase B (broken_), and so do the switches it may send its
// flows to.
void Engine::wait(uint32_t x) {
  broken_.push_back(x);
  // Every switch above it may get its flows (its candidates are among
  // them; marking the others costs nothing: they do not wait unless
  // their own nominal path is broken too). A leaf only says it waits
  // (fed() asks its parents' children): most destinations have many
  // waiting leaves and few waiting switches above them to ask. Nor is a
  // switch without up links asked (it never climbs): a spine below the
  // top marks nothing.
  if (!leaf_children_.empty() && rk_.rank[x] == 0) {
    leaf_waits_[x] = stamp_;
    return;
  }
  if (!feeds_climber_[x]) return;
  for (uint32_t i = up_begin_[x]; i < up_begin_[x + 1]; ++i) fed_[up_rec_[i].remote] = stamp_;
}

// Whether a waiting switch may send x flows for the current destination:
// one marked it (fed_), or a leaf below it waits (leaf_waits_).
bool Engine::fed(uint32_t x) const {
  if (fed_[x] == stamp_) return true;
  if (leaf_children_.empty() || !leaf_children_[x]) return false;
  for (uint32_t i = down_begin_[x]; i < down_begin_[x + 1]; ++i) {
    if (leaf_waits_[down_rec_[i].remote] == stamp_) return true;
  }
  return false;
}

// Ranked from the CAs, only the leaves' digits change from one destination
// of a leaf to the next: every switch above them is routed once per target
// (and again if its digits differ) into a template column, which each
// destination copies; then each leaf routes and sends its CAs' flows down
// its whole path.
void Engine::prepare_template() {
  const uint32_t n = g_.num_switches();
  template_stamp_ = target_stamp_;
  template_digits_ = digit_;
  template_.assign(n, ForwardingTables::kNoPath);
  uint8_t* const column = column_;
  column_ = template_.data();
  upper_broken_.clear();
  leaves_up_.clear();
  for (uint32_t x : up_list_) {
    if (rk_.rank[x] != 0) mark_nominal(x);
  }
  for (auto it = up_list_.rbegin(); it != up_list_.rend(); ++it) {
    const uint32_t x = *it;
    if (rk_.rank[x] == 0) {
      leaves_up_.push_back(x);
    } else if (valid_[x]) {
      put(x, port(nom_[x]));
    } else {
      upper_broken_.push_back(x);  // bottom-up
      const uint32_t e = nom_[x];
      auto [cf, count] = candidates(x);
      if (e != kNone || count > 0) put(x, port(e != kNone ? e : cand_[cf]));
    }
  }
  list_down_candidates();
  for (uint32_t y : down_list_) {
    down_pick(y);
    valid_[y] = nominal_down(y) != kNone;
  }
  column_ = column;
}

void Engine::route_leaves(uint32_t t, uint32_t slot) {
  // The digits above the leaves' (rank 0) decide the template.
  if (template_stamp_ != target_stamp_ || !std::equal(digit_.begin() + 1, digit_.end(), template_digits_.begin() + 1)) {
    prepare_template();
  }
  const uint8_t own = column_[t];
  std::copy(template_.begin(), template_.end(), column_);
  column_[t] = own;
  Deferred d{column_, lid_, t, slot, static_cast<uint32_t>(broken_.size())};
  queue_.clear();
  // nominal_up of every leaf (rank 0): one slot for all of them.
  const uint32_t k0 = slots_up_[0];
  const size_t slot0 = k0 == 0 ? 0 : digit_[0] % k0;
  for (uint32_t x : leaves_up_) {
    uint32_t e = k0 == 0 ? kNone : up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + slot0];
    if (e != kNone && !cand_ok(x, e)) e = kNone;
    const uint32_t y = e == kNone ? kNone : remote(e);
    if (e == kNone || !valid_[y]) {  // valid_: whole below the leaf (template)
      defer_or_route(x);
      continue;
    }
    put(x, port(e));
    const uint32_t f = ca_begin_[x + 1] - ca_begin_[x];
    if (f == 0) continue;
    load_[e] += f;
    if (flow_[y] == 0) queue_.push_back(y);
    flow_[y] += f;
  }
  // Each switch the leaves sent flows to sends them on, once.
  for (uint32_t y : queue_) {
    const uint32_t f = flow_[y];
    flow_[y] = 0;
    push_flows(y, f);
  }
  queue_.clear();
  if (broken_.size() > d.first_broken) {
    // Switches above whose nominal path is broken wait too if a waiting
    // leaf may send them flows.
    for (uint32_t x : upper_broken_) {
      if (!fed(x)) continue;
      column_[x] = ForwardingTables::kNoPath;
      wait(x);
    }
    defer(d);
  }
}

}  // namespace railyard::routing::unicast
