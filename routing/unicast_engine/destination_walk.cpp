// Per destination: the cones of its chains, the switches outside them, and
// the destination-major batch its column of the tables goes to.
#include "routing/unicast_engine/engine.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "routing/byte_transpose.h"

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
      bump(load, best_[c]);
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
      bump(cnt2_, best);
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
    // With counters local to the target, also by the target's, so that one
    // switch's routes toward different targets spread.
    const uint32_t offset = guid_rank_[s] + (flows_ ? guid_rank_[target_] : 0);
    if (flows_ && cursor_[s] == 0) counted_switches_.push_back(s);
    for (size_t col = first; col < last; ++col) {
      uint8_t& entry = column_at(col)[s];
      if (entry != ForwardingTables::kNoPath) continue;
      entry = port(cand_[cf + ((cursor_[s]++ + offset) % k)]);
    }
  }
}

void Engine::switch_lid_columns(const std::vector<uint32_t>& column_of, std::vector<std::pair<Lid, uint8_t*>>& out) {
  for (size_t b = 0; b < batch_lids_.size(); ++b) {
    const Lid lid = batch_lids_[b];
    if (lid.value < column_of.size() && column_of[lid.value] != kNone) out.emplace_back(lid, column_at(b));
  }
}

void Engine::clear_counters() {
  for (uint32_t e : counted_entries_) cnt_[e] = sec_[e] = cnt2_[e] = 0;
  for (uint32_t s : counted_switches_) cursor_[s] = 0;
  counted_entries_.clear();
  counted_switches_.clear();
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

// The batch into the tables. A row is a switch's whole table (17.7k LIDs at
// 16k CAs), so a column written alone is a cache miss per switch; and a
// lane's batch holds the columns of every other leaf, whose LIDs (a leaf's
// CAs are often a LID apart per rail, not next to each other) share cache
// lines with the other lane's. So the whole batch is taken in LID order,
// kChunk columns at a time, and each chunk's entries are written row by
// row: the chunk's stretch of each row is then written once, whole. Within
// a chunk, 16 columns of consecutive LIDs go in 16 x 16 tiles
// (routing/byte_transpose.h: 16 switches' entries of 16 columns read as
// runs of their columns, stored as runs of their rows); the others one
// entry at a time, row by row. A lane routes each LID once (phase B and the
// leaf copies rewrite columns in place), so no LID is in the batch twice.
void Engine::flush() {
  const uint32_t n = g_.num_switches();
  // The memo keeps every column as it is, for the next reroute. An
  // incremental route's CA columns are in the memo already, as the tables
  // have them (RouteMemo::columns): only the entries that differ are
  // written, into both; a re-walked or patched column differs in few.
  const bool sparse = flows_ && prior_ != nullptr && memo_ != nullptr;
  if (sparse && ca_lid_.size() != tables_.num_lids()) {
    ca_lid_.assign(tables_.num_lids(), 0);
    for (PortId p : ca_ports_) {
      const Port& port = fabric_.port(p);
      for (uint32_t k = 0; k < (1u << port.lmc) && port.lid.value + k < ca_lid_.size(); ++k) ca_lid_[port.lid.value + k] = 1;
    }
  }
  flush_order_.clear();
  size_t point = 0;    // point_columns_ next
  size_t emptied = 0;  // old_rows_emptied_ next
  for (size_t b = 0; b < batch_lids_.size(); ++b) {
    const Lid lid = batch_lids_[b];
    uint8_t* copy = flows_ && memo_ != nullptr ? memo_->columns.data() + static_cast<size_t>(lid.value) * n : nullptr;
    const uint8_t* column = column_at(b);
    if (point < point_columns_.size() && point_columns_[point].first == b) {
      // A column patch_switch_column emptied one row of (u, no longer
      // reached): the tables differ from the route before only there, and
      // the switch turns fill that row, or every row the walk left empty
      // when they are worked out again after the flush. Unless u is the
      // turn switch and they are not: then which rows they fill may move,
      // and the column is written whole.
      const uint32_t u = point_columns_[point++].second;
      const TurnsMemo& turns = memo_->turns;
      const bool turn = u >= turns.component.size() || turns.component[u] >= turns.turn.size() ||
                        turns.turn[turns.component[u]] == u;
      if ((!turn || turns_refilled_) && copy != nullptr) {
        copy[u] = ForwardingTables::kNoPath;  // as the walk left it: the rest is the route before's
        tables_.set(u, lid, column[u]);
        continue;
      }
    }
    if (sparse && emptied < old_rows_emptied_.size() && old_rows_emptied_[emptied].first == b) {
      for (; emptied < old_rows_emptied_.size() && old_rows_emptied_[emptied].first == b; ++emptied) {
        const uint32_t s = old_rows_emptied_[emptied].second;
        if (column[s] == copy[s]) continue;
        copy[s] = column[s];
        tables_.set(s, lid, column[s]);
      }
      continue;
    }
    if (sparse && ca_lid_[lid.value]) {
      for (uint32_t s0 = 0; s0 < n; s0 += 8) {
        const uint32_t s1 = std::min(n, s0 + 8);
        if (s1 == s0 + 8 && std::memcmp(column + s0, copy + s0, 8) == 0) continue;
        for (uint32_t s = s0; s < s1; ++s) {
          if (column[s] == copy[s]) continue;
          copy[s] = column[s];
          tables_.set(s, lid, column[s]);
        }
      }
      continue;
    }
    if (copy != nullptr) {
      // A switch LID an incremental route wrote: kept as its walk left it,
      // without the switch turns' fills (turn_columns filled the batch), as
      // a full route keeps it (its fills go into the tables only), for
      // patch_switch_column.
      const TurnsMemo& turns = memo_->turns;
      const uint32_t i = prior_ != nullptr && lid.value < turns.column_of.size() ? turns.column_of[lid.value] : kNone;
      if (i == kNone) {
        std::memcpy(copy, column, n);
      } else {
        const uint64_t* bits = turns.reached.data() + i * turns.words;
        for (uint32_t s = 0; s < n; ++s) copy[s] = (bits[s / 64] >> (s % 64) & 1) != 0 ? column[s] : ForwardingTables::kNoPath;
      }
    }
    flush_order_.push_back(static_cast<uint32_t>(b));
  }
  const size_t total = flush_order_.size();
  std::stable_sort(flush_order_.begin(), flush_order_.end(),
                   [&](uint32_t a, uint32_t b) { return batch_lids_[a] < batch_lids_[b]; });
  std::array<uint32_t, kChunk> single;     // columns of the chunk in no run of 16 consecutive LIDs
  std::array<uint32_t, kChunk / 16> runs;  // the first of each run, in the chunk
  for (size_t first = 0; first < total; first += kChunk) {
    const uint32_t* order = flush_order_.data() + first;
    const size_t count = std::min(kChunk, total - first);
    size_t num_single = 0, num_runs = 0;
    for (size_t i = 0; i < count;) {
      const uint32_t lid0 = batch_lids_[order[i]].value;
      size_t k = 1;
      while (k < 16 && i + k < count && batch_lids_[order[i + k]].value == lid0 + k) ++k;
      if (k == 16) {
        runs[num_runs++] = static_cast<uint32_t>(i);
      } else {
        for (size_t j = 0; j < k; ++j) single[num_single++] = order[i + j];
      }
      i += k;
    }
    const uint8_t* src[16];
    uint8_t* dst[16];
    uint32_t s0 = 0;
    for (; s0 + 16 <= n; s0 += 16) {
      for (size_t r = 0; r < num_runs; ++r) {
        const uint32_t* cols = order + runs[r];
        const uint16_t lid0 = batch_lids_[cols[0]].value;
        for (uint32_t j = 0; j < 16; ++j) {
          src[j] = column_at(cols[j]) + s0;
          dst[j] = tables_.row(s0 + j).data() + lid0;
        }
        transpose16x16(src, dst);
      }
    }
    for (; s0 < n; ++s0) {  // the last switches, fewer than 16
      auto row = tables_.row(s0);
      for (size_t r = 0; r < num_runs; ++r) {
        const uint32_t* cols = order + runs[r];
        for (uint32_t j = 0; j < 16; ++j) row[batch_lids_[cols[j]].value] = column_at(cols[j])[s0];
      }
    }
    for (uint32_t s = 0; s < n && num_single > 0; ++s) {
      auto row = tables_.row(s);
      for (size_t i = 0; i < num_single; ++i) row[batch_lids_[single[i]].value] = column_at(single[i])[s];
    }
  }
  batch_lids_.clear();
  point_columns_.clear();
  old_rows_emptied_.clear();
}

}  // namespace railyard::routing::unicast
