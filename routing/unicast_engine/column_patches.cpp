// Incremental reroute: the columns a change touches that are patched, not
// walked again (mark_dirty says which may be: dirty_ 2 to 5; run() falls
// back to a walk when a patch says no). Each patch gives the column phase
// A would walk to, from the route before's (RouteMemo::columns), and the
// loads' change; tests/routing/reroute_test.cpp holds them against full
// routes.
#include <algorithm>
#include <cstring>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

// The patches' start: a new destination (stamp_, lid_) and its digits;
// the switch the change touched (patch_at_).
uint32_t Engine::begin_patch(Lid lid, uint32_t t, uint32_t slot) {
  ++stamp_;
  lid_ = lid;
  set_digits(t, slot);
  return patch_at_[lid.value];
}

// Leaf x's nominal up entry for the destination (set_digits first), if it
// may take it, else kNone.
uint32_t Engine::leaf_nominal_up(uint32_t x) const {
  const uint32_t k0 = slots_up_[0];
  const uint32_t e = k0 == 0 ? kNone : up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + digit_[0] % k0];
  return e != kNone && cand_ok(x, e) ? e : kNone;
}

// The leaves whose nominal way up is u (set_digits first) into waiting_, by
// the order phase A takes them and phase B lists them (tier 1, by GUID);
// false if one has no CAs or is not tier 1 (a walk then).
bool Engine::leaves_climbing_to(uint32_t u) {
  waiting_.clear();
  for (uint32_t i = down_begin_[u]; i < down_begin_[u + 1]; ++i) {
    const uint32_t x = down_rec_[i].remote;
    if (rk_.rank[x] != 0 || leaf_nominal_up(x) != down_rec_[i].rev) continue;
    if (ca_begin_[x] == ca_begin_[x + 1] || !is_tier1(st_[x].mode)) return false;
    waiting_.push_back(x);
  }
  std::sort(waiting_.begin(), waiting_.end(), [&](uint32_t a, uint32_t b) { return guid_rank_[a] < guid_rank_[b]; });
  return true;
}

// The path from entry e on to t through `column`'s entries into path_ (e
// first); false if it does not arrive.
bool Engine::path_through(const uint8_t* column, uint32_t e, uint32_t t) {
  const uint32_t n = g_.num_switches();
  path_.assign(1, e);
  for (uint32_t y = remote(e); y != t;) {
    const uint32_t next = column[y] == ForwardingTables::kNoPath ? kNone : entry_of_port(y, column[y]);
    if (next == kNone || path_.size() > n) return false;
    path_.push_back(next);
    y = remote(next);
  }
  return true;
}

// A dirty column (mark_dirty: dirty_ 2) whose only change is that leaf u
// (patch_at_) lost the up link its nominal path took, in a column phase B
// did not finish. Phase A would walk it again to the same column but for
// u: the switches above the leaves take the same entries (the change is
// below them), every other leaf the same slot toward the same whole path,
// and u, whose nominal path is broken, waits for phase B with its CAs'
// flows. That is, unless a parent of u has a broken nominal path too
// (route_leaves: it would wait as well, fed by u): then false, and the
// column is walked. Else the column is the old one (RouteMemo::columns)
// with u waiting, and the loads lose u's flows along its old path.
bool Engine::patch_leaf(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const uint32_t u = begin_patch(lid, t, slot);
  const uint32_t e = leaf_nominal_up(u);
  if (e != kNone && nominal_whole(remote(e))) return false;  // u still routes (not seen: mark_dirty's conditions)
  for (uint32_t i = up_begin_[u]; i < up_begin_[u + 1]; ++i) {
    const uint32_t y = up_rec_[i].remote;
    if (is_up_mode(st_[y].mode) && !nominal_whole(y)) return false;
  }
  const uint32_t leaves[] = {u};
  defer_old_column(lid, t, slot, prior_->memo->columns.data() + static_cast<size_t>(lid.value) * n, leaves, kNone);
  return true;
}

