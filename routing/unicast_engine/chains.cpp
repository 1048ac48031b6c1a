// Per destination: the chains its traffic comes down along (D-mod-K by
// nominal slot, corrected by measured load).
#include "routing/unicast_engine/engine.h"

#include <algorithm>

namespace railyard::routing::unicast {

// Climbs from x0 choosing at each level the parent link that carries the
// fewest destinations down, preferring the nominal slot `pref` (D-mod-K)
// unless it already carries more than one above the least loaded. The
// secondary chain counts its own load on top and avoids parents already set.
void Engine::climb(uint32_t x0, uint32_t pref, bool primary, std::vector<uint32_t>& chain) {
  chain.clear();
  chain.push_back(x0);
  for (uint32_t x = x0;;) {
    const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
    const uint32_t want = pref % k;
    uint32_t best = kNone, best_count = 0, best_dist = 0;
    uint32_t preferred = kNone, min_count = UINT32_MAX;
    for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
      uint32_t er = rev(e);
      if (!ent_[e].up || !cand_ok(remote(e), er)) continue;
      if (routed(remote(e))) continue;  // already routed (primary chain)
      // A clean switch's traffic never comes down through a drained link.
      if (is_tier1(st_[x].mode) && !is_tier1(st_[remote(e)].mode)) continue;
      uint32_t count = primary ? cnt_[er] : cnt_[er] + sec_[er];
      uint32_t slot = up_slot(x, e);
      uint32_t dist = (slot + k - want) % k;
      if (slot == want && preferred == kNone) preferred = er;
      min_count = std::min(min_count, count);
      if (best == kNone || count < best_count || (count == best_count && dist < best_dist)) {
        best = er;
        best_count = count;
        best_dist = dist;
      }
    }
    if (best == kNone) break;
    if (preferred != kNone) {
      uint32_t pc = primary ? cnt_[preferred] : cnt_[preferred] + sec_[preferred];
      if (pc <= min_count + 1) best = preferred;
    }
    uint32_t parent = owner(best);  // best is the parent's entry toward x
    put(parent, port(best));
    bump(primary ? cnt_ : sec_, best);
    chain.push_back(parent);
    pref = down_slot(parent, best);
    x = parent;
  }
}

// Whether the up link in nominal slot `pref` of x is a usable parent link
// (true when x has no parent at all).
bool Engine::preferred_present(uint32_t x, uint32_t pref) const {
  const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
  bool any = false;
  for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
    if (!ent_[e].up || !cand_ok(remote(e), rev(e))) continue;
    any = true;
    if (up_slot(x, e) == pref % k) return true;
  }
  return !any;
}

}  // namespace railyard::routing::unicast
