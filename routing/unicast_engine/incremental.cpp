// Incremental reroute, the engine's side (routing/reroute.h says what it
// promises; reroute.cpp drives it).
//
// A route keeps, per target leaf, the modes of every switch toward it; the
// loads phase A left; and phase A's columns of the destinations that phase B
// finished (RouteMemo). After a change of switch links, run() prepares every
// target as a full route does and re-walks a CA column only if it may differ:
//  - the modes toward its leaf differ from the memo's: every column of the
//    leaf (a distance or a mode moved, so may any choice);
//  - a changed link may be a down candidate toward the leaf (the leaf hangs
//    below it: its chain and cones may move): every column (one such link
//    alone: each column is patched, column_patches.cpp, where its digits
//    do not look at the link);
//  - a changed link (lower switch u, port pu) may be an up candidate of u
//    toward the leaf: the columns where u's entry is not its nominal up port
//    (a fallback, a deferred switch, or none), and those whose nominal up
//    port at u is pu.
// Else phase A's column is unchanged: taken from the tables, or for a
// column phase B finished, from the memo with the switches it left to phase
// B (phase B is then run again in full, from phase A's columns). With the
// modes the same, the candidates of a
// switch change only at the ends of a changed link; phase A takes a switch's
// nominal port when its nominal path is whole, and that path climbs through
// nominal ports, then down the destination's chain (which a changed link
// below u would have made a down candidate): so a switch whose nominal port
// is not pu keeps its entry and its path's wholeness, and a column where u
// takes its nominal port, not pu, is the same; where u is a leaf or a
// switch just above the leaves losing that port, the column is patched
// (column_patches.cpp). tests/routing/reroute_test.cpp holds this against
// full routes.
//
// Phase A reads no load, so the loads it leaves are a sum over columns: the
// re-walked columns' old contributions (their flows along their old phase A
// column, over the cables as cabled) are taken out, their new ones come in
// as they are walked. A load left on a link that is now down would mean a
// column that used it was not re-walked: take_prior_loads() then says so and
// the route is done in full.
#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

void Engine::save_modes(uint32_t t) {
  const uint32_t n = g_.num_switches();
  const uint32_t at = memo_->modes_at[t];
  if (at == RouteMemo::kNoModes) return;
  SwitchState* out = memo_->modes.data() + static_cast<size_t>(at) * n;
  if (lazy_modes_ != nullptr) {  // the memo's row, not loaded: as it is
    if (!memo_in_place_) {
      std::copy(lazy_modes_, lazy_modes_ + n, out);
      memo_->reach[at] = prior_->memo->reach[prior_->memo->modes_at[t]];
    }
    return;
  }
  if (memo_in_place_) {
    if (modes_from_memo_) return;  // st_ was read from this very row
    bool same = true;
    for (uint32_t s = 0; s < n && same; ++s) same = out[s] == st_[s];
    if (same) return;  // the reach too: it is a function of the row
    // The old flows of this target's re-walked columns follow the old row.
    if (old_row_at_.empty()) old_row_at_.assign(n, kNone);
    old_row_at_[t] = static_cast<uint32_t>(old_rows_.size() / n);
    old_rows_.insert(old_rows_.end(), out, out + n);
  }
  RouteMemo::Reach reach = RouteMemo::kAllTier1;
  for (uint32_t s = 0; s < n; ++s) {
    out[s] = st_[s];
    if (st_[s].mode == Mode::kUnreachable) {
      reach = std::max(reach, RouteMemo::kSomeUnreachable);
    } else if (!is_tier1(st_[s].mode)) {
      reach = RouteMemo::kSomeTier2;
    }
  }
  memo_->reach[at] = reach;
}