// The reverse of patch_leaf: a dirty column (mark_dirty: dirty_ 5) in which
// leaf u (patch_at_) alone waited for phase B, because the up link its
// nominal path takes was down, and that link is back. Phase A would walk it
// again to the same column (every other switch took its entry in phase A
// and keeps it: the change is below them) but for u, whose nominal path is
// whole again: u takes it, nothing waits, and the column is no longer
// deferred. So the column is kept with u's entry (phase B's choice before)
// now its nominal one (keep_with_entry), and u's flows are phase A's again,
// along that path into the loads. False (a walk) unless the nominal path is
// whole and arrives through the column's entries.
bool Engine::patch_leaf_back(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const uint32_t u = begin_patch(lid, t, slot);
  const uint32_t e = leaf_nominal_up(u);
  if (e == kNone || !nominal_whole(remote(e))) return false;
  uint8_t* old = memo_->columns.data() + static_cast<size_t>(lid.value) * n;
  if (!path_through(old, e, t) || !keep_with_entry(lid, u, port(e), old)) return false;
  const uint64_t f = ca_begin_[u + 1] - ca_begin_[u];
  for (uint32_t x : path_) load_[x] += f * share_[x];
  return true;
}

// The reverse of patch_spine: a dirty column (mark_dirty: dirty_ 6) whose
// only change is that switch u, just above the leaves (patch_at_), got back
// the up link its nominal path takes. In the route before u took another
// entry (its first candidate) and either no leaf climbed to it nominally
// (the column kept) or the leaves that do, and u, alone waited for phase B
// (the column deferred with them). Phase A would now route u and those
// leaves on their nominal paths (every other switch keeps its entry: the
// change is below them), and nothing waits: the column is kept with their
// nominal entries, their flows along them into the loads. False (a walk)
// unless the route before was so and the path arrives through the
// column's entries.
bool Engine::patch_spine_back(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const uint32_t u = begin_patch(lid, t, slot);
  const RouteMemo& memo = *prior_->memo;
  const uint32_t e = nominal_up(u);
  if (e == kNone || !nominal_whole(u) || !leaves_climbing_to(u)) return false;
  if (waiting_.empty() == (memo.deferred[lid.value] != 0)) return false;
  if (!waiting_.empty()) {
    const uint32_t i = memo.deferred_at[lid.value];
    if (i + 1 >= memo.broken_begin.size()) return false;
    const uint32_t* listed = memo.broken.data() + memo.broken_begin[i];
    if (memo.broken_begin[i + 1] - memo.broken_begin[i] != waiting_.size() + 1 || listed[waiting_.size()] != u ||
        !std::equal(waiting_.begin(), waiting_.end(), listed)) {
      return false;
    }
  }
  uint8_t* old = memo_->columns.data() + static_cast<size_t>(lid.value) * n;
  if (!path_through(old, e, t) || old[u] == ForwardingTables::kNoPath) return false;
  for (uint32_t x : waiting_) {
    if (old[x] == ForwardingTables::kNoPath) return false;
  }
  // Nothing fails from here: every entry written is kept.
  (void)keep_with_entry(lid, u, port(e), old);
  uint64_t carried = 0;  // u carries the flows of its leaves
  for (uint32_t x : waiting_) {
    const uint32_t ex = leaf_nominal_up(x);
    const uint64_t f = ca_begin_[x + 1] - ca_begin_[x];
    (void)keep_with_entry(lid, x, port(ex), old);
    load_[ex] += f * share_[ex];
    carried += f;
  }
  for (uint32_t x : path_) load_[x] += carried * share_[x];
  return true;
}

