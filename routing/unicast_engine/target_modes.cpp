// Per target switch: the mode (down, up, tier 2 through drains, unreachable)
// and up*/down* distance of every switch toward it. Candidate next hops follow
// from these on demand (Engine::cand_ok, Engine::candidates).
#include "routing/unicast_engine/engine.h"

#include <algorithm>

namespace railyard::routing::unicast {

// Modes and distances of every switch toward target t. Candidate next hops
// are derived on demand (cand_ok) and listed lazily (candidates()): most
// switches follow a chain or cone and never need their list.
void Engine::prepare_target(uint32_t t) {
  st_ = own_st_.data();
  ++target_stamp_;
  cand_.clear();
  std::fill(dd1_.begin(), dd1_.end(), kInf);

  // Tier 1, pure-down distance: BFS from t over parent links (reversed down links).
  queue_.clear();
  dd1_[t] = 0;
  queue_.push_back(t);
  for (size_t h = 0; h < queue_.size(); ++h) {
    uint32_t x = queue_[h];
    for (uint32_t i = up_begin_[x]; i < up_begin_[x + 1]; ++i) {
      uint32_t p = up_rec_[i].remote;
      if (up_rec_[i].drained || dd1_[p] != kInf) continue;
      dd1_[p] = static_cast<uint16_t>(dd1_[x] + 1);
      queue_.push_back(p);
    }
  }
  // Tier 1, full distance, top-down (parents come first in order_).
  bool any_missing = false;
  down_list_.clear();
  up_list_.clear();
  for (uint32_t s : order_) {
    // Read only in tier 2 (prepare_tier2 sets it): cleared, so that a mode
    // never carries what an earlier target's tier 2 left (the memo compares
    // modes whole: a stale flag made an incremental route re-walk every
    // column of half the leaves).
    own_st_[s].clean_only = 0;
    uint16_t d = dd1_[s];
    if (d == kInf) {  // one more than the nearest parent over a clean link
      uint16_t nearest = kInf;
      for (uint32_t i = up_begin_[s]; i < up_begin_[s + 1]; ++i) nearest = std::min(nearest, dist1_[up_clean_[i]]);
      if (nearest < kInf - 1) d = static_cast<uint16_t>(nearest + 1);
    }
    dist1_[s] = d;
    if (d != kInf) {
      own_st_[s].mode = dd1_[s] != kInf ? Mode::kDown : Mode::kUp;
      own_st_[s].val = d;
      if (s != t) (dd1_[s] != kInf ? down_list_ : up_list_).push_back(s);
    } else {
      any_missing = true;
      own_st_[s].mode = Mode::kUnreachable;
      own_st_[s].val = kInf;
    }
  }
  if (has_drains_ && any_missing) prepare_tier2();
  target_ = t;
}

// Tier 2 (drained links allowed) for switches tier 1 cannot serve. Entering
// a tier-1 switch going down is legal only if it goes down itself.
void Engine::prepare_tier2() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {  // bottom-up
    uint32_t s = *it;
    if (dist1_[s] != kInf) {
      ddx_[s] = dd1_[s];
      continue;
    }
    uint16_t d = kInf;
    for (uint32_t i = down_begin_[s]; i < down_begin_[s + 1]; ++i) {
      uint32_t c = remote(down_entries_[i]);
      if (ddx_[c] != kInf) d = std::min<uint16_t>(d, static_cast<uint16_t>(ddx_[c] + 1));
    }
    ddx_[s] = d;
  }
  for (uint32_t s : order_) {  // top-down
    if (dist1_[s] != kInf) continue;
    if (ddx_[s] != kInf) {
      own_st_[s].mode = Mode::kDownDrain;
      own_st_[s].val = ddx_[s];
    } else {
      uint16_t d = kInf;
      for (uint32_t i = up_begin_[s]; i < up_begin_[s + 1]; ++i) {
        uint32_t u = remote(up_entries_[i]);
        if (st_[u].val != kInf) d = std::min<uint16_t>(d, static_cast<uint16_t>(st_[u].val + 1));
      }
      own_st_[s].mode = d == kInf ? Mode::kUnreachable : Mode::kUpDrain;
      own_st_[s].val = d;
    }
    if (st_[s].mode == Mode::kUnreachable) continue;
    (is_down(st_[s].mode) ? down_list_ : up_list_).push_back(s);
    // Prefer undrained links when the switch has any usable one.
    own_st_[s].clean_only = 0;
    bool down = is_down(st_[s].mode);
    uint32_t b = down ? down_begin_[s] : up_begin_[s], end = down ? down_begin_[s + 1] : up_begin_[s + 1];
    for (uint32_t i = b; i < end; ++i) {
      uint32_t e = down ? down_entries_[i] : up_entries_[i];
      if (!ent_[e].drained && cand_ok(s, e)) {
        own_st_[s].clean_only = 1;
        break;
      }
    }
  }
}

// The candidate lists of every switch that goes down toward the target, at
// once, from below: each down-going switch (and the target) offers itself to
// its parents, a few entries per switch. Listed switch by switch (candidates())
// every switch above reads all its down entries instead: at the top of a fat
// tree a core reads every down link for the one or two into the target's
// pod. The lists are those candidates() makes, in the same order (a
// switch's entries by index), for switches that have none yet this target.
void Engine::list_down_candidates() {
  if (down_lists_stamp_ == target_stamp_) return;
  down_lists_stamp_ = target_stamp_;
  // Offers by switch: counted, then placed; a switch's own few sorted by
  // entry (their order among switches does not matter).
  offers_.clear();
  auto offer = [&](uint32_t c) {
    for (uint32_t i = up_begin_[c]; i < up_begin_[c + 1]; ++i) {
      const uint32_t y = up_rec_[i].remote;
      const uint32_t e = up_rec_[i].rev;  // y's entry toward c
      if (cand_stamp_[y] != target_stamp_ && is_down(st_[y].mode) && cand_ok(y, ent_[e])) {
        offers_.push_back({y, e});
        if (offer_stamp_[y] != target_stamp_) {
          offer_stamp_[y] = target_stamp_;
          cand_count_[y] = 0;
        }
        ++cand_count_[y];
      }
    }
  };
  offer(target_);
  for (uint32_t c : down_list_) offer(c);
  for (uint32_t y : down_list_) {  // a segment of cand_ each, empty when none offered
    if (cand_stamp_[y] == target_stamp_) continue;
    cand_stamp_[y] = target_stamp_;
    cand_first_[y] = static_cast<uint32_t>(cand_.size());
    if (offer_stamp_[y] != target_stamp_) cand_count_[y] = 0;
    cand_.resize(cand_.size() + cand_count_[y]);
    offer_fill_[y] = cand_first_[y];
  }
  for (const auto& [y, e] : offers_) cand_[offer_fill_[y]++] = e;
  for (uint32_t y : down_list_) {
    if (offer_stamp_[y] == target_stamp_ && cand_count_[y] > 1) {
      std::sort(cand_.begin() + cand_first_[y], cand_.begin() + cand_first_[y] + cand_count_[y]);
    }
  }
}

}  // namespace railyard::routing::unicast