// Whether the modes toward t are the memo's, provably, without preparing
// the target.
//
// Tier 1 first: no changed link may be on a shortest tier-1 path it was not
// on (or the only one it was on). Tier 1 sees a link when it is up and not
// drained, so a drain is a link going away for it and an undrain one coming
// back. A link (u below v) is on such a path when u goes down and v goes
// down through it, or u climbs through it; going down, a distance is the
// pure down distance (up links of the switch do not count), climbing, one
// more than the nearest parent's. Then every tier-1 mode and distance stays.
//
// Tier 2 (prepare_tier2) runs, when there are drains, for the switches tier
// 1 cannot serve, over every link that is up, drained or not, from the
// tier-1 distances. So with drains before or now:
//  - a target every switch reached in tier 1 still is reached so: no tier 2;
//  - else, if no changed link came up or went down, tier 2 walks the same
//    links from the same distances and finds the same modes, but for the
//    clean_only flag of the ends of a changed link (kept only if neither is
//    in tier 2). With no drains before, tier 2 finds nothing: a switch it
//    could reach over the links as they are would have been reached in tier
//    1 before, when those links were all undrained;
//  - a link going down shrinks what tier 2 can reach: fine if it reached
//    nothing before;
//  - tier-2 modes before and no drains now: not kept.
bool Engine::modes_kept(uint32_t t) const {
  const RouteMemo& memo = *prior_->memo;
  const uint32_t at = memo.modes_at[t];
  if (at == RouteMemo::kNoModes) return false;
  const SwitchState* m = memo.modes.data() + static_cast<size_t>(at) * g_.num_switches();
  const RouteMemo::Reach reach = memo.reach[at];
  if ((has_drains_ || prior_->had_drains) && reach != RouteMemo::kAllTier1) {
    if (reach == RouteMemo::kSomeTier2 && !has_drains_) return false;
    for (const ChangedLink& c : prior_->changed) {
      if (c.up_before != c.up_now && !(c.up_before && reach == RouteMemo::kSomeUnreachable)) return false;
      if (reach == RouteMemo::kSomeTier2 && (!is_tier1(m[c.lower].mode) || !is_tier1(m[c.upper].mode))) {
        return false;
      }
    }
  }
  for (const ChangedLink& c : prior_->changed) {
    if (c.usable_before() == c.usable_now()) continue;  // tier 1 sees no change
    const SwitchState su = m[c.lower], sv = m[c.upper];
    const uint32_t vu = su.val, vv = sv.val;  // kInf when unreachable
    if (c.usable_now()) {
      if (is_down(su.mode) && su.val != kInf && !(is_down(sv.mode) && vv <= vu + 1)) return false;
      if (!is_down(su.mode) && vv != kInf && (vu == kInf || vv + 1 < vu)) return false;
      continue;
    }
    if (is_down(su.mode) && is_down(sv.mode) && vu + 1 == vv) {
      // Another way down from v as near, still usable (a parallel cable,
      // say): v's pure down distance stays, and so does every other.
      bool other = false;
      for (uint32_t i = down_begin_[c.upper]; i < down_begin_[c.upper + 1] && !other; ++i) {
        const Entry& x = down_rec_[i];
        const SwitchState sx = m[x.remote];
        other = !x.drained && sx.mode == Mode::kDown && sx.val + 1u == vv;
      }
      if (!other) return false;
    }
    if (su.mode == Mode::kUp && vv != kInf && vv + 1 == vu) {
      bool other = false;  // another parent as near, still usable
      for (uint32_t i = up_begin_[c.lower]; i < up_begin_[c.lower + 1] && !other; ++i) {
        const Entry& x = up_rec_[i];
        other = x.remote != c.upper && !x.drained && m[x.remote].val != kInf && m[x.remote].val + 1u == vu;
      }
      if (!other) return false;
    }
  }
  return true;
}