// The old column `old` of `lid`, into the batch, deferred to phase B with
// `leaves` (by phase A's order) and then `above` (kNone: none) waiting; the
// leaves' flows along their old paths come out of the loads.
void Engine::defer_old_column(Lid lid, uint32_t t, uint32_t slot, const uint8_t* old,
                              std::span<const uint32_t> leaves, uint32_t above) {
  begin_column(lid);
  std::memcpy(column_, old, g_.num_switches());
  ++report_.lids_routed;
  Deferred d{column_, lid, t, slot, static_cast<uint32_t>(broken_.size())};
  const size_t b = batch_lids_.size() - 1;
  for (uint32_t x : leaves) {
    old_rows_emptied_.emplace_back(b, x);
    column_[x] = ForwardingTables::kNoPath;
    subtract_path(old, x, t);
    defer_or_route(x);  // it has CAs: it waits
  }
  if (above != kNone) {
    old_rows_emptied_.emplace_back(b, above);
    column_[above] = ForwardingTables::kNoPath;
    defer_or_route(above);  // fed by the leaves: it waits
  }
  defer(d);
}

// A column kept but for switch s's entry, which is now `now` (the old one
// in the memo's column `old`): written into the tables and `old`, and into
// kept_now_ when it moved. False if either is empty (the switch LIDs' turns
// read which rows reach a column: a walk then).
bool Engine::keep_with_entry(Lid lid, uint32_t s, uint8_t now, uint8_t* old) {
  if (now == old[s]) return true;
  if (now == ForwardingTables::kNoPath || old[s] == ForwardingTables::kNoPath) return false;
  old[s] = now;  // the memo's own (in place or a copy), read by this lane only
  tables_.set(s, lid, now);
  kept_now_.emplace_back(s, now);
  return true;
}

// Into old_load_: the flows of leaf x's CAs along the old column `old`.
void Engine::subtract_path(const uint8_t* old, uint32_t x, uint32_t t) {
  const uint32_t f = ca_begin_[x + 1] - ca_begin_[x];
  for (uint32_t y = x, hops = 0; y != t && hops < kInf; ++hops) {
    const uint8_t p = old[y];
    if (p == ForwardingTables::kNoPath || p == 0) break;
    add_old(static_cast<size_t>(y) * 256 + p, f);
    y = prior_->cable[static_cast<size_t>(y) * 256 + p];
    if (y == kNone) break;
  }
}

// A dirty column (mark_dirty: dirty_ 4) whose only change is that switch u,
// just above the leaves (patch_at_), lost the up link its nominal path
// took, in a column phase B did not finish. Phase A would walk it again to
// the same column but for u and the leaves below it: u's nominal path is
// broken, so it takes its first candidate (prepare_template), and the
// leaves whose nominal way up is u wait for phase B; then u waits too (they
// feed it). That is, unless a switch they or u may feed has a broken
// nominal path too (it would wait as well): then 0, and the column is
// walked. Only those leaves sent flows through u (a switch going up
// carries the flows of the switches below it that climb to it), so:
//  - no leaf waits: the column is kept, with u's entry, if it moved,
//    written into the tables and the memo's column (`entry`, as
//    patch_down): 1;
//  - else the old column with those leaves and u waiting, in the batch,
//    and the loads lose the leaves' flows along their old paths: 2.
int Engine::patch_spine(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const uint32_t u = begin_patch(lid, t, slot);
  const uint32_t e = nominal_up(u);
  if (e != kNone && nominal_whole(u)) return 0;  // u still routes (not seen: mark_dirty's conditions)
  auto [cf, count] = candidates(u);
  const uint8_t now = e != kNone ? port(e) : count > 0 ? port(cand_[cf]) : ForwardingTables::kNoPath;
  if (!leaves_climbing_to(u)) return 0;
  uint8_t* old = memo_->columns.data() + static_cast<size_t>(lid.value) * n;
  if (waiting_.empty()) return keep_with_entry(lid, u, now, old) ? 1 : 0;
  auto waits_too = [&](uint32_t y) { return y != u && is_up_mode(st_[y].mode) && !nominal_whole(y); };
  for (uint32_t x : waiting_) {
    for (uint32_t i = up_begin_[x]; i < up_begin_[x + 1]; ++i) {
      if (waits_too(up_rec_[i].remote)) return 0;
    }
  }
  for (uint32_t i = up_begin_[u]; i < up_begin_[u + 1]; ++i) {
    if (waits_too(up_rec_[i].remote)) return 0;
  }
  defer_old_column(lid, t, slot, old, waiting_, u);
  return 2;
}

