// After the busiest links: the shifts NCCL runs over rails.
//
// Phases A and B and the pass over the busiest links balance all-to-all.
// After a failure a rail-aligned shift (host h, rail r -> host h + k, rail
// r) or a cross-rail one (-> rail r + 1) can still meet several of its
// flows on one link: the displaced flows of a destination leaf took the
// slots that were free for all-to-all, and a shift's window of consecutive
// destinations meets them together (a core down on a plain fat tree: five
// flows of shift 2 on one up link, over a bound of one).
//
// This pass judges every shift of the host grid (RoutingOptions::
// shift_grid) against a lower bound of its own (shift_bounds.h: the cuts of
// leaves and pods, and the spines'), counting the flows of the grid as
// cabled so that a CA leaving lowers no bound, and moves single (switch, CA
// LID) entries to another next hop of the same direction and the same
// length (so routes stay minimal and up*/down*, never through a drained
// link) while a move lowers the sum over shifts and links of the load above
// the shift's bound, and leaves every link's all-to-all load within the
// pass's limit (what the links carry already, or 1/32 above the all-to-all
// bound of a CA's own link); else swaps two entries of one switch
// (shift_moves.cpp), first those of two flows of the shift, then, when
// those rounds stop above the bounds, also at the source switch the entry
// of a destination its flows reach in another shift. Rounds take the
// shifts above their bound worst first (ties by shift), their flows in grid
// order, and ties between moves go by GUID rank and port: the result does
// not depend on the node order. An incremental route undoes the moves
// (RouteMemo::moves) and makes them again.
//
// The pass counts loads per (shift, directed link): it runs where those are
// at most 2^24 (2,048 CAs on 3 levels), within 2^23 hops walked, and 2^21
// more for the wide swaps.
#include "routing/unicast_engine/shift_repair.h"

#include <algorithm>
#include <thread>

#include "routing/unicast_engine/shift_repair_pass.h"

namespace railyard::routing::unicast {


// The entries from switch x to the target switch t of `lid`, as the tables
// have them; false if they do not arrive.
bool ShiftRepairPass::walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t h = 0; h < kMaxHops; ++h) {
    if (x == t) return true;
    const uint32_t e = next_[static_cast<size_t>(lid) * n_ + x];
    if (e == kNone) return false;
    out.push_back(e);
    x = g_.remote(e);
  }
  return false;
}

void ShiftRepairPass::add(uint32_t p, uint32_t e, int d) {
  uint16_t& l = load_[static_cast<size_t>(p) * entries_ + e];
  const uint32_t b = bound_[p];
  if (d > 0) {
    if (l >= b) {
      ++excess_;
      if (l == b) ++hot_[p];
    }
    ++l;
  } else {
    --l;
    if (l >= b) {
      --excess_;
      if (l == b) --hot_[p];
    }
  }
}

// Per switch: the CA ports whose all-to-all flows toward `lid` cross it
// (the switch's own included), for the LID last asked.
const std::vector<uint32_t>& ShiftRepairPass::flows_through(uint32_t lid, uint32_t t) {
  if (through_lid_ == lid) return through_;
  through_lid_ = lid;
  through_.assign(n_, 0);
  steps_ += n_;
  for (uint32_t s = 0; s < n_; ++s) {
    const uint32_t cas = g_.num_cas(s);
    if (cas == 0 || s == t || !walk(s, lid, t, path_)) continue;
    through_[s] += cas;
    for (uint32_t e : path_) through_[g_.remote(e)] += cas;
  }
  return through_;
}