// Instead of prepare_target for a switch target (not a leaf), when the one
// change is a leaf's up link going down or coming back on a fabric without
// drains, or drained or undrained with no other link drained: the memo's
// modes with the leaf's worked out again, as prepare_target would have
// them. Nothing else moves: a leaf is above no switch, so no other switch's
// distance goes through it (going down, a distance is measured from the
// target up, which a leaf is not on; climbing, from the parents), and its
// own is one more than its nearest parent's over a link not drained (tier
// 1), else, the link drained, one more than its nearest parent's (tier 2:
// prepare_tier2; its parents are all tier 1, as no other link is drained),
// or none.
bool Engine::modes_patched(uint32_t t) {
  if (prior_->changed.size() != 1) return false;
  const ChangedLink& c = prior_->changed[0];
  const uint32_t u = c.lower;
  const bool cut = c.up_before != c.up_now && !c.drained_before && !c.drained_now && !has_drains_ && !prior_->had_drains;
  const bool drain = c.up_before && c.up_now && c.drained_before != c.drained_now &&
                     drained_entries_ == (c.drained_now ? 2u : 0u);
  if (!cut && !drain) return false;
  if (rk_.rank[u] != 0 || rk_.rank[t] == 0 || u == t) return false;
  const RouteMemo& memo = *prior_->memo;
  const uint32_t at = memo.modes_at[t];
  // Tier 2 before: only the leaf's, through the link now undrained.
  if (at == RouteMemo::kNoModes || (memo.reach[at] == RouteMemo::kSomeTier2 && !(drain && c.drained_before))) {
    return false;
  }
  const uint32_t n = g_.num_switches();
  const SwitchState* row = memo.modes.data() + static_cast<size_t>(at) * n;
  std::copy(row, row + n, own_st_.begin());
  uint16_t nearest = kInf, nearest_any = kInf;
  for (uint32_t i = up_begin_[u]; i < up_begin_[u + 1]; ++i) {
    const SwitchState& p = row[up_rec_[i].remote];
    if (is_tier1(p.mode) && !up_rec_[i].drained) nearest = std::min(nearest, p.val);
    if (p.val != kInf) nearest_any = std::min(nearest_any, p.val);
  }
  own_st_[u] = SwitchState{};  // unreachable
  if (nearest < kInf - 1) {
    own_st_[u] = SwitchState{static_cast<uint16_t>(nearest + 1), Mode::kUp, 0};
  } else if (drain && c.drained_now && nearest_any < kInf - 1) {
    own_st_[u] = SwitchState{static_cast<uint16_t>(nearest_any + 1), Mode::kUpDrain, 0};
    for (uint32_t i = up_begin_[u]; i < up_begin_[u + 1]; ++i) {  // a clean way as near: prefer it
      if (!up_rec_[i].drained && link_ok(own_st_[u], row[up_rec_[i].remote], 1, 0)) own_st_[u].clean_only = 1;
    }
  }
  begin_target(t, own_st_.data(), false, nullptr);
  return true;
}

// st_ from the memo (modes_kept), as prepare_target would have left it: its
// row, in place. Nothing writes that row while it is read (save_modes keeps
// a row the modes were read from).
void Engine::load_modes(uint32_t t) {
  const RouteMemo& memo = *prior_->memo;
  const uint32_t at = memo.modes_at[t];
  begin_target(t, memo.modes.data() + static_cast<size_t>(at) * g_.num_switches(), true, nullptr);
  if (memo.reach[at] == RouteMemo::kAllTier1) {  // account_ca_destination's summary, as begin_lazy
    reach_ = all_tier1_;
    reach_.stamp = target_stamp_;
  }
}