// A dirty column (mark_dirty: dirty_ 3) whose only possible change is that
// one changed link (down_link_, lower switch u, upper v) may be a down
// candidate of v toward t, in a column phase B did not finish. Only v's
// candidates moved. If neither the chain nor a plane of the destination
// looks at the link (the watch of chain_digits and planes_down: then they
// are the route before's, and so are every digit and every switch with a
// nominal way down), every switch but v takes the entry it had, and so
// does v if it has a nominal way down; else v picks among its candidates by
// the digit (down_pick), and carries no flow of phase A (the nominal paths
// go down only through switches with a nominal way down), so the loads
// stay. The column is then kept, with v's entry, if it moved, written into
// the tables and the memo's column (keep_with_entry); else false, and the
// column is walked.
bool Engine::patch_down(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const ChangedLink& c = prior_->changed[down_link_];
  lid_ = lid;
  // set_digits' chain (its digits, and whether it looks at the link), then
  // its planes, which depend only on the digits above the leaf: the same
  // for most columns of a target, so walked once for them (planes_down).
  watch_lower_ = c.lower;
  watch_slot_ = c.lower_port - base_up_[rk_.rank[c.lower]];
  watch_hit_ = false;
  chain_digits(t, slot, UINT32_MAX);
  if (!watch_hit_) planes_down(t);
  watch_lower_ = kNone;
  if (watch_hit_ || planes_hit_) return false;
  const uint32_t v = c.upper;
  if (planes_reach_ == v) return true;  // v has a nominal way down (nominal_down): its entry stays
  auto [cf, count] = candidates(v);
  uint8_t* old = memo_->columns.data() + static_cast<size_t>(lid.value) * n;
  if (count == 0) return false;
  return keep_with_entry(lid, v, port(cand_[cf + (chain_digit_[rk_.rank[v]] + seq_[v]) % count]), old);
}

// The planes of set_digits for patch_down, from the chain's digits
// (chain_digits): every switch they stamp, walked without the chain's
// stamps (the plane through the chain's first slot follows the chain while
// it is exact, and the chain's scan at a switch covers the plane's look at
// its slot there), so the same for every column of target t whose digit
// slots above t are the same: kept until they differ. Sets planes_hit_
// (a plane looks at watch_lower_'s slot watch_slot_) and planes_reach_
// (the changed link's upper switch, if a plane stamps it; else kNone).
void Engine::planes_down(uint32_t t) {
  const uint32_t r0 = rk_.rank[t];
  plane_slots_now_.assign(slots_up_.size(), 0);
  for (size_t r = r0 + 1; r < slots_up_.size(); ++r) {
    plane_slots_now_[r] = slots_up_[r] == 0 ? 0 : chain_digit_[r] % slots_up_[r];
  }
  if (planes_for_ == target_stamp_ && planes_t_ == t && plane_slots_now_ == plane_slots_) return;
  planes_for_ = target_stamp_;
  planes_t_ = t;
  plane_slots_ = plane_slots_now_;
  const uint32_t v = prior_->changed[down_link_].upper;
  planes_hit_ = false;
  planes_reach_ = kNone;
  if (plane_mark_.size() != g_.num_switches()) plane_mark_.assign(g_.num_switches(), 0);
  ++plane_epoch_;
  const uint32_t k0 = slots_up_[r0];
  for (uint32_t i = 0; i < k0; ++i) {
    uint32_t e = up_slot_entry_[static_cast<size_t>(t) * slot_stride_ + i];
    planes_hit_ = planes_hit_ || (t == watch_lower_ && i == watch_slot_);
    while (e != kNone && cand_ok(remote(e), rev(e))) {
      const uint32_t p = remote(e);
      if (plane_mark_[p] == plane_epoch_) break;  // a plane already done
      plane_mark_[p] = plane_epoch_;
      if (p == v) planes_reach_ = v;
      const uint32_t k = slots_up_[rk_.rank[p]];
      if (k == 0) break;
      e = up_slot_entry_[static_cast<size_t>(p) * slot_stride_ + plane_slots_[rk_.rank[p]]];
      planes_hit_ = planes_hit_ || (p == watch_lower_ && plane_slots_[rk_.rank[p]] == watch_slot_);
    }
  }
}

