// Per destination: the cones of its chains, the switches outside them, and
// the destination-major batch its column of the tables goes to.
#include "routing/unicast_engine/engine.h"

#include <algorithm>

namespace railyard::routing::unicast {

// Cone of a chain: from its top down, every switch not yet routed that can
// climb to an aligned switch does, over the least-loaded parallel link
// (`load`: the primary and secondary cones keep separate counts so that the
// secondary never shifts the primary's rotation).
void Engine::push_cone(const std::vector<uint32_t>& chain, std::vector<uint32_t>& load) {
  queue_.assign(chain.rbegin(), chain.rend());
  for (size_t h = 0; h < queue_.size(); ++h) {
    uint32_t a = queue_[h];
    fresh_.clear();
    for (uint32_t i = down_begin_[a]; i < down_begin_[a + 1]; ++i) {
      uint32_t e = down_entries_[i];
      uint32_t c = g_.remote(e);
      if (set_stamp_[c] == stamp_) continue;
      uint32_t er = g_.rev(e);
      if (!cand_ok(c, er)) continue;  // c must climb to a
      if (mark_stamp_[c] != stamp_) {
        mark_stamp_[c] = stamp_;
        best_[c] = er;
        fresh_.push_back(c);
      } else if (load[er] < load[best_[c]]) {
        best_[c] = er;
      }
    }
    for (uint32_t c : fresh_) {
      put(c, g_.port(best_[c]));
      ++load[best_[c]];
      set_stamp_[c] = stamp_;
      queue_.push_back(c);
    }
  }
}

void Engine::route_destination(Lid lid, uint32_t t, uint8_t port_at_target, uint32_t slot) {
  ++stamp_;
  lid_ = lid;
  begin_column(lid);
  put(t, port_at_target);
  set_stamp_[t] = stamp_;
  ++report_.lids_routed;

  // Primary chain: where this destination's traffic comes down. Secondary
  // chain: where it comes down for switches that cannot reach the primary
  // (a missing or drained link), so displaced traffic for one destination
  // lands on one link, not wherever a counter happens to point.
  if (!preferred_present(t, slot)) {
    // The destination's nominal link into its leaf is missing: no chain, so
    // that every source spreads its traffic over the remaining links
    // (round-robin below) instead of piling it onto one substitute.
    chain_.assign(1, t);
    chain2_.assign(1, t);
  } else {
  climb(t, slot, true, chain_);
  // The secondary's nominal slot is offset by the leaf's sequence number, so
  // that a source missing one up link spreads the destinations it cannot
  // send through it over all its other links, not onto the next one.
  const uint32_t k = std::max<uint32_t>(2, slots_up_[rk_.rank[t]]);
  climb(t, slot + 1 + target_seq_ % (k - 1), false, chain2_);
  }

  // Other switches that go down: least-loaded of their down links, on a
  // separate counter so that these backup routes do not steer the chain.
  for (uint32_t s : down_list_) {
    if (set_stamp_[s] == stamp_) continue;
    auto [first, count] = candidates(s);
    if (count == 0) continue;
    uint32_t best = cand_[first];
    for (uint32_t i = first + 1; i < first + count; ++i) {
      if (cnt2_[cand_[i]] < cnt2_[best]) best = cand_[i];
    }
    put(s, g_.port(best));
    ++cnt2_[best];
    set_stamp_[s] = stamp_;
  }

  push_cone(chain_, cnt_);
  push_cone(chain2_, sec_);

  // Switches outside the cone (missing or drained links): any shortest up
  // link, round-robin.
  for (uint32_t s : up_list_) {
    if (set_stamp_[s] == stamp_) continue;
    auto [first, k] = candidates(s);
    if (k == 0) continue;
    // Offset by the switch index: cursors of like switches advance in step,
    // and the sources of one destination must not all pick the same slot.
    uint32_t e = cand_[first + ((cursor_[s]++ + guid_rank_[s]) % k)];
    put(s, g_.port(e));
  }
}

void Engine::begin_column(Lid lid) {
  if (batch_lids_.size() == kBatch) flush();
  batch_lids_.push_back(lid);
  column_ = batch_.data() + (batch_lids_.size() - 1) * g_.num_switches();
  std::fill(column_, column_ + g_.num_switches(), ForwardingTables::kNoPath);
}

void Engine::flush() {
  const uint32_t n = g_.num_switches();
  for (uint32_t s = 0; s < n; ++s) {
    auto row = tables_.row(s);
    for (size_t b = 0; b < batch_lids_.size(); ++b) row[batch_lids_[b].value] = batch_[b * n + s];
  }
  batch_lids_.clear();
}

}  // namespace railyard::routing::unicast