// Instead of load_modes (modes_kept(t)): the modes stay in the memo's row
// (state()) when nothing but mark_dirty may read them, i.e. when every
// switch reaches t in tier 1 (the reach summary of the report is then known
// without them), no column of t was finished by phase B (reuse_deferred
// snapshots the modes) and no CA of t hangs off a drained link
// (account_ca_destination reads the modes then). run() loads them if a
// column is re-walked.
bool Engine::begin_lazy(uint32_t t) {
  const RouteMemo& memo = *prior_->memo;
  const uint32_t at = memo.modes_at[t];
  if (at == RouteMemo::kNoModes || memo.reach[at] != RouteMemo::kAllTier1) return false;
  for (uint32_t i = ca_begin_[t]; i < ca_begin_[t + 1]; ++i) {
    const CaPort& p = ca_info_[i];
    if (!drained_links_.empty() && drained_links_[p.link.value()]) return false;
    for (uint32_t k = 0; k < (1u << p.lmc); ++k) {
      const uint32_t lid = p.lid.value + k;
      if (lid < memo.deferred.size() && memo.deferred[lid]) return false;
    }
  }
  const SwitchState* row = memo.modes.data() + static_cast<size_t>(at) * g_.num_switches();
  begin_target(t, row, true, row);
  reach_ = all_tier1_;  // account_ca_destination's summary, counted once per route
  reach_.stamp = target_stamp_;
  return true;
}

// Whether the column of switch LID t (its modes the memo's: modes_kept) is
// the one the tables have. Its chains, cones and the other switches (with
// counters local to t: clear_counters) read only the modes toward t and the
// candidates they allow; a changed link that could be no candidate in
// either direction, whatever its state, is read by no choice, so the
// column a full route walks is the one the route before walked. Leaves the
// memo's row in lazy_modes_ (save_modes copies it as it is).
bool Engine::switch_column_kept(uint32_t t) {
  const RouteMemo& memo = *prior_->memo;
  const SwitchState* row = memo.modes.data() + static_cast<size_t>(memo.modes_at[t]) * g_.num_switches();
  begin_target(t, row, true, row);
  for (const ChangedLink& c : prior_->changed) {
    const SwitchState su = state(c.lower), sv = state(c.upper);
    if (su.val == kInf || sv.val == kInf) continue;
    if (is_down(sv.mode) && is_down(su.mode) && su.val + 1 == sv.val) return false;  // v's down candidate
    if (is_up_mode(su.mode) && sv.val + 1 == su.val) return false;                 // u's up candidate
  }
  return true;
}

// The down and up lists of prepare_target, from st_, in its order: the
// tier-1 switches top-down, then the tier-2 ones.
void Engine::list_modes(uint32_t t) {
  down_list_.clear();
  up_list_.clear();
  bool tier2 = false;
  for (uint32_t s : order_) {
    if (s == t || !is_tier1(st_[s].mode)) {
      tier2 = tier2 || (st_[s].mode != Mode::kUnreachable);
      continue;
    }
    (is_down(st_[s].mode) ? down_list_ : up_list_).push_back(s);
  }
  if (!tier2) return;
  for (uint32_t s : order_) {
    if (is_tier1(st_[s].mode) || st_[s].mode == Mode::kUnreachable) continue;
    (is_down(st_[s].mode) ? down_list_ : up_list_).push_back(s);
  }
}

// The digits of the destination's chain (set_digits without the planes),
// up to rank `top` (those above it are left 0).
void Engine::chain_digits(uint32_t t, uint32_t slot, uint32_t top) {
  std::fill(chain_digit_.begin(), chain_digit_.end(), 0);
  chain_digit_[rk_.rank[t]] = slot + leaf_offset_[t];
  for (uint32_t x = t; rk_.rank[x] < top;) {
    const uint32_t k = slots_up_[rk_.rank[x]];
    if (k == 0) break;
    const uint32_t want = chain_digit_[rk_.rank[x]] % k;
    uint32_t e = kNone;
    for (uint32_t i = 0; i < k && e == kNone; ++i) {
      watch_hit_ = watch_hit_ || (x == watch_lower_ && (want + i) % k == watch_slot_);  // as set_digits
      const uint32_t c = up_slot_entry_[static_cast<size_t>(x) * slot_stride_ + (want + i) % k];
      if (c != kNone && cand_ok(state(remote(c)), state(x), ent_[rev(c)])) e = c;
    }
    if (e == kNone) break;
    const uint32_t p = remote(e);
    chain_digit_[rk_.rank[p]] = down_slot(p, rev(e));
    x = p;
  }
}