// After modes_patched for a drained or undrained link of leaf u: whether
// u's one way toward switch target t is that link, before and after, at
// the same distance (its only candidate then, tier 1 or 2, as every parent
// is tier 1 or unreachable; a parallel cable is another way). Its entry is
// then the same, and so is every other switch's (their modes did not move,
// and u, a leaf, carries no one's route and is taken after them): the
// column is the route before's.
bool Engine::one_way_up(uint32_t t) const {
  const ChangedLink& c = prior_->changed[0];
  const uint32_t u = c.lower;
  const RouteMemo& memo = *prior_->memo;
  const SwitchState before = memo.modes[static_cast<size_t>(memo.modes_at[t]) * g_.num_switches() + u];
  if (before.val != st_[u].val || st_[u].val == kInf) return false;
  for (uint32_t i = up_begin_[u]; i < up_begin_[u + 1]; ++i) {
    const SwitchState p = st_[up_rec_[i].remote];
    if (p.val != kInf && p.val + 1u == st_[u].val && up_rec_[i].port != c.lower_port) return false;
  }
  return true;
}

// After modes_patched, a switch target whose one change is a leaf u that
// lost its way up to it: its columns are the route before's (as the walk
// left them, before the switch turns' fills: flush keeps them so) with u's
// entry empty. The walk's chains climb from the target, above u; its cones
// go down from them and a switch in a cone takes, among its own links up
// into the cone, the one its own counters favour, so u, which no longer
// climbs there, moved only its own entry; nor does it change the switches
// outside the cones (each by its own cursor). False if u is still reached
// (a walk then), or the memo keeps no such columns. A leaf's link drained
// or undrained: the column is kept whole if one_way_up, else walked.
bool Engine::patch_switch_column(uint32_t t) {
  const ChangedLink& c = prior_->changed[0];
  if (!flows_ || memo_ == nullptr) return false;
  const uint32_t n = g_.num_switches();
  const Port& p0 = fabric_.port(fabric_.node(g_.node(t)).first_port);
  if (c.up_before && c.up_now) {  // drained or undrained: kept whole, or walked
    if (!one_way_up(t)) return false;
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) report_.lids_routed += Lid{static_cast<uint16_t>(p0.lid.value + k)}.valid();
    return true;
  }
  if (c.up_now || st_[c.lower].mode != Mode::kUnreachable) return false;
  const std::vector<uint8_t, UninitializedAllocator<uint8_t>>& store = prior_->memo->columns;
  reserve_columns(1u << p0.lmc);
  for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
    const Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
    if (!lid.valid()) continue;
    if (static_cast<size_t>(lid.value + 1) * n > store.size()) return false;
  }
  for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
    const Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
    if (!lid.valid()) continue;
    begin_column(lid);
    std::memcpy(column_, store.data() + static_cast<size_t>(lid.value) * n, n);
    column_[c.lower] = ForwardingTables::kNoPath;
    point_columns_.emplace_back(batch_lids_.size() - 1, c.lower);
    ++report_.lids_routed;
  }
  return true;
}

// Whether the nominal path of x (an up-mode switch) is whole: mark_nominal's
// valid_, from x up (set_digits first).
bool Engine::nominal_whole(uint32_t x) const {
  for (uint32_t hops = 0; hops < kInf; ++hops) {
    const uint32_t e = nominal_up(x);
    if (e == kNone) return false;
    const uint32_t r = remote(e);
    if (is_down(st_[r].mode)) return nominal_down(r) != kNone;
    x = r;
  }
  return false;
}

}  // namespace railyard::routing::unicast
