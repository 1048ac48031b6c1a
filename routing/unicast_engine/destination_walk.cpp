// Per destination: the cones of its chains, the switches outside them, and
// the destination-major batch its column of the tables goes to.
#include "routing/unicast_engine/engine.h"

#include <algorithm>
#include <array>

namespace railyard::routing::unicast {

// Cone of a chain: from its top down, every switch not yet routed that can
// climb to an aligned switch does, over the least-loaded parallel link
// (`load`: the primary and secondary cones keep separate counts so that the
// secondary never shifts the primary's rotation).
void Engine::push_cone(const std::vector<uint32_t>& chain, std::vector<uint32_t>& load) {
  queue_.assign(chain.rbegin(), chain.rend());
  for (size_t h = 0; h < queue_.size(); ++h) {
    const uint32_t a = queue_[h];
    const SwitchState sa = st_[a];
    if (sa.val == kInf) continue;
    const bool a_tier1 = is_tier1(sa.mode);
    fresh_.clear();
    for (uint32_t i = down_begin_[a]; i < down_begin_[a + 1]; ++i) {
      // cand_ok(c, rev(e)) for the down entry e of a, from e's own record:
      // c must climb (an up mode) exactly one hop to a.
      const Entry& x = down_rec_[i];
      const uint32_t c = x.remote;
      if (routed(c)) continue;
      const SwitchState sc = st_[c];
      if (sc.mode != Mode::kUp && sc.mode != Mode::kUpDrain) continue;
      if (sa.val + 1 != sc.val) continue;
      if (sc.mode == Mode::kUp ? (x.drained || !a_tier1) : (sc.clean_only && x.drained)) continue;
      const uint32_t er = x.rev;
      if (mark_stamp_[c] != stamp_) {
        mark_stamp_[c] = stamp_;
        best_[c] = er;
        fresh_.push_back(c);
      } else if (load[er] < load[best_[c]]) {
        best_[c] = er;
      }
    }
    for (uint32_t c : fresh_) {
      put(c, port(best_[c]));
      ++load[best_[c]];
      queue_.push_back(c);
    }
  }
}

// Chains and cones of one destination; the other switches are filled in by
// finish_columns once every destination of the target has its column.
void Engine::route_destination(Lid lid, uint32_t t, uint8_t port_at_target, uint32_t slot) {
  ++stamp_;
  lid_ = lid;
  begin_column(lid);
  put(t, port_at_target);
  ++report_.lids_routed;
  if (flows_ && port_at_target != 0) {  // a CA LID, balanced by flows
    route_destination_flows(t, slot);
    return;
  }
  if (substitutes_.covers(t) && port_at_target != 0) {  // a CA LID on a tree whose leaves miss uplinks
    substitutes_.route(t, slot, column_);
    return;
  }

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
  push_cone(chain_, cnt_);
  push_cone(chain2_, sec_);
}

// The switches no chain or cone routed, for the batch columns from `first`
// on (all destinations of the current target), switch by switch: a switch's
// candidates and counters are loaded once for all its columns. Each switch
// keeps its own counters, and visits its columns in destination order, so
// this gives the same entries as filling each column in turn.
void Engine::finish_columns(size_t first) {
  const size_t last = batch_lids_.size();
  // Switches that go down: least-loaded of their down links, on a separate
  // counter so that these backup routes do not steer the chains.
  auto all_routed = [&](uint32_t s) {
    for (size_t col = first; col < last; ++col) {
      if (column_at(col)[s] == ForwardingTables::kNoPath) return false;
    }
    return true;
  };
  for (uint32_t s : down_list_) {
    if (all_routed(s)) continue;
    auto [cf, count] = candidates(s);
    if (count == 0) continue;
    for (size_t col = first; col < last; ++col) {
      uint8_t& entry = column_at(col)[s];
      if (entry != ForwardingTables::kNoPath) continue;
      uint32_t best = cand_[cf];
      for (uint32_t i = cf + 1; i < cf + count; ++i) {
        if (cnt2_[cand_[i]] < cnt2_[best]) best = cand_[i];
      }
      entry = port(best);
      ++cnt2_[best];
    }
  }
  // Switches outside the cones (missing or drained links): any shortest up
  // link, round-robin.
  for (uint32_t s : up_list_) {
    if (all_routed(s)) continue;
    auto [cf, k] = candidates(s);
    if (k == 0) continue;
    // Offset by the switch index: cursors of like switches advance in step,
    // and the sources of one destination must not all pick the same slot.
    for (size_t col = first; col < last; ++col) {
      uint8_t& entry = column_at(col)[s];
      if (entry != ForwardingTables::kNoPath) continue;
      entry = port(cand_[cf + ((cursor_[s]++ + guid_rank_[s]) % k)]);
    }
  }
}

// Room in the batch for `count` more columns (flushing it if needed).
void Engine::reserve_columns(size_t count) {
  if (batch_lids_.size() + count > batch_cap_) flush();
  batch_cap_ = std::max(batch_cap_, count);
}

void Engine::begin_column(Lid lid) {
  if (batch_lids_.size() == batch_cap_) flush();
  const size_t b = batch_lids_.size();
  const uint32_t n = g_.num_switches();
  if (b / kChunk >= chunks_.size()) chunks_.emplace_back(new uint8_t[kChunk * n]);
  batch_lids_.push_back(lid);
  column_ = column_at(b);
  std::fill(column_, column_ + n, ForwardingTables::kNoPath);
}

// Row by row, each chunk's columns in LID order: a switch's row is its whole
// table, and switch LIDs (OpenSM gives LIDs in the order it discovers ports)
// lie all over it.
void Engine::flush() {
  const uint32_t n = g_.num_switches();
  std::array<uint32_t, kChunk> order;
  for (size_t first = 0; first < batch_lids_.size(); first += kChunk) {
    const uint8_t* base = chunks_[first / kChunk].get();
    const size_t count = std::min(kChunk, batch_lids_.size() - first);
    const Lid* lids = batch_lids_.data() + first;
    for (size_t b = 0; b < count; ++b) order[b] = static_cast<uint32_t>(b);
    std::sort(order.begin(), order.begin() + count, [&](uint32_t a, uint32_t b) { return lids[a] < lids[b]; });
    for (uint32_t s = 0; s < n; ++s) {
      auto row = tables_.row(s);
      for (size_t i = 0; i < count; ++i) row[lids[order[i]].value] = base[order[i] * n + s];
    }
  }
  batch_lids_.clear();
}

}  // namespace railyard::routing::unicast