// Which CA columns of target t to re-walk (dirty_, by LID); false if none.
bool Engine::mark_dirty(uint32_t t) {
  const uint32_t n = g_.num_switches();
  const RouteMemo& memo = *prior_->memo;
  const ForwardingTables& old = *prior_->tables;
  if (dirty_.size() != old.num_lids()) dirty_.assign(old.num_lids(), 0);
  if (patch_at_.size() != old.num_lids()) patch_at_.assign(old.num_lids(), kNone);
  if (chain_digit_.size() != digit_.size()) chain_digit_.assign(digit_.size(), 0);
  bool all = memo.modes_at[t] == RouteMemo::kNoModes;
  if (!all && !modes_from_memo_) {
    const SwitchState* before = memo.modes.data() + static_cast<size_t>(memo.modes_at[t]) * n;
    for (uint32_t s = 0; s < n && !all; ++s) all = before[s] != st_[s];
  }
  up_changed_.clear();
  uint32_t downs = 0;
  for (uint32_t i = 0; i < prior_->changed.size() && !all; ++i) {
    const ChangedLink& c = prior_->changed[i];
    const SwitchState su = state(c.lower), sv = state(c.upper);
    if (su.val == kInf || sv.val == kInf) continue;
    // Whatever the link's state: could it be a candidate?
    if (is_down(sv.mode) && is_down(su.mode) && su.val + 1 == sv.val) {
      ++downs;
      down_link_ = i;
    }
    if (is_up_mode(su.mode) && sv.val + 1 == su.val) up_changed_.push_back(i);
  }
  // One changed link may be a down candidate toward t: only the candidates
  // of the switch above it moved, and a column whose digits never look at
  // the link keeps every entry but, perhaps, that switch's (patch_down).
  // More: every column is walked again.
  const bool one_down = !all && downs == 1;
  uint32_t top = 0;  // the highest rank whose chain digit mark_dirty reads
  for (uint32_t ci : up_changed_) top = std::max(top, rk_.rank[prior_->changed[ci].lower]);
  all = all || downs > 1;
  bool any = false;
  for (uint32_t i = ca_begin_[t]; i < ca_begin_[t + 1]; ++i) {
    const CaPort& p = ca_info_[i];
    const uint8_t leaf_port = p.leaf_port;
    for (uint32_t k = 0; k < (1u << p.lmc); ++k) {
      const Lid lid{static_cast<uint16_t>(p.lid.value + k)};
      if (!lid.valid()) continue;
      uint8_t d = all ? 1 : 0;
      if (!d && !up_changed_.empty()) {
        // u's entry as phase A left it (phase B's are chosen again anyway).
        const uint8_t* phase_a = memo.deferred[lid.value] ? memo.deferred_columns.data() +
                                                                  static_cast<size_t>(memo.deferred_at[lid.value]) * n
                                                            : nullptr;
        chain_digits(t, (leaf_port - base_down_[rk_.rank[t]]) * (1u << p.lmc) + k, top);
        uint32_t reasons = 0, leaf = kNone;
        bool back = false;
        for (uint32_t ci : up_changed_) {
          const ChangedLink& c = prior_->changed[ci];
          const uint32_t r = rk_.rank[c.lower];
          const uint32_t slots = slots_up_[r];
          const uint32_t nominal = slots == 0 ? 0 : base_up_[r] + chain_digit_[r] % slots;
          const uint8_t had = phase_a ? phase_a[c.lower] : old.get(c.lower, lid);
          if (slots != 0 && nominal != c.lower_port && had == nominal) continue;
          ++reasons;
          // A leaf, or a switch just above the leaves, losing the up link
          // its nominal path took, in a column phase B did not finish:
          // patch_leaf or patch_spine may do.
          const bool losing = slots != 0 && had == nominal && nominal == c.lower_port && c.usable_before() &&
                              !c.usable_now() && phase_a == nullptr &&
                              ((r == 0 && ca_begin_[c.lower] != ca_begin_[c.lower + 1]) || r == 1);
          // A leaf getting back the up link its nominal path takes, in a
          // column where it alone waited for phase B, or a switch just
          // above the leaves: patch_leaf_back or patch_spine_back may do.
          back = slots != 0 && nominal == c.lower_port && !c.usable_before() && c.usable_now() &&
                 ((r == 0 && phase_a != nullptr && had == ForwardingTables::kNoPath && alone_waiting(lid, c.lower)) ||
                  r == 1);
          leaf = losing || back ? c.lower : kNone;
        }
        d = reasons == 0                        ? 0
            : reasons != 1 || leaf == kNone     ? 1
            : back                              ? (rk_.rank[leaf] == 0 ? 5 : 6)
            : rk_.rank[leaf] == 0               ? 2
                                                : 4;
        if (d >= 2) patch_at_[lid.value] = leaf;
      }
      if (one_down) d = d == 0 && !memo.deferred[lid.value] ? 3 : 1;
      dirty_[lid.value] = d;
      any = any || d != 0;
    }
  }
  if (any) ++targets_touched_;
  return any;
}