void ShiftRepairPass::all_to_all_loads() {
  a2a_.assign(entries_, 0);
  uint64_t cas = 0;
  for (uint32_t s = 0; s < n_; ++s) cas += g_.num_cas(s);
  for (NodeId ca : f_.cas()) {
    const Node& node = f_.node(ca);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const PortId port(node.first_port.value() + p);
      const Lid lid = f_.port(port).lid;
      const uint32_t t = g_.attach_switch(port);
      if (!lid.valid() || lid.value >= t_.num_lids() || t == kNone) continue;
      for (uint32_t s = 0; s < n_; ++s) {
        const uint32_t k = g_.num_cas(s);
        if (k == 0 || s == t || !walk(s, lid.value, t, path_)) continue;
        for (uint32_t e : path_) a2a_[e] += k;
      }
    }
  }
  uint64_t most = 0;
  for (uint32_t e = 0; e < entries_; ++e) most = std::max(most, a2a_[e]);
  const uint64_t own = cas > 0 ? cas - 1 : 0;  // a CA's own link: every other CA's flow
  a2a_limit_ = std::max(most, own + own / 32);
}

// The path of every flow the shifts have, by (source switch, destination
// cell): a destination's sources are the cells of its own rail and of the
// rail before it, on a few leaves, so each path is walked once, not once
// per shift. (Read by both threads of load_shifts; the search walks the
// tables as they change.)
void ShiftRepairPass::cache_paths() {
  const uint32_t cells = hosts_ * rails_;
  source_of_.assign(n_, kNone);
  std::vector<uint32_t> sources;
  std::vector<std::vector<uint32_t>> rail_sources(rails_);
  for (uint32_t c = 0; c < cells; ++c) {
    const uint32_t a = at_[c];
    if (a == kNone || !live_[c]) continue;
    if (source_of_[a] == kNone) {
      source_of_[a] = static_cast<uint32_t>(sources.size());
      sources.push_back(a);
    }
    auto& r = rail_sources[c % rails_];
    if (std::find(r.begin(), r.end(), a) == r.end()) r.push_back(a);
  }
  cache_at_.assign(sources.size() * cells + 1, 0);
  cached_.clear();
  for (uint32_t i = 0; i < sources.size(); ++i) {
    for (uint32_t dst = 0; dst < cells; ++dst) {
      const size_t key = static_cast<size_t>(i) * cells + dst;
      cache_at_[key] = static_cast<uint32_t>(cached_.size());
      const uint32_t a = sources[i], t = at_[dst], r = dst % rails_;
      if (lid_[dst] == 0 || !live_[dst] || t == kNone || a == t) continue;
      const auto& own = rail_sources[r];
      const auto& before = rail_sources[(r + rails_ - 1) % rails_];
      const bool needed = std::find(own.begin(), own.end(), a) != own.end() ||
                          (rails_ > 1 && std::find(before.begin(), before.end(), a) != before.end());
      if (needed && walk(a, lid_[dst], t, path_)) cached_.insert(cached_.end(), path_.begin(), path_.end());
    }
  }
  cache_at_.back() = static_cast<uint32_t>(cached_.size());
}

// Shifts [from, to): their loads, the load above their bounds (into
// excess) and the cells above them (hot_); with `counts`, their bounds
// first. `store`: the loads into load_; else counted in one row reused from
// shift to shift (the loads of every shift, 8 MB at 2,048 CAs, cost ~10 ms
// of page faults where their storage is fresh: they are written then only
// when the search needs them).
void ShiftRepairPass::load_shifts(uint32_t from, uint32_t to, ShiftBounds::Counts* counts, bool store,
                                  uint64_t& excess) {
  const uint32_t cells = hosts_ * rails_;
  std::vector<uint16_t> row(store ? 0 : entries_);
  for (uint32_t p = from; p < to; ++p) {
    const Pattern& pattern = patterns_[p];
    uint16_t* l = store ? &load_[static_cast<size_t>(p) * entries_] : row.data();
    uint32_t most = 0;
    for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
      uint32_t a = 0, t = 0;
      if (!ends(src, dst, a, t) || a == t) return;
      const size_t key = static_cast<size_t>(source_of_[a]) * cells + dst;
      const uint32_t* e = &cached_[cache_at_[key]];
      for (const uint32_t* end = &cached_[cache_at_[key + 1]]; e != end; ++e) {
        most = std::max<uint32_t>(most, ++l[*e]);
      }
    });
    // A shift whose busiest link carries one flow is at its bound (every
    // bound is at least 1): its flows are counted for the bound only above.
    if (counts != nullptr && most > 1) {
      for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
        uint32_t a = 0, t = 0;
        if (ends(src, dst, a, t, true) && a != t) bounds_->count(*counts, a, t);
      });
      bound_[p] = bounds_->bound(*counts, most, [&](auto&& visit) {
        for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
          uint32_t a = 0, t = 0;
          if (ends(src, dst, a, t, true) && a != t) visit(a, t);
        });
      });
    }
    for (uint32_t e = 0; e < entries_ && most > bound_[p]; ++e) {
      if (l[e] <= bound_[p]) continue;
      excess += l[e] - bound_[p];
      ++hot_[p];
    }
    if (!store) std::fill(row.begin(), row.end(), 0);
  }
}