// Whether switch u alone waited for phase B in the route before's column of
// `lid` (one it deferred).
bool Engine::alone_waiting(Lid lid, uint32_t u) const {
  const RouteMemo& memo = *prior_->memo;
  if (!memo.deferred[lid.value]) return false;
  const uint32_t i = memo.deferred_at[lid.value];
  if (i + 1 >= memo.broken_begin.size()) return false;
  return memo.broken_begin[i + 1] - memo.broken_begin[i] == 1 && memo.broken[memo.broken_begin[i]] == u;
}

// Takes the flows of the re-walked columns' old phase A columns out of the
// loads (old_load_, by switch port): every leaf routed in phase A sends its
// CAs' flows along a column to the target. run() lists the columns
// (old_columns_to_subtract_, by target in leaf order) and calls this once
// its leaves are done, before anything is written to the tables. Each old
// column is read whole from the memo (RouteMemo::columns, or the phase A
// column of one phase B finished).
void Engine::subtract_old_columns() {
  const uint32_t n = g_.num_switches();
  const RouteMemo& memo = *prior_->memo;
  if (old_columns_to_subtract_.empty()) return;
  carried_.assign(n, 0);
  uint32_t sorted_for = kNone;
  for (const auto& [lid, t] : old_columns_to_subtract_) {
    if (t != sorted_for) sort_by_distance(t);
    sorted_for = t;
    const uint8_t* column = memo.deferred[lid.value]
                                ? memo.deferred_columns.data() + static_cast<size_t>(memo.deferred_at[lid.value]) * n
                                : memo.columns.data() + static_cast<size_t>(lid.value) * n;
    subtract_column(t, column, 1);
  }
}

// by_distance_: every switch but t, farthest from t first (unreachable ones
// before all), in the modes the route before had toward t.
void Engine::sort_by_distance(uint32_t t) {
  const uint32_t n = g_.num_switches();
  const RouteMemo& memo = *prior_->memo;
  const bool moved = memo_in_place_ && !old_row_at_.empty() && old_row_at_[t] != kNone;
  const SwitchState* modes = moved ? old_rows_.data() + static_cast<size_t>(old_row_at_[t]) * n
                                   : memo.modes.data() + static_cast<size_t>(memo.modes_at[t]) * n;
  old_distance_ = modes;
  uint32_t far = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (old_dist(s) != kInf) far = std::max(far, old_dist(s));
  }
  distance_count_.assign(far + 2, 0);  // [0] kInf, [1 + far - d] distance d
  auto bucket = [&](uint32_t s) { return old_dist(s) == kInf ? 0u : 1u + far - old_dist(s); };
  for (uint32_t s = 0; s < n; ++s) {
    if (s != t) ++distance_count_[bucket(s)];
  }
  for (uint32_t b = 0, at = 0; b < distance_count_.size(); ++b) at += std::exchange(distance_count_[b], at);
  by_distance_.resize(n - 1);
  for (uint32_t s = 0; s < n; ++s) {
    if (s != t) by_distance_[distance_count_[bucket(s)]++] = s;
  }
}

// One old column (entry of switch s at column[s * stride]): each hop of a
// phase A column goes one step nearer t (its next switch's distance, in the
// modes the route before had, is one less), so the flows are summed switch
// by switch from the farthest in, in one pass.
void Engine::subtract_column(uint32_t t, const uint8_t* column, size_t stride) {
  // Phase A's sources: every leaf but t, with its CAs' flows.
  for (uint32_t x : ring_leaves_) carried_[x] = x == t ? 0 : ca_begin_[x + 1] - ca_begin_[x];
  for (uint32_t y : by_distance_) {
    const uint32_t f = carried_[y];
    if (f == 0) continue;  // most switches carry none: their entry is not read
    carried_[y] = 0;
    const uint8_t p = column[static_cast<size_t>(y) * stride];
    if (p == ForwardingTables::kNoPath || p == 0) continue;
    add_old(static_cast<size_t>(y) * 256 + p, f);
    const uint32_t next = prior_->cable[static_cast<size_t>(y) * 256 + p];
    if (next == kNone || next == t) continue;
    // Never seen; the route is then done in full (route_lanes).
    if (old_dist(next) + 1 != old_dist(y)) disordered_ = true;
    carried_[next] += f;
  }
  if (disordered_) std::fill(carried_.begin(), carried_.end(), 0);  // flows that came too late
}

// A column phase B finished before, whose phase A the change does not touch:
// phase A's column and waiting switches from the memo, deferred again.
void Engine::reuse_deferred(Lid lid, uint32_t t, uint32_t slot) {
  const uint32_t n = g_.num_switches();
  const RouteMemo& memo = *prior_->memo;
  const uint32_t i = memo.deferred_at[lid.value];
  begin_column(lid);
  std::memcpy(column_, memo.deferred_columns.data() + static_cast<size_t>(i) * n, n);
  ++report_.lids_routed;
  Deferred d{column_, lid, t, slot, static_cast<uint32_t>(broken_.size())};
  broken_.insert(broken_.end(), memo.broken.begin() + memo.broken_begin[i], memo.broken.begin() + memo.broken_begin[i + 1]);
  defer(d);
}

std::vector<uint32_t> cable_map(const Fabric& fabric, const SwitchGraph& graph) {
  const uint32_t n = graph.num_switches();
  std::vector<uint32_t> cable(static_cast<size_t>(n) * 256, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    const Node& node = fabric.node(graph.node(s));
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const NodeId far = fabric.remote_node(PortId(node.first_port.value() + p));
      if (far.valid() && fabric.is_switch(far)) cable[static_cast<size_t>(s) * 256 + p] = graph.switch_index(far);
    }
  }
  return cable;
}

void Engine::add_prior_loads() {
  const uint32_t n = g_.num_switches();
  const RouteMemo& memo = *prior_->memo;
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) load_[e] += memo.phase_a_load[static_cast<size_t>(s) * 256 + port(e)];
  }
  prior_loads_added_ = true;
}