ShiftRepair ShiftRepairPass::run(std::vector<TableMove>& moves) {
  ShiftRepair out;
  rails_ = o_.shift_rails;
  if (rails_ == 0 || o_.shift_grid.size() % rails_ != 0) return out;
  hosts_ = static_cast<uint32_t>(o_.shift_grid.size() / rails_);
  if (hosts_ < 2) return out;
  for (uint32_t k = 1; k < hosts_; ++k) patterns_.push_back({k, false});
  if (rails_ > 1) {
    for (uint32_t k = 0; k < hosts_; ++k) patterns_.push_back({k, true});
  }
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  if (uint64_t{np} * g_.num_entries() > kMaxCells || g_.num_entries() == 0) return out;
  n_ = g_.num_switches();
  entries_ = g_.num_entries();
  const uint32_t cells = hosts_ * rails_;
  lid_.assign(cells, 0);
  at_.assign(cells, kNone);
  live_.assign(cells, 0);
  for (uint32_t c = 0; c < cells; ++c) {
    const Lid l = o_.shift_grid[c];
    if (!l.valid() || l.value >= t_.num_lids()) continue;
    const PortId owner = f_.lid_owner(l);
    if (!owner.valid() || f_.is_switch(f_.port(owner).node)) continue;
    const PortId leaf_port = f_.port(owner).remote;
    if (!leaf_port.valid()) continue;
    lid_[c] = l.value;
    at_[c] = g_.switch_index(f_.port(leaf_port).node);
    live_[c] = g_.attach_switch(owner) != kNone ? 1 : 0;
  }
  lids_ = t_.num_lids();
  next_.resize(static_cast<size_t>(n_) * lids_);
  for (uint32_t s = 0; s < n_; ++s) {
    const auto row = t_.row(s);
    for (uint32_t l = 0; l < lids_; ++l) next_[static_cast<size_t>(l) * n_ + s] = entry_at(s, row[l]);
  }
  std::vector<uint8_t> leaf(n_, 0);
  for (uint32_t s = 0; s < n_; ++s) leaf[s] = g_.num_cas(s) != 0 ? 1 : 0;
  for (uint32_t a : at_) {
    if (a != kNone) leaf[a] = 1;
  }
  // The bounds count flows per pair of leaves (a leaves x leaves array):
  // past 2,048 leaves the pass does not run.
  if (std::count(leaf.begin(), leaf.end(), uint8_t{1}) > kMaxLeaves) return out;
  bounds_.emplace(g_, rk_, rec_.ent, leaf);
  bound_.assign(np, 1);
  hot_.assign(np, 0);
  // The shifts' bounds and loads in two threads (each its own shifts), as
  // the lanes; the loads kept only when some shift is above its bound.
  cache_paths();
  const uint32_t half = np / 2;
  uint64_t excess[2] = {0, 0};
  auto both = [&](bool bounds, bool store) {
    std::thread other([&] {
      ShiftBounds::Counts counts = bounds_->counts();
      load_shifts(half, np, bounds ? &counts : nullptr, store, excess[1]);
    });
    ShiftBounds::Counts counts = bounds_->counts();
    load_shifts(0, half, bounds ? &counts : nullptr, store, excess[0]);
    other.join();
  };
  // Storage of an earlier route (its pages mapped): loads kept at once.
  const size_t size = static_cast<size_t>(np) * entries_;
  const bool warm = storage_ != nullptr && storage_->capacity() >= size;
  if (warm) {
    load_.swap(*storage_);
    load_.assign(size, 0);
  }
  both(true, warm);
  excess_ = excess[0] + excess[1];
  if (excess_ != 0 && !warm) {
    load_.assign(size, 0);
    std::fill(hot_.begin(), hot_.end(), 0);
    excess[0] = excess[1] = 0;
    both(false, true);
  }
  out.excess_before = excess_;
  if (excess_ != 0) {
    all_to_all_loads();
    // Per switch: whether every link goes up (a leaf: only its own CAs'
    // flows cross it), and its grid cells.
    up_only_.assign(n_, 1);
    for (uint32_t s = 0; s < n_; ++s) {
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) up_only_[s] &= rec_.ent[e].up ? 1 : 0;
    }
    cells_begin_.assign(n_ + 1, 0);
    for (uint32_t c = 0; c < cells; ++c) {
      if (at_[c] != kNone) ++cells_begin_[at_[c] + 1];
    }
    for (uint32_t s = 0; s < n_; ++s) cells_begin_[s + 1] += cells_begin_[s];
    cells_.assign(cells_begin_[n_], 0);
    std::vector<uint32_t> fill(cells_begin_.begin(), cells_begin_.end() - 1);
    for (uint32_t c = 0; c < cells; ++c) {
      if (at_[c] != kNone) cells_[fill[at_[c]]++] = c;
    }
    const size_t before = moves.size();
    rounds(moves, kMaxSteps);
    // What single moves and swaps within a shift left: rounds that may also
    // swap with a destination of another shift, any whose flow leaves the
    // source switch in a shift where this destination's does (the two
    // single failures that needed it: a spine down on the 2-level ROFT whose
    // rails end in a partial leaf).
    if (excess_ != 0) {
      wide_ = true;
      partner_stamp_.assign(cells, 0);
      rounds(moves, steps_ + kMaxWideSteps);
    }
    out.moves = static_cast<uint32_t>(moves.size() - before);
  }
  out.excess_after = excess_;
  return out;
}