bool Engine::take_prior_loads(const std::vector<const Engine*>& lanes) {
  const RouteMemo& memo = *prior_->memo;
  // Loads before, per live entry (a lane added them, absorbed since), less
  // the re-walked columns' (every lane's, where they touched).
  bool added = false;
  for (const Engine* lane : lanes) added = added || lane->prior_loads_added_;
  if (!added) add_prior_loads();
  for (const Engine* lane : lanes) {
    for (const size_t i : lane->old_touched_) {
      const uint32_t e = entry_of_port(static_cast<uint32_t>(i / 256), static_cast<uint32_t>(i % 256));
      if (e != kNone) load_[e] -= lane->old_load_[i];
    }
  }
  // The ports that lost their link: the route before's loads there are
  // all old flows, or a column that used the link was not re-walked.
  auto left = [&](size_t i) {
    uint64_t k = memo.phase_a_load[i];
    for (const Engine* lane : lanes) k -= lane->old_load_.empty() ? 0 : lane->old_load_[i];
    return k;
  };
  for (const ChangedLink& c : prior_->changed) {
    if (c.up_now) continue;
    if (left(static_cast<size_t>(c.lower) * 256 + c.lower_port) != 0) return false;
    if (left(static_cast<size_t>(c.upper) * 256 + c.upper_port) != 0) return false;
  }
  return true;
}

bool Engine::same_slots(const RouteMemo& memo) const {
  return memo.base_up == base_up_ && memo.base_down == base_down_ && memo.slots_up == slots_up_;
}

void Engine::export_slots(RouteMemo& memo) const {
  memo.base_up = base_up_;
  memo.base_down = base_down_;
  memo.slots_up = slots_up_;
}

void Engine::export_memo() {
  const uint32_t n = g_.num_switches();
  // Every port without a live link has none: an incremental route in place
  // has only the ports of the links that went down to empty.
  if (prior_ == nullptr || memo_->phase_a_load.size() != static_cast<size_t>(n) * 256) {
    memo_->phase_a_load.assign(static_cast<size_t>(n) * 256, 0);
  } else {
    for (const ChangedLink& c : prior_->changed) {
      if (c.up_now) continue;
      memo_->phase_a_load[static_cast<size_t>(c.lower) * 256 + c.lower_port] = 0;
      memo_->phase_a_load[static_cast<size_t>(c.upper) * 256 + c.upper_port] = 0;
    }
  }
  for (uint32_t e = 0; e < ent_.size(); ++e) {
    memo_->phase_a_load[static_cast<size_t>(owner(e)) * 256 + port(e)] = load_[e];
  }
  memo_->deferred.assign(tables_.num_lids(), 0);
  memo_->deferred_at.assign(tables_.num_lids(), 0);
  // A full route maps the storage of the deferred columns of the reroutes
  // that follow (one link down defers about one CA column in a leaf's up
  // links: in 16, with room), off their path.
  const size_t ahead = std::max(deferred_.size(), static_cast<size_t>(tables_.num_lids()) / 16) * n;
  if (prior_ == nullptr && memo_->deferred_columns.size() < ahead) {
    const size_t had = memo_->deferred_columns.size();
    memo_->deferred_columns.resize(ahead);
    std::memset(memo_->deferred_columns.data() + had, 0, ahead - had);  // its pages mapped now
  }
  memo_->deferred_columns.resize(deferred_.size() * static_cast<size_t>(n));
  memo_->broken_begin.assign(1, 0);
  memo_->broken.clear();
  for (size_t i = 0; i < deferred_.size(); ++i) {
    const Deferred& d = deferred_[i];
    memo_->deferred[d.lid.value] = 1;
    memo_->deferred_at[d.lid.value] = static_cast<uint32_t>(i);
    std::memcpy(memo_->deferred_columns.data() + i * n, d.column, n);
    const uint32_t last = i + 1 < deferred_.size() ? deferred_[i + 1].first_broken : static_cast<uint32_t>(broken_.size());
    memo_->broken.insert(memo_->broken.end(), broken_.begin() + d.first_broken, broken_.begin() + last);
    memo_->broken_begin.push_back(static_cast<uint32_t>(memo_->broken.size()));
  }
}

}  // namespace railyard::routing::unicast