// Rounds over the shifts above their bound, the worst first (then by
// shift), while a round moves something and steps_ stays under `budget`:
// what the budget cuts short is the mildest.
void ShiftRepairPass::rounds(std::vector<TableMove>& moves, uint64_t budget) {
  budget_ = budget;
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  const uint32_t cells = hosts_ * rails_;
  std::vector<std::pair<int64_t, uint32_t>> order;
  for (bool moved = true; moved && steps_ < budget_;) {
    moved = false;
    order.clear();
    for (uint32_t p = 0; p < np; ++p) {
      if (hot_[p] == 0) continue;
      const uint16_t* l = &load_[static_cast<size_t>(p) * entries_];
      order.push_back({-static_cast<int64_t>(*std::max_element(l, l + entries_)) + bound_[p], p});
    }
    std::sort(order.begin(), order.end());
    steps_ += order.size() * (entries_ / 64 + 1);
    for (auto [unused, p] : order) {
      for (uint32_t src = 0; src < cells && hot_[p] != 0 && steps_ < budget_; ++src) moved |= improve(p, src, moves);
    }
  }
}

ShiftRepair repair_shifts(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                          const EntryRecords& records, std::span<const uint32_t> guid_rank,
                          const RoutingOptions& options, ForwardingTables& tables, std::vector<TableMove>& moves,
                          std::vector<uint16_t>* storage) {
  ShiftRepairPass r(fabric, graph, ranking, records, guid_rank, options, tables, storage);
  ShiftRepair out = r.run(moves);
  r.keep_storage();
  return out;
}

}  // namespace railyard::routing::unicast
